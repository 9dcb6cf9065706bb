#pragma once
/// \file scaling.hpp
/// Portable Kokkos kernels that choose scheme II's integer scaling (the rules are in
/// rules.hpp, the derivations in docs/design.md §5):
///
///   launch_exponents_and_norms     pass 1 and n_r, l1_r per row, from one read of every
///                                  element in norm tiles: exact, order-independent norms
///                                  (rules.hpp), the same bits on every backend
///   row_summary                    the one wait after both operands' norms: NaN/Inf, the
///                                  peak ratios max_r ||x_r||_2 / ||x_r||_1 (the Auto scaling
///                                  rule's test) and the largest norms (the fewest fast bits)
///   set_fast_bits                  bits per row from the Cauchy-Schwarz rule
///   magnitudes7 + INT8 GEMM + accurate_bits    bits from the per-entry bound (accurate rule)
///   crt_model_error                the accurate rule's error model, for an automatic count
///   window_magnitudes7 + INT8 GEMM + counted_ratio    the counted fast rule's count (wide
///                                  exponent ranges), and sampled_counted_ratio before pass 1

#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/crt/coverage.hpp>
#include <ozaki/impl/crt/rules.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

/// Per-row bits (rules.hpp) and scale exponents.
template <class ExecSpace>
using CrtBits = typename Views<ExecSpace>::Exponents;

/// The integer quanta of the exact row norms (rules.hpp, "Row norms"): s2(x)^2 and s1(x).
struct NormQuanta {
  std::uint64_t square = 0, l1 = 0;
};

/// x 2^n as two multiplications by powers of two, the value ldexp gives (a per-element ldexp
/// is a library call on GPUs; these factors are made once per row).  For n >= 0 both factors
/// are at least 1, so both products are exact (no result here exceeds 2^31); for n < 0 one
/// factor 2^n (n >= -1009: scale exponents are at most 1025, so 2^n is normal) rounds once,
/// as ldexp does.
struct PowerOfTwoScale {
  double first = 1, second = 1;
};

KOKKOS_INLINE_FUNCTION PowerOfTwoScale power_of_two_scale(int n) {
  PowerOfTwoScale s;
  if (n >= 0) {
    s.first = compat::ldexp(1.0, n / 2);
    s.second = compat::ldexp(1.0, n - n / 2);
  } else {
    s.first = compat::ldexp(1.0, n);
  }
  return s;
}

KOKKOS_INLINE_FUNCTION double scaled(double x, const PowerOfTwoScale& s) {
  return x * s.first * s.second;
}

/// The scales of one row's norm quanta (row exponent e).
struct NormScales {
  PowerOfTwoScale l2, l1;
};

KOKKOS_INLINE_FUNCTION NormScales norm_scales(int e) {
  return {power_of_two_scale(crt_l2_quantum_bits - e), power_of_two_scale(crt_l1_quantum_bits - e)};
}

KOKKOS_INLINE_FUNCTION NormQuanta norm_quanta(double x, const NormScales& scales) {
  NormQuanta q;
  if (x == 0) return q;
  const double v2 = scaled(magnitude(x), scales.l2);  // in [0, 2^16]
  std::uint64_t s2 = static_cast<std::uint64_t>(v2);
  if (static_cast<double>(s2) < v2 || s2 == 0) ++s2;  // ceil, and at least 1
  q.square = s2 * s2;
  q.l1 = static_cast<std::uint64_t>(scaled(magnitude(x), scales.l1));
  return q;
}

/// n_r and l1_r from the row's integer sums.
KOKKOS_INLINE_FUNCTION double norm_from_squares(std::uint64_t squares) {
  return compat::ldexp(compat::sqrt(static_cast<double>(squares)), -crt_l2_quantum_bits);
}
KOKKOS_INLINE_FUNCTION double norm_from_l1(std::uint64_t sum) {
  return compat::ldexp(static_cast<double>(sum), -crt_l1_quantum_bits);
}

/// ceil(v / 2^s) and floor(v / 2^s) for v < 2^63 (a tile's sums are below 2^38).
KOKKOS_INLINE_FUNCTION std::uint64_t shift_up(std::uint64_t v, int s) {
  if (v == 0) return 0;
  return s >= 63 ? 1 : (v + ((std::uint64_t(1) << s) - 1)) >> s;
}
KOKKOS_INLINE_FUNCTION std::uint64_t shift_down(std::uint64_t v, int s) {
  return s >= 63 ? 0 : v >> s;
}

/// Elements of a norm tile a thread loads before it uses them (norm_tile_partials).
constexpr int norm_tile_batch = 8;

