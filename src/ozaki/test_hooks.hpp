#pragma once
/// \file test_hooks.hpp
/// Process-wide settings for the tests and the perf tools: fault injection, scratch poisoning
/// and the choice between backend paths that give the same bits.  NOT part of the stable API.
///
/// The library reads no environment variable.  The test executables and the perf tools read
/// the variables of docs/building.md ("Test hooks") in their main and set these hooks
/// (unit_tests/hooks_from_environment.hpp).
///
/// Each field is read atomically wherever the library uses it, so set_test_hooks may be called
/// from any thread; a call already running may see the old or the new value of each field.
/// Set them before the calls they should affect.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>

namespace ozaki {
namespace Experimental {

/// Which cuBLAS entry point runs the INT8 products (CUDA backend; every entry gives the same
/// bits, integer products being exact).
enum class CublasInt8Path {
  /// cublasGemmEx with its own kernel choice (the default).
  GemmEx,
  /// cuBLASLt with its heuristic's first kernel.
  Lt,
  /// As Lt, printing the kernels cuBLASLt offers per shape to stderr.
  LtLogged,
  /// A batch of products (a pass's moduli) as one cublasGemmStridedBatchedEx call.
  Batched,
  /// A batch as one cuBLASLt call (strided-batch layouts).
  LtBatched,
};

struct TestHooks {
  /// Fill every new scratch buffer, and every buffer about to be freed, with 0xA5 bytes: a
  /// kernel that reads scratch it did not write, or a view left pointing into a freed buffer,
  /// then gives wrong results at once, instead of results that depend on what the memory held
  /// before.  (Environment of the tests: OZAKI_POISON_SCRATCH=1.)
  bool poison_scratch = false;
  /// Every scratch allocation above this many bytes fails as if the memory were exhausted
  /// (fault injection); empty: never.  (OZAKI_FAIL_SCRATCH_ABOVE=BYTES.)
  std::optional<std::int64_t> fail_scratch_above;
  /// Host INT8 products take the portable kernels even where oneDNN is exact.
  /// (OZAKI_ONEDNN=off.)
  bool onednn_off = false;
  /// CUDA INT8 products' cuBLAS entry point.  (OZAKI_CUBLAS_INT8=gemmex|lt|log|batched|ltbatched.)
  CublasInt8Path cublas_int8_path = CublasInt8Path::GemmEx;
  /// Scheme II's products reduced in the GEMM (sm_90a kernel) turned off: cuBLAS's products
  /// and a separate reduction, the same bits.  (OZAKI_RESIDUE_PRODUCTS=0.)
  bool residue_products_off = false;
  /// W8A8's products and epilogue in one kernel (CUDA, sm_90a) turned off: the INT8 GEMM's
  /// INT32 products and the portable epilogue, the same bits.  (OZAKI_FUSED_QUANTIZED=0.)
  bool fused_quantized_off = false;
  /// The sm_90a product kernel's CTAs (scheme II's residue products, W8A8's fused kernel) run
  /// one per tile, each loading both operands, instead of in clusters of 2 that load B's tiles
  /// once for both; the same bits.  (OZAKI_PRODUCT_PAIRS=0.)
  bool product_pairs_off = false;
  /// The vendor's FP8 block-scaled kernels (cuBLASLt, CUDA) are taken as absent: fp8_gemm on
  /// the device throws the BackendError a device without them gets, before anything is
  /// enqueued.  No effect on host spaces (their portable kernel is the feature there).
  /// (OZAKI_FP8_KERNELS=0.)
  bool fp8_kernels_off = false;
  /// Calls on host spaces run as if their stream were being captured into a graph: scheme II
  /// with the captured count, its device verdict evaluated on the host (crt/captured.hpp,
  /// DeviceBranch's default).  No effect on device spaces, whose capture is real.
  bool emulate_capture = false;
};
}  // namespace Experimental

namespace Impl {
/// The hooks as atomics (one instance per program: an inline function's static).
struct TestHookState {
  std::atomic<bool> poison_scratch{false};
  std::atomic<std::int64_t> fail_scratch_above{-1};  // -1: never
  std::atomic<bool> onednn_off{false};
  std::atomic<int> cublas_int8_path{static_cast<int>(Experimental::CublasInt8Path::GemmEx)};
  std::atomic<bool> residue_products_off{false};
  std::atomic<bool> fused_quantized_off{false};
  std::atomic<bool> product_pairs_off{false};
  std::atomic<bool> fp8_kernels_off{false};
  std::atomic<bool> emulate_capture{false};
};
inline TestHookState& test_hook_state() {
  static TestHookState state;
  return state;
}
}  // namespace Impl

namespace Experimental {

/// The hooks in force.
inline TestHooks test_hooks() {
  const Impl::TestHookState& s = Impl::test_hook_state();
  TestHooks h;
  h.poison_scratch = s.poison_scratch.load();
  const std::int64_t above = s.fail_scratch_above.load();
  if (above >= 0) h.fail_scratch_above = above;
  h.onednn_off = s.onednn_off.load();
  h.cublas_int8_path = static_cast<CublasInt8Path>(s.cublas_int8_path.load());
  h.residue_products_off = s.residue_products_off.load();
  h.fused_quantized_off = s.fused_quantized_off.load();
  h.product_pairs_off = s.product_pairs_off.load();
  h.fp8_kernels_off = s.fp8_kernels_off.load();
  h.emulate_capture = s.emulate_capture.load();
  return h;
}

/// Sets every hook (each field atomically; see the file's comment).
inline void set_test_hooks(const TestHooks& h) {
  Impl::TestHookState& s = Impl::test_hook_state();
  s.poison_scratch.store(h.poison_scratch);
  s.fail_scratch_above.store(h.fail_scratch_above ? std::max<std::int64_t>(*h.fail_scratch_above, 0)
                                                  : -1);
  s.onednn_off.store(h.onednn_off);
  s.cublas_int8_path.store(static_cast<int>(h.cublas_int8_path));
  s.residue_products_off.store(h.residue_products_off);
  s.fused_quantized_off.store(h.fused_quantized_off);
  s.product_pairs_off.store(h.product_pairs_off);
  s.fp8_kernels_off.store(h.fp8_kernels_off);
  s.emulate_capture.store(h.emulate_capture);
}

}  // namespace Experimental
}  // namespace ozaki
