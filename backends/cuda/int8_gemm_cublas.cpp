// INT8 products through cuBLAS (see ozaki/cuda/int8_gemm_cublas.hpp).
#include <ozaki/cuda/int8_gemm_cublas.hpp>

#include "cublas_handles.hpp"
#include "residue_products_sm90.hpp"

#include <ozaki/errors.hpp>
#include <ozaki/test_hooks.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

namespace ozaki {
namespace Impl {

namespace {

/// Which cuBLAS entry point runs the INT8 products, from TestHooks::cublas_int8_path
/// (Experimental::CublasInt8Path):
///   GemmEx     cublasGemmEx with its own kernel choice (the default);
///   Lt         cuBLASLt with its heuristic's first kernel (lt_kernel);
///   LtLogged   as Lt, printing the kernels cuBLASLt offers per shape to stderr;
///   Batched    a batch of products (a pass's moduli) as one cublasGemmStridedBatchedEx call;
///   LtBatched  a batch as one cuBLASLt call (strided-batch layouts), with the kernel its
///              heuristic offers first for the batch.
/// cublasGemmEx stays the default: cuBLASLt's first kernel (algo 39, once it has a
/// workspace: with none it lists only its slower algo 21) ran whole calls as fast as
/// cublasGemmEx and no faster, and the strided-batched call picks a slower kernel than
/// cublasGemmEx does, so it lengthens the calls (the benchmarks diary in docs/history/,
/// "cuBLASLt with a workspace, batched products, norm tiles").  Every entry gives the
/// same bits (integer products; the CUDA tests and the cross replay pass with each).
using Int8Entry = Experimental::CublasInt8Path;

Int8Entry int8_entry() { return Experimental::test_hooks().cublas_int8_path; }

/// The largest power of two, at most 256, that divides the three addresses: cuBLASLt's
/// heuristic assumes 256-byte alignment unless told less, and offers only kernels that the
/// given alignment allows.
std::uint32_t common_alignment(const void* a, const void* b, const void* c) {
  const std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(a) |
                              reinterpret_cast<std::uintptr_t>(b) |
                              reinterpret_cast<std::uintptr_t>(c) | 256u;
  return static_cast<std::uint32_t>(bits & (~bits + 1));
}

/// A batch of products for cuBLASLt's strided-batch layouts (count 1: one product).
struct LtBatch {
  std::int64_t count = 1, stride_a = 0, stride_b = 0, stride_c = 0;
};

/// The kernels cuBLASLt's heuristic offers for one shape, on stderr.
void print_lt_offers(std::int64_t rows, std::int64_t columns, std::int64_t length, std::int64_t lda,
                     std::int64_t ldb, std::int64_t ldc, std::uint32_t alignment,
                     const cublasLtMatmulHeuristicResult_t* result, int results) {
  std::fprintf(stderr, "[ozaki] INT8 %lld x %lld x %lld (lda %lld, ldb %lld, ldc %lld, align %u):",
               (long long)rows, (long long)columns, (long long)length, (long long)lda,
               (long long)ldb, (long long)ldc, alignment);
  for (int i = 0; i < results; ++i) {
    std::uint32_t tile = 0, stages = 0;
    std::uint16_t cluster = 0;
    std::int32_t id = 0, split = 0;
    std::size_t w = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&result[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id,
                                         &w);
    cublasLtMatmulAlgoConfigGetAttribute(&result[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                         sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&result[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                         sizeof stages, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&result[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split,
                                         sizeof split, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&result[i].algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                         &cluster, sizeof cluster, &w);
    std::fprintf(stderr, " [%d: algo %d tile %u stages %u splitk %d cluster %u ws %zu]", i, id,
                 tile, stages, split, unsigned(cluster), result[i].workspaceSize);
  }
  std::fprintf(stderr, "\n");
}

/// The cuBLASLt kernel for P (rows x columns) = A^T B, K = length (TN, INT8 -> INT32), chosen
/// once per shape and alignment by cuBLASLt's heuristic (its first answer, within the handle's
/// workspace of lt_workspace_bytes).
/// At scheme II's pass shape 16384 x 2048 x 16384 on the H200, 256-byte aligned, that is algo
/// 39 with 256 x 128 tiles and 2 x 1 clusters.  Integer products are exact: every kernel gives
/// the same bits (the CUDA tests and the cross replay pass with cuBLASLt).
const cuda::Int8Kernels::Choice& lt_kernel(cuda::Int8Kernels& kernels, std::int64_t rows,
                                           std::int64_t columns, std::int64_t length,
                                           std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
                                           std::uint32_t alignment, const LtBatch& batch = {}) {
  cuda::make_lt(kernels);
  const cuda::Int8Kernels::Shape key{
      rows,        columns,        length,         lda,           ldb, ldc, alignment,
      batch.count, batch.stride_a, batch.stride_b, batch.stride_c};
  auto found = kernels.chosen.find(key);
  if (found != kernels.chosen.end()) return found->second;
  // A bounded memory of shapes: programs that multiply many shapes ask the heuristic again.
  if (kernels.chosen.size() >= 256) {
    for (auto& kv : kernels.chosen) cuda::release(kv.second);
    kernels.chosen.clear();
  }
  cuda::Int8Kernels::Choice& choice = kernels.chosen[key];
  cuda::check(cublasLtMatmulDescCreate(&choice.desc, CUBLAS_COMPUTE_32I, CUDA_R_32I),
              "cublasLtMatmulDescCreate");
  const cublasOperation_t transpose = CUBLAS_OP_T;
  cuda::check(cublasLtMatmulDescSetAttribute(choice.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                             sizeof transpose),
              "cublasLtMatmulDescSetAttribute(TRANSA)");
  cuda::check(cublasLtMatrixLayoutCreate(&choice.a, CUDA_R_8I, length, rows, lda),
              "cublasLtMatrixLayoutCreate(A)");
  cuda::check(cublasLtMatrixLayoutCreate(&choice.b, CUDA_R_8I, length, columns, ldb),
              "cublasLtMatrixLayoutCreate(B)");
  cuda::check(cublasLtMatrixLayoutCreate(&choice.c, CUDA_R_32I, rows, columns, ldc),
              "cublasLtMatrixLayoutCreate(C)");
  if (batch.count > 1) {
    const std::int32_t count = static_cast<std::int32_t>(batch.count);
    const std::pair<cublasLtMatrixLayout_t, std::int64_t> layouts[] = {
        {choice.a, batch.stride_a}, {choice.b, batch.stride_b}, {choice.c, batch.stride_c}};
    for (const auto& [layout, stride] : layouts) {
      cuda::check(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                   &count, sizeof count),
                  "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
      cuda::check(cublasLtMatrixLayoutSetAttribute(
                      layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
                  "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
    }
  }
  cublasLtMatmulPreference_t preference = nullptr;
  cuda::check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const std::size_t workspace_bytes = cuda::lt_workspace_bytes;
  cublasStatus_t status =
      cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &workspace_bytes, sizeof workspace_bytes);
  for (const auto attribute :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (status == CUBLAS_STATUS_SUCCESS)
      status =
          cublasLtMatmulPreferenceSetAttribute(preference, attribute, &alignment, sizeof alignment);
  cublasLtMatmulHeuristicResult_t result[8]{};
  int results = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(kernels.lt, choice.desc, choice.a, choice.b, choice.c,
                                            choice.c, preference, 8, result, &results);
  cublasLtMatmulPreferenceDestroy(preference);
  // No kernel offered (or the heuristic refused the problem): cublasGemmEx runs it.
  choice.found = status == CUBLAS_STATUS_SUCCESS && results > 0;
  if (choice.found) choice.algo = result[0].algo;
  if (int8_entry() == Int8Entry::LtLogged) {
    print_lt_offers(rows, columns, length, lda, ldb, ldc, alignment, result, results);
  }
  return choice;
}

/// P = A^T B through cuBLASLt with `kernel` (found), on the bound handle's stream.
void lt_matmul(const cuda::BoundHandle& h, const cuda::Int8Kernels::Choice& kernel,
               const std::int8_t* a, const std::int8_t* b, std::int32_t* c, cudaStream_t stream,
               const char* what) {
  const std::int32_t one = 1, zero = 0;
  cuda::check(cublasLtMatmul(h.int8_kernels->lt, kernel.desc, &one, a, kernel.a, b, kernel.b, &zero,
                             c, kernel.c, c, kernel.c, &kernel.algo, h.int8_kernels->workspace,
                             cuda::lt_workspace_bytes, stream),
              what);
}

}  // namespace

void Int8Gemm<Kokkos::Cuda, true>::run(const Kokkos::Cuda& space, const Int8GemmProblem& p) {
  if (p.rows_a == 0 || p.rows_b == 0 || p.batch == 0) return;
  auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  if ((p.rows_a | p.rows_b | p.length | p.lda | p.ldb | p.ldc) % 16 != 0 || !aligned(p.a) ||
      !aligned(p.b) || !aligned(p.c) ||
      (p.batch > 1 && (p.stride_a | p.stride_b | 4 * p.stride_c) % 16 != 0)) {
    // cuBLAS answers such calls with CUBLAS_STATUS_NOT_SUPPORTED or a slow path.
    throw InvalidArgument(
        "INT8 GEMM operands must have dimensions, leading dimensions and batch strides that "
        "are multiples of 16 and 16-byte aligned pointers");
  }
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Int8);
  std::lock_guard<std::mutex> lock(*h.mutex);
  const std::int32_t one = 1, zero = 0;
  const Int8Entry entry = int8_entry();
  // cuBLAS's INT8 rate drops for very wide outputs; calls of at most 8192 output columns
  // recover part of it (docs/benchmarks.md, "Rates the cost model uses").
  constexpr std::int64_t column_block = 8192;
  for (std::int64_t n0 = 0; n0 < p.rows_b; n0 += column_block) {
    const std::int64_t columns = std::min(column_block, p.rows_b - n0);
    // Column-major view of the TN form: P (rows_a x columns) = A^T B with A stored
    // length x rows_a (lda) and B stored length x columns (ldb), both K-contiguous.
    const std::int8_t* b = p.b + n0 * p.ldb;
    std::int32_t* c = p.c + n0 * p.ldc;
    if (entry == Int8Entry::LtBatched) {
      const cuda::Int8Kernels::Choice& kernel =
          lt_kernel(*h.int8_kernels, p.rows_a, columns, p.length, p.lda, p.ldb, p.ldc,
                    common_alignment(p.a, b, c), {p.batch, p.stride_a, p.stride_b, p.stride_c});
      if (kernel.found) {
        lt_matmul(h, kernel, p.a, b, c, space.cuda_stream(),
                  "cublasLtMatmul(INT8 x INT8 -> INT32, TN, strided batch)");
        continue;
      }
    }
    if (entry == Int8Entry::Batched) {
      cuda::check(cublasGemmStridedBatchedEx_64(h.handle, CUBLAS_OP_T, CUBLAS_OP_N, p.rows_a,
                                                columns, p.length, &one, p.a, CUDA_R_8I, p.lda,
                                                p.stride_a, b, CUDA_R_8I, p.ldb, p.stride_b, &zero,
                                                c, CUDA_R_32I, p.ldc, p.stride_c, p.batch,
                                                CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmStridedBatchedEx_64(INT8 x INT8 -> INT32, TN)");
      continue;
    }
    for (std::int64_t i = 0; i < p.batch; ++i) {
      const Int8GemmProblem item = batch_item(p, i);
      const std::int8_t* ai = item.a;
      const std::int8_t* bi = item.b + n0 * p.ldb;
      std::int32_t* ci = item.c + n0 * p.ldc;
      if (entry != Int8Entry::GemmEx) {
        const cuda::Int8Kernels::Choice& kernel =
            lt_kernel(*h.int8_kernels, p.rows_a, columns, p.length, p.lda, p.ldb, p.ldc,
                      common_alignment(ai, bi, ci));
        if (kernel.found) {
          lt_matmul(h, kernel, ai, bi, ci, space.cuda_stream(),
                    "cublasLtMatmul(INT8 x INT8 -> INT32, TN)");
          continue;
        }
      }
      cuda::check(cublasGemmEx_64(h.handle, CUBLAS_OP_T, CUBLAS_OP_N, p.rows_a, columns, p.length,
                                  &one, ai, CUDA_R_8I, p.lda, bi, CUDA_R_8I, p.ldb, &zero, ci,
                                  CUDA_R_32I, p.ldc, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx_64(INT8 x INT8 -> INT32, TN)");
    }
  }
  cuda::note_cublas_used();
}

namespace {
cuda::ResidueProducts residue_problem(const Int8GemmProblem& p, std::int8_t* tiles) {
  cuda::ResidueProducts r;
  r.a = p.a;
  r.b = p.b;
  r.rows_a = p.rows_a;
  r.rows_b = p.rows_b;
  r.kpad = p.length;
  r.moduli = static_cast<int>(p.batch);
  r.tiles = tiles;
  return r;
}
}  // namespace

bool ResidueGemmBackend<Kokkos::Cuda>::supported(const Kokkos::Cuda& space,
                                                 const Int8GemmProblem& p, std::string& why_not) {
  if (Experimental::test_hooks().residue_products_off) {
    why_not = "turned off (TestHooks::residue_products_off)";
    return false;
  }
  // The kernel's operand form: the pass's L products of interleaved rows (residue_tiles.hpp).
  if (p.batch < 1 || p.stride_a != p.length || p.stride_b != p.length ||
      p.lda != p.batch * p.length || p.ldb != p.lda) {
    why_not = "operands not in scheme II's interleaved form";
    return false;
  }
  return cuda::residue_products_supported(space.cuda_device(), residue_problem(p, nullptr),
                                          why_not);
}

void ResidueGemmBackend<Kokkos::Cuda>::run(const Kokkos::Cuda& space, const Int8GemmProblem& p,
                                           std::int8_t* tiles) {
  cuda::residue_products(residue_problem(p, tiles), !Experimental::test_hooks().product_pairs_off,
                         space.cuda_stream());
}

bool FusedQuantizedGemmBackend<Kokkos::Cuda>::supported(const Kokkos::Cuda& space,
                                                        const QuantizedGemmProblem& p,
                                                        std::string& why_not) {
  if (Experimental::test_hooks().fused_quantized_off) {
    why_not = "turned off (TestHooks::fused_quantized_off)";
    return false;
  }
  return cuda::scaled_products_supported(space.cuda_device(), p, why_not);
}

void FusedQuantizedGemmBackend<Kokkos::Cuda>::run(const Kokkos::Cuda& space,
                                                  const QuantizedGemmProblem& p) {
  cuda::scaled_products(p, !Experimental::test_hooks().product_pairs_off, space.cuda_stream());
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
  // The INT8 rate over the FP64 GEMM rate, both in operations per second.  Calibrated rates
  // where we have them, datasheet dense rates otherwise:
  //   sm_90 (H100/H200): cublasGemmEx's INT8 TN rate in scheme II's padded products over
  //   cublasDgemm's rate, as measured in docs/benchmarks.md, "Rates the cost model uses"
  //   (the INT8 figure is the rate of the products inside whole calls, which is what the
  //   cost model predicts, not that of one isolated square product);
  //   sm_80 (A100): the datasheet's INT8 and FP64 tensor-core rates;
  //   sm_86/89/75 (FP64 at 1/64 of FP32): INT8 far ahead.
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
  // FP64 GEMM flops per byte of memory traffic.  sm_90: the H200's measured balance scaled by
  // this part's peaks (sm90_fp64_flops_per_byte: an H100's HBM3 makes the memory-bound phases
  // half as dear again); sm_80 (A100): the datasheet's FP64 tensor-core rate over its bandwidth.
  switch (prop.major * 10 + prop.minor) {
    case 90: return sm90_fp64_flops_per_byte(cuda::device_peaks(space.cuda_device()));
    case 80: return 19.5 / 1.5;
    default: return 0;  // unknown: Auto's cost model ignores memory traffic
  }
}

}  // namespace Impl
}  // namespace ozaki
