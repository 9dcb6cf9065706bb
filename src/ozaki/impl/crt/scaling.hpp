#pragma once
/// \file scaling.hpp
/// Portable Kokkos kernels that choose scheme II's integer scaling (the rules are in
/// rules.hpp, the derivations in docs/design.md §5):
///
///   operand_exponents_and_norms    pass 1 and n_r, l1_r per row: exact, order-independent
///                                  norms (rules.hpp), the same bits on every backend
///   peak_ratio                     max_r ||x_r||_2 / ||x_r||_1, the Auto scaling rule's test
///   fast_bits                      bits per row from the Cauchy-Schwarz rule
///   magnitudes7 + INT8 GEMM + accurate_bits    bits from the per-entry bound (accurate rule)
///   crt_model_error                the accurate rule's error model, for an automatic count

#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/views.hpp>
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

/// n_r and l1_r for every row (K-contiguous rows), in one pass: each thread of a row's team
/// sums its share of both quanta in 64-bit integers (team_row_loop), and two team reductions
/// add the partial sums.  Integer sums: the result depends on neither the team size nor the
/// order.
template <class ExecSpace>
void row_norms(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
               const typename Views<ExecSpace>::Exponents& exponents,
               const typename Views<ExecSpace>::Norms& l2,
               const typename Views<ExecSpace>::Norms& l1) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  using Partials = Kokkos::View<std::uint64_t*, typename ExecSpace::scratch_memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t K = X.extent(1);
  policy_type policy = row_policy(space, X.extent(0));
  policy.set_scratch_size(0, Kokkos::PerTeam(2 * Partials::shmem_size(max_team_size)));
  Kokkos::parallel_for(
      "ozaki::crt::row_norms", policy, KOKKOS_LAMBDA(const member_type& team) {
        const int r = team.league_rank();
        const NormScales scales = norm_scales(exponents(r));
        const int t = team.team_rank(), size = team.team_size();
        Partials squares(team.team_scratch(0), size), sums(team.team_scratch(0), size);
        std::uint64_t sq = 0, sum = 0;
        team_row_loop(
            team, K, [&](const std::int64_t k) { return X(r, k); },
            [&](const double x) {
              const NormQuanta q = norm_quanta(x, scales);
              sq += q.square;
              sum += q.l1;
            });
        squares(t) = sq;
        sums(t) = sum;
        team.team_barrier();
        std::uint64_t total_sq = 0, total = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, size),
            [&](const int i, std::uint64_t& v) { v += squares(i); },
            Kokkos::Sum<std::uint64_t>(total_sq));
        // (Kokkos 3.4 broadcasts a team reduction's result through scratch that the next one
        // overwrites: team_row_max.)
        team.team_barrier();
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, size),
            [&](const int i, std::uint64_t& v) { v += sums(i); },
            Kokkos::Sum<std::uint64_t>(total));
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          l2(r) = norm_from_squares(total_sq);
          l1(r) = norm_from_l1(total);
        });
      });
}

