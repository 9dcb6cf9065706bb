#pragma once
/// \file accuracy.hpp
/// The slice count that gives FP64-equivalent accuracy (docs/design.md, "Choosing S").
///
/// Measure every error of c_mn against (|A||B|)_mn, as FP64 GEMM's own error bound does, and
/// write D_mn = 2^(-e_m-e_n) (|A||B|)_mn for the product in units of the two scales.
///
/// Split.  Each element of row m of op(A) is rounded by at most 2^(e_m - 8S), column n of op(B)
/// by 2^(e_n - 8S).  These K errors enter c_mn with independent signs, so relative to |A||B|
/// they add up to about
///     2^(-8S) (l1a_m + l1b_n) / (sqrt(K) D_mn),     l1a_m = ||a_m||_1 2^-e_m, l1b_n likewise.
///
/// Dropped pairs.  A dropped diagonal d (pairs i + j = d, n_d of them not computed) misses
/// sum_k of n_d products of lower-order digits, which behave like independent uniform values
/// in [-128, 127] (variance 128^2/3): about 2^(-8d) sqrt(K n_d) / 3 / D_mn relative to |A||B|.
///
/// Native FP64 GEMM's typical error on such data is u/2 to u (u = 2^-53) relative to |A||B|,
/// its largest over many entries a few u.  The slice count is the smallest S whose modelled
/// (typical) error, with the worst entry's ratios
///     split   = max_mn (l1a_m + l1b_n) / D_mn,     inverse = max_mn 1 / D_mn
/// (estimate.hpp bounds both from above with INT8 GEMMs), is at most u.
///
/// This is a model of the typical error, not a bound: the rigorous bound is in docs/design.md
/// and in serial::error_bound.  The tests check the model against double-double references
/// for exponent spreads phi = 0.5, 2 and 4.

#include <ozaki/impl/common/bounds.hpp>
#include <ozaki/impl/slices/schedule.hpp>
#include <ozaki/options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ozaki {
namespace Impl {

/// The two worst-entry ratios of the model above (0 when an operand is zero, +Inf when some
/// D_mn could not be bounded away from zero).
struct ErrorRatios {
  double split = 0;
  double inverse = 0;
};

/// Modelled typical error of scheme I relative to |A||B| for S slices and a pair policy.
inline double modeled_error(const ErrorRatios& r, std::int64_t K, int S, PairPolicy policy,
                            int pair_count) {
  const double k = static_cast<double>(K);
  double error = std::ldexp(r.split, -bits_per_slice * S) / std::sqrt(k);
  int taken = selected_pair_count(S, policy, pair_count);
  for (int d = 0; d <= 2 * (S - 1); ++d) {
    const int on_diagonal = std::min(d, 2 * (S - 1) - d) + 1;
    const int dropped = on_diagonal - std::min(taken, on_diagonal);
    taken = std::max(0, taken - on_diagonal);
    if (dropped > 0 && r.inverse > 0) {
      error += std::ldexp(r.inverse, -bits_per_slice * d) * std::sqrt(k * dropped) / 3;
    }
  }
  return error;
}

/// Smallest S in [1, max_slices] whose modelled error is at most u, native GEMM's typical
/// error relative to |A||B| in the precision promised (CallPlan::unit_roundoff; max_slices
/// when none is, or when the ratios are unbounded).
inline int equivalent_slices(const ErrorRatios& r, std::int64_t K, PairPolicy policy,
                             int pair_count, double u) {
  if (!(r.split > 0) || K <= 0) return 1;  // a zero operand: any S is exact
  if (!(r.split < HUGE_VAL) || !(r.inverse < HUGE_VAL)) return max_slices;
  for (int S = 1; S < max_slices; ++S) {
    if (policy == PairPolicy::Count && pair_count > S * S) continue;
    if (modeled_error(r, K, S, policy, pair_count) <= u) return S;
  }
  return max_slices;
}

/// The rigorous componentwise bound of docs/design.md §3 relative to |alpha| (|A||B|)_mn, from
/// the same worst-entry ratios (upper bounds: estimate.hpp) and the schedule's G INT8 products:
///     E = 2^(-8S) split + K 2^(-16S) inverse + K W_D inverse,   E + gamma_(G+2) 9.1 (1 + E),
/// W_D = sum over the dropped pairs (i, j) of 2^(-8(i+j)).  The recombination's terms sum to at
/// most 9.1 ((|A||B|)_mn + E_split): the balanced digits of an integer X != 0 weigh at most
/// 3.02 |X| together (its top nonzero digit is at most |X| + 0.502 256^p, the digits below it
/// 0.502 256^p, and |X| >= 0.498 256^p), so each element's slices at most 3.02 times its
/// rounded value.  +Inf where the ratios are.
inline double slices_componentwise_bound(const ErrorRatios& r, std::int64_t K, int S,
                                         PairPolicy policy, int pair_count, int products) {
  if (!(r.split > 0)) return 0;  // a zero operand: exact
  const double k = static_cast<double>(K);
  double dropped_weight = 0;
  int taken = selected_pair_count(S, policy, pair_count);
  for (int d = 0; d <= 2 * (S - 1); ++d) {
    const int on_diagonal = std::min(d, 2 * (S - 1) - d) + 1;
    const int dropped = on_diagonal - std::min(taken, on_diagonal);
    taken = std::max(0, taken - on_diagonal);
    dropped_weight += dropped * std::ldexp(1.0, -bits_per_slice * d);
  }
  const double split = std::ldexp(r.split, -bits_per_slice * S) +
                       k * std::ldexp(r.inverse, -2 * bits_per_slice * S) +
                       k * dropped_weight * r.inverse;
  return split + gamma_bound(static_cast<double>(products) + 2) * 9.1 * (1 + split);
}

/// The S the model chooses for uniformly distributed data (split ratio 16, 1/D_mn = 16/K), the
/// mildest real data: Algorithm::Auto's first guess, before any work.  Near-constant data may
/// need one slice less; the guess is not lower because a lower one would have Auto spend the
/// slice-count estimate's INT8 GEMMs on calls that then run native FP64 GEMM anyway (the
/// benchmarks diary in docs/history/, the scheme I run "8192^3 only").
inline int best_case_slices(std::int64_t K, PairPolicy policy, int pair_count, double u) {
  return equivalent_slices(ErrorRatios{16.0, 16.0 / static_cast<double>(K)}, K, policy, pair_count,
                           u);
}

}  // namespace Impl
}  // namespace ozaki
