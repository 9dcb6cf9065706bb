// FP8 e4m3 GEMM with block scales through cuBLASLt (see ozaki/cuda/int8_gemm_cublas.hpp).
#include <ozaki/cuda/int8_gemm_cublas.hpp>

#include "cublas_handles.hpp"

#include <ozaki/errors.hpp>

#include <cstdint>
#include <mutex>
#include <string>

namespace ozaki {
namespace Impl {

namespace {

/// cuBLASLt descriptors of one call, destroyed with it.
struct Fp8Descriptors {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~Fp8Descriptors() {
    if (preference != nullptr) cublasLtMatmulPreferenceDestroy(preference);
    if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
  }
};

template <class T>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                   const T& value, const char* what) {
  cuda::check(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value), what);
}

}  // namespace

bool Fp8GemmBackend<Kokkos::Cuda>::supported(const Kokkos::Cuda& space, std::string& why_not) {
  const cudaDeviceProp& prop = cuda::device_properties(space.cuda_device());
  if (prop.major == 9 && prop.minor == 0) return true;
  why_not = std::string("ozaki::fp8_gemm: device ") + prop.name + " (compute capability " +
            std::to_string(prop.major) + "." + std::to_string(prop.minor) +
            ") has no FP8 GEMM with 1 x 128 and 128 x 128 block scales: cuBLASLt offers them "
            "on compute capability 9.0 (Hopper) alone";
  return false;
}

void Fp8GemmBackend<Kokkos::Cuda>::run(const Kokkos::Cuda& space, const Fp8GemmProblem& p) {
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Int8);
  std::lock_guard<std::mutex> lock(*h.mutex);
  cuda::make_lt(*h.int8_kernels);
  // Column-major view: D (n x m, ldd) = op(A) B with cuBLASLt's A = the weights stored k x n
  // (ldw, transposed: TN, the one form Hopper's FP8 kernels take) and B = the activations
  // stored k x m (lda).
  Fp8Descriptors x;
  cuda::check(cublasLtMatmulDescCreate(&x.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
              "cublasLtMatmulDescCreate(FP8)");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, "FP8 TRANSA");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, "FP8 TRANSB");
  const std::int32_t blocks = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  const std::int32_t vectors = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, blocks, "FP8 A_SCALE_MODE");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, vectors, "FP8 B_SCALE_MODE");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(p.w_scales),
                "FP8 A_SCALE_POINTER");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(p.a_scales),
                "FP8 B_SCALE_POINTER");
  const cudaDataType_t d_type = p.d_bfloat16 ? CUDA_R_16BF : CUDA_R_32F;
  cuda::check(cublasLtMatrixLayoutCreate(&x.a, CUDA_R_8F_E4M3, p.k, p.n, p.ldw),
              "cublasLtMatrixLayoutCreate(FP8 A)");
  cuda::check(cublasLtMatrixLayoutCreate(&x.b, CUDA_R_8F_E4M3, p.k, p.m, p.lda),
              "cublasLtMatrixLayoutCreate(FP8 B)");
  cuda::check(cublasLtMatrixLayoutCreate(&x.d, d_type, p.n, p.m, p.ldd),
              "cublasLtMatrixLayoutCreate(FP8 D)");
  cuda::check(cublasLtMatmulPreferenceCreate(&x.preference), "cublasLtMatmulPreferenceCreate");
  const std::size_t workspace_bytes = cuda::lt_workspace_bytes;
  cuda::check(
      cublasLtMatmulPreferenceSetAttribute(x.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &workspace_bytes, sizeof workspace_bytes),
      "cublasLtMatmulPreferenceSetAttribute(FP8 workspace)");
  cublasLtMatmulHeuristicResult_t result{};
  int results = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      h.int8_kernels->lt, x.desc, x.a, x.b, x.d, x.d, x.preference, 1, &result, &results);
  if (status != CUBLAS_STATUS_SUCCESS || results == 0) {
    throw BackendError("ozaki::fp8_gemm: cuBLASLt offers no FP8 block-scaled kernel for M = " +
                       std::to_string(p.m) + ", N = " + std::to_string(p.n) +
                       ", K = " + std::to_string(p.k) + " (status " +
                       std::to_string(static_cast<int>(status)) + ")");
  }
  const float one = 1.0f, zero = 0.0f;
  cuda::check(cublasLtMatmul(h.int8_kernels->lt, x.desc, &one, p.w, x.a, p.a, x.b, &zero, p.d, x.d,
                             p.d, x.d, &result.algo, h.int8_kernels->workspace,
                             cuda::lt_workspace_bytes, space.cuda_stream()),
              "cublasLtMatmul(FP8 e4m3, block scales)");
  cuda::note_cublas_used();
}

}  // namespace Impl
}  // namespace ozaki
