#pragma once
/// \file planner.hpp
/// Scheme II's decisions for one call, made once from the data before any residue exists and
/// handed on as an immutable CrtPlan (the passes, passes.hpp, only read it):
///
///   sample        Auto: the peak ratios (and, for wide ranges, the counted fast rule's G) of
///                 a sample of rows; native FP64 GEMM where they already make it faster
///   scale_rows    scale exponents (NaN/Inf -> native FP64), row norms, coverage certificate
///   rule          fast, accurate or counted fast (CrtRule), from the peaks and the certificate
///   count         the moduli count: given, or from the rule's error model (rules.hpp), with
///                 the magnitude product the rule needs; Auto may stop here for native FP64
///   bits          the bits of every row and column for the count, at least crt_min_bits
///   certify       the componentwise bound of those bits (docs/design.md §3a); an automatic
///                 count grows until it is within native FP64's
///
/// Each step returns what it decided; the count is never changed after it is returned, a
/// larger one is a new CrtCount.  All scratch comes from the call's ScratchBuffer (layout.hpp).

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/pipeline.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/cost_model.hpp>
#include <ozaki/impl/crt/layout.hpp>
#include <ozaki/impl/crt/residues.hpp>
#include <ozaki/impl/crt/rules.hpp>
#include <ozaki/impl/crt/scaling.hpp>
#include <ozaki/impl/slices/estimate.hpp>
#include <ozaki/report.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace ozaki {
namespace Impl {

/// Auto on wide-range data: the accurate rule needed 2 to 4 moduli more than the fast model's
/// count in our measurements (the benchmarks diary in docs/history/), plus its bound and
/// estimate products.  Where even that makes native faster at the peak ratios q_a, q_b
/// (scaled row norms, rules.hpp) of `shape` (the real GEMM the accurate rule runs), Auto stops
/// before the bound product: true, with the Report's `reason`.  (Peaks that keep the fast
/// rule, crt_peak_class, are left to the count's cost test.)
inline bool crt_native_wins_at_peaks(const DeviceRates& rates, const Shape& shape,
                                     CrtScaling scaling, double q_a, double q_b, double u,
                                     const std::string& which_rows, std::string& reason) {
  const std::int64_t K = shape.k;
  const bool wide =
      scaling == CrtScaling::Accurate || crt_peak_class(K, q_a, q_b) == CrtPeakClass::Accurate;
  if (!wide) return false;
  const int hopeful = std::min(max_moduli, crt_fast_moduli(K, q_a, q_b, u) + 2);
  const double cost = crt_relative_cost(rates, hopeful + 2, hopeful, shape);
  if (!native_is_faster(cost)) return false;
  reason =
      native_faster_reason("wide exponent range in " + which_rows + ": at least " +
                               std::to_string(hopeful) + " moduli under the accurate scaling rule",
                           cost);
  return true;
}

/// Whether Auto may stop for native FP64 GEMM before the bound product: only with an
/// automatic count and a scaling rule that may be accurate.
inline bool crt_auto_may_stop_early(const CallPlan& plan) {
  return plan.auto_moduli && plan.requested == Algorithm::Auto &&
         plan.crt_scaling != CrtScaling::Fast;
}

/// Where op(B)^T is op(A) itself (OperandPlan::same_rows), op(B)^T's exponents, norms and
/// coverage certificate are op(A)'s views, made once by launch_row_scaling.  Before anything
/// reads them (a captured call records its passes first).
template <class ExecSpace>
void share_same_rows(PipelineState<ExecSpace>& call, CrtScaleRegion<ExecSpace>& scale) {
  if (!call.ops.same_rows) return;
  call.exponents.b = call.exponents.a;
  scale.l2b = scale.l2a;
  scale.l1b = scale.l1a;
  scale.coverage_b = scale.coverage_a;
}

/// Pass 1 on `on`: the scale exponents and row norms of op(A) and op(B)^T, and the coverage
/// certificate of both, into the call's exponents and `scale` (op(A)'s alone where
/// share_same_rows made op(B)^T's theirs).
template <class ExecSpace>
void launch_row_scaling(const ExecSpace& on, const PipelineState<ExecSpace>& call,
                        const CrtScaleRegion<ExecSpace>& scale) {
  const RowCopyRegion<ExecSpace>& t = call.copies;
  const std::int64_t K = call.plan.shape.k;
  launch_exponents_and_norms(on, call.ops.strided_a, call.opA, t.max_a, t.squares_a, t.sums_a,
                             t.layers_a, call.exponents.a, scale.l2a, scale.l1a);
  if (!call.ops.same_rows) {
    launch_exponents_and_norms(on, call.ops.strided_b, call.opBt, t.max_b, t.squares_b, t.sums_b,
                               t.layers_b, call.exponents.b, scale.l2b, scale.l1b);
  }
  // Under same_rows op(B)^T's exponents, norms and coverage views are op(A)'s, which
  // launch_coverage then makes once; op(B)^T's tile partials (t.*_b) are never read.
  launch_coverage(on, K, t.max_a, t.layers_a, call.exponents.a, scale.l1a, scale.l2a,
                  scale.coverage_a, t.max_b, t.layers_b, call.exponents.b, scale.l1b, scale.l2b,
                  scale.coverage_b);
}

/// The scaling rule a call runs (never CrtScaling::Auto).
struct CrtRule {
  CrtScaling scaling = CrtScaling::Fast;
  /// The counted fast rule: the fast rule's bits, the count from an INT8 lower bound of |A||B|.
  bool counted = false;
  /// The coverage certificate, not the peaks, sent a mean-field count to the counted rule.
  bool misaligned = false;