/// Per norm tile t of row r (kernels.hpp, norm_tiles): tile_max(t, r) = the tile's largest
/// magnitude mu_t (+Inf for NaN/Inf), and for a finite nonzero tile the integer sums of its
/// quanta at its own exponent e_t = scale_exponent(mu_t): squares(t, r) = S2_t = sum_x s2(x)^2,
/// sums(t, r) = S1_t = sum_x s1(x) (rules.hpp, "Row norms"; below 2^38, so a double holds
/// them exactly), and layers(t, r) = its nonzero elements counted by layer below e_t, packed
/// (coverage.hpp, coverage_tile_bin; 0 for a zero tile).  One thread per tile, which reads its 32
/// elements for the max and again, from the cache, for the sums: each element comes from memory
/// once, where pass 1 and the norms had read each row from memory twice.  On a GPU consecutive
/// threads take consecutive tiles of a K-contiguous row, or consecutive rows of strided ones
/// (kernels.hpp: both coalesced).
template <class ExecSpace>
void norm_tile_partials(const ExecSpace& space, bool strided,
                        const typename Views<ExecSpace>::ConstMatrix& X,
                        const typename Views<ExecSpace>::Rows& tile_max,
                        const typename Views<ExecSpace>::Rows& squares,
                        const typename Views<ExecSpace>::Rows& sums,
                        const typename Views<ExecSpace>::TileCounts& layers) {
  const std::int64_t rows = X.extent(0), K = X.extent(1), tiles = norm_tiles(K);
  // Both loops load norm_tile_batch elements before using any: with the loads of a plain loop
  // Nsight Compute found this kernel waiting on loads most of its cycles, well below memory
  // speed, the second loop's loads served from L2 (the benchmarks diary in docs/history/,
  // "cuBLASLt with a workspace, batched products, norm tiles").  The maximum and the integer
  // sums are the same in any order, so the batches change no bit.
  const auto partials = KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t t) {
    const NormTile tile = norm_tile(t, K);
    // f(x) for every element x of the tile, norm_tile_batch loads at a time.
    const auto for_each_element = [&](const auto& f) {
      const auto load = [&](int i) { return X(r, tile.first + tile.stride * i); };
      int i = 0;
      for (; i + norm_tile_batch <= tile.count; i += norm_tile_batch) {
        double x[norm_tile_batch];
        for (int j = 0; j < norm_tile_batch; ++j) x[j] = load(i + j);
        for (int j = 0; j < norm_tile_batch; ++j) f(x[j]);
      }
      for (; i < tile.count; ++i) f(load(i));
    };
    double mu = 0;
    for_each_element([&](double x) {
      const double v = is_finite(x) ? magnitude(x) : positive_infinity();
      mu = v > mu ? v : mu;
    });
    // The tile again for its sums, from the cache (the thread has just read it): holding its
    // 32 elements in registers takes 152 registers per thread on sm_90, so one 256-thread
    // block per SM, and a slower kernel (56 registers this way).
    std::uint64_t sq = 0, sum = 0, bins = 0;
    if (mu > 0 && is_finite(mu)) {
      const int e = scale_exponent(mu);
      const NormScales scales = norm_scales(e);
      for_each_element([&](double x) {
        const NormQuanta q = norm_quanta(x, scales);
        sq += q.square;
        sum += q.l1;
        if (x != 0) {
          int exponent = 0;
          compat::frexp(x, &exponent);
          bins += coverage_bin_unit(coverage_tile_bin(exponent, e));
        }
      });
    }
    tile_max(t, r) = mu;
    squares(t, r) = static_cast<double>(sq);
    sums(t, r) = static_cast<double>(sum);
    layers(t, r) = bins;
  };
  for_each_norm_tile("ozaki::crt::norm_tiles", "ozaki::crt::norm_tiles_strided", space, strided,
                     rows, tiles, partials);
}

/// n_r and l1_r from the tiles of norm_tile_partials and the row exponents e_r (the largest
/// e_t, exponents_from_tile_max): sum_t ceil(S2_t 4^(e_t - e_r)) and sum_t floor(S1_t
/// 2^(e_t - e_r)), integers summed in 64 bits, so in any order the same.
template <class ExecSpace>
void norms_from_tiles(const ExecSpace& space, const typename Views<ExecSpace>::Rows& tile_max,
                      const typename Views<ExecSpace>::Rows& squares,
                      const typename Views<ExecSpace>::Rows& sums,
                      const typename Views<ExecSpace>::Exponents& exponents,
                      const typename Views<ExecSpace>::Norms& l2,
                      const typename Views<ExecSpace>::Norms& l1) {
  row_tiles_kernel<false>(
      "ozaki::crt::norms_from_tiles", space, exponents.extent(0), tile_max.extent(0), NormQuanta{},
      KOKKOS_LAMBDA(const std::int64_t t, const std::int64_t r) {
        NormQuanta q;
        const double mu = tile_max(t, r);
        // A row holding NaN or Inf gets no norms (the call takes native FP64 GEMM): its
        // exponent is no exponent, and shifting by it would be undefined.
        if (!(mu > 0) || exponents(r) == nonfinite_row) return q;
        const int shift = exponents(r) - scale_exponent(mu);  // >= 0: e_r is the largest e_t
        q.square = shift_up(static_cast<std::uint64_t>(squares(t, r)), 2 * shift);
        q.l1 = shift_down(static_cast<std::uint64_t>(sums(t, r)), shift);
        return q;
      },
      KOKKOS_LAMBDA(NormQuanta & acc, const NormQuanta& q) {
        acc.square += q.square;
        acc.l1 += q.l1;
      },
      KOKKOS_LAMBDA(const std::int64_t r, const NormQuanta& total) {
        l2(r) = norm_from_squares(total.square);
        l1(r) = norm_from_l1(total.l1);
        return 0;
      });
}

/// Pass 1 and the row norms of one operand as scheme II's pipeline reads it: per norm tile
/// (norm_tile_partials, one read of every element), then per row the exponent and the norms
/// from its tiles; rows holding NaN or Inf get the exponent nonfinite_row.  Nothing waits for
/// these kernels: scheme II reads what it needs of both operands at once (row_summary).
/// (Separate reads for pass 1 and the norms, or one kernel that keeps a whole K-contiguous row
/// in registers, are slower: the benchmarks diary in docs/history/, "pass 1 and the norms in
/// one read".)
template <class ExecSpace>
void launch_exponents_and_norms(const ExecSpace& space, bool strided,
                                const typename Views<ExecSpace>::ConstMatrix& X,
                                const typename Views<ExecSpace>::Rows& tile_max,
                                const typename Views<ExecSpace>::Rows& squares,
                                const typename Views<ExecSpace>::Rows& sums,
                                const typename Views<ExecSpace>::TileCounts& layers,
                                const typename Views<ExecSpace>::Exponents& exponents,
                                const typename Views<ExecSpace>::Norms& l2,
                                const typename Views<ExecSpace>::Norms& l1) {
  norm_tile_partials(space, strided, X, tile_max, squares, sums, layers);
  tile_max_exponents<false>(space, tile_max, exponents);
  norms_from_tiles(space, tile_max, squares, sums, exponents, l2, l1);
}

