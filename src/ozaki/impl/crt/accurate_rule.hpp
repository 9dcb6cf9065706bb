#pragma once
/// \file accurate_rule.hpp
/// Scheme II's accurate scaling rule (rules.hpp, docs/design.md §5.1): 7-bit magnitudes rounded
/// up (magnitudes7), whose INT8 product bounds |A||B| per entry; the bits of every row and
/// column from that bound (accurate_bits); and the rule's error model for an automatic moduli
/// count (crt_model_error).

#include <ozaki/impl/crt/norms.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

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