  bool accurate() const { return scaling == CrtScaling::Accurate; }
  /// Whether the residues' scaling reads the bound product (make_room keeps it).
  bool keeps_bound() const { return accurate(); }
  /// Whether the call took a product of magnitudes (the workspace the Report gives).
  bool took_bound() const { return accurate() || counted; }
};

/// A moduli count under a rule.
struct CrtCount {
  CrtRule rule;
  int moduli = 0;
};

/// Scheme II's decisions for one call: the rule, the count and the componentwise bound of the
/// bits in the scale region (CrtScaleRegion::bits_a, bits_b), which hold the bits of `moduli`.
struct CrtPlan {
  CrtRule rule;
  int moduli = 0;
  int fewest_bits = 0;
  double error_bound = 0;
};

using CrtPlanned = Planned<CrtPlan>;

template <class ExecSpace>
class CrtPlanner {
  using V = Views<ExecSpace>;

 public:
  /// `complex`: Karatsuba on complex rows (plan.complex_karatsuba).
  CrtPlanner(PipelineState<ExecSpace>& call, bool complex)
      : call_(call), rates_(device_rates(call.space)), complex_(complex) {}

  /// The decisions, in the order of the file comment.  C is not touched.
  CrtPlanned plan() {
    if (sampled_rows_say_native()) return decided(Int8Outcome::NativeFaster);
    call_.base = call_.scratch.reserve(crt_bytes<ExecSpace>(
        call_.plan, call_.plan.moduli, may_take_bound(), call_.plan.auto_moduli, call_.ops));
    if (!scale_rows()) return stop(Int8Outcome::NonFinite);
    const CrtRule rule = choose_rule();
    // Karatsuba runs the fast rule only (its bound product would bound Re, not Im).
    if (complex_ && rule.accurate()) return stop(Int8Outcome::NeedsEmbedding);
    if (!rule.counted && native_wins_before_bound()) return decided(Int8Outcome::NativeFaster);
    if (rule.accurate()) {
      magnitude_product(false);
      count_magnitude_product();
    }
    call_.clock.lap(call_.report.seconds_split);
    std::optional<CrtCount> count = CrtCount{rule, call_.plan.moduli};
    if (call_.plan.auto_moduli) {
      count = automatic_count(rule);
      call_.decided();
      if (!count) return stop(Int8Outcome::NativeFaster);
    }
    call_.clock.lap(call_.report.seconds_estimate);
    return certify(with_least_bits(*count));
  }

  /// The scale region of the last scale_rows: the bits and norms the passes read.
  const CrtScaleRegion<ExecSpace>& scale() const { return scale_; }

 private:
  static CrtPlanned stop(Int8Outcome outcome) { return {outcome, {}}; }
  CrtPlanned decided(Int8Outcome outcome) {
    call_.decided();
    return stop(outcome);
  }

  /// Whether the bound region (a product of magnitudes: crt_bytes' `with_bound`) is carved
  /// before the rule is chosen: any call that may take such a product (an automatic count may
  /// under either rule: the counted fast rule's window product, the accurate rule's bound).
  bool may_take_bound() const { return crt_may_take_bound(call_.plan); }

  /// Whether wide exponent ranges under an automatic count may take the counted fast rule:
  /// real rows (Karatsuba's complex rows take the embedding there) and a rule that may be fast.
  bool counted_may_apply() const {
    return !complex_ && call_.plan.auto_moduli && call_.plan.crt_scaling != CrtScaling::Accurate;
  }

