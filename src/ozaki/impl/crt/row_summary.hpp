#pragma once
/// \file row_summary.hpp
/// The one wait of scheme II's pass 1: what the host needs of both operands after their norms
/// and coverage certificate (NaN/Inf, the peak ratios, the largest norms, the certificate's
/// factors), gathered by one kernel and one copy (row_summary); and peak_ratio, the same ratio
/// over all rows of one operand (the tests' entry).

#include <ozaki/impl/crt/norms.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

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

/// The maxima over teams of row_summary's partial results (summary_values of them in `v`,
/// zero-initialised by the caller), in any order the same.
KOKKOS_INLINE_FUNCTION void summary_maxima(const double* partials, int teams, double* v) {
  for (int i = 0; i < teams; ++i)
    for (int j = 0; j < summary_values; ++j) {
      const double x = partials[i * summary_values + j];
      v[j] = x > v[j] ? x : v[j];
    }
}

/// The kernel of row_summary alone: each operand's OperandSummary values per team of rows into
/// `partials` (summary_teams(M + N) x summary_values, row-major, no atomics).  Nothing waits:
/// a call captured into a graph decides from the partials on the device (captured.hpp).
template <class ExecSpace>
void launch_row_summary(const ExecSpace& space, std::int64_t K, const SummaryRows<ExecSpace>& a,
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
}

/// The summary of both operands from the maxima of summary_maxima.
inline RowSummary row_summary_of(const double* v) {
  const auto operand = [](const double* w) {
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

/// Scheme II's one wait after pass 1, the row norms and the coverage certificate of both
/// operands (launched without waits: launch_exponents_and_norms, launch_coverage): one kernel
/// (launch_row_summary) takes the maxima per team of rows, the host copies them and takes the
/// maxima over the teams.  As separate reductions the NaN/Inf test, the peak ratios and the
/// fewest bits would be eight, each a round trip between host and device (the benchmarks
/// diary in docs/history/, "one wait after pass 1").
template <class ExecSpace>
RowSummary row_summary(const ExecSpace& space, std::int64_t K, const SummaryRows<ExecSpace>& a,
                       const SummaryRows<ExecSpace>& b,
                       const typename Views<ExecSpace>::Rows& partials) {
  launch_row_summary(space, K, a, b, partials);
  const int teams = static_cast<int>(summary_teams(a.exponents.extent(0) + b.exponents.extent(0)));
  const auto host = Kokkos::create_mirror_view(partials);
  Kokkos::deep_copy(space, host, partials);
  space.fence();
  double v[summary_values] = {};
  summary_maxima(host.data(), teams, v);
  return row_summary_of(v);
}

}  // namespace Impl
}  // namespace ozaki
