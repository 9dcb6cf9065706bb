#include "gemm_instance.hpp"
#if defined(KOKKOS_ENABLE_SERIAL)
OZAKI_IMPL_DEFINE_GEMM_INSTANCE(Kokkos::Serial)
#endif