/// max_r l2(r) / l1(r) over nonzero rows (0 when all are zero): the q of rules.hpp.
template <class ExecSpace>
double peak_ratio(const ExecSpace& space, const typename Views<ExecSpace>::Norms& l2,
                  const typename Views<ExecSpace>::Norms& l1) {
  double worst = 0;
  flat_reduce<Kokkos::Max>(
      "ozaki::crt::peak_ratio", space, l2.extent(0),
      KOKKOS_LAMBDA(const std::int64_t r, double& w) {
        if (l1(r) > 0 && l2(r) / l1(r) > w) w = l2(r) / l1(r);
      },
      worst);
  return worst;
}

/// The fast rule's bits of a row with scaled norm l2 > 0 (rules.hpp): min(crt_max_bits,
/// floor(log2(T / l2))).  They fall as l2 grows (IEEE division and frexp are monotonic), so
/// the fewest bits of an operand are those of its largest l2.
KOKKOS_INLINE_FUNCTION int fast_row_bits(double l2, double T) {
  if (!(l2 > 0)) return crt_max_bits;
  int e = 0;
  compat::frexp(T / l2, &e);  // T / l2 = g 2^e, g in [1/2, 1): floor(log2) = e - 1
  return e - 1 < crt_max_bits ? e - 1 : crt_max_bits;
}

/// What scheme II's host code needs of one operand after pass 1, the row norms and the
/// coverage certificate: whether a row holds NaN or Inf, the peak ratio q = max_r l2(r) / l1(r)
/// over rows with l1 > 0 (peak_ratio's value), the largest l2 (the fast rule's fewest bits:
/// fast_row_bits), and from the certificate (coverage.hpp; +Inf where some nonzero row has
/// lambda = 0): max_r l1(r) / (K lambda_r), which bounds every entry's mean-field estimate
/// against (|A||B|)_mn, max_r l2(r) / lambda_r and max_r 1 / lambda_r (the split's bound under
/// the fast rule, and under any bits of at least crt_min_bits).
struct OperandSummary {
  bool nonfinite = false;
  double peak = 0, largest_l2 = 0;
  double coverage_factor = 0, split_ratio = 0, inverse_lambda = 0;
};

struct RowSummary {
  OperandSummary a, b;
};

/// The per-row views of one operand row_summary reads.
template <class ExecSpace>
struct SummaryRows {
  typename Views<ExecSpace>::Exponents exponents;
  typename Views<ExecSpace>::Norms l2, l1, lambda;
};

/// The summary's partial results: per team of summary_team_rows rows of op(A) then op(B),
/// the maxima of summary_values non-negative values (row_summary), operand_summary_values per
/// operand.
constexpr int operand_summary_values = 6;
constexpr int summary_values = 2 * operand_summary_values;
constexpr std::int64_t summary_team_rows = 2048;
inline std::int64_t summary_teams(std::int64_t rows) {
  return (rows + summary_team_rows - 1) / summary_team_rows;
}

/// One row's contribution to the summary in its operand's slots: (NaN/Inf, l2 / l1, l2,
/// l1 / (K lambda), l2 / lambda, 1 / lambda).  Rows holding NaN or Inf have no norms
/// (norms_from_tiles); all-zero rows (l1 = 0) meet only exact zeros.
template <class ExecSpace>
KOKKOS_INLINE_FUNCTION void summary_of_row(const SummaryRows<ExecSpace>& x, double K,
                                           std::int64_t r, double* v) {
  if (x.exponents(r) == nonfinite_row) {
    v[0] = 1;
    return;
  }
  const double l1 = x.l1(r), l2 = x.l2(r), lambda = x.lambda(r);
  if (l1 > 0 && l2 / l1 > v[1]) v[1] = l2 / l1;
  if (l2 > v[2]) v[2] = l2;
  if (!(l1 > 0)) return;
  const double factor = lambda > 0 ? l1 / (K * lambda) : positive_infinity();
  const double split = lambda > 0 ? l2 / lambda : positive_infinity();
  const double inverse = lambda > 0 ? 1 / lambda : positive_infinity();
  if (factor > v[3]) v[3] = factor;
  if (split > v[4]) v[4] = split;
  if (inverse > v[5]) v[5] = inverse;
}