  /// Everything before the residues that lives through the call: carves exponents, tile
  /// partials, bits and norms; pass 1, row norms and their summary (choose_rule reads it).  Run
  /// again when the scratch grows (growing loses its contents).  False on NaN/Inf.
  bool scale_rows() {
    Carver carver = call_.carve_row_regions();
    scale_ = CrtScaleRegion<ExecSpace>::carve(carver, call_.plan.shape);
    call_.phase_offset = carver.used();
    share_same_rows(call_, scale_);
    launch_row_scaling(call_.space, call_, scale_);
    // The one wait of pass 1: NaN/Inf, the peak ratios, the largest norms and the coverage
    // certificate of both operands.
    rows_ = row_summary(
        call_.space, call_.plan.shape.k,
        SummaryRows<ExecSpace>{call_.exponents.a, scale_.l2a, scale_.l1a, scale_.coverage_a.lambda},
        SummaryRows<ExecSpace>{call_.exponents.b, scale_.l2b, scale_.l1b, scale_.coverage_b.lambda},
        scale_.summary);
    return !(rows_.a.nonfinite || rows_.b.nonfinite);
  }

  double q_a() const { return rows_.a.peak; }
  double q_b() const { return rows_.b.peak; }
  std::int64_t K() const { return call_.plan.shape.k; }
  /// The target of the count models: the unit roundoff of the accuracy promised.
  double u() const { return call_.plan.unit_roundoff; }

  /// The scaling rule from the peak class and the coverage certificate, after the first
  /// scale_rows (which runs again where the scratch grows: the same rows, the same class).
  CrtRule choose_rule() {
    CrtPeakClass peaks = crt_peak_class(K(), q_a(), q_b());
    const double coverage = std::min(rows_.a.coverage_factor, rows_.b.coverage_factor);
    bool misaligned = false;
    if (call_.plan.auto_moduli && peaks != CrtPeakClass::Accurate &&
        !(coverage <= crt_coverage_gate)) {
      // The fast rule's count assumes every (|A||B|)_mn near its mean-field value, and the
      // certificate cannot bound them within crt_coverage_gate of it (operands whose
      // magnitudes are spread against each other along k): the per-entry lower bound decides.
      peaks = CrtPeakClass::Accurate;
      misaligned = true;
    }
    if (peaks == CrtPeakClass::Accurate && counted_may_apply()) {
      // The fast model's count does not hold for rows this peaked; a lower bound of |A||B|
      // gives the count instead (automatic_count), the fast rule's bits stay.
      return CrtRule{CrtScaling::Fast, true, misaligned};
    }
    const CrtScaling asked = call_.plan.crt_scaling;
    CrtScaling scaling = asked;
    if (asked == CrtScaling::Auto) {
      // With a fixed count the accurate rule's bits serve any peaked rows best; an automatic
      // count keeps the fast rule with one modulus more while that is measured to hold.
      const bool accurate =
          call_.plan.auto_moduli ? peaks == CrtPeakClass::Accurate : peaks != CrtPeakClass::Fast;
      scaling = accurate ? CrtScaling::Accurate : CrtScaling::Fast;
    } else if (asked == CrtScaling::Fast && peaks == CrtPeakClass::Accurate &&
               call_.plan.auto_moduli) {
      // An automatic count promises FP64-equivalent accuracy, and the fast rule's count comes
      // from a mean-field model that peaked rows break (at phi = 4 it gave errors 100 times
      // native's): the accurate rule's bound and model keep the promise.
      scaling = CrtScaling::Accurate;
      call_.report.reason =
          "automatic moduli count: the fast scaling rule's model does not hold for rows this "
          "peaked (wide exponent ranges), so the accurate rule was taken";
    }
    if (scaling == CrtScaling::Fast && peaks == CrtPeakClass::FastExtended &&
        call_.plan.auto_moduli) {
      call_.report.reason = "automatic moduli count: moderately peaked rows (K q_A q_B = " +
                            std::to_string(crt_peak_product(K(), q_a(), q_b())) +
                            "), so the fast scaling rule took " +
                            std::to_string(crt_fast_extra_moduli) + " modulus more than its model";
    }
    return CrtRule{scaling, false, misaligned};
  }

  double cost_of(int moduli, int products) const {
    return crt_plan_cost(rates_, call_.plan, moduli, products - moduli);
  }

