// cuBLAS's own FP64 emulation (Algorithm::CublasEmulation), see ozaki/cuda/int8_gemm_cublas.hpp.
//
// Facts this relies on (cuBLAS 13.1 documentation, "Floating Point Emulation", and what we
// observed on the H200, docs/design.md §7):
//  - the fixed-point math mode and its setters exist from cuBLAS 13.1 (CUBLAS_VERSION 130100);
//  - emulation takes its scratch from the handle's workspace when one is set, and silently
//    runs native DGEMM when it cannot get memory, so we always set a workspace of the size
//    the documentation's upper-bound formula gives;
//  - cublasSetStream resets the handle's workspace: our handles are bound to their stream
//    once, and the workspace is set on every call;
//  - DYNAMIC mantissa control picks the bits for FP64 accuracy (at most 79 by default) and
//    falls back to native DGEMM above that.
#include <ozaki/cuda/int8_gemm_cublas.hpp>

#include "cublas_handles.hpp"

#include <algorithm>
#include <string>

namespace ozaki {
namespace Impl {

namespace {

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

/// cuBLAS's default maximum mantissa bits in DYNAMIC mode.
constexpr int dynamic_max_bits = 79;

}  // namespace

std::size_t EmulationBackend<Kokkos::Cuda>::workspace_bytes(std::int64_t m, std::int64_t n,
                                                            std::int64_t k, int mantissa_bits) {
  // The documented safe upper bound (cuBLAS docs, "Fixed-Point Workspace Requirements").
  const int bits = mantissa_bits > 0 ? mantissa_bits : dynamic_max_bits;
  const std::int64_t slices = (bits + 1 + 7) / 8;
  const std::int64_t pm = round_up(m, 1024), pn = round_up(n, 1024), pk = round_up(k, 128);
  const std::int64_t split_k_accumulator =
      std::min<std::int64_t>(4 * pm * pn * slices, std::int64_t(4) << 30) * ((k + 8191) / 8192);
  const std::int64_t gemm = (pm * pk + pn * pk) * slices + 4 * (pm + pn) + split_k_accumulator;
  std::int64_t need = gemm;
  if (mantissa_bits <= 0) {
    const std::int64_t kb = (k + 63) / 64;
    need = std::max(need, 4 * (m * kb + n * kb + m * n));
  }
  return static_cast<std::size_t>(need + need / 4 + (std::int64_t(128) << 20));
}

bool EmulationBackend<Kokkos::Cuda>::run(const Kokkos::Cuda& space, bool trans_a, bool trans_b,
                                         std::int64_t m, std::int64_t n, std::int64_t k,
                                         double alpha, const double* A, std::int64_t lda,
                                         const double* B, std::int64_t ldb, double beta, double* C,
                                         std::int64_t ldc, int mantissa_bits, void* workspace,
                                         std::size_t workspace_bytes, std::string& why_not) {
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 130100
  const cudaDeviceProp& prop = cuda::device_properties(space.cuda_device());
  if (prop.major < 8) {
    why_not = std::string("cuBLAS FP64 emulation needs compute capability 8.0 or later, ") +
              prop.name + " has " + std::to_string(prop.major) + "." + std::to_string(prop.minor);
    return false;
  }
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Emulation);
  std::lock_guard<std::mutex> lock(*h.mutex);
  cuda::check(cublasSetMathMode(h.handle, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH),
              "cublasSetMathMode(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)");
  cuda::check(cublasSetEmulationStrategy(h.handle, CUBLAS_EMULATION_STRATEGY_EAGER),
              "cublasSetEmulationStrategy(EAGER)");
  if (mantissa_bits > 0) {
    cuda::check(cublasSetFixedPointEmulationMantissaControl(h.handle,
                                                            CUDA_EMULATION_MANTISSA_CONTROL_FIXED),
                "cublasSetFixedPointEmulationMantissaControl(FIXED)");
    cuda::check(cublasSetFixedPointEmulationMaxMantissaBitCount(h.handle, mantissa_bits),
                "cublasSetFixedPointEmulationMaxMantissaBitCount");
  } else {
    cuda::check(cublasSetFixedPointEmulationMantissaControl(
                    h.handle, CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC),
                "cublasSetFixedPointEmulationMantissaControl(DYNAMIC)");
    cuda::check(cublasSetFixedPointEmulationMaxMantissaBitCount(h.handle, dynamic_max_bits),
                "cublasSetFixedPointEmulationMaxMantissaBitCount");
  }
  cuda::check(cublasSetWorkspace(h.handle, workspace, workspace_bytes), "cublasSetWorkspace");
  cuda::check(cublasDgemm_64(h.handle, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                             trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, A, lda, B, ldb,
                             &beta, C, ldc),
              "cublasDgemm_64 (FP64 emulation)");
  cuda::note_cublas_used();
  return true;
#else
  (void)space, (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)A,
      (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc, (void)mantissa_bits,
      (void)workspace, (void)workspace_bytes;
  why_not = "this cuBLAS (" + std::to_string(CUBLAS_VERSION) +
            ") has no FP64 fixed-point emulation; it needs cuBLAS 13.1 or later";
  return false;
#endif
}

}  // namespace Impl
}  // namespace ozaki
