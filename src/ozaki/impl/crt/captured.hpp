#pragma once
/// \file captured.hpp
/// Scheme II inside a CUDA graph (docs/design.md §7, "Scheme II inside a graph").  While the
/// caller's stream is being captured, nothing may wait for the device, so the count cannot come
/// from the data: it comes from the shape (crt_capture_moduli), and the data decide on the
/// device, at every replay, whether that count keeps the call's promise.  The call enqueues
///   pass 1, the row norms, the coverage certificate and the summary partials of both operands,
///   the fast rule's bits for the count,
///   the verdict (crt_capture_verdict, one thread on the device), and a branch on it:
///     kept:     the residues, the INT8 products and the reconstruction of that count (the bits
///               of an eager Int8Crt call with the same count and the fast rule);
///     not kept: native FP64 GEMM,
/// each branch writing C, the other not running at all.  DeviceBranch (backend.hpp) is how a
/// backend branches on the device; host spaces branch on the host (the tests' emulation).

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/bounds.hpp>
#include <ozaki/impl/common/pipeline.hpp>
#include <ozaki/impl/complex/embedding.hpp>
#include <ozaki/impl/crt/coverage.hpp>
#include <ozaki/impl/crt/execution.hpp>
#include <ozaki/impl/crt/fast_rule.hpp>
#include <ozaki/impl/crt/layout.hpp>
#include <ozaki/impl/crt/row_summary.hpp>
#include <ozaki/impl/crt/rules.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace ozaki {
namespace Impl {

/// The peak ratio sqrt(K) max_r n_r / l1_r of both operands the count of a captured call is
/// chosen for.  Uniformly distributed rows have about 1.16 to 1.18, Gaussian ones 1.25 to 1.29,
/// the benchmarks' (U(-1/2,1/2)) exp(0.5 N(0,1)) 1.31 to 1.39 (the largest of 1024 to 4096 rows,
/// K = 1024 to 16384); the fast model's 14 moduli hold up to 1.42 for every K, one modulus
/// more (7% more products) would hold far beyond.  Data beyond the count's reach make the
/// verdict take native FP64 GEMM.
constexpr double crt_capture_peak = 1.4;

/// The moduli count of a call captured into a graph: the fast rule's for rows of peak ratio
/// crt_capture_peak for the accuracy of unit roundoff u (the count depends on K and u alone).
inline int crt_capture_moduli(std::int64_t K, double u = fp64_unit_roundoff) {
  const double q = crt_capture_peak / std::sqrt(static_cast<double>(K));
  return crt_fast_moduli(K, q, q, u);
}

/// What the verdict needs of the plan, computed on the host when the call is captured.
struct CrtCaptureConstants {
  double k = 0;              // K
  double sqrt_k = 0;         // sqrt(K), as crt_fast_model takes it
  double target = 0;         // crt_fast_target(L, K): the bits' target
  double target_fewer = 0;   // crt_fast_target(L - crt_fast_extra_moduli, K)
  double slack = 0;          // coverage_l1_slack(K)
  double promise = 0;        // the componentwise bound the call must keep
  double unit_roundoff = 0;  // the fast model's target (CallPlan::unit_roundoff)
};

inline CrtCaptureConstants crt_capture_constants(int moduli, std::int64_t K, double promise,
                                                 double unit_roundoff) {
  CrtCaptureConstants c;
  c.k = static_cast<double>(K);
  c.sqrt_k = std::sqrt(c.k);
  c.target = crt_fast_target(moduli, K);
  c.target_fewer = crt_fast_target(moduli - crt_fast_extra_moduli, K);
  c.slack = coverage_l1_slack(K);
  c.promise = promise;
  c.unit_roundoff = unit_roundoff;
  return c;
}

/// The fewest bits of any row of either operand under the fast rule's target for the count
/// (the largest l2 norms of the summary maxima v: fast_row_bits).
KOKKOS_INLINE_FUNCTION int crt_fast_fewest_bits(const CrtCaptureConstants& c, const double* v) {
  const int bits_a = fast_row_bits(v[2], c.target);
  const int bits_b = fast_row_bits(v[operand_summary_values + 2], c.target);
  return bits_a < bits_b ? bits_a : bits_b;
}

/// Whether L moduli under the fast rule keep the promise on data with these summary maxima
/// (summary_maxima: both operands' OperandSummary values): what an eager call with an
/// automatic count checks, in its order, answered for the fixed L:
///   no NaN or Inf (else native FP64 GEMM gives the IEEE result);
///   peaks in the fast rule's classes (K q_A q_B <= crt_fast_extended_peak), the coverage
///   certificate within crt_coverage_gate (else the eager call takes the counted rule), and the
///   fast model's count, with its extra modulus for moderate peaks, at most L
///   (crt_fast_auto_moduli <= L: the model at L, or L - 1, meets the target);
///   every row at least crt_min_bits bits;
///   the certificate's componentwise bound of these bits within the promise.
/// The same arithmetic in the same order as the eager planner's (rules.hpp, coverage.hpp), so
/// the host and the device decide alike (up to a device's fused multiply-add in the last
/// step's bound, within an ulp of a value the promise is rarely that close to).
/// crt_fast_bound_at is that bound, +Inf where an earlier step fails; the verdict compares it
/// with the promise.  A batch of products (batched/crt_batch.hpp) asks it of every product.
KOKKOS_INLINE_FUNCTION double crt_fast_bound_at(const CrtCaptureConstants& c, const double* v) {
  const double* a = v;
  const double* b = v + operand_summary_values;
  if (a[0] > 0 || b[0] > 0) return positive_infinity();
  const double peak = c.k * a[1] * b[1];
  if (!(peak <= crt_fast_extended_peak)) return positive_infinity();
  const double model_target = peak > crt_accurate_peak ? c.target_fewer : c.target;
  if (!(model_target > 0) || !(c.sqrt_k * (a[1] + b[1]) / model_target <= c.unit_roundoff)) {
    return positive_infinity();
  }
  const double coverage = a[3] < b[3] ? a[3] : b[3];
  if (!(coverage <= crt_coverage_gate)) return positive_infinity();
  const int fewest = crt_fast_fewest_bits(c, v);
  if (fewest < crt_min_bits) return positive_infinity();
  const double split_a = c.slack * a[4] / c.target;
  const double split_b = c.slack * b[4] / c.target;
  const double cross =
      (split_a < split_b ? split_a : split_b) * c.k * compat::ldexp(1.0, 1 - fewest);
  return crt_componentwise_bound(split_a, split_b, cross);
}

KOKKOS_INLINE_FUNCTION bool crt_capture_verdict(const CrtCaptureConstants& c, const double* v) {
  return crt_fast_bound_at(c, v) <= c.promise;
}

/// The host's branch (backend.hpp): waits for the space, then the verdict and its branch.
template <class ExecSpace>
void DeviceBranch<ExecSpace>::decide(const CrtCaptureConstants& c, const double* partials,
                                     int teams) {
  space_.fence();
  double v[summary_values] = {};
  summary_maxima(partials, teams, v);
  branches_[crt_capture_verdict(c, v) ? 0 : 1](space_);
}

/// The Report's reason for a scheme II call captured into a graph.
inline std::string crt_captured_reason(int moduli) {
  return "the stream is being captured into a graph: " + std::to_string(moduli) +
         " moduli (fast rule) from the shape, certified on the device at every replay against "
         "the componentwise bound of native FP64 GEMM; a replay whose data it does not certify "
         "runs native FP64 GEMM in the graph instead";
}

/// The rows of a complex call that a captured call copies (CrtComplexTarget::copy_x, copy_y):
/// carved after the pipeline's own scratch, so the pipeline's carving is an eager call's.
template <class ExecSpace>
struct CapturedRowCopies {
  typename Views<ExecSpace>::Rows x, y;  // empty where read in place
  /// Carves them from `carver` (a counting one gives the bytes); `rows_x`, `rows_y`: the real
  /// call's rows, `length`: its K (2K parts of complex rows).
  static CapturedRowCopies carve(Carver& carver, const CrtComplexTarget<ExecSpace>* complex,
                                 std::int64_t rows_x, std::int64_t rows_y, std::int64_t length) {
    CapturedRowCopies c;
    if (complex == nullptr) return c;
    using Rows = typename Views<ExecSpace>::Rows;
    if (!complex->copy_x.empty()) c.x = Rows(carver.take<double>(rows_x * length), rows_x, length);
    if (!complex->copy_y.empty()) c.y = Rows(carver.take<double>(rows_y * length), rows_y, length);
    return c;
  }
};

/// Scheme II for one call on a stream being captured (the file comment).  `call.plan` is the
/// plan of an Int8Crt call with the count of crt_capture_moduli and the fast rule, without
/// overlap or phase timing.  `native(on)` enqueues native GEMM of the call on the instance
/// `on`.  `complex`: Karatsuba on complex rows (plan.complex_karatsuba), whose rows that are
/// not read in place are copied first, inside the graph.  False (with why) where the backend
/// cannot branch on this stream: nothing of the call then runs and C is untouched.
template <class ExecSpace, class Native>
bool run_crt_captured(PipelineState<ExecSpace>& call, double alpha, double beta,
                      const typename Views<ExecSpace>::Matrix& C, const Native& native,
                      std::string& why, const CrtComplexTarget<ExecSpace>* complex = nullptr) {
  const CallPlan& p = call.plan;
  const CrtPlan plan{CrtRule{CrtScaling::Fast, false, false}, p.moduli, 0, p.promise};
  const std::size_t pipeline_bytes = crt_bytes<ExecSpace>(p, p.moduli, false, false, call.ops);
  Carver counter(nullptr, pipeline_bytes);
  CapturedRowCopies<ExecSpace>::carve(counter, complex, p.shape.m, p.shape.n, p.shape.k);
  DeviceBranch<ExecSpace> branch(call.space);
  if (!branch.open(counter.used(), why)) return false;
  call.base = branch.scratch();
  Carver carver = call.carve_row_regions();
  CrtScaleRegion<ExecSpace> scale = CrtScaleRegion<ExecSpace>::carve(carver, p.shape);
  call.phase_offset = carver.used();
  share_same_rows(call, scale);
  Carver after(call.base, pipeline_bytes);
  const CapturedRowCopies<ExecSpace> copies =
      CapturedRowCopies<ExecSpace>::carve(after, complex, p.shape.m, p.shape.n, p.shape.k);
  if (copies.x.data() != nullptr) call.opA = k_contiguous_rows<ExecSpace>(copies.x);
  if (copies.y.data() != nullptr) call.opBt = k_contiguous_rows<ExecSpace>(copies.y);
  // The branches first: where one cannot be made, nothing of the call is on the stream yet.
  const auto products = [&](const ExecSpace& on) {
    PipelineState<ExecSpace> there(on, p, call.opA, call.opBt, call.ops, call.scratch, call.report,
                                   call.call_start);
    there.base = call.base;
    there.phase_offset = call.phase_offset;
    there.exponents = call.exponents;
    there.copies = call.copies;
    CrtExecution<ExecSpace>(there, plan, scale, complex).run(alpha, beta, C);
  };
  if (!branch.make(0, products, why) || !branch.make(1, native, why)) {
    branch.abandon();
    return false;
  }
  const ExecSpace work = branch.fork();
  if (copies.x.data() != nullptr) {
    embed_complex_rows(work, complex->copy_x.rows, complex->copy_x.conjugate, false, copies.x);
  }
  if (copies.y.data() != nullptr) {
    embed_complex_rows(work, complex->copy_y.rows, complex->copy_y.conjugate, false, copies.y);
  }
  launch_row_scaling(work, call, scale);
  launch_row_summary(
      work, p.shape.k,
      SummaryRows<ExecSpace>{call.exponents.a, scale.l2a, scale.l1a, scale.coverage_a.lambda},
      SummaryRows<ExecSpace>{call.exponents.b, scale.l2b, scale.l1b, scale.coverage_b.lambda},
      scale.summary);
  const double T = crt_fast_target(p.moduli, p.shape.k);
  set_fast_bits(work, scale.l2a, T, scale.bits_a);
  set_fast_bits(work, scale.l2b, T, scale.bits_b);
  branch.decide(crt_capture_constants(p.moduli, p.shape.k, p.promise, p.unit_roundoff),
                scale.summary.data(), static_cast<int>(summary_teams(p.shape.m + p.shape.n)));
  branch.close();
  // The Report is the call's, whichever branch a launch takes (a host space ran only one).
  Report& r = call.report;
  r.algorithm = Algorithm::Int8Crt;
  r.backend = Int8Gemm<ExecSpace>::name();
  r.moduli = p.moduli;
  r.crt_scaling = CrtScaling::Fast;
  r.crt_bits = 0;  // the bits are the data's, set at each launch
  r.complex_products = complex != nullptr ? 3 : 0;
  r.error_bound = p.promise;
  return true;
}

}  // namespace Impl
}  // namespace ozaki