  /// Auto on wide-range data (crt_native_wins_at_peaks), on the real GEMM the accurate rule
  /// would run: this plan's, or for complex data the embedding's (2M x N x 2K).
  bool native_wins_at_peaks(double q_a, double q_b, const char* which_rows) {
    Shape accurate_shape = call_.plan.shape;
    if (complex_) accurate_shape.m *= 2;
    return crt_native_wins_at_peaks(rates_, accurate_shape, call_.plan.crt_scaling, q_a, q_b, u(),
                                    which_rows, call_.report.reason);
  }

  /// Before any scratch or pass over the operands: the peak ratios of a sample of rows of
  /// op(A) and of op(B)^T bound the full ratios from below, and the hopeful count grows with
  /// them, so where the sample already makes native faster the full data does too.
  bool sampled_rows_say_native() {
    if (!crt_auto_may_stop_early(call_.plan) || call_.plan.peaks_sampled) return false;
    constexpr std::int64_t sample = 64;
    const SampledPeaks q = sampled_peak_ratios(call_.space, call_.opA, call_.opBt, sample);
    // The sample's peaks bound the full ones from below: a wide class here is one for all rows.
    if (counted_may_apply() && crt_peak_class(K(), q.x, q.y) == CrtPeakClass::Accurate) {
      return sampled_counts_say_native();
    }
    return native_wins_at_peaks(q.x, q.y, "a sample of rows");
  }

  /// Wide exponent ranges in the sample: the counted fast rule's G over the sampled entries
  /// (sampled_window_ratio), which is Auto's count (automatic_count).  Native FP64 GEMM where
  /// the windows cannot see some sampled entry or where that count makes native faster.
  bool sampled_counts_say_native() {
    const double G = sampled_window_ratio();
    if (!(G < HUGE_VAL)) {
      call_.report.reason = unseen_entry_reason("a sample of rows");
      return true;
    }
    const int L = crt_counted_moduli(K(), G, u());
    const double cost = cost_of(L, L);
    if (!native_is_faster(cost)) return false;
    call_.report.reason =
        native_faster_reason("wide exponent range in a sample of rows: " + std::to_string(L) +
                                 " moduli under the counted fast rule",
                             cost);
    return true;
  }

  /// G of the counted fast rule over 64 x 64 sampled entries, measured once: in scratch of its
  /// own where nothing is carved yet (the sample is Auto's first work), or in phase-1 scratch
  /// after pass 1.
  double sampled_window_ratio() {
    if (sampled_G_) return *sampled_G_;
    Carver counter(nullptr);
    CountedSampleRegion<ExecSpace>::carve(counter, K());
    Carver carver = call_.base == nullptr ? Carver(call_.scratch.reserve(counter.used()))
                                          : Carver(call_.base, call_.phase_offset);
    const CountedSampleRegion<ExecSpace> sample =
        CountedSampleRegion<ExecSpace>::carve(carver, K());
    sampled_G_ =
        sampled_counted_ratio(call_.space, call_.opA, call_.opBt, sample.codes, sample.stats);
    return *sampled_G_;
  }

  /// The Report's reason for a count from the counted fast rule, its G taken `over` entries.
  static std::string counted_reason(const CrtRule& rule, const std::string& over) {
    const char* why = rule.misaligned
                          ? "operands whose magnitudes are spread against each other along k "
                            "(the coverage certificate cannot bound the mean-field count)"
                          : "rows this peaked (wide exponent ranges)";
    return std::string("automatic moduli count: ") + why +
           " took the fast scaling rule with the count from an INT8 lower bound of |A||B|" + over +
           " (counted fast rule)";
  }

  static std::string unseen_entry_reason(const std::string& where) {
    return "wide exponent range: some entry of |A||B| in " + where +
           " has no pair of elements inside the INT8 lower bound's windows, so no moduli count "
           "can be modelled there; native FP64 GEMM";
  }

  /// The same with the peak ratios of all rows, after pass 1 and the row norms.
  bool native_wins_before_bound() {
    return crt_auto_may_stop_early(call_.plan) && native_wins_at_peaks(q_a(), q_b(), "A and B");
  }