/// Scheme II's one wait after pass 1, the row norms and the coverage certificate of both
/// operands (launched without waits: launch_exponents_and_norms, launch_coverage): one kernel
/// takes the maxima of each operand's OperandSummary values per team of rows into `partials`
/// (summary_teams(M + N) x summary_values, no atomics), the host copies them and takes the
/// maxima over the teams (in any order the same).  As separate reductions the NaN/Inf test,
/// the peak ratios and the fewest bits would be eight, each a round trip between host and
/// device (the benchmarks diary in docs/history/, "one wait after pass 1").
template <class ExecSpace>
RowSummary row_summary(const ExecSpace& space, std::int64_t K, const SummaryRows<ExecSpace>& a,
                       const SummaryRows<ExecSpace>& b,
                       const typename Views<ExecSpace>::Rows& partials) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t M = a.exponents.extent(0), rows = M + b.exponents.extent(0);
  const double k = static_cast<double>(K);
  const int teams = static_cast<int>(summary_teams(rows));
  const int size = is_host_space<ExecSpace>() ? 1 : 256;
  policy_type policy(space, teams, size);
  policy.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(size * summary_values)));
  Kokkos::parallel_for(
      "ozaki::crt::row_summary", policy, KOKKOS_LAMBDA(const member_type& team) {
        const std::int64_t begin = std::int64_t(team.league_rank()) * summary_team_rows;
        const std::int64_t end =
            begin + summary_team_rows < rows ? begin + summary_team_rows : rows;
        const int t = team.team_rank(), threads = team.team_size();
        double v[summary_values] = {};
        for (std::int64_t r = begin + t; r < end; r += threads) {
          if (r < M) {
            summary_of_row(a, k, r, v);
          } else {
            summary_of_row(b, k, r - M, v + operand_summary_values);
          }
        }
        Scratch part(team.team_scratch(0), threads * summary_values);
        for (int j = 0; j < summary_values; ++j) part(t * summary_values + j) = v[j];
        team.team_barrier();
        for (int j = t; j < summary_values; j += threads) {
          double m = 0;
          for (int u = 0; u < threads; ++u) {
            const double x = part(u * summary_values + j);
            m = x > m ? x : m;
          }
          partials(team.league_rank(), j) = m;
        }
      });
  const auto host = Kokkos::create_mirror_view(partials);
  Kokkos::deep_copy(space, host, partials);
  space.fence();
  double v[summary_values] = {};
  for (int i = 0; i < teams; ++i)
    for (int j = 0; j < summary_values; ++j) v[j] = host(i, j) > v[j] ? host(i, j) : v[j];
  const auto operand = [&](const double* w) {
    OperandSummary o;
    o.nonfinite = w[0] > 0;
    o.peak = w[1];
    o.largest_l2 = w[2];
    o.coverage_factor = w[3];
    o.split_ratio = w[4];
    o.inverse_lambda = w[5];
    return o;
  };
  RowSummary s;
  s.a = operand(v);
  s.b = operand(v + operand_summary_values);
  return s;
}

/// Sums of squares and of magnitudes of an element's real parts, each divided by mu.
KOKKOS_INLINE_FUNCTION double scaled_squares(double x, double mu) {
  const double a = magnitude(x) / mu;
  return a * a;
}
KOKKOS_INLINE_FUNCTION double scaled_squares(const Kokkos::complex<double>& x, double mu) {
  return scaled_squares(x.real(), mu) + scaled_squares(x.imag(), mu);
}
KOKKOS_INLINE_FUNCTION double scaled_magnitudes(double x, double mu) { return magnitude(x) / mu; }
KOKKOS_INLINE_FUNCTION double scaled_magnitudes(const Kokkos::complex<double>& x, double mu) {
  return scaled_magnitudes(x.real(), mu) + scaled_magnitudes(x.imag(), mu);
}

/// The peak ratios of samples of rows of two operands (sampled_peak_ratios).
struct SampledPeaks {
  double x = 0, y = 0;
};

/// Loads in flight per thread of sampled_peak_ratios.
constexpr int sample_step = 8;

/// peak_ratio over `count` rows only of X and of Y (sampled_row: evenly spread groups of
/// adjacent rows; all rows where there are fewer), each row scaled by its largest magnitude so that
/// its squares cannot overflow; rows holding NaN or Inf are left out (pass 1 finds them).  The max
/// over a sample is at most the max over all rows (up to rounding), so a decision it supports for
/// large ratios holds for the full data too: Auto uses it to take native FP64 GEMM before reading
/// all of A and B.  X and Y hold double or Kokkos::complex<double>: a complex row's ratio is that
/// of its embedded rows (its 2K real parts), read in place (complex/driver.hpp decides before
/// embedding anything).  One launch and one wait for both operands: a team per sampled row, reading
/// it twice (its max, then both scaled sums) with sample_step loads in flight per thread; the
/// maxima of X's ratios and of minus Y's meet in one MinMax reduction.  (Three team
/// reductions of one load per step, and a launch per operand, are slower: the benchmarks diary
/// in docs/history/.)
template <class ExecSpace, class Matrix>
SampledPeaks sampled_peak_ratios(const ExecSpace& space, const Matrix& X, const Matrix& Y,
                                 std::int64_t count) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  using Partials = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using MinMax = Kokkos::MinMax<double>;
  using MinMaxValue = typename MinMax::value_type;
  const std::int64_t K = X.extent(1);
  const std::int64_t sampled_x = X.extent(0) < count ? X.extent(0) : count;
  const std::int64_t sampled_y = Y.extent(0) < count ? Y.extent(0) : count;
  if (K == 0 || sampled_x + sampled_y == 0) return {};
  policy_type policy = row_policy(space, sampled_x + sampled_y);
  policy.set_scratch_size(0, Kokkos::PerTeam(2 * Partials::shmem_size(max_team_size)));
  MinMaxValue found;
  Kokkos::parallel_reduce(
      "ozaki::crt::sampled_peak_ratios", policy,
      KOKKOS_LAMBDA(const member_type& team, MinMaxValue& v) {
        const bool of_x = team.league_rank() < sampled_x;
        const Matrix& M = of_x ? X : Y;
        const std::int64_t i = of_x ? team.league_rank() : team.league_rank() - sampled_x;
        const std::int64_t r = sampled_row(i, M.extent(0), of_x ? sampled_x : sampled_y);
        const int t = team.team_rank(), size = team.team_size();
        Partials first(team.team_scratch(0), size), second(team.team_scratch(0), size);
        // sample_step loads in flight per thread: 4 steps for K = 8192 (one team per SM: its
        // loads in flight are all the latency hiding there is).
        const auto load = [&](const std::int64_t k) { return M(r, k); };
        auto each = [&](const auto& use) { team_row_loop<sample_step>(team, K, load, use); };
        double mu = 0;
        each([&](const auto& x, std::int64_t) {
          const double m = largest_part(x);
          mu = m > mu ? m : mu;
        });
        first(t) = mu;
        team.team_barrier();
        mu = 0;
        for (int u = 0; u < size; ++u) mu = first(u) > mu ? first(u) : mu;
        if (!(mu > 0) || !is_finite(mu)) return;  // the same for every thread of the team
        team.team_barrier();  // every thread has read `first` before it is overwritten
        double sq = 0, sum = 0;
        each([&](const auto& x, std::int64_t) {
          sq += scaled_squares(x, mu);
          sum += scaled_magnitudes(x, mu);
        });
        first(t) = sq;
        second(t) = sum;
        team.team_barrier();
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          double squares = 0, magnitudes = 0;
          for (int u = 0; u < size; ++u) squares += first(u), magnitudes += second(u);
          const double ratio = compat::sqrt(squares) / magnitudes;
          if (of_x && ratio > v.max_val) v.max_val = ratio;
          if (!of_x && -ratio < v.min_val) v.min_val = -ratio;
        });
      },
      MinMax(found));
  SampledPeaks peaks;
  peaks.x = found.max_val > 0 ? found.max_val : 0.0;
  peaks.y = found.min_val < 0 ? -found.min_val : 0.0;
  return peaks;
}

