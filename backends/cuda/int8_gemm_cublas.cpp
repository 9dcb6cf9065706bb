// INT8 products through cuBLAS (see ozaki/cuda/int8_gemm_cublas.hpp).
#include <ozaki/cuda/int8_gemm_cublas.hpp>

#include "cublas_handles.hpp"

#include <ozaki/errors.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace ozaki {
namespace Impl {

void Int8Gemm<Kokkos::Cuda, true>::run(const Kokkos::Cuda& space, const Int8GemmProblem& p) {
  if (p.rows_a == 0 || p.rows_b == 0) return;
  auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  if ((p.rows_a | p.rows_b | p.length | p.lda | p.ldb | p.ldc) % 16 != 0 || !aligned(p.a) ||
      !aligned(p.b) || !aligned(p.c)) {
    // cuBLAS answers such calls with CUBLAS_STATUS_NOT_SUPPORTED or a slow path.
    throw InvalidArgument(
        "INT8 GEMM operands must have dimensions and leading dimensions that are "
        "multiples of 16 and 16-byte aligned pointers");
  }
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Int8);
  std::lock_guard<std::mutex> lock(*h.mutex);
  const std::int32_t one = 1, zero = 0;
  // cuBLAS's INT8 rate drops for very wide outputs; calls of at most 8192 output columns
  // recover part of it (docs/benchmarks.md, "Rates the cost model uses").
  constexpr std::int64_t column_block = 8192;
  for (std::int64_t n0 = 0; n0 < p.rows_b; n0 += column_block) {
    const std::int64_t columns = std::min(column_block, p.rows_b - n0);
    // Column-major view of the TN form: P (rows_a x columns) = A^T B with A stored
    // length x rows_a (lda) and B stored length x columns (ldb), both K-contiguous.
    cuda::check(cublasGemmEx_64(h.handle, CUBLAS_OP_T, CUBLAS_OP_N, p.rows_a, columns, p.length,
                                &one, p.a, CUDA_R_8I, p.lda, p.b + n0 * p.ldb, CUDA_R_8I, p.ldb,
                                &zero, p.c + n0 * p.ldc, CUDA_R_32I, p.ldc, CUBLAS_COMPUTE_32I,
                                CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx_64(INT8 x INT8 -> INT32, TN)");
  }
  cuda::note_cublas_used();
}

bool Int8Gemm<Kokkos::Cuda, true>::torn_down(std::string& why) {
  if (!cuda::cublas_torn_down()) return false;
  why =
      "ozaki::gemm on CUDA was called after the process began to exit: cuBLAS has released "
      "its state by then (call it before exit, or on a host space)";
  return true;
}

bool Int8Gemm<Kokkos::Cuda, true>::supported(const Kokkos::Cuda& space, std::string& why_not) {
  const cudaDeviceProp& prop = cuda::device_properties(space.cuda_device());
  if (prop.major * 10 + prop.minor >= 75) return true;
  why_not = std::string("device ") + prop.name + " (compute capability " +
            std::to_string(prop.major) + "." + std::to_string(prop.minor) +
            ") has no INT8 tensor-core GEMM";
  return false;
}

double Int8Gemm<Kokkos::Cuda, true>::int8_over_fp64_throughput(const Kokkos::Cuda& space) {
  const cudaDeviceProp& prop = cuda::device_properties(space.cuda_device());
  // Measured rates where we have them (docs/benchmarks.md, "Rates the cost model uses"),
  // datasheet dense rates otherwise:
  //   sm_90 (H100/H200): cublasGemmEx INT8 TN 1500 TOP/s over cublasDgemm 56.6 TFLOP/s (scheme
  //   II's products at 8192^3 and 16384^3 ran at 1.45-1.56 POP/s in the GPU timelines of
  //   9c9c7a8 and abdcd20; 1461 was int8_rates' square products before 128-padding)
  //   sm_80 (A100): 624 / 19.5; sm_86/89/75 (FP64 at 1/64 of FP32): INT8 far ahead.
  switch (prop.major * 10 + prop.minor) {
    case 90: return 1500.0 / 56.6;
    case 80: return 624.0 / 19.5;
    case 75:
    case 86:
    case 87:
    case 89: return 100.0;
    default: return 0;  // unknown: no preference (Int8Slices)
  }
}

double Int8Gemm<Kokkos::Cuda, true>::fp64_flops_per_byte(const Kokkos::Cuda& space) {
  const cudaDeviceProp& prop = cuda::device_properties(space.cuda_device());
  // sm_90: cublasDgemm's 56.6 TFLOP/s over the ~4.0 TB/s that streaming kernels reach on the
  // H200 (docs/benchmarks.md, "Rates the cost model uses"); sm_80 (A100): 19.5 over ~1.5.
  switch (prop.major * 10 + prop.minor) {
    case 90: return 56.6 / 4.0;
    case 80: return 19.5 / 1.5;
    default: return 0;  // unknown: Auto's cost model ignores memory traffic
  }
}

}  // namespace Impl
}  // namespace ozaki