  /// One INT8 product of both operands' 7-bit magnitudes, in phase-1 scratch (the bound
  /// region): the accurate rule's bound P = q(A) q(B) of magnitudes rounded up, or (`window`)
  /// the counted fast rule's lower bound Plo of window magnitudes rounded down.
  void magnitude_product(bool window) {
    Carver phase1(call_.base, call_.phase_offset);
    bound_ = CrtBoundRegion<ExecSpace>::carve(phase1, call_.plan);
    bound_end_ = phase1.used();
    // Where op(B)^T is op(A) itself its magnitudes are op(A)'s (the same rows and exponents).
    const bool same = call_.ops.same_rows;
    if (window) {
      window_magnitudes7(call_.space, call_.opA, call_.exponents.a, scale_.l1a, bound_.q_a);
      if (!same) {
        window_magnitudes7(call_.space, call_.opBt, call_.exponents.b, scale_.l1b, bound_.q_b);
      }
    } else {
      magnitudes7(call_.space, call_.opA, call_.exponents.a, bound_.q_a);
      if (!same) magnitudes7(call_.space, call_.opBt, call_.exponents.b, bound_.q_b);
    }
    const Int8GemmProblem p =
        packed_int8_problem(call_.plan.mpad, call_.plan.npad, call_.plan.kpad, bound_.q_a.data(),
                            same ? bound_.q_a.data() : bound_.q_b.data(), bound_.bound.data());
    int8_gemm_in_k_chunks(call_.space, p, call_.plan.k_block, call_.plan.npad * call_.plan.mpad);
  }

  /// A magnitude product in the Report: INT8 products beside the moduli's.
  void count_magnitude_product() {
    call_.report.estimate_int8_gemms += static_cast<int>(call_.plan.k_chunks);
    call_.report.int8_operations += 2.0 * call_.plan.mpad * call_.plan.npad * call_.plan.kpad;
  }

  /// The bits of every row and column for `moduli` moduli under `rule`; returns the fewest
  /// (under the fast rule those of the largest norms, known since row_summary: no wait).
  int choose_bits(const CrtRule& rule, int moduli) {
    if (!rule.accurate()) {
      const double T = crt_fast_target(moduli, K());
      if (!(T >= 1)) return -1;
      set_fast_bits(call_.space, scale_.l2a, T, scale_.bits_a);
      set_fast_bits(call_.space, scale_.l2b, T, scale_.bits_b);
      return std::min(fast_row_bits(rows_.a.largest_l2, T), fast_row_bits(rows_.b.largest_l2, T));
    }
    return accurate_bits(call_.space, bound_.bound, call_.plan.k_chunks, crt_accurate_range(moduli),
                         scale_.rho, scale_.partial, scale_.bits_a, scale_.bits_b);
  }

  /// The moduli count for FP64-equivalent accuracy under `rule`; nothing when Auto then
  /// prefers native FP64 GEMM (the Report says why).  An explicit Int8Crt call whose window
  /// product cannot see some entry takes the accurate rule instead.
  std::optional<CrtCount> automatic_count(const CrtRule& rule) {
    std::optional<CrtCount> count;
    if (rule.counted && call_.plan.requested == Algorithm::Auto) {
      count = sampled_counted_count(rule);
      if (!count) return std::nullopt;  // native: the reason says why
    } else if (rule.counted) {
      count = counted_count(rule);
      if (!count) count = counted_to_accurate();
    } else if (!rule.accurate()) {
      const int L = crt_fast_auto_moduli(K(), q_a(), q_b(), u());
      call_.report.modeled_error = crt_fast_model(L, K(), q_a(), q_b());
      count = CrtCount{rule, L};
    } else {
      count = accurate_count(rule);
    }
    if (call_.plan.requested != Algorithm::Auto) return count;
    const int products = count->moduli + call_.report.estimate_int8_gemms;
    const double cost = cost_of(count->moduli, products);
    if (!native_is_faster(cost)) return count;
    call_.report.moduli = count->moduli;
    call_.report.reason = native_faster_reason(std::to_string(count->moduli) + " moduli, " +
                                                   to_string(count->rule.scaling) + " scaling, " +
                                                   std::to_string(products) + " INT8 products",
                                               cost);
    return std::nullopt;
  }

  /// The accurate rule's bound product and estimate, for an explicit Int8Crt call whose window
  /// product cannot see some entry.
  CrtCount counted_to_accurate() {
    const CrtRule accurate{CrtScaling::Accurate, false, false};
    magnitude_product(false);
    count_magnitude_product();
    call_.report.reason =
        "automatic moduli count: some entry of |A||B| has no pair of elements inside the INT8 "
        "lower bound's windows, so the accurate scaling rule was taken";
    return accurate_count(accurate);
  }