/// Joins one value per thread of a team with `Reducer` (Kokkos::Max, Kokkos::Sum) through
/// `partials` (team scratch, one entry per thread) and returns the result to every thread.
/// The barriers: every partial is written before the join reads it, and the join's broadcast
/// (Kokkos 3.4 passes it through team scratch, see team_row_max) is read before the next join.
template <template <class...> class Reducer, class Member, class Partials, class Value>
KOKKOS_INLINE_FUNCTION Value team_join(const Member& team, const Partials& partials, Value own) {
  partials(team.team_rank()) = own;
  team.team_barrier();
  Value joined{};
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, team.team_size()),
      [&](const int u, Value& v) { Reducer<Value>(v).join(v, partials(u)); },
      Reducer<Value>(joined));
  team.team_barrier();
  return joined;
}

/// Fast rule: bits(r) = fast_row_bits(l2(r), T).  Nothing waits for the kernel.
template <class ExecSpace>
void set_fast_bits(const ExecSpace& space, const typename Views<ExecSpace>::Norms& l2, double T,
                   const CrtBits<ExecSpace>& bits) {
  flat_for(
      "ozaki::crt::fast_bits", space, l2.extent(0),
      KOKKOS_LAMBDA(const std::int64_t r) { bits(r) = fast_row_bits(l2(r), T); });
}

/// The same, and returns the fewest (a wait for the kernel; the tests' entry).
template <class ExecSpace>
int fast_bits(const ExecSpace& space, const typename Views<ExecSpace>::Norms& l2, double T,
              const CrtBits<ExecSpace>& bits) {
  set_fast_bits(space, l2, T, bits);
  int fewest = crt_max_bits;
  flat_reduce<Kokkos::Min>(
      "ozaki::crt::fewest_bits", space, bits.extent(0),
      KOKKOS_LAMBDA(const std::int64_t r, int& f) {
        if (bits(r) < f) f = bits(r);
      },
      fewest);
  return fewest;
}

/// Accurate rule, step 1: q(x) = ceil(|x| 2^(7-e_r)) in [0, 127], 0 below 2^-100 (such x
/// round to 0 at any bits), into rows x kpad int8 storage with zero padding.
template <class ExecSpace>
void magnitudes7(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                 const typename Views<ExecSpace>::Exponents& exponents,
                 const typename Views<ExecSpace>::Digits& q) {
  const std::int64_t rows = X.extent(0);
  for_each_quad(
      "ozaki::crt::magnitudes7", space, X, q.extent(0), q.extent(1),
      KOKKOS_LAMBDA(const int r) { return r < rows ? exponents(r) : 0; },
      KOKKOS_LAMBDA(const int e, const int r, const std::int64_t k, const double(&x)[4]) {
        std::uint32_t word = 0;
        for (int j = 0; j < 4; ++j) {
          const double v = compat::ldexp(magnitude(x[j]), 7 - e);  // exact above 2^-100
          int m = 0;
          if (v >= 0x1p-100) {
            m = static_cast<int>(v);
            if (m < v) ++m;
          }
          word |= std::uint32_t(m) << (8 * j);
        }
        *reinterpret_cast<std::uint32_t*>(&q(r, k)) = word;
      });
}

/// Counted fast rule (rules.hpp, crt_counted_model): the window shift of a row with lower
/// 1-norm bound l1 (of x 2^-e) along K: 2^-s is the power of two just above
/// crt_window_mean_factor l1 / K, s in [0, crt_max_window_shift].
KOKKOS_INLINE_FUNCTION int crt_window_shift(double l1, std::int64_t K) {
  if (!(l1 > 0)) return 0;
  int e = 0;
  compat::frexp(l1 * crt_window_mean_factor / static_cast<double>(K), &e);
  return -e < 0 ? 0 : (-e > crt_max_window_shift ? crt_max_window_shift : -e);
}

