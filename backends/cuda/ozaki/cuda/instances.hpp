#pragma once
/// \file instances.hpp
/// The CUDA backend's compiled instances of the library, declared extern for every other
/// translation unit (defined in backends/cuda/gemm_cuda.cpp and the generated
/// crt_kernels_cuda_*.cpp): the gemm drivers and scheme II's kernels at every moduli count.
/// Included through the generated ozaki/backend_instances.hpp, after the templates.

OZAKI_IMPL_GEMM_INSTANCE(extern, Kokkos::Cuda)
OZAKI_IMPL_CRT_KERNELS(extern, Kokkos::Cuda)