  /// Auto's counted count: from the sampled entries' G (the sample before pass 1, or one now
  /// where only the full rows were in the wide class).  Not the largest G_mn of all M N
  /// entries, which the lower bound's worst entries set (2 moduli more at 8192^3, phi = 2: the
  /// benchmarks diary in docs/history/), but that of typical entries' worst, without an INT8
  /// product.  Nothing (native FP64 GEMM) where some sampled entry is unseen.
  std::optional<CrtCount> sampled_counted_count(const CrtRule& rule) {
    const double G = sampled_window_ratio();
    if (!(G < HUGE_VAL)) {
      call_.report.reason = unseen_entry_reason("a sample of rows");
      return std::nullopt;
    }
    const int L = crt_counted_moduli(K(), G, u());
    call_.report.modeled_error = crt_counted_model(L, K(), G);
    call_.report.reason = counted_reason(rule, " on 64 x 64 sampled entries");
    return CrtCount{rule, L};
  }

  /// The counted fast rule's count from G over every entry (full_window_ratio).  Nothing where
  /// G is +Inf.
  std::optional<CrtCount> counted_count(const CrtRule& rule) {
    const double G = full_window_ratio();
    if (!(G < HUGE_VAL)) return std::nullopt;
    const int L = crt_counted_moduli(K(), G, u());
    call_.report.modeled_error = crt_counted_model(L, K(), G);
    call_.report.reason = counted_reason(rule, "");
    return CrtCount{rule, L};
  }

  /// G of the counted fast rule over every entry, measured once: window magnitudes of both
  /// operands, their INT8 product (a lower bound of |A||B|, in the bound region) and G (one
  /// wait).
  double full_window_ratio() {
    if (full_G_) return *full_G_;
    magnitude_product(true);
    count_magnitude_product();
    full_G_ = counted_ratio(call_.space, bound_.bound, call_.plan.k_chunks, K(), scale_.l2a,
                            scale_.l1a, scale_.l2b, scale_.l1b);
    return *full_G_;
  }

  /// Lower bounds of |A||B| from INT8 magnitudes (scheme I's estimate), then the accurate
  /// rule's model with the bits of max_moduli, scaled to fewer moduli (rules.hpp).
  CrtCount accurate_count(const CrtRule& rule) {
    const double at_max = accurate_error_at_max(rule);
    const int L = crt_accurate_moduli(at_max, u());
    if (!(at_max < HUGE_VAL)) {
      append_reason(
          "auto moduli: some (|A||B|)_mn lies below the resolution of the int8 estimate, so "
          "the largest count was taken");
    }
    call_.report.modeled_error =
        at_max * std::exp2(0.5 * (crt_log2_range(max_moduli) - crt_log2_range(L)));
    return CrtCount{rule, L};
  }

  /// The accurate rule's error model at max_moduli's bits, from the estimate's lower bounds of
  /// |A||B| (kept for the componentwise bound, accurate_split).
  double accurate_error_at_max(const CrtRule& rule) {
    const Shape& s = call_.plan.shape;
    Carver after_bound(call_.base, bound_end_);
    const EstimateRegion<ExecSpace> estimate =
        EstimateRegion<ExecSpace>::carve(after_bound, s, call_.plan.k_chunks);
    // The estimate reads K-contiguous rows: copies of strided ones, in scratch that the
    // residues reuse (the copy's tile maxima go where pass 1's were: the norms consumed them).
    const EstimateCopyRegion<ExecSpace> copied =
        EstimateCopyRegion<ExecSpace>::carve(after_bound, s, call_.ops);
    typename V::ConstMatrix estimate_a = call_.opA, estimate_b = call_.opBt;
    if (call_.ops.estimate_copy_a) {
      copy_to_k_contiguous(call_.space, call_.opA, copied.a, call_.copies.max_a);
      estimate_a = k_contiguous_rows<ExecSpace>(copied.a);
    }
    if (call_.ops.estimate_copy_b) {
      copy_to_k_contiguous(call_.space, call_.opBt, copied.b, call_.copies.max_b);
      estimate_b = k_contiguous_rows<ExecSpace>(copied.b);
    }
    // (The estimate pads K to 16 as scheme I does, whatever this plan's padding: its own
    // chunk count.)
    const std::int64_t estimate_chunks = k_chunks(s.k, call_.plan.k_block);
    const SliceCountChoice choice =
        choose_slice_count(call_.space, estimate_a, estimate_b, call_.exponents.a,
                           call_.exponents.b, call_.plan.k_block, estimate);
    call_.report.estimate_int8_gemms += choice.int8_gemms;
    call_.report.int8_operations += 2.0 * call_.plan.mpad * call_.plan.npad * call_.plan.kpad *
                                    choice.int8_gemms / static_cast<double>(call_.plan.k_chunks);
    choose_bits(rule, max_moduli);
    accurate_at_max_ =
        choice.lower_stored
            ? crt_model_error(call_.space, estimate.lower, s.k, scale_.bits_a, scale_.bits_b,
                              scale_.l1a, scale_.l1b)
            : crt_model_error(
                  call_.space,
                  ProductLowerBound<ExecSpace>{estimate.products, estimate_chunks, 0x1p-14}, s.k,
                  scale_.bits_a, scale_.bits_b, scale_.l1a, scale_.l1b);
    return *accurate_at_max_;
  }