/// min(127, floor(|x| 2^(7+s-e))): exact (a power-of-two scaling of a finite double either
/// is exact or underflows below 1, where the floor is 0 either way).
KOKKOS_INLINE_FUNCTION int window_magnitude7(double x, int e, int s) {
  const double v = compat::ldexp(magnitude(x), 7 + s - e);
  return v >= 127 ? 127 : static_cast<int>(v);
}

/// Counted rule, step 1: the window magnitudes of every row (shift from its l1), into
/// rows x kpad int8 storage with zero padding (magnitudes7's layout).
template <class ExecSpace>
void window_magnitudes7(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                        const typename Views<ExecSpace>::Exponents& exponents,
                        const typename Views<ExecSpace>::Norms& l1,
                        const typename Views<ExecSpace>::Digits& q) {
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  for_each_quad(
      "ozaki::crt::window_magnitudes7", space, X, q.extent(0), q.extent(1),
      KOKKOS_LAMBDA(const int r) {
        return Kokkos::pair<int, int>(r < rows ? exponents(r) : 0,
                                      r < rows ? crt_window_shift(l1(r), K) : 0);
      },
      KOKKOS_LAMBDA(const Kokkos::pair<int, int>& e_shift, const int r, const std::int64_t k,
                    const double(&x)[4]) {
        std::uint32_t word = 0;
        for (int j = 0; j < 4; ++j)
          word |= std::uint32_t(window_magnitude7(x[j], e_shift.first, e_shift.second)) << (8 * j);
        *reinterpret_cast<std::uint32_t*>(&q(r, k)) = word;
      });
}

/// Counted rule, step 2: G = max_mn n_m n_n 2^(s_m+s_n) / Plo_mn from the chunks of the
/// window product (+Inf where some Plo_mn = 0 under nonzero norms).  One wait.  A team per
/// column n of C, its threads on consecutive m (coalesced reads of Plo): about twice as fast as
/// a flat index over the M N entries (its 64-bit division and remainder per entry, most
/// likely).  Still far from the memory time of reading Plo: the per-entry frexp, ldexp and
/// division remain (per-row scaled norms would remove the first two).
template <class ExecSpace>
double counted_ratio(const ExecSpace& space, const typename Views<ExecSpace>::Products& P,
                     std::int64_t chunks, std::int64_t K,
                     const typename Views<ExecSpace>::Norms& l2a,
                     const typename Views<ExecSpace>::Norms& l1a,
                     const typename Views<ExecSpace>::Norms& l2b,
                     const typename Views<ExecSpace>::Norms& l1b) {
  using member_type = typename TeamLaunch<ExecSpace>::member_type;
  const std::int64_t M = l2a.extent(0), N = l2b.extent(0);
  double G = 0;
  Kokkos::parallel_reduce(
      "ozaki::crt::counted_ratio", row_policy(space, N),
      KOKKOS_LAMBDA(const member_type& team, double& w) {
        const std::int64_t n = team.league_rank();
        const double norm_b = l2b(n);
        if (!(norm_b > 0)) return;  // exact zero products (the same for the whole team)
        const int shift_b = crt_window_shift(l1b(n), K);
        double worst = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, M),
            [&](const std::int64_t m, double& v) {
              if (!(l2a(m) > 0)) return;
              double p = 0;  // exact: a few chunks of < 2^31
              for (std::int64_t c = 0; c < chunks; ++c) p += P(c, n, m);
              const double g =
                  p > 0 ? compat::ldexp(l2a(m) * norm_b / p, crt_window_shift(l1a(m), K) + shift_b)
                        : positive_infinity();
              if (g > v) v = g;
            },
            Kokkos::Max<double>(worst));
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          if (worst > w) w = worst;
        });
      },
      Kokkos::Max<double>(G));
  return G > 0 ? G : 0.0;
}

/// The counted rule's G over a sample (sampled_counted_ratio): per sampled row its scale
/// exponent's norms in integer quanta of the row's exponent (not the norm tiles': an upper
/// bound of the 2-norm and a lower bound of the 1-norm all the same, order-independent sums),
/// its window magnitudes in `codes` (2 count rows of K int8 and zeros up to whole 32-bit
/// words) and n, s in `stats` (2 count x 2):
/// CountedSampleRegion, layout.hpp.
constexpr std::int64_t counted_sample_rows = 64;

