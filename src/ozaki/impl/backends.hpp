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

#include <algorithm>
#include <cstdint>

namespace ozaki {
namespace Impl {

/// The INT8 product `whole` (inner length a multiple of 16) as INT8 GEMMs of at most `block`
/// terms each, so that no INT32 sum can overflow: chunk c multiplies columns
/// [c block, (c+1) block) of both operands into whole.c + c * c_stride.  Returns the calls.
template <class ExecSpace>
int int8_gemm_in_k_chunks(const ExecSpace& space, const Int8GemmProblem& whole, std::int64_t block,
                          std::int64_t c_stride) {
  int calls = 0;
  for (std::int64_t offset = 0; offset < whole.length; offset += block, ++calls) {
    Int8GemmProblem p = whole;
    p.length = std::min(block, whole.length - offset);
    p.a = whole.a + offset;
    p.b = whole.b + offset;
    p.c = whole.c + calls * c_stride;
    Int8Gemm<ExecSpace>::run(space, p);
  }
  return calls;
}

}  // namespace Impl
}  // namespace ozaki