  /// A count with its bits chosen.
  struct CountedBits {
    CrtCount count;
    int fewest = 0;
  };

  /// Scratch and bits for `count`; an automatic count grows until every row keeps crt_min_bits
  /// (the models look at the error, not at this floor: an all-zero op(A) asks for 2 moduli,
  /// which leave op(B)'s rows 5 bits).
  CountedBits with_least_bits(const CrtCount& count) {
    make_room(count);
    const int fewest = choose_bits(count.rule, count.moduli);
    if (call_.plan.auto_moduli && fewest < crt_min_bits && count.moduli < max_moduli) {
      return with_least_bits(CrtCount{count.rule, count.moduli + 1});
    }
    return {count, fewest};
  }

  /// The componentwise promise (coverage.hpp, docs/design.md §3a): the bound of these bits at
  /// or below native FP64's gamma_(K+2).  An automatic count grows until it holds, and where no
  /// count up to max_moduli makes it hold the call runs native FP64 GEMM (Uncertified, with
  /// the reason); a fixed count keeps its count and the Report says how far off it is.  Auto
  /// checks its cost again where the count grew.
  CrtPlanned certify(const CountedBits& chosen) {
    check_crt_bits(chosen.fewest, chosen.count.moduli, K());
    const double promise = call_.plan.promise;
    if (!call_.plan.auto_moduli) {
      const CrtPlan plan = plan_of(chosen);
      if (plan.error_bound > promise) note_bound_above_native(plan, promise);
      return {Int8Outcome::Done, plan};
    }
    const CrtPlan plan = grown_until_certified(chosen);
    if (plan.error_bound > promise) {
      append_reason("no count up to " + std::to_string(max_moduli) +
                    " moduli keeps the componentwise error bound within native GEMM's "
                    "on this data (bound " +
                    bound_text(plan.error_bound) + " |A||B| at " + std::to_string(max_moduli) +
                    " moduli): native FP64 GEMM");
      return stop(Int8Outcome::Uncertified);
    }
    if (plan.moduli == chosen.count.moduli) return {Int8Outcome::Done, plan};
    append_reason("automatic moduli count raised from " + std::to_string(chosen.count.moduli) +
                  " to " + std::to_string(plan.moduli) +
                  " so that the componentwise bound stays within native "
                  "GEMM's");
    if (call_.plan.requested != Algorithm::Auto) return {Int8Outcome::Done, plan};
    const int products = plan.moduli + call_.report.estimate_int8_gemms;
    const double cost = cost_of(plan.moduli, products);
    if (!native_is_faster(cost)) return {Int8Outcome::Done, plan};
    call_.report.reason = native_faster_reason(
        std::to_string(plan.moduli) + " moduli for the componentwise bound", cost);
    return stop(Int8Outcome::NativeFaster);
  }

  /// The plan of a count with its bits, and their componentwise bound.
  CrtPlan plan_of(const CountedBits& chosen) {
    return CrtPlan{chosen.count.rule, chosen.count.moduli, chosen.fewest,
                   componentwise_bound(chosen.count, chosen.fewest)};
  }

  /// The plan of the first count from `chosen` up to max_moduli whose bits' bound is within the
  /// promise (max_moduli's where none is).
  CrtPlan grown_until_certified(const CountedBits& chosen) {
    const CrtPlan plan = plan_of(chosen);
    if (plan.error_bound <= call_.plan.promise || plan.moduli >= max_moduli) return plan;
    const CrtCount more{plan.rule, plan.moduli + 1};
    make_room(more);
    return grown_until_certified({more, choose_bits(more.rule, more.moduli)});
  }

  void append_reason(const std::string& why) {
    if (!call_.report.reason.empty()) call_.report.reason += "; ";
    call_.report.reason += why;
  }

  void note_bound_above_native(const CrtPlan& plan, double promise) {
    append_reason(std::to_string(plan.moduli) + " moduli give a componentwise error bound of " +
                  bound_text(plan.error_bound) + " |A||B| on this data, above native GEMM's " +
                  bound_text(promise) +
                  " in the call's precision (less accurate than native: use an automatic count)");
  }