/// G of the counted rule over the sampled rows' pairs (up to counted_sample_rows rows of X and
/// of Y, sampled_row): about the full G's value on those entries (the sample's norms are
/// quantized at the row's exponent, the full norms per tile), so a count it makes native FP64
/// GEMM faster with, or a sampled entry the window cannot see (+Inf), says so for the full data
/// too, before any pass over it.  Rows holding NaN or Inf, and zero rows, are left out.  Exact
/// integer sums: the same on every backend.  Two launches, one wait.
template <class ExecSpace, class Matrix>
double sampled_counted_ratio(const ExecSpace& space, const Matrix& X, const Matrix& Y,
                             const typename Views<ExecSpace>::Digits& codes,
                             const typename Views<ExecSpace>::Rows& stats) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  const std::int64_t K = X.extent(1);
  const std::int64_t count = counted_sample_rows;
  const std::int64_t sampled_x = X.extent(0) < count ? X.extent(0) : count;
  const std::int64_t sampled_y = Y.extent(0) < count ? Y.extent(0) : count;
  if (K == 0 || sampled_x == 0 || sampled_y == 0) return 0;
  using Maxima = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Sums = Kokkos::View<std::uint64_t*, typename ExecSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  policy_type policy = row_policy(space, sampled_x + sampled_y);
  policy.set_scratch_size(
      0, Kokkos::PerTeam(Maxima::shmem_size(max_team_size) + Sums::shmem_size(max_team_size)));
  // Three reads of each sampled row (its max; both norms' quanta; its window magnitudes, which
  // need l1), each with sample_step loads in flight per thread, and per-thread partials joined
  // in team scratch.  (Team reductions of one load per step, four reads, took a third of
  // Auto's decision at phi = 4: the benchmarks diary in docs/history/.)
  Kokkos::parallel_for(
      "ozaki::crt::sampled_window_rows", policy, KOKKOS_LAMBDA(const member_type& team) {
        const bool of_x = team.league_rank() < sampled_x;
        const Matrix& M = of_x ? X : Y;
        const std::int64_t i = of_x ? team.league_rank() : team.league_rank() - sampled_x;
        const std::int64_t r = sampled_row(i, M.extent(0), of_x ? sampled_x : sampled_y);
        const std::int64_t out = of_x ? i : count + i;
        const int size = team.team_size();
        Maxima maxima(team.team_scratch(0), size);
        Sums sums(team.team_scratch(0), size);  // both norms' joins in turn (team_join)
        const auto load = [&](const std::int64_t k) { return M(r, k); };
        double own_max = 0;
        team_row_loop<sample_step>(team, K, load, [&](const double x, std::int64_t) {
          const double v = largest_part(x);  // NaN and Inf as +Inf
          own_max = v > own_max ? v : own_max;
        });
        const double mu = team_join<Kokkos::Max>(team, maxima, own_max);
        if (!(mu > 0) || !is_finite(mu)) {  // the same for every thread of the team
          Kokkos::single(Kokkos::PerTeam(team), [&]() { stats(out, 0) = 0, stats(out, 1) = 0; });
          return;
        }
        // The norm tiles' quanta (norm_quanta), at the row's exponent instead of each tile's:
        // integer sums, so the order of the partials does not matter.
        const int e = scale_exponent(mu);
        const NormScales scales = norm_scales(e);
        std::uint64_t own_squares = 0, own_l1 = 0;
        team_row_loop<sample_step>(team, K, load, [&](const double x, std::int64_t) {
          const NormQuanta q = norm_quanta(x, scales);
          own_squares += q.square;
          own_l1 += q.l1;
        });
        const std::uint64_t squares = team_join<Kokkos::Sum>(team, sums, own_squares);
        const std::uint64_t sum = team_join<Kokkos::Sum>(team, sums, own_l1);
        const int shift = crt_window_shift(norm_from_l1(sum), K);
        // Zeros up to the whole 32-bit words of codes' rows (window_magnitude7(0) is 0).
        team_row_loop<sample_step>(
            team, codes.extent(1), [&](const std::int64_t k) { return k < K ? M(r, k) : 0.0; },
            [&](const double x, const std::int64_t k) {
              codes(out, k) = static_cast<std::int8_t>(window_magnitude7(x, e, shift));
            });
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          stats(out, 0) = norm_from_squares(squares);
          stats(out, 1) = shift;
        });
      });
  double G = 0;
  Kokkos::parallel_reduce(
      "ozaki::crt::sampled_counted_ratio", row_policy(space, sampled_x * sampled_y),
      KOKKOS_LAMBDA(const member_type& team, double& w) {
        const std::int64_t i = team.league_rank() % sampled_x;
        const std::int64_t j = count + team.league_rank() / sampled_x;
        const double n = stats(i, 0) * stats(j, 0);
        if (!(n > 0)) return;  // the same for every thread of the team
        // Four codes (0..127 each) per 32-bit word: 4 x 127^2 < 2^16 per word.
        const std::uint32_t* row_i = reinterpret_cast<const std::uint32_t*>(&codes(i, 0));
        const std::uint32_t* row_j = reinterpret_cast<const std::uint32_t*>(&codes(j, 0));
        std::int64_t p = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, codes.extent(1) / 4),
            [&](const std::int64_t w, std::int64_t& v) {
              const std::uint32_t x = row_i[w], y = row_j[w];
              std::int64_t s = 0;
              for (int b = 0; b < 32; b += 8) s += ((x >> b) & 0xffu) * ((y >> b) & 0xffu);
              v += s;
            },
            Kokkos::Sum<std::int64_t>(p));
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          const int shifts = static_cast<int>(stats(i, 1) + stats(j, 1));
          const double g =
              p > 0 ? compat::ldexp(n / static_cast<double>(p), shifts) : positive_infinity();
          if (g > w) w = g;
        });
      },
      Kokkos::Max<double>(G));
  return G > 0 ? G : 0.0;
}

/// lambda_mn of the accurate rule from the chunks of P = q(A) q(B): floor(log2(range / P)) +
/// 14, or `unbounded` where P = 0.
constexpr int crt_unbounded = 4096;

template <class Products>
KOKKOS_INLINE_FUNCTION int accurate_lambda(const Products& P, std::int64_t chunks, std::int64_t n,
                                           std::int64_t m, double range) {
  double p = 0;  // exact: at most a few chunks of < 2^31
  for (std::int64_t c = 0; c < chunks; ++c) p += P(c, n, m);
  if (p == 0) return crt_unbounded;
  int e = 0;
  compat::frexp(range / p, &e);
  return e - 1 + 14;
}

/// Columns of the accurate rule's per-row minima handled by one thread (min_over_columns); its
/// partial minima take ceil(N / crt_min_tile) ints per row.
constexpr std::int64_t crt_min_tile = 256;

