// FP8 e4m3 GEMM with block scales through cuBLASLt (see ozaki/cuda/int8_gemm_cublas.hpp).
#include <ozaki/cuda/int8_gemm_cublas.hpp>

#include "cublas_handles.hpp"

#include <ozaki/errors.hpp>

#include <cstdint>
#include <map>
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
  if (prop.major != 9 || prop.minor != 0) {
    why_not = std::string("ozaki::fp8_gemm: device ") + prop.name + " (compute capability " +
              std::to_string(prop.major) + "." + std::to_string(prop.minor) +
              ") has no FP8 GEMM with 1 x 128 and 128 x 128 block scales: cuBLASLt offers them "
              "on compute capability 9.0 (Hopper) alone";
    return false;
  }
  if (Experimental::test_hooks().fp8_kernels_off) {
    why_not = std::string("ozaki::fp8_gemm: the FP8 block-scaled kernels of ") + prop.name +
              " are taken as absent (TestHooks::fp8_kernels_off)";
    return false;
  }
  const Fp8Forms f = forms(space);
  if (f.rows || f.columns) return true;
  why_not = std::string("ozaki::fp8_gemm: this cuBLASLt (") + std::to_string(cublasLtGetVersion()) +
            ") offers no FP8 kernel with VEC128 and BLK128x128 scales on " + prop.name +
            " (cuBLAS 12.9 or later has them)";
  return false;
}

namespace {

/// The descriptors of one form and cuBLASLt's first kernel for it (false: none offered).
/// rows: D (n x m, column-major) is C row-major: cuBLASLt's A is the weights stored k x n
/// (transposed: TN, the one form Hopper's FP8 kernels take) with BLK128x128 scales, its B the
/// activations stored k x m with VEC128 scales.  columns: D (m x n) is C column-major: A the
/// activations (VEC128), B the weights (BLK128x128).  The scales' storage is the same in both:
/// each follows its own operand's.
bool plan_form(cublasLtHandle_t lt, const Fp8GemmProblem& p, bool rows, Fp8Descriptors& x,
               cublasLtMatmulHeuristicResult_t& result) {
  cuda::check(cublasLtMatmulDescCreate(&x.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
              "cublasLtMatmulDescCreate(FP8)");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, "FP8 TRANSA");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, "FP8 TRANSB");
  const std::int32_t blocks = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  const std::int32_t vectors = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  const void* weight_scales = p.w_scales;
  const void* activation_scales = p.a_scales;
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, rows ? blocks : vectors, "FP8 A mode");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, rows ? vectors : blocks, "FP8 B mode");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                rows ? weight_scales : activation_scales, "FP8 A_SCALE_POINTER");
  set_attribute(x.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                rows ? activation_scales : weight_scales, "FP8 B_SCALE_POINTER");
  const cudaDataType_t d_type = p.d_bfloat16 ? CUDA_R_16BF : CUDA_R_32F;
  const std::int64_t a_cols = rows ? p.n : p.m, b_cols = rows ? p.m : p.n;
  cuda::check(cublasLtMatrixLayoutCreate(&x.a, CUDA_R_8F_E4M3, p.k, a_cols, rows ? p.ldw : p.lda),
              "cublasLtMatrixLayoutCreate(FP8 A)");
  cuda::check(cublasLtMatrixLayoutCreate(&x.b, CUDA_R_8F_E4M3, p.k, b_cols, rows ? p.lda : p.ldw),
              "cublasLtMatrixLayoutCreate(FP8 B)");
  cuda::check(cublasLtMatrixLayoutCreate(&x.d, d_type, a_cols, b_cols, p.ldd),
              "cublasLtMatrixLayoutCreate(FP8 D)");
  cuda::check(cublasLtMatmulPreferenceCreate(&x.preference), "cublasLtMatmulPreferenceCreate");
  const std::size_t workspace_bytes = cuda::lt_workspace_bytes;
  cuda::check(
      cublasLtMatmulPreferenceSetAttribute(x.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &workspace_bytes, sizeof workspace_bytes),
      "cublasLtMatmulPreferenceSetAttribute(FP8 workspace)");
  int results = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt, x.desc, x.a, x.b, x.d, x.d,
                                                               x.preference, 1, &result, &results);
  return status == CUBLAS_STATUS_SUCCESS && results > 0;
}

}  // namespace

namespace {
std::mutex& forms_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<int, Fp8Forms>& known_forms() {
  static std::map<int, Fp8Forms> known;
  return known;
}
}  // namespace

bool Fp8GemmBackend<Kokkos::Cuda>::ready(const Kokkos::Cuda& space) {
  {
    std::lock_guard<std::mutex> lock(forms_mutex());
    if (known_forms().count(space.cuda_device()) == 0) return false;
  }
  return cuda::lt_ready_for(space.cuda_stream());
}

Fp8Forms Fp8GemmBackend<Kokkos::Cuda>::forms(const Kokkos::Cuda& space) {
  std::mutex& mutex = forms_mutex();
  std::map<int, Fp8Forms>& known = known_forms();
  const int device = space.cuda_device();
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto found = known.find(device);
    if (found != known.end()) return found->second;
  }
  // A 128^3 problem with aligned (never read) addresses: which forms this cuBLASLt offers.
  Fp8GemmProblem probe;
  probe.m = probe.n = probe.k = probe.lda = probe.ldw = probe.ldd = 128;
  probe.a_scales = probe.w_scales = reinterpret_cast<const float*>(std::uintptr_t(256));
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Int8);
  Fp8Forms f;
  {
    std::lock_guard<std::mutex> lock(*h.mutex);
    cuda::make_lt(*h.int8_kernels);
    cublasLtMatmulHeuristicResult_t result{};
    Fp8Descriptors rows, columns;
    f.rows = plan_form(h.int8_kernels->lt, probe, true, rows, result);
    f.columns = plan_form(h.int8_kernels->lt, probe, false, columns, result);
  }
  std::lock_guard<std::mutex> lock(mutex);
  known[device] = f;
  return f;
}

void Fp8GemmBackend<Kokkos::Cuda>::run(const Kokkos::Cuda& space, const Fp8GemmProblem& p) {
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Int8);
  std::lock_guard<std::mutex> lock(*h.mutex);
  cuda::make_lt(*h.int8_kernels);
  Fp8Descriptors x;
  cublasLtMatmulHeuristicResult_t result{};
  if (!plan_form(h.int8_kernels->lt, p, p.d_row_major, x, result)) {
    throw BackendError("ozaki::fp8_gemm: cuBLASLt offers no FP8 block-scaled kernel for M = " +
                       std::to_string(p.m) + ", N = " + std::to_string(p.n) +
                       ", K = " + std::to_string(p.k) +
                       (p.d_row_major ? " (weights as its A)" : " (activations as its A)"));
  }
  const float one = 1.0f, zero = 0.0f;
  const void* first = p.d_row_major ? static_cast<const void*>(p.w) : p.a;
  const void* second = p.d_row_major ? static_cast<const void*>(p.a) : p.w;
  cuda::check(cublasLtMatmul(h.int8_kernels->lt, x.desc, &one, first, x.a, second, x.b, &zero, p.d,
                             x.d, p.d, x.d, &result.algo, h.int8_kernels->workspace,
                             cuda::lt_workspace_bytes, space.cuda_stream()),
              "cublasLtMatmul(FP8 e4m3, block scales)");
  cuda::note_cublas_used();
}

}  // namespace Impl
}  // namespace ozaki
