#pragma once
/// \file coverage_kernels.hpp
/// The coverage certificate (crt/coverage.hpp) on a Kokkos space, after the norm tiles:
///
///   coverage_rows     per row, its tiles' layer counts merged at the row's exponent
///   coverage_grid     per operand, G(s) = max_r topmass_r(s) / l1_r on the grid of s
///   coverage_lambda   per row, lambda_r from its counts and the other operand's G
///
/// None of them waits: row_summary gathers what the host needs in scheme II's one wait.  All
/// counts are integers and every double is made by the same operations in the same order as
/// in the oracle (serial::crt_coverage), so the certificate is the same on every backend.

#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/crt/coverage.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

/// Per row r of an operand whose norm tiles (tile_max, layers: norm_tile_partials) and
/// exponents are known: counts(i, r) = the row's coverage_row_counts values (coverage.hpp).
/// Rows holding NaN or Inf get none (the call takes native FP64 GEMM).
template <class ExecSpace>
void coverage_rows(const ExecSpace& space, std::int64_t K,
                   const typename Views<ExecSpace>::Rows& tile_max,
                   const typename Views<ExecSpace>::TileCounts& layers,
                   const typename Views<ExecSpace>::Exponents& exponents,
                   const typename Views<ExecSpace>::RowCounts& counts) {
  row_tiles_kernel<false>(
      "ozaki::crt::coverage_rows", space, exponents.extent(0), tile_max.extent(0), CoverageCounts{},
      KOKKOS_LAMBDA(const std::int64_t t, const std::int64_t r) {
        CoverageCounts c;
        const double mu = tile_max(t, r);
        if (exponents(r) == nonfinite_row) return c;
        const int count = static_cast<int>(norm_tile(t, K).count);
        const bool zero = !(mu > 0);
        coverage_merge_tile(c, layers(t, r), count, zero,
                            zero ? 0 : exponents(r) - scale_exponent(mu));
        return c;
      },
      KOKKOS_LAMBDA(CoverageCounts & acc, const CoverageCounts& c) { coverage_join(acc, c); },
      KOKKOS_LAMBDA(const std::int64_t r, const CoverageCounts& total) {
        coverage_row_values(total, [&](int i, std::uint32_t v) { counts(i, r) = v; });
        return 0;
      });
}

/// Rows per team of coverage_grid's first kernel: one per thread of a GPU team.  Each row's
/// grid is a chain of dependent steps over its 34 points, so the kernel lasts as long as the
/// rows one thread takes one after another (docs/design.md §13).
constexpr std::int64_t coverage_team_rows = 128;
inline std::int64_t coverage_grid_teams(std::int64_t rows) {
  return (rows + coverage_team_rows - 1) / coverage_team_rows;
}

/// G(g) = max over the rows of coverage_grid_of_row (coverage.hpp), into `grid` (coverage_grid
/// values): the maxima per team of rows into `partials` (coverage_grid_teams x coverage_grid), then
/// one small kernel over them.  Maxima: the same in any order.
template <class ExecSpace>
void coverage_grid_kernel(const ExecSpace& space,
                          const typename Views<ExecSpace>::RowCounts& counts,
                          const typename Views<ExecSpace>::Norms& l1,
                          const typename Views<ExecSpace>::Norms& l2,
                          const typename Views<ExecSpace>::Rows& partials,
                          const typename Views<ExecSpace>::Norms& grid) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t rows = l1.extent(0);
  const int teams = static_cast<int>(coverage_grid_teams(rows));
  const int size = is_host_space<ExecSpace>() ? 1 : 128;
  policy_type policy(space, teams, size);
  policy.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(size * coverage_grid)));
  Kokkos::parallel_for(
      "ozaki::crt::coverage_grid", policy, KOKKOS_LAMBDA(const member_type& team) {
        const std::int64_t begin = std::int64_t(team.league_rank()) * coverage_team_rows;
        const std::int64_t end =
            begin + coverage_team_rows < rows ? begin + coverage_team_rows : rows;
        const int t = team.team_rank(), threads = team.team_size();
        double best[coverage_grid] = {};
        for (std::int64_t r = begin + t; r < end; r += threads) {
          double v[coverage_grid];
          coverage_grid_of_row([&](int j) { return counts(coverage_layers + j, r); }, l1(r), l2(r),
                               v);
          for (int g = 0; g < coverage_grid; ++g) best[g] = v[g] > best[g] ? v[g] : best[g];
        }
        Scratch part(team.team_scratch(0), threads * coverage_grid);
        for (int g = 0; g < coverage_grid; ++g) part(t * coverage_grid + g) = best[g];
        team.team_barrier();
        for (int g = t; g < coverage_grid; g += threads) {
          double m = 0;
          for (int u = 0; u < threads; ++u) {
            const double x = part(u * coverage_grid + g);
            m = x > m ? x : m;
          }
          partials(team.league_rank(), g) = m;
        }
      });
  flat_for(
      "ozaki::crt::coverage_grid_finish", space, coverage_grid,
      KOKKOS_LAMBDA(const std::int64_t g) {
        double m = 0;
        for (int i = 0; i < teams; ++i) m = partials(i, g) > m ? partials(i, g) : m;
        grid(g) = m;
      });
}