/// out(m) = min over n < N of value(n, m), for M x N values given by a function whose
/// consecutive m are adjacent in memory: per tile of crt_min_tile columns one thread per m
/// (coalesced), partial minima in partial(tile, m), then one thread per m over the tiles.
template <class ExecSpace, class Value>
void min_over_columns(const char* label, const ExecSpace& space, std::int64_t M, std::int64_t N,
                      const Value& value, const typename Views<ExecSpace>::IntTiles& partial,
                      const CrtBits<ExecSpace>& out) {
  const std::int64_t tiles = (N + crt_min_tile - 1) / crt_min_tile;
  grid_for(
      label, space, M, tiles, KOKKOS_LAMBDA(const std::int64_t m, const std::int64_t t) {
        const std::int64_t end = (t + 1) * crt_min_tile < N ? (t + 1) * crt_min_tile : N;
        int low = crt_unbounded;
        for (std::int64_t n = t * crt_min_tile; n < end; ++n) {
          const int v = value(n, m);
          low = v < low ? v : low;
        }
        partial(t, m) = low;
      });
  flat_for(
      label, space, M, KOKKOS_LAMBDA(const std::int64_t m) {
        int low = crt_unbounded;
        for (std::int64_t t = 0; t < tiles; ++t) low = partial(t, m) < low ? partial(t, m) : low;
        out(m) = low;
      });
}

/// Accurate rule, step 2: from lambda, c_n = floor(min_m(lambda_mn - rho_m / 2)) with
/// rho_m = min_n lambda_mn, then b_m = min_n(lambda_mn - c_n), both capped at crt_max_bits,
/// so that b_m + c_n <= lambda_mn everywhere.  Returns the fewest bits of either side.
/// `partial` holds ceil(N / crt_min_tile) x M ints of scratch.
template <class ExecSpace>
int accurate_bits(const ExecSpace& space, const typename Views<ExecSpace>::Products& P,
                  std::int64_t chunks, double range, const CrtBits<ExecSpace>& rho,
                  const typename Views<ExecSpace>::IntTiles& partial,
                  const CrtBits<ExecSpace>& bits_a, const CrtBits<ExecSpace>& bits_b) {
  using member_type = typename TeamLaunch<ExecSpace>::member_type;
  const std::int64_t M = bits_a.extent(0), N = bits_b.extent(0);
  min_over_columns(
      "ozaki::crt::accurate_rho", space, M, N,
      KOKKOS_LAMBDA(const std::int64_t n, const std::int64_t m) {
        return accurate_lambda(P, chunks, n, m, range);
      },
      partial, rho);
  Kokkos::parallel_for(
      "ozaki::crt::accurate_bits_b", row_policy(space, N), KOKKOS_LAMBDA(const member_type& team) {
        const int n = team.league_rank();
        double low = crt_unbounded;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, M),
            [&](const std::int64_t m, double& v) {
              const double x = accurate_lambda(P, chunks, n, m, range) - 0.5 * rho(m);
              if (x < v) v = x;
            },
            Kokkos::Min<double>(low));
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          const double f = low >= crt_max_bits ? crt_max_bits : low;
          int c = static_cast<int>(f);  // floor: f may be negative
          if (c > f) --c;
          bits_b(n) = c;
        });
      });
  min_over_columns(
      "ozaki::crt::accurate_bits_a", space, M, N,
      KOKKOS_LAMBDA(const std::int64_t n, const std::int64_t m) {
        return accurate_lambda(P, chunks, n, m, range) - bits_b(n);
      },
      partial, bits_a);
  int fewest = crt_max_bits;
  flat_reduce<Kokkos::Min>(
      "ozaki::crt::fewest_bits", space, M + N,
      KOKKOS_LAMBDA(const std::int64_t i, int& f) {
        if (i < M) {
          if (bits_a(i) > crt_max_bits) bits_a(i) = crt_max_bits;
          if (bits_a(i) < f) f = bits_a(i);
        } else if (bits_b(i - M) < f) {
          f = bits_b(i - M);
        }
      },
      fewest);
  return fewest;
}

/// The accurate rule's error model: scheme I's model (accuracy.hpp) with per-row bits, the
/// largest over all entries of
///     (2^-(b_m+1) l1b_n + 2^-(c_n+1) l1a_m) / (sqrt(K) D(n, m))
/// where D(n, m) is a lower bound of (|A||B|)_mn 2^-(e_m+f_n) (slice_count.hpp), so that the
/// model errs towards more moduli.  +Inf where D = 0 under a nonzero numerator.
template <class ExecSpace, class LowerBound>
double crt_model_error(const ExecSpace& space, const LowerBound& D, std::int64_t K,
                       const CrtBits<ExecSpace>& bits_a, const CrtBits<ExecSpace>& bits_b,
                       const typename Views<ExecSpace>::Norms& l1a,
                       const typename Views<ExecSpace>::Norms& l1b) {
  const std::int64_t M = bits_a.extent(0), N = bits_b.extent(0);
  const double root_k = compat::sqrt(static_cast<double>(K));
  double worst = 0;
  flat_reduce<Kokkos::Max>(
      "ozaki::crt::model_error", space, M * N,
      KOKKOS_LAMBDA(const std::int64_t idx, double& w) {
        const std::int64_t m = idx % M, n = idx / M;
        if (l1a(m) == 0 || l1b(n) == 0) return;  // an exact zero product
        const double numerator =
            compat::ldexp(l1b(n), -bits_a(m) - 1) + compat::ldexp(l1a(m), -bits_b(n) - 1);
        const double d = D(n, m);
        const double e = d > 0 ? numerator / (root_k * d) : positive_infinity();
        if (e > w) w = e;
      },
      worst);
  return worst > 0 ? worst : 0.0;
}

}  // namespace Impl
}  // namespace ozaki
