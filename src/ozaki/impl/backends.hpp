#pragma once
/// \file backends.hpp
/// The INT8 GEMM backends this build of ozaki has.  The portable Kokkos kernel is always
/// there; a backend compiled into the library (ozaki/config.hpp says which) adds its
/// Int8GemmBackendAvail specialisation here, so that every translation unit that instantiates
/// the driver sees the same dispatch.

#include <ozaki/config.hpp>
#include <ozaki/impl/int8_gemm.hpp>

#if defined(OZAKI_ENABLE_CUDA_BACKEND)
#include <ozaki/cuda/int8_gemm_cublas.hpp>
#endif