  /// The bound of the bits of `count` (Report::error_bound): the coverage certificate's, and
  /// where the rule's magnitude product saw every entry, the per-entry one.
  double componentwise_bound(const CrtCount& count, int fewest) {
    double bound = coverage_bound(count, fewest);
    if (count.rule.accurate() && accurate_at_max_) {
      bound = std::min(bound, with_cross(accurate_split(count.moduli), fewest));
    }
    if (count.rule.counted && bound > call_.plan.promise) {
      bound = std::min(bound, with_cross(counted_split(count.moduli), fewest));
    }
    return bound;
  }

  /// crt_componentwise_bound for a split term that covers both operands, its cross term from
  /// the fewest bits: sum_k |da||db| <= (split) K 2^(1 - fewest) (|A||B|)_mn (coverage.hpp).
  double with_cross(double split, int fewest) const {
    const double k = static_cast<double>(K());
    return crt_componentwise_bound(split, 0, split * k * std::ldexp(1.0, 1 - fewest));
  }

  /// From the coverage certificate: each operand's split term max_m 2^-(b_m+1) / lambda_m,
  /// under the fast rule at most max_m (n_m / T) / lambda_m (2^-b_m < 2 n_m / T, and no row's
  /// bits reach the cap: T < 2^93 and n_m > 1/4), under the accurate rule from the bits.
  double coverage_bound(const CrtCount& count, int fewest) {
    const double slack = coverage_l1_slack(K());
    double split_a = 0, split_b = 0;
    if (!count.rule.accurate()) {
      const double T = crt_fast_target(count.moduli, K());
      split_a = slack * rows_.a.split_ratio / T;
      split_b = slack * rows_.b.split_ratio / T;
    } else {
      split_a = slack * coverage_split_of_bits(call_.space, scale_.bits_a, scale_.coverage_a.lambda,
                                               scale_.l1a);
      split_b = slack * coverage_split_of_bits(call_.space, scale_.bits_b, scale_.coverage_b.lambda,
                                               scale_.l1b);
    }
    const double cross =
        std::min(split_a, split_b) * static_cast<double>(K()) * std::ldexp(1.0, 1 - fewest);
    return crt_componentwise_bound(split_a, split_b, cross);
  }

  /// The accurate rule's estimate, per entry: at max_moduli's bits sqrt(K) crt_model_error
  /// bounds both split terms (its lower bounds of |A||B| are rigorous; its l1 norms are lower
  /// bounds, covered by the slack); with L moduli every row keeps at least its bits at
  /// max_moduli less half the range's difference and 2 (the floors of accurate_bits).
  double accurate_split(int moduli) const {
    return coverage_l1_slack(K()) * std::sqrt(static_cast<double>(K())) * *accurate_at_max_ *
           std::exp2(0.5 * (crt_log2_range(max_moduli) - crt_log2_range(moduli)) + 2);
  }

  /// The counted fast rule's window product, per entry: both split terms are at most
  /// 2^14 max_mn (n_m l1b_n + n_n l1a_m) 2^(s_m + s_n) / (T Plo_mn), and l1 <= sqrt(K) n,
  /// so at most sqrt(K) crt_counted_model(L, K, G), G over every entry (Auto's count came
  /// from a sample; the bound needs all entries).
  double counted_split(int moduli) {
    const double G = full_window_ratio();
    return coverage_l1_slack(K()) * std::sqrt(static_cast<double>(K())) *
           crt_counted_model(moduli, K(), G);
  }

  /// Scratch for `count`; growing loses its contents, so everything before the residues runs
  /// again.
  void make_room(const CrtCount& count) {
    const bool keeps_bound = count.rule.keeps_bound();
    ensure_scratch(call_.scratch,
                   crt_bytes<ExecSpace>(call_.plan, count.moduli, keeps_bound,
                                        call_.plan.auto_moduli, call_.ops),
                   call_.base, [&] {
                     scale_rows();
                     if (keeps_bound) magnitude_product(false);
                   });
  }

  PipelineState<ExecSpace>& call_;
  const DeviceRates rates_;
  const bool complex_;
  /// Facts about the data, each measured once where a decision needs it.
  std::optional<double> sampled_G_;        // the counted fast rule's G over sampled entries
  std::optional<double> full_G_;           // ... and over every entry
  std::optional<double> accurate_at_max_;  // the accurate rule's estimate at max_moduli
  RowSummary rows_;
  std::size_t bound_end_ = 0;
  CrtScaleRegion<ExecSpace> scale_;
  CrtBoundRegion<ExecSpace> bound_;
};

}  // namespace Impl
}  // namespace ozaki