/// lambda(r) = coverage_lambda of row r's below counts against the other operand's grid.
template <class ExecSpace>
void coverage_lambda_kernel(const ExecSpace& space,
                            const typename Views<ExecSpace>::RowCounts& counts,
                            const typename Views<ExecSpace>::Norms& other_grid,
                            const typename Views<ExecSpace>::Norms& lambda) {
  flat_for(
      "ozaki::crt::coverage_lambda", space, lambda.extent(0), KOKKOS_LAMBDA(const std::int64_t r) {
        lambda(r) = coverage_lambda([&](int t) { return counts(t, r); },
                                    [&](int g) { return other_grid(g); });
      });
}

/// max over rows with l1 > 0 of 2^-(bits(r) + 1) / lambda(r) (+Inf where lambda = 0): one
/// operand's split term of the componentwise bound under any bits (coverage.hpp).  One wait.
template <class ExecSpace>
double coverage_split_of_bits(const ExecSpace& space,
                              const typename Views<ExecSpace>::Exponents& bits,
                              const typename Views<ExecSpace>::Norms& lambda,
                              const typename Views<ExecSpace>::Norms& l1) {
  double worst = 0;
  flat_reduce<Kokkos::Max>(
      "ozaki::crt::coverage_split_of_bits", space, lambda.extent(0),
      KOKKOS_LAMBDA(const std::int64_t r, double& w) {
        if (!(l1(r) > 0)) return;
        const double v =
            lambda(r) > 0 ? compat::ldexp(1.0, -bits(r) - 1) / lambda(r) : positive_infinity();
        if (v > w) w = v;
      },
      worst);
  return worst;
}

/// The certificate of both operands, launched after their norm tiles, exponents and norms
/// (launch_exponents_and_norms); row_summary reads the lambdas.
template <class ExecSpace>
struct CoverageViews {
  typename Views<ExecSpace>::RowCounts counts;
  typename Views<ExecSpace>::Rows partials;
  typename Views<ExecSpace>::Norms grid, lambda;
};

template <class ExecSpace>
void launch_coverage(const ExecSpace& space, std::int64_t K,
                     const typename Views<ExecSpace>::Rows& tile_max_a,
                     const typename Views<ExecSpace>::TileCounts& layers_a,
                     const typename Views<ExecSpace>::Exponents& exponents_a,
                     const typename Views<ExecSpace>::Norms& l1a,
                     const typename Views<ExecSpace>::Norms& l2a, const CoverageViews<ExecSpace>& a,
                     const typename Views<ExecSpace>::Rows& tile_max_b,
                     const typename Views<ExecSpace>::TileCounts& layers_b,
                     const typename Views<ExecSpace>::Exponents& exponents_b,
                     const typename Views<ExecSpace>::Norms& l1b,
                     const typename Views<ExecSpace>::Norms& l2b,
                     const CoverageViews<ExecSpace>& b) {
  // b's views are a's where op(B)^T is op(A) itself (share_same_rows): each row's lambda is
  // then against the grid of the same rows, made once.
  const bool same = a.counts.data() == b.counts.data();
  coverage_rows(space, K, tile_max_a, layers_a, exponents_a, a.counts);
  if (!same) coverage_rows(space, K, tile_max_b, layers_b, exponents_b, b.counts);
  coverage_grid_kernel(space, a.counts, l1a, l2a, a.partials, a.grid);
  if (!same) coverage_grid_kernel(space, b.counts, l1b, l2b, b.partials, b.grid);
  coverage_lambda_kernel(space, a.counts, b.grid, a.lambda);
  if (!same) coverage_lambda_kernel(space, b.counts, a.grid, b.lambda);
}

}  // namespace Impl
}  // namespace ozaki