/// row_norms for rows that are not K-contiguous, without copying them: per row tile,
/// one thread per row (consecutive threads on X's contiguous index), partial sums into
/// squares(tile, r) and sums(tile, r), then one thread per row adds its tiles.  A tile's sums
/// (at most 32 quanta below 2^33) are integers that a double holds exactly.
template <class ExecSpace>
void strided_row_norms(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                       const typename Views<ExecSpace>::Exponents& exponents,
                       const typename Views<ExecSpace>::Rows& squares,
                       const typename Views<ExecSpace>::Rows& sums,
                       const typename Views<ExecSpace>::Norms& l2,
                       const typename Views<ExecSpace>::Norms& l1) {
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  const std::int64_t tiles = row_tiles(K);
  grid_for(
      "ozaki::crt::strided_row_norms", space, rows, tiles,
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t t) {
        const std::int64_t begin = t * row_tile_columns;
        const std::int64_t end = begin + row_tile_columns < K ? begin + row_tile_columns : K;
        const NormScales scales = norm_scales(exponents(r));
        std::uint64_t sq = 0, sum = 0;
        for (std::int64_t k = begin; k < end; ++k) {
          const NormQuanta q = norm_quanta(X(r, k), scales);
          sq += q.square;
          sum += q.l1;
        }
        squares(t, r) = static_cast<double>(sq);
        sums(t, r) = static_cast<double>(sum);
      });
  reduce_row_tiles<NormQuanta>(
      "ozaki::crt::strided_row_norms_sum", space, rows, tiles, NormQuanta{},
      KOKKOS_LAMBDA(const std::int64_t t, const std::int64_t r) {
        NormQuanta q;
        q.square = static_cast<std::uint64_t>(squares(t, r));
        q.l1 = static_cast<std::uint64_t>(sums(t, r));
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

/// Pass 1 and the row norms of one operand as scheme II's pipeline reads it: K-contiguous
/// rows row by row, strided rows in place per tile of 32 columns (the tile maxima's storage
/// then takes the partial sums of squares).  True on NaN/Inf
/// (the norms are then not computed).
template <class ExecSpace>
bool operand_exponents_and_norms(const ExecSpace& space, bool strided,
                                 const typename Views<ExecSpace>::ConstMatrix& X,
                                 const typename Views<ExecSpace>::Rows& tile_max,
                                 const typename Views<ExecSpace>::Rows& sums,
                                 const typename Views<ExecSpace>::Exponents& exponents,
                                 const typename Views<ExecSpace>::Norms& l2,
                                 const typename Views<ExecSpace>::Norms& l1) {
  // (One kernel that keeps a K-contiguous row in registers between its max and its norms ran
  // in 0.84 ms on an 8192^2 operand, against 0.27 + 0.21 ms for these two: docs/benchmarks.md.)
  if (operand_pass1_in_place(space, strided, X, tile_max, exponents)) return true;
  if (strided) {
    strided_row_norms(space, X, exponents, tile_max, sums, l2, l1);
  } else {
    row_norms(space, X, exponents, l2, l1);
  }
  return false;
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

/// peak_ratio over `count` evenly spread rows only (all rows if there are fewer), each scaled
/// by its largest magnitude so that its squares cannot overflow; rows holding NaN or Inf are
/// left out (pass 1 finds them).  The max over a sample is at most the max over all rows (up
/// to rounding), so a decision it supports for large ratios holds for the full data too: Auto
/// uses it to take native FP64 GEMM before reading all of A and B.  X holds double or
/// Kokkos::complex<double>: a complex row's ratio is that of its embedded rows (its 2K real
/// parts), read in place (complex/driver.hpp decides before embedding anything).
template <class ExecSpace, class Matrix>
double sampled_peak_ratio(const ExecSpace& space, const Matrix& X, std::int64_t count) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  const std::int64_t sampled = rows < count ? rows : count;
  if (sampled == 0 || K == 0) return 0;
  double worst = 0;
  Kokkos::parallel_reduce(
      "ozaki::crt::sampled_peak_ratio", row_policy(space, sampled),
      KOKKOS_LAMBDA(const member_type& team, double& w) {
        const std::int64_t r = std::int64_t(team.league_rank()) * rows / sampled;
        // Each team reduction broadcasts its result through the team's shared scratch, which
        // the next one overwrites: a barrier between them (team_row_max ends with one), or a
        // fast warp's partial result replaces the value a slow warp is still reading
        // (racecheck found it, and the ratio then came out wrong under its scheduling).
        const double mu = team_row_max(team, X, r, K);
        if (!(mu > 0) || !is_finite(mu)) return;  // the same for every thread of the team
        double sq = 0, sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, K),
            [&](const std::int64_t k, double& part) { part += scaled_squares(X(r, k), mu); },
            Kokkos::Sum<double>(sq));
        team.team_barrier();
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, K),
            [&](const std::int64_t k, double& part) { part += scaled_magnitudes(X(r, k), mu); },
            Kokkos::Sum<double>(sum));
        team.team_barrier();
        // Every thread of the team holds the same ratio: the max is not affected.
        const double ratio = compat::sqrt(sq) / sum;
        if (ratio > w) w = ratio;
      },
      Kokkos::Max<double>(worst));
  return worst > 0 ? worst : 0.0;
}

/// Fast rule: bits(r) = min(crt_max_bits, floor(log2(T / l2(r)))).  Returns the fewest.
template <class ExecSpace>
int fast_bits(const ExecSpace& space, const typename Views<ExecSpace>::Norms& l2, double T,
              const CrtBits<ExecSpace>& bits) {
  int fewest = crt_max_bits;
  flat_reduce<Kokkos::Min>(
      "ozaki::crt::fast_bits", space, l2.extent(0),
      KOKKOS_LAMBDA(const std::int64_t r, int& f) {
        int b = crt_max_bits;
        if (l2(r) > 0) {
          int e = 0;
          compat::frexp(T / l2(r), &e);  // T / l2 = g 2^e, g in [1/2, 1): floor(log2) = e - 1
          b = e - 1 < crt_max_bits ? e - 1 : crt_max_bits;
        }
        bits(r) = b;
        if (b < f) f = b;
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
      KOKKOS_LAMBDA(const int r, const std::int64_t k, const double(&x)[4]) {
        const int e = r < rows ? exponents(r) : 0;
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
