#pragma once
/// \file driver.hpp
/// Ozaki scheme II (Algorithm::Int8Crt) on op(A) (M x K) and op(B)^T (N x K), as a sequence of
/// named steps:
///
///   scale_rows        scale exponents (NaN/Inf -> native FP64) and row norms; the scaling
///                     rule: fast (norms only) or accurate (one INT8 product of magnitudes)
///   magnitude_product the accurate rule's INT8 product of 7-bit magnitudes (or the counted
///                     fast rule's, of window magnitudes)
///   choose_moduli     automatic moduli count from the rule's error model, if asked for; Auto
///                     may stop before the bound product or here for native FP64.  Wide
///                     exponent ranges with an automatic count take the counted fast rule:
///                     the fast rule's bits, the count from one INT8 product of window
///                     magnitudes (a lower bound of |A||B|, rules.hpp crt_counted_model)
///   make_room         scratch for L moduli: grown once, everything before redone if it grew
///   choose_bits       bits of every row and column for L moduli (rules.hpp)
///   multiply_passes   residues of op(A), all moduli in one pass; then per pass of columns of
///                     C: the residues of those rows of op(B)^T, one INT8 GEMM per modulus
///                     (and K chunk), the CRT reconstruction straight into C
///
/// All scratch comes from one ScratchBuffer (layout.hpp); nothing is allocated otherwise.

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/pipeline.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/cost_model.hpp>
#include <ozaki/impl/crt/karatsuba.hpp>
#include <ozaki/impl/crt/layout.hpp>
#include <ozaki/impl/crt/residues.hpp>
#include <ozaki/impl/crt/rules.hpp>
#include <ozaki/impl/crt/scaling.hpp>
#include <ozaki/impl/slices/estimate.hpp>
#include <ozaki/report.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace ozaki {
namespace Impl {

/// Auto on wide-range data: the accurate rule needed 2 to 4 moduli more than the fast model's
/// count in our measurements (the benchmarks diary in docs/history/), plus its bound and
/// estimate products.  Where even that makes native faster at the peak ratios q_a, q_b
/// (scaled row norms, rules.hpp) of `shape` (the real GEMM the accurate rule runs), Auto stops
/// before the bound product: true, with the Report's `reason`.  (Peaks that keep the fast
/// rule, crt_peak_class, are left to choose_moduli's cost test.)
inline bool crt_native_wins_at_peaks(const DeviceRates& rates, const Shape& shape,
                                     CrtScaling scaling, double q_a, double q_b,
                                     const std::string& which_rows, std::string& reason) {
  const std::int64_t K = shape.k;
  const bool wide =
      scaling == CrtScaling::Accurate || crt_peak_class(K, q_a, q_b) == CrtPeakClass::Accurate;
  if (!wide) return false;
  const int hopeful = std::min(max_moduli, crt_fast_moduli(K, q_a, q_b) + 2);
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

template <class ExecSpace>
class CrtPipeline {
  using V = Views<ExecSpace>;

 public:
  /// `complex`: Karatsuba on complex rows (plan.complex_karatsuba), written to its target.
  explicit CrtPipeline(PipelineState<ExecSpace>& call,
                       const CrtComplexTarget<ExecSpace>* complex = nullptr)
      : call_(call),
        rates_(device_rates(call.space)),
        scaling_(call.plan.crt_scaling),
        L_(call.plan.moduli),
        products_(crt_products(call.plan)),
        complex_(complex) {}

  /// Writes C only when it returns Done.
  Int8Outcome run(double alpha, double beta, const typename V::Matrix& C) {
    if (sampled_rows_say_native()) {
      call_.decided();
      return Int8Outcome::NativeFaster;
    }
    call_.base = call_.scratch.reserve(
        crt_bytes<ExecSpace>(call_.plan, L_, may_take_bound(), call_.plan.auto_moduli, call_.ops));
    if (!scale_rows()) return Int8Outcome::NonFinite;
    choose_rule();
    if (complex_ != nullptr && accurate()) {
      // Karatsuba runs the fast rule only (its bound product would bound Re, not Im).
      *complex_->needs_embedding = true;
      return Int8Outcome::NeedsEmbedding;
    }
    if (!counted_ && native_wins_before_bound()) {
      call_.decided();
      return Int8Outcome::NativeFaster;
    }
    if (accurate()) {
      magnitude_product(false);
      count_magnitude_product();
    }
    call_.clock.lap(call_.report.seconds_split);
    if (call_.plan.auto_moduli) {
      const bool int8 = choose_moduli();
      call_.decided();
      if (!int8) return Int8Outcome::NativeFaster;
    }
    call_.clock.lap(call_.report.seconds_estimate);
    make_room();
    int fewest = choose_bits(L_);
    // An automatic count must also leave every row crt_min_bits (the models look at the error,
    // not at this floor: an all-zero op(A) asks for 2 moduli, which leave op(B)'s rows 5 bits).
    while (call_.plan.auto_moduli && fewest < crt_min_bits && L_ < max_moduli) {
      ++L_;
      make_room();
      fewest = choose_bits(L_);
    }
    check_crt_bits(fewest, L_, call_.plan.shape.k);
    const Int8Outcome certified = certify(fewest);
    if (certified != Int8Outcome::Done) return certified;
    multiply_passes(alpha, beta, C);
    fill_report(fewest);
    return Int8Outcome::Done;
  }

 private:
  bool accurate() const { return scaling_ == CrtScaling::Accurate; }

  /// Whether the bound region (a product of magnitudes: crt_bytes' `with_bound`) is carved, at
  /// the three moments that ask (a call that keeps it took it, and one that took it may):
  /// before the rule is chosen, any call that may take such a product (an automatic count may
  /// under either rule: the counted fast rule's window product, the accurate rule's bound);
  bool may_take_bound() const { return crt_may_take_bound(call_.plan); }
  /// after the count is chosen, a call whose bound product the residues' scaling still reads
  /// (the accurate rule: make_room keeps its contents or computes them again);
  bool keeps_bound() const { return accurate(); }
  /// and in the Report, a call that took one (the workspace it used).
  bool took_bound() const { return accurate() || counted_; }

  /// Whether wide exponent ranges under an automatic count may take the counted fast rule:
  /// real rows (Karatsuba's complex rows take the embedding there) and a rule that may be fast.
  bool counted_may_apply() const {
    return complex_ == nullptr && call_.plan.auto_moduli &&
           call_.plan.crt_scaling != CrtScaling::Accurate;
  }

  /// Everything before the residues that lives through the call: carves exponents, tile
  /// partials, bits and norms; pass 1, row norms and their summary (choose_rule reads it).  Run
  /// again when the scratch grows (growing loses its contents).  False on NaN/Inf.
  bool scale_rows() {
    Carver carver = call_.carve_row_regions();
    scale_ = CrtScaleRegion<ExecSpace>::carve(carver, call_.plan.shape);
    call_.phase_offset = carver.used();
    const RowCopyRegion<ExecSpace>& t = call_.copies;
    launch_exponents_and_norms(call_.space, call_.ops.strided_a, call_.opA, t.max_a, t.squares_a,
                               t.sums_a, t.layers_a, call_.exponents.a, scale_.l2a, scale_.l1a);
    launch_exponents_and_norms(call_.space, call_.ops.strided_b, call_.opBt, t.max_b, t.squares_b,
                               t.sums_b, t.layers_b, call_.exponents.b, scale_.l2b, scale_.l1b);
    launch_coverage(call_.space, call_.plan.shape.k, t.max_a, t.layers_a, call_.exponents.a,
                    scale_.l1a, scale_.l2a, scale_.coverage_a, t.max_b, t.layers_b,
                    call_.exponents.b, scale_.l1b, scale_.l2b, scale_.coverage_b);
    // The one wait of pass 1: NaN/Inf, the peak ratios, the largest norms and the coverage
    // certificate of both operands.
    rows_ = row_summary(
        call_.space, call_.plan.shape.k,
        SummaryRows<ExecSpace>{call_.exponents.a, scale_.l2a, scale_.l1a, scale_.coverage_a.lambda},
        SummaryRows<ExecSpace>{call_.exponents.b, scale_.l2b, scale_.l1b, scale_.coverage_b.lambda},
        scale_.summary);
    if (rows_.a.nonfinite || rows_.b.nonfinite) return false;
    q_a_ = rows_.a.peak;
    q_b_ = rows_.b.peak;
    return true;
  }

  /// The scaling rule from the peak class, once, after the first scale_rows (which runs again
  /// where the scratch grows: the same rows, the same class).
  void choose_rule() {
    CrtPeakClass peaks = crt_peak_class(call_.plan.shape.k, q_a_, q_b_);
    const double coverage = std::min(rows_.a.coverage_factor, rows_.b.coverage_factor);
    if (call_.plan.auto_moduli && peaks != CrtPeakClass::Accurate &&
        !(coverage <= crt_coverage_gate)) {
      // The fast rule's count assumes every (|A||B|)_mn near its mean-field value, and the
      // certificate cannot bound them within crt_coverage_gate of it (operands whose
      // magnitudes are spread against each other along k): the per-entry lower bound decides.
      peaks = CrtPeakClass::Accurate;
      misaligned_ = true;
    }
    if (peaks == CrtPeakClass::Accurate && counted_may_apply()) {
      // The fast model's count does not hold for rows this peaked; a lower bound of |A||B|
      // gives the count instead (choose_moduli), the fast rule's bits stay.
      scaling_ = CrtScaling::Fast;
      counted_ = true;
      return;
    }
    if (scaling_ == CrtScaling::Auto) {
      // With a fixed count the accurate rule's bits serve any peaked rows best; an automatic
      // count keeps the fast rule with one modulus more while that is measured to hold.
      const bool accurate =
          call_.plan.auto_moduli ? peaks == CrtPeakClass::Accurate : peaks != CrtPeakClass::Fast;
      scaling_ = accurate ? CrtScaling::Accurate : CrtScaling::Fast;
    } else if (scaling_ == CrtScaling::Fast && peaks == CrtPeakClass::Accurate &&
               call_.plan.auto_moduli) {
      // An automatic count promises FP64-equivalent accuracy, and the fast rule's count comes
      // from a mean-field model that peaked rows break (at phi = 4 it gave errors 100 times
      // native's): the accurate rule's bound and model keep the promise.
      scaling_ = CrtScaling::Accurate;
      call_.report.reason =
          "automatic moduli count: the fast scaling rule's model does not hold for rows this "
          "peaked (wide exponent ranges), so the accurate rule was taken";
    }
    if (scaling_ == CrtScaling::Fast && peaks == CrtPeakClass::FastExtended &&
        call_.plan.auto_moduli) {
      call_.report.reason = "automatic moduli count: moderately peaked rows (K q_A q_B = " +
                            std::to_string(crt_peak_product(call_.plan.shape.k, q_a_, q_b_)) +
                            "), so the fast scaling rule took " +
                            std::to_string(crt_fast_extra_moduli) + " modulus more than its model";
    }
  }

  double cost_of(int moduli, int products) const {
    return crt_plan_cost(rates_, call_.plan, moduli, products - moduli);
  }

  /// Whether Auto may stop for native FP64 GEMM before the bound product: only with an
  /// automatic count and a scaling rule that may be accurate.
  bool auto_may_stop_early() const { return crt_auto_may_stop_early(call_.plan); }

  /// Auto on wide-range data (crt_native_wins_at_peaks), on the real GEMM the accurate rule
  /// would run: this plan's, or for complex data the embedding's (2M x N x 2K).
  bool native_wins_at_peaks(double q_a, double q_b, const char* which_rows) {
    Shape accurate_shape = call_.plan.shape;
    if (complex_ != nullptr) accurate_shape.m *= 2;
    return crt_native_wins_at_peaks(rates_, accurate_shape, call_.plan.crt_scaling, q_a, q_b,
                                    which_rows, call_.report.reason);
  }

  /// Before any scratch or pass over the operands: the peak ratios of a sample of rows of
  /// op(A) and of op(B)^T bound the full ratios from below, and the hopeful count grows with
  /// them, so where the sample already makes native faster the full data does too.
  bool sampled_rows_say_native() {
    if (!auto_may_stop_early() || call_.plan.peaks_sampled) return false;
    constexpr std::int64_t sample = 64;
    const SampledPeaks q = sampled_peak_ratios(call_.space, call_.opA, call_.opBt, sample);
    // The sample's peaks bound the full ones from below: a wide class here is one for all rows.
    if (counted_may_apply() &&
        crt_peak_class(call_.plan.shape.k, q.x, q.y) == CrtPeakClass::Accurate) {
      return sampled_counts_say_native();
    }
    return native_wins_at_peaks(q.x, q.y, "a sample of rows");
  }

  /// Wide exponent ranges in the sample: the counted fast rule's G over the sampled entries
  /// (sampled_counted_ratio), which is Auto's count (choose_moduli).  Native FP64 GEMM where
  /// the windows cannot see some sampled entry or where that count makes native faster.
  bool sampled_counts_say_native() {
    sample_counted_ratio(nullptr);
    const std::int64_t K = call_.plan.shape.k;
    if (!(sampled_G_ < HUGE_VAL)) {
      call_.report.reason = unseen_entry_reason("a sample of rows");
      return true;
    }
    const int L = crt_counted_moduli(K, sampled_G_);
    const double cost = cost_of(L, L);
    if (!native_is_faster(cost)) return false;
    call_.report.reason =
        native_faster_reason("wide exponent range in a sample of rows: " + std::to_string(L) +
                                 " moduli under the counted fast rule",
                             cost);
    return true;
  }

  /// G of the counted fast rule over 64 x 64 sampled entries, into sampled_G_: in scratch of
  /// its own before anything is carved (`base` null: the sample is Auto's first work), or in
  /// phase-1 scratch after pass 1.
  void sample_counted_ratio(unsigned char* base) {
    const std::int64_t K = call_.plan.shape.k;
    Carver counter(nullptr);
    CountedSampleRegion<ExecSpace>::carve(counter, K);
    Carver carver = base == nullptr ? Carver(call_.scratch.reserve(counter.used()))
                                    : Carver(base, call_.phase_offset);
    const CountedSampleRegion<ExecSpace> sample = CountedSampleRegion<ExecSpace>::carve(carver, K);
    sampled_G_ =
        sampled_counted_ratio(call_.space, call_.opA, call_.opBt, sample.codes, sample.stats);
  }

  /// The Report's reason for a count from the counted fast rule, its G taken `over` entries.
  std::string counted_reason(const std::string& over) const {
    const char* why = misaligned_
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
    return auto_may_stop_early() && native_wins_at_peaks(q_a_, q_b_, "A and B");
  }

  /// One INT8 product of both operands' 7-bit magnitudes, in phase-1 scratch (the bound
  /// region): the accurate rule's bound P = q(A) q(B) of magnitudes rounded up, or (`window`)
  /// the counted fast rule's lower bound Plo of window magnitudes rounded down.
  void magnitude_product(bool window) {
    Carver phase1(call_.base, call_.phase_offset);
    bound_ = CrtBoundRegion<ExecSpace>::carve(phase1, call_.plan);
    bound_end_ = phase1.used();
    if (window) {
      window_magnitudes7(call_.space, call_.opA, call_.exponents.a, scale_.l1a, bound_.q_a);
      window_magnitudes7(call_.space, call_.opBt, call_.exponents.b, scale_.l1b, bound_.q_b);
    } else {
      magnitudes7(call_.space, call_.opA, call_.exponents.a, bound_.q_a);
      magnitudes7(call_.space, call_.opBt, call_.exponents.b, bound_.q_b);
    }
    const Int8GemmProblem p =
        packed_int8_problem(call_.plan.mpad, call_.plan.npad, call_.plan.kpad, bound_.q_a.data(),
                            bound_.q_b.data(), bound_.bound.data());
    int8_gemm_in_k_chunks(call_.space, p, call_.plan.k_block, call_.plan.npad * call_.plan.mpad);
  }

  /// A magnitude product in the Report: INT8 products beside the moduli's.
  void count_magnitude_product() {
    call_.report.estimate_int8_gemms += static_cast<int>(call_.plan.k_chunks);
    call_.report.int8_operations += 2.0 * call_.plan.mpad * call_.plan.npad * call_.plan.kpad;
  }

  /// The bits of every row and column for `moduli` moduli; returns the fewest (under the fast
  /// rule those of the largest norms, known since row_summary: no wait).
  int choose_bits(int moduli) {
    if (scaling_ == CrtScaling::Fast) {
      const double T = crt_fast_target(moduli, call_.plan.shape.k);
      if (!(T >= 1)) return -1;
      set_fast_bits(call_.space, scale_.l2a, T, scale_.bits_a);
      set_fast_bits(call_.space, scale_.l2b, T, scale_.bits_b);
      return std::min(fast_row_bits(rows_.a.largest_l2, T), fast_row_bits(rows_.b.largest_l2, T));
    }
    return accurate_bits(call_.space, bound_.bound, call_.plan.k_chunks, crt_accurate_range(moduli),
                         scale_.rho, scale_.partial, scale_.bits_a, scale_.bits_b);
  }

  /// The moduli count for FP64-equivalent accuracy under the rule in force.  False when Auto
  /// then prefers native FP64 GEMM (the Report says why).
  bool choose_moduli() {
    if (counted_) {
      if (call_.plan.requested == Algorithm::Auto) {
        if (!choose_sampled_counted_moduli()) return false;  // native: the reason says why
      } else if (!choose_counted_moduli()) {
        counted_to_accurate();
      }
    } else if (scaling_ == CrtScaling::Fast) {
      L_ = crt_fast_auto_moduli(call_.plan.shape.k, q_a_, q_b_);
      call_.report.modeled_error = crt_fast_model(L_, call_.plan.shape.k, q_a_, q_b_);
    } else {
      choose_accurate_moduli();
    }
    if (call_.plan.requested != Algorithm::Auto) return true;
    const int products = L_ + call_.report.estimate_int8_gemms;
    const double cost = cost_of(L_, products);
    if (!native_is_faster(cost)) return true;
    call_.report.moduli = L_;
    call_.report.reason =
        native_faster_reason(std::to_string(L_) + " moduli, " + to_string(scaling_) + " scaling, " +
                                 std::to_string(products) + " INT8 products",
                             cost);
    return false;
  }

  /// An explicit Int8Crt call whose window product cannot see some entry: the accurate rule's
  /// bound product and estimate instead.
  void counted_to_accurate() {
    counted_ = false;
    scaling_ = CrtScaling::Accurate;
    magnitude_product(false);
    count_magnitude_product();
    call_.report.reason =
        "automatic moduli count: some entry of |A||B| has no pair of elements inside the INT8 "
        "lower bound's windows, so the accurate scaling rule was taken";
    choose_accurate_moduli();
  }

  /// Auto's counted count: from the sampled entries' G (the sample before pass 1, or one now
  /// where only the full rows were in the wide class).  Not the largest G_mn of all M N
  /// entries, which the lower bound's worst entries set (2 moduli more at 8192^3, phi = 2: the
  /// benchmarks diary in docs/history/), but that of typical entries' worst, without an INT8
  /// product.  False (native FP64 GEMM) where some sampled entry is unseen.
  bool choose_sampled_counted_moduli() {
    if (!(sampled_G_ >= 0)) sample_counted_ratio(call_.base);
    if (!(sampled_G_ < HUGE_VAL)) {
      call_.report.reason = unseen_entry_reason("a sample of rows");
      return false;
    }
    L_ = crt_counted_moduli(call_.plan.shape.k, sampled_G_);
    call_.report.modeled_error = crt_counted_model(L_, call_.plan.shape.k, sampled_G_);
    call_.report.reason = counted_reason(" on 64 x 64 sampled entries");
    return true;
  }

  /// The counted fast rule's count: window magnitudes of both operands, their INT8 product (a
  /// lower bound of |A||B|, in the bound region) and G (one wait).  False where G is +Inf.
  bool choose_counted_moduli() {
    magnitude_product(true);
    count_magnitude_product();
    const double G =
        counted_ratio(call_.space, bound_.bound, call_.plan.k_chunks, call_.plan.shape.k,
                      scale_.l2a, scale_.l1a, scale_.l2b, scale_.l1b);
    full_G_ = G;
    if (!(G < HUGE_VAL)) return false;
    L_ = crt_counted_moduli(call_.plan.shape.k, G);
    call_.report.modeled_error = crt_counted_model(L_, call_.plan.shape.k, G);
    call_.report.reason = counted_reason("");
    return true;
  }

  /// Lower bounds of |A||B| from INT8 magnitudes (scheme I's estimate), then the accurate
  /// rule's model with the bits of max_moduli, scaled to fewer moduli (rules.hpp).
  void choose_accurate_moduli() {
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
    choose_bits(max_moduli);
    const double at_max =
        choice.lower_stored
            ? crt_model_error(call_.space, estimate.lower, s.k, scale_.bits_a, scale_.bits_b,
                              scale_.l1a, scale_.l1b)
            : crt_model_error(
                  call_.space,
                  ProductLowerBound<ExecSpace>{estimate.products, estimate_chunks, 0x1p-14}, s.k,
                  scale_.bits_a, scale_.bits_b, scale_.l1a, scale_.l1b);
    accurate_at_max_ = at_max;
    L_ = crt_accurate_moduli(at_max);
    if (!(at_max < HUGE_VAL)) {
      if (!call_.report.reason.empty()) call_.report.reason += "; ";
      call_.report.reason +=
          "auto moduli: some (|A||B|)_mn lies below the resolution of the int8 estimate, so "
          "the largest count was taken";
    }
    call_.report.modeled_error =
        at_max * std::exp2(0.5 * (crt_log2_range(max_moduli) - crt_log2_range(L_)));
  }

  /// The componentwise promise (coverage.hpp, docs/design.md §3a): the bound of this call's
  /// bits at or below native FP64's gamma_(K+2).  An automatic count grows until it holds, and
  /// where no count up to max_moduli makes it hold the call runs native FP64 GEMM (Uncertified,
  /// with the reason); a fixed count keeps its count and the Report says how far off it is.
  /// Auto checks its cost again where the count grew.
  Int8Outcome certify(int& fewest) {
    const double promise = call_.plan.promise;
    error_bound_ = componentwise_bound(fewest);
    if (!call_.plan.auto_moduli) {
      if (error_bound_ > promise) note_bound_above_native(promise);
      return Int8Outcome::Done;
    }
    const int chosen = L_;
    while (error_bound_ > promise && L_ < max_moduli) {
      ++L_;
      make_room();
      fewest = choose_bits(L_);
      error_bound_ = componentwise_bound(fewest);
    }
    if (error_bound_ > promise) {
      append_reason("no count up to " + std::to_string(max_moduli) +
                    " moduli keeps the componentwise error bound within native FP64 GEMM's "
                    "on this data (bound " +
                    bound_text(error_bound_) + " |A||B| at " + std::to_string(max_moduli) +
                    " moduli): native FP64 GEMM");
      return Int8Outcome::Uncertified;
    }
    if (L_ == chosen) return Int8Outcome::Done;
    append_reason("automatic moduli count raised from " + std::to_string(chosen) + " to " +
                  std::to_string(L_) +
                  " so that the componentwise bound stays within native "
                  "FP64's");
    if (call_.plan.requested != Algorithm::Auto) return Int8Outcome::Done;
    const int products = L_ + call_.report.estimate_int8_gemms;
    const double cost = cost_of(L_, products);
    if (!native_is_faster(cost)) return Int8Outcome::Done;
    call_.report.reason =
        native_faster_reason(std::to_string(L_) + " moduli for the componentwise bound", cost);
    return Int8Outcome::NativeFaster;
  }

  void append_reason(const std::string& why) {
    if (!call_.report.reason.empty()) call_.report.reason += "; ";
    call_.report.reason += why;
  }

  void note_bound_above_native(double promise) {
    append_reason(std::to_string(L_) + " moduli give a componentwise error bound of " +
                  bound_text(error_bound_) + " |A||B| on this data, above native FP64 GEMM's " +
                  bound_text(promise) + " (not FP64-equivalent: use an automatic count)");
  }

  /// The bound of this call's bits (Report::error_bound): the coverage certificate's, and where
  /// the counted fast rule's window product saw every entry, the per-entry one.
  double componentwise_bound(int fewest) {
    double bound = coverage_bound(fewest);
    if (accurate() && accurate_at_max_ >= 0) {
      bound = std::min(bound, with_cross(accurate_split(), fewest));
    }
    if (counted_ && bound > call_.plan.promise) {
      if (!(full_G_ >= 0)) full_window_ratio();
      bound = std::min(bound, with_cross(counted_split(), fewest));
    }
    return bound;
  }

  /// crt_componentwise_bound for a split term that covers both operands, its cross term from
  /// the fewest bits: sum_k |da||db| <= (split) K 2^(1 - fewest) (|A||B|)_mn (coverage.hpp).
  double with_cross(double split, int fewest) const {
    const double K = static_cast<double>(call_.plan.shape.k);
    return crt_componentwise_bound(split, 0, split * K * std::ldexp(1.0, 1 - fewest));
  }

  /// From the coverage certificate: each operand's split term max_m 2^-(b_m+1) / lambda_m,
  /// under the fast rule at most max_m (n_m / T) / lambda_m (2^-b_m < 2 n_m / T, and no row's
  /// bits reach the cap: T < 2^93 and n_m > 1/4), under the accurate rule from the bits.
  double coverage_bound(int fewest) {
    const std::int64_t K = call_.plan.shape.k;
    const double slack = coverage_l1_slack(K);
    double split_a = 0, split_b = 0;
    if (scaling_ == CrtScaling::Fast) {
      const double T = crt_fast_target(L_, K);
      split_a = slack * rows_.a.split_ratio / T;
      split_b = slack * rows_.b.split_ratio / T;
    } else {
      split_a = slack * coverage_split_of_bits(call_.space, scale_.bits_a, scale_.coverage_a.lambda,
                                               scale_.l1a);
      split_b = slack * coverage_split_of_bits(call_.space, scale_.bits_b, scale_.coverage_b.lambda,
                                               scale_.l1b);
    }
    const double cross =
        std::min(split_a, split_b) * static_cast<double>(K) * std::ldexp(1.0, 1 - fewest);
    return crt_componentwise_bound(split_a, split_b, cross);
  }

  /// The accurate rule's estimate, per entry: at max_moduli's bits sqrt(K) crt_model_error
  /// bounds both split terms (its lower bounds of |A||B| are rigorous; its l1 norms are lower
  /// bounds, covered by the slack); with L moduli every row keeps at least its bits at
  /// max_moduli less half the range's difference and 2 (the floors of accurate_bits).
  double accurate_split() const {
    const std::int64_t K = call_.plan.shape.k;
    return coverage_l1_slack(K) * std::sqrt(static_cast<double>(K)) * accurate_at_max_ *
           std::exp2(0.5 * (crt_log2_range(max_moduli) - crt_log2_range(L_)) + 2);
  }

  /// The counted fast rule's window product, per entry: both split terms are at most
  /// 2^14 max_mn (n_m l1b_n + n_n l1a_m) 2^(s_m + s_n) / (T Plo_mn), and l1 <= sqrt(K) n,
  /// so at most sqrt(K) crt_counted_model(L, K, G).
  double counted_split() const {
    const std::int64_t K = call_.plan.shape.k;
    return coverage_l1_slack(K) * std::sqrt(static_cast<double>(K)) *
           crt_counted_model(L_, K, full_G_);
  }

  /// G of the counted fast rule over every entry, from the window product (Auto's count came
  /// from a sample; the bound needs all entries).
  void full_window_ratio() {
    magnitude_product(true);
    count_magnitude_product();
    full_G_ = counted_ratio(call_.space, bound_.bound, call_.plan.k_chunks, call_.plan.shape.k,
                            scale_.l2a, scale_.l1a, scale_.l2b, scale_.l1b);
  }

  /// Scratch for L moduli; growing loses its contents, so everything before the residues runs
  /// again.
  void make_room() {
    ensure_scratch(
        call_.scratch,
        crt_bytes<ExecSpace>(call_.plan, L_, keeps_bound(), call_.plan.auto_moduli, call_.ops),
        call_.base, [&] {
          scale_rows();
          if (keeps_bound()) magnitude_product(false);
        });
  }

  /// Residues of op(A), then per pass of columns of C: residues of those rows of op(B)^T only
  /// (a pass needs (M + width) L K bytes of residues instead of (M + N) L K, which buys wider
  /// passes under the workspace limit), one INT8 GEMM per modulus and K chunk, and the
  /// reconstruction into C.
  void multiply_passes(double alpha, double beta, const typename V::Matrix& C) {
    passes_ = crt_passes<ExecSpace>(call_.plan, L_, call_.ops);
    Carver phase2(call_.base, call_.phase_offset);
    region_ = CrtProductRegion<ExecSpace>::carve(phase2, call_.plan, L_, passes_);
    constants_ = crt_constants(L_);
    residue_tiles_ = backend_reduces_products();
    residues_of(call_.space, call_.opA, rows_a(), region_.residues_a);
    call_.clock.lap(call_.report.seconds_split);
    if (passes_.buffers == 2) {
      overlapped_passes(alpha, beta, C);
      return;
    }
    for (std::int64_t p = 0; p < passes_.count; ++p) {
      residues_of_pass(call_.space, p);
      call_.clock.lap(call_.report.seconds_split);
      products_of_pass(p);
      call_.clock.lap(call_.report.seconds_int8);
      reconstruct_pass(call_.space, p, alpha, beta, C);
      call_.clock.lap(call_.report.seconds_recombine);
    }
  }

  /// Event slots of the side instance's lease.
  enum Slot { start = 0, residues_done = 1, products_done = 3, reconstructed = 5 };

  /// The passes with their memory-bound work on a side instance: pass p's INT8 products (the
  /// caller's instance) run while pass p+1's residues and pass p-1's reconstruction run on the
  /// side.  Buffer p % 2 holds pass p's residues and products; events order each buffer's
  /// reuse: products(p) after residues(p) and after reconstruct(p-2), which last read its
  /// products; residues(p+1) after products(p-1), which last read its residues;
  /// reconstruct(p) after products(p).  Every kernel gets the same inputs as in the serial
  /// order, so C is the same bits.
  void overlapped_passes(double alpha, double beta, const typename V::Matrix& C) {
    if constexpr (SideInstance<ExecSpace>::available) {
      auto lane = SideInstance<ExecSpace>::lease(call_.space);
      const ExecSpace& main = call_.space;
      const ExecSpace side = lane.side();
      lane.record(start, main);  // the side sees everything enqueued so far (bits, exponents, C)
      lane.wait(side, start);
      residues_of_pass(side, 0);
      lane.record(residues_done + 0, side);
      for (std::int64_t p = 0; p < passes_.count; ++p) {
        const int b = static_cast<int>(p % 2), other = 1 - b;
        lane.wait(main, residues_done + b);
        if (p >= 2) lane.wait(main, reconstructed + b);
        products_of_pass(p);
        lane.record(products_done + b, main);
        if (p + 1 < passes_.count) {
          if (p >= 1) lane.wait(side, products_done + other);
          residues_of_pass(side, p + 1);
          lane.record(residues_done + other, side);
        }
        lane.wait(side, products_done + b);
        reconstruct_pass(side, p, alpha, beta, C);
        lane.record(reconstructed + b, side);
      }
      lane.wait(main, reconstructed + static_cast<int>((passes_.count - 1) % 2));
    } else {
      (void)alpha, (void)beta, (void)C;
    }
  }

  /// Residues of rows of op(A) or op(B)^T: one block per modulus, or Karatsuba's three.
  void residues_of(const ExecSpace& on, const typename V::ConstMatrix& X,
                   const CrtRowScaling<ExecSpace>& scaling, const typename V::Digits& residues) {
    if (complex_ != nullptr) {
      crt_complex_residues(on, X, scaling, constants_, residues);
    } else {
      crt_residues(on, X, scaling, constants_, residues);
    }
  }

  CrtRowScaling<ExecSpace> rows_a() const { return {call_.exponents.a, scale_.bits_a}; }
  CrtRowScaling<ExecSpace> rows_b() const { return {call_.exponents.b, scale_.bits_b}; }

  /// Pass p's columns of C and its INT32 products (buffer p % buffers).
  CrtPassProducts<ExecSpace> pass(std::int64_t p) const {
    const std::int64_t n0 = p * passes_.width;
    return {region_.products[p % passes_.buffers], products_.k_chunks, n0,
            std::min(passes_.width, call_.plan.shape.n - n0)};
  }

  /// Pass p's rows of op(B)^T as stored residues: padded_columns x L kpad.
  typename V::Digits residues_b(std::int64_t p) const {
    return typename V::Digits(region_.residues_b[p % passes_.buffers].data(), padded_columns(p),
                              L_ * products_.parts * products_.kpad);
  }

  std::int64_t padded_columns(std::int64_t p) const {
    return std::min(passes_.width, call_.plan.npad - p * passes_.width);
  }

  void residues_of_pass(const ExecSpace& on, std::int64_t p) {
    const CrtPassProducts<ExecSpace> columns = pass(p);
    const CrtRowScaling<ExecSpace> all = rows_b();
    const CrtRowScaling<ExecSpace> these{row_block(all.exponents, columns.n0, columns.width),
                                         row_block(all.bits, columns.n0, columns.width)};
    residues_of(on, row_block(call_.opBt, columns.n0, columns.width), these, residues_b(p));
  }

  void reconstruct_pass(const ExecSpace& on, std::int64_t p, double alpha, double beta,
                        const typename V::Matrix& C) {
    if constexpr (ResidueGemmBackend<ExecSpace>::available) {
      if (residue_tiles_) {
        crt_reconstruct_tiles(on, tiles_of_pass(p), constants_, rows_a(), rows_b(), alpha, beta, C);
        ++call_.report.recombine_passes;
        return;
      }
    }
    if (complex_ != nullptr) {
      crt_complex_reconstruct(on, pass(p), constants_, rows_a(), rows_b(), *complex_);
    } else {
      crt_reconstruct(on, pass(p), constants_, rows_a(), rows_b(), alpha, beta, C);
    }
    ++call_.report.recombine_passes;
  }

  /// One INT8 GEMM per modulus (three for Karatsuba), and K chunk, of op(A)'s residues and
  /// pass p's, on the caller's instance: the moduli of a chunk as one batch (residues of block
  /// l start l kpad into each row, its products l k_chunks width mpad into the pass's), which
  /// a backend that batches runs as one call.
  void products_of_pass(std::int64_t p) {
    const ProfilingRegion region("ozaki::crt::int8_products");
    const Int8GemmProblem g = pass_problem(p);
    call_.report.int8_operations += 2.0 * g.batch * g.rows_a * g.rows_b * g.length;
    if constexpr (ResidueGemmBackend<ExecSpace>::available) {
      if (residue_tiles_) {
        ResidueGemmBackend<ExecSpace>::run(call_.space, g,
                                           reinterpret_cast<std::int8_t*>(pass(p).products.data()));
        gemms_ += static_cast<int>(g.batch);
        return;
      }
    }
    const std::int64_t width = pass(p).products.extent(1);
    gemms_ += int8_gemm_in_k_chunks(call_.space, g, call_.plan.k_block, width * call_.plan.mpad);
  }

  /// Pass p's INT8 products as one batched problem: one product per modulus (three for
  /// Karatsuba) over the whole K, residues of block l starting l kpad into each row, its
  /// products l k_chunks width mpad into the pass's (int8_gemm_in_k_chunks cuts K in chunks).
  Int8GemmProblem pass_problem(std::int64_t p) const {
    const CallPlan& plan = call_.plan;
    const CrtPassProducts<ExecSpace> columns = pass(p);
    const std::int64_t blocks = L_ * products_.parts;
    const std::int64_t width = columns.products.extent(1);
    Int8GemmProblem g;
    g.rows_a = plan.mpad;
    g.rows_b = padded_columns(p);
    g.length = products_.kpad;
    g.a = region_.residues_a.data();
    g.lda = blocks * products_.kpad;
    g.b = residues_b(p).data();
    g.ldb = g.lda;
    g.c = columns.products.data();
    g.ldc = plan.mpad;
    g.batch = blocks;
    g.stride_a = g.stride_b = products_.kpad;
    g.stride_c = products_.k_chunks * width * plan.mpad;
    return g;
  }

  /// Pass p's products as residue tiles, in the bytes of its INT32 products.
  CrtPassTiles tiles_of_pass(std::int64_t p) const {
    const CrtPassProducts<ExecSpace> columns = pass(p);
    return {reinterpret_cast<const std::int8_t*>(columns.products.data()),
            ResidueTiles::of(call_.plan.mpad, padded_columns(p)), columns.n0, columns.width};
  }

  /// Whether the backend reduces the pass products modulo the moduli itself
  /// (ResidueGemmBackend: 1 byte per entry and modulus for the reconstruction to read instead
  /// of 4): real data in one K chunk, where the widest pass's tiles fit in its INT32 products'
  /// bytes (they need L (M + 127) (width + 255) bytes against 4 L M width: always, for passes
  /// of at least 128 columns).  The same bits either way.
  bool backend_reduces_products() const {
    if constexpr (ResidueGemmBackend<ExecSpace>::available) {
      if (complex_ != nullptr || products_.parts != 1 || products_.k_chunks != 1) return false;
      const ResidueTiles widest = ResidueTiles::of(call_.plan.mpad, padded_columns(0));
      const std::int64_t room =
          static_cast<std::int64_t>(pass(0).products.span()) * std::int64_t(sizeof(std::int32_t));
      if (L_ * widest.plane_bytes() > room) return false;
      std::string why_not;
      return ResidueGemmBackend<ExecSpace>::supported(call_.space, pass_problem(0), why_not);
    } else {
      return false;
    }
  }

  void fill_report(int fewest_bits) {
    call_.report.algorithm = Algorithm::Int8Crt;
    call_.report.backend = Int8Gemm<ExecSpace>::name();
    call_.report.moduli = L_;
    call_.report.crt_scaling = scaling_;
    call_.report.crt_bits = fewest_bits;
    call_.report.overlapped = passes_.buffers == 2;
    call_.report.residue_products = residue_tiles_;
    call_.report.int8_gemms = gemms_;
    call_.report.k_chunk = std::min(call_.plan.k_block, products_.kpad);
    call_.report.complex_products = complex_ != nullptr ? 3 : 0;
    call_.report.workspace_bytes =
        crt_bytes<ExecSpace>(call_.plan, L_, took_bound(), call_.plan.auto_moduli, call_.ops);
    call_.report.error_bound = error_bound_;
  }

  PipelineState<ExecSpace>& call_;
  DeviceRates rates_;
  CrtScaling scaling_;
  int L_;
  bool counted_ = false;         // the counted fast rule (choose_rule)
  bool misaligned_ = false;      // the certificate sent a mean-field count to the counted rule
  double full_G_ = -1;           // the counted fast rule's G over every entry, once computed
  double accurate_at_max_ = -1;  // the accurate rule's estimate at max_moduli, once computed
  double error_bound_ = 0;       // the componentwise bound (certify)
  double sampled_G_ = -1;        // its G over sampled entries, once computed
  int gemms_ = 0;
  bool residue_tiles_ = false;  // backend_reduces_products, for this call's passes
  double q_a_ = 0, q_b_ = 0;
  RowSummary rows_;
  std::size_t bound_end_ = 0;
  CrtScaleRegion<ExecSpace> scale_;
  CrtBoundRegion<ExecSpace> bound_;
  CrtPasses passes_;
  CrtProductRegion<ExecSpace> region_;
  CrtConstants constants_;
  CrtProducts products_;
  const CrtComplexTarget<ExecSpace>* complex_;
};

}  // namespace Impl
}  // namespace ozaki
