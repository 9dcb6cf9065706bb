#include "gemm_instance.hpp"
#if defined(KOKKOS_ENABLE_OPENMP)
OZAKI_IMPL_DEFINE_GEMM_INSTANCE(Kokkos::OpenMP)
#endif
