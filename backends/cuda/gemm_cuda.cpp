// The library's compiled instance of the gemm driver for Kokkos::Cuda.
#include "../../src/eti/gemm_instance.hpp"

OZAKI_IMPL_DEFINE_GEMM_INSTANCE(Kokkos::Cuda)
