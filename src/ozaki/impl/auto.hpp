#pragma once
/// \file auto.hpp
/// Algorithm::Auto's choice before any work, from the INT8 products each scheme needs at best
/// (its first guess) and the device's rates (cost_model.hpp):
///   - slices given (and moduli not): Int8Slices with that S;  moduli given: Int8Crt;
///   - neither: FP64-equivalent accuracy, from whichever scheme needs fewer products (scheme
///     II's first guess, crt_first_guess, against scheme I's pairs plus its estimate);
///   - prepared operands: Int8Slices (they hold slices);
/// and then Native where even that many products are slower than one FP64 GEMM.  A scheme
/// with an automatic count checks again once it knows the count (Int8Outcome::NativeFaster),
/// so that the estimate is not wasted where it then runs.

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/cost_model.hpp>
#include <ozaki/impl/crt/rules.hpp>
#include <ozaki/impl/slices/accuracy.hpp>
#include <ozaki/options.hpp>

#include <string>

namespace ozaki {
namespace Impl {

/// The plan Auto's first choice looks at, from the shape alone.  Real data: the call's shape.
/// Complex data, given as the complex shape (rows of X, rows of Y, K): scheme II's Karatsuba
/// form (rows of 2K interleaved parts, 3 INT8 products per modulus) where the options allow
/// it, otherwise the real embedding's 2M x N x 2K GEMM (complex/driver.hpp runs the same).
inline CallPlan auto_first_plan(const Shape& s, const Options& o, bool complex) {
  if (!complex) return make_plan(s, o);
  const bool karatsuba =
      o.experimental.complex_products == Experimental::ComplexProducts::Karatsuba &&
      o.crt_scaling != CrtScaling::Accurate;
  CallPlan plan = make_plan(karatsuba ? Shape{s.m, s.n, 2 * s.k} : Shape{2 * s.m, s.n, 2 * s.k}, o);
  plan.complex_karatsuba = karatsuba;
  return plan;
}

/// The INT8 products each scheme needs at best for a plan (Auto's first guesses).
struct AutoProducts {
  int scheme1 = 0;  // scheme I's pairs, plus the estimate's product for an automatic S
  int crt = 0;      // scheme II's moduli
};
/// The first guesses of a plan, computed afresh.
inline AutoProducts guessed_products(const CallPlan& plan) {
  const std::int64_t K = plan.shape.k;
  const int S = plan.auto_slices
                    ? best_case_slices(K, plan.pairs, plan.pair_count, plan.unit_roundoff)
                    : plan.slices;
  return {slices_products(S, plan.pairs, plan.pair_count) + (plan.auto_slices ? 1 : 0),
          plan.auto_moduli ? crt_first_guess(K, plan.unit_roundoff) : plan.moduli};
}

/// guessed_products, kept per thread for the last plan asked about.
inline AutoProducts auto_products(const CallPlan& plan) {
  // The guesses depend on K, the unit roundoff and the plan's counts alone, and their model
  // loops were most of the host time of a call Auto hands to native GEMM (perf_tests/
  // call_overhead): each thread keeps the last answer, which a program calling with one shape
  // again and again, or a batch of one shape, asks for every time.
  struct Question {
    std::int64_t k = -1;
    double unit_roundoff = 0;
    PairPolicy pairs = PairPolicy::Triangular;
    int pair_count = 0, slices = 0, moduli = 0;
    bool auto_slices = false, auto_moduli = false;
    bool operator==(const Question& o) const {
      return k == o.k && unit_roundoff == o.unit_roundoff && pairs == o.pairs &&
             pair_count == o.pair_count && slices == o.slices && moduli == o.moduli &&
             auto_slices == o.auto_slices && auto_moduli == o.auto_moduli;
    }
  };
  thread_local Question last;
  thread_local AutoProducts answer;
  const Question asked{plan.shape.k, plan.unit_roundoff, plan.pairs,       plan.pair_count,
                       plan.slices,  plan.moduli,        plan.auto_slices, plan.auto_moduli};
  if (asked == last) return answer;
  answer = guessed_products(plan);
  last = asked;
  return answer;
}

/// The scheme Auto starts from before it weighs native GEMM: Int8Slices for prepared
/// operands, a given S or fewer products, Int8Crt otherwise.
inline Algorithm auto_scheme(const CallPlan& plan, bool prepared) {
  const AutoProducts products = auto_products(plan);
  if (prepared || (!plan.auto_slices && plan.auto_moduli) ||
      (plan.auto_slices && plan.auto_moduli && products.scheme1 < products.crt)) {
    return Algorithm::Int8Slices;
  }
  return Algorithm::Int8Crt;
}

/// The algorithm Auto runs, or Native with `why` (native: FP64 GEMM, or the one `native`
/// names).
template <class ExecSpace>
Algorithm choose_auto(const ExecSpace& space, const CallPlan& plan, bool prepared, std::string& why,
                      const NativeYardstick& native = NativeYardstick{}) {
  const AutoProducts products = auto_products(plan);
  const int scheme1_products = products.scheme1, crt_products = products.crt;
  const Algorithm pick = auto_scheme(plan, prepared);
  if (prepared) return pick;
  const DeviceRates rates = device_rates(space);
  if (pick == Algorithm::Int8Crt) {
    const double cost = crt_plan_cost(rates, plan, crt_products) / native.time;
    if (!native_is_faster(cost)) return pick;
    why = native_faster_reason("Int8Crt with at least ", crt_products, " moduli", cost,
                               native.precision);
    return Algorithm::Native;
  }
  const double cost = slices_relative_cost(rates, scheme1_products) / native.time;
  if (!native_is_faster(cost)) return pick;
  why = native_faster_reason("Int8Slices needs at least ", scheme1_products, " INT8 products", cost,
                             native.precision);
  return Algorithm::Native;
}

/// Whether a call whose plan choose_auto hands to native GEMM from the shape would be declined
/// inside a graph capture too, so that the call need not ask whether its stream is captured:
/// true where Auto's pick was scheme II with an automatic count.  A captured call's count
/// (crt_capture_moduli, the fast rule at a peak ratio above the first guess's) is never below
/// the first guess, and scheme II's modelled cost grows with the count, so a capture finds
/// native GEMM faster as well (captured_crt_applies); scheme I, which a capture never runs,
/// may lose where scheme II at the captured count would not.
inline bool declines_captured_too(const CallPlan& plan) {
  return plan.auto_moduli && auto_scheme(plan, false) == Algorithm::Int8Crt;
}

/// Native FP32 GEMM as Auto's yardstick for FP32 data on `space`.
template <class ExecSpace>
NativeYardstick fp32_yardstick(const ExecSpace& space) {
  const double fp32_speed = device_rates(space).fp32_over_fp64;
  return NativeYardstick{fp32_speed > 0 ? 1 / fp32_speed : 1, "FP32"};
}

/// Auto's first decision from the shape alone (complex: the complex shape, auto_first_plan):
/// the scheme it starts with, or Native with `why` (also where the space has no INT8 GEMM).
template <class ExecSpace>
Algorithm auto_first_choice(const ExecSpace& space, const Shape& s, const Options& o, bool complex,
                            const NativeYardstick& native, std::string& why) {
  if (!Int8Gemm<ExecSpace>::supported(space, why)) return Algorithm::Native;
  return choose_auto(space, auto_first_plan(s, o, complex), false, why, native);
}

}  // namespace Impl
}  // namespace ozaki
