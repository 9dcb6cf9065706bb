#pragma once
/// \file sampling.hpp
/// Auto's looks at a sample of rows before any pass over the operands: the peak ratios of the
/// sampled rows (sampled_peak_ratios), and the counted rule's G over the sampled entries
/// (sampled_counted_ratio).  A sample bounds the full data's ratios from below, so a decision for
/// native FP64 GEMM made on it holds for all rows.

#include <ozaki/impl/crt/counted_rule.hpp>
#include <ozaki/impl/crt/norms.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

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

/// The counted rule's G over a sample (sampled_counted_ratio): per sampled row its scale
/// exponent's norms in integer quanta of the row's exponent (not the norm tiles': an upper
/// bound of the 2-norm and a lower bound of the 1-norm all the same, order-independent sums),
/// its window magnitudes in `codes` (2 count rows of K int8 and zeros up to whole 32-bit
/// words) and n, s in `stats` (2 count x 2):
/// CountedSampleRegion, layout.hpp.
constexpr std::int64_t counted_sample_rows = 64;

/// The sampled rows' norms and window magnitudes (sampled_counted_ratio's first kernel): per
/// sampled row of X (rows 0 .. sampled_x of `codes` and `stats`) and of Y (rows
/// counted_sample_rows ..), one team.
template <class ExecSpace, class Matrix>
void sample_window_rows(const ExecSpace& space, const Matrix& X, const Matrix& Y,
                        std::int64_t sampled_x, std::int64_t sampled_y,
                        const typename Views<ExecSpace>::Digits& codes,
                        const typename Views<ExecSpace>::Rows& stats) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  const std::int64_t K = X.extent(1);
  const std::int64_t count = counted_sample_rows;
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
}

/// G over the pairs of sampled rows (sampled_counted_ratio's second kernel, one team per
/// pair): the exact integer product of their window magnitudes against their norms.
template <class ExecSpace>
double counted_ratio_of_sample(const ExecSpace& space, std::int64_t sampled_x,
                               std::int64_t sampled_y,
                               const typename Views<ExecSpace>::Digits& codes,
                               const typename Views<ExecSpace>::Rows& stats) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  const std::int64_t count = counted_sample_rows;
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
  const std::int64_t K = X.extent(1);
  const std::int64_t count = counted_sample_rows;
  const std::int64_t sampled_x = X.extent(0) < count ? X.extent(0) : count;
  const std::int64_t sampled_y = Y.extent(0) < count ? Y.extent(0) : count;
  if (K == 0 || sampled_x == 0 || sampled_y == 0) return 0;
  sample_window_rows(space, X, Y, sampled_x, sampled_y, codes, stats);
  return counted_ratio_of_sample(space, sampled_x, sampled_y, codes, stats);
}

}  // namespace Impl
}  // namespace ozaki
