#pragma once
/// \file crt.hpp
/// Portable Kokkos kernels of Ozaki scheme II (Algorithm::Int8Crt); the rules they implement
/// are in crt_rules.hpp, the derivations in docs/design.md §5.
///
///   row_norms           ||x_r||_2 and ||x_r||_1 scaled by 2^-e_r, per row (rows along K)
///   fast_bits           bits per row from the Cauchy-Schwarz rule
///   magnitudes7 + INT8 GEMM + accurate_bits    bits from the per-entry bound (accurate rule)
///   crt_residues        every element scaled to an integer and reduced modulo each modulus
///   (one INT8 GEMM per modulus and K chunk, in backends)
///   crt_reconstruct     residues of C' -> C' exactly (CRT) -> FP64 -> alpha/beta update

#include <ozaki/impl/crt_rules.hpp>
#include <ozaki/impl/recombine.hpp>
#include <ozaki/impl/slice_format.hpp>
#include <ozaki/impl/split.hpp>
#include <ozaki/impl/views.hpp>
#include <ozaki/impl/workspace_layout.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// Per-row bits (crt_rules.hpp) and scale exponents.
template <class ExecSpace>
using CrtBits = typename Views<ExecSpace>::Exponents;

/// 2^h as a double for |h| <= 1023.
KOKKOS_INLINE_FUNCTION double power_of_two(int h) { return compat::ldexp(1.0, h); }

/// y rounded to an integer, half away from zero, exactly, without conversion instructions
/// (they are slow on GPUs): |y| + 2^52 rounds |y| < 2^52 to the nearest integer (ties to
/// even), and a tie is then moved away from zero.
KOKKOS_INLINE_FUNCTION double round_half_away(double y) {
  const double a = magnitude(y);
  if (!(a < 0x1p52)) return y;  // already an integer
  double t = (a + 0x1p52) - 0x1p52;
  if (a - t == 0.5) t += 1;
  return y < 0 ? -t : t;
}

/// The low 8 bits of an integer-valued double v, |v| < 2^51, as two's complement: the bit
/// pattern of v + 1.5 2^52 is that of 1.5 2^52 plus v as an integer.
KOKKOS_INLINE_FUNCTION std::uint32_t low_byte(double v) {
  const double w = v + 0x1.8p52;
  std::uint64_t bits;
  std::memcpy(&bits, &w, sizeof bits);
  return static_cast<std::uint32_t>(bits) & 0xffu;
}

/// Nearest integer of y for |y| < 2^51 (ties either way): the classic 1.5 * 2^52 shift.
KOKKOS_INLINE_FUNCTION double round_small(double y) {
  const double shift = 0x1.8p52;
  return (y + shift) - shift;
}

/// ||x_r 2^-e_r||_2 and ||x_r 2^-e_r||_1 for every row (K-contiguous rows), in one pass: each
/// thread of a row's team sums its strided share of both, the team's partial sums meet in
/// scratch (a fixed order: the result does not depend on scheduling).
template <class ExecSpace>
void row_norms(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
               const typename Views<ExecSpace>::Exponents& exponents,
               const typename Views<ExecSpace>::Norms& l2,
               const typename Views<ExecSpace>::Norms& l1) {
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  using member_type = typename policy_type::member_type;
  using Partials = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t K = X.extent(1);
  // Room for the largest team any space runs (CUDA's 1024 threads).
  constexpr int max_team = 1024;
  policy_type policy = row_policy(space, X.extent(0));
  policy.set_scratch_size(0, Kokkos::PerTeam(2 * Partials::shmem_size(max_team)));
  Kokkos::parallel_for(
      "ozaki::crt::row_norms", policy, KOKKOS_LAMBDA(const member_type& team) {
        const int r = team.league_rank();
        const int e = exponents(r);
        const int t = team.team_rank(), size = team.team_size();
        Partials squares(team.team_scratch(0), size), sums(team.team_scratch(0), size);
        double sq = 0, sum = 0;
        for (std::int64_t k = t; k < K; k += size) {
          // Scaled to at most 1: no overflow; squares below 2^-1022 vanish, which the
          // rule's margin covers (the largest element contributes at least 1/4).
          const double x = compat::ldexp(magnitude(X(r, k)), -e);
          sq += x * x;
          sum += x;
        }
        squares(t) = sq;
        sums(t) = sum;
        team.team_barrier();
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          double total_sq = 0, total = 0;
          for (int i = 0; i < size; ++i) {
            total_sq += squares(i);
            total += sums(i);
          }
          l2(r) = compat::sqrt(total_sq);
          l1(r) = total;
        });
      });
}

/// row_norms for rows that are not K-contiguous, without copying them: per row tile,
/// one thread per row (consecutive threads on X's contiguous index), partial sums into
/// squares(tile, r) and sums(tile, r), then one thread per row adds its tiles.
template <class ExecSpace>
void strided_row_norms(
    const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
    const typename Views<ExecSpace>::Exponents& exponents,
    const Kokkos::View<double**, Kokkos::LayoutRight, typename Views<ExecSpace>::device_type>&
        squares,
    const Kokkos::View<double**, Kokkos::LayoutRight, typename Views<ExecSpace>::device_type>& sums,
    const typename Views<ExecSpace>::Norms& l2, const typename Views<ExecSpace>::Norms& l1) {
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  const std::int64_t tiles = row_tiles(K);
  grid_for(
      "ozaki::crt::strided_row_norms", space, rows, tiles,
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t t) {
        const std::int64_t begin = t * row_tile_columns;
        const std::int64_t end = begin + row_tile_columns < K ? begin + row_tile_columns : K;
        const int e = exponents(r);
        double sq = 0, sum = 0;
        for (std::int64_t k = begin; k < end; ++k) {
          const double x = compat::ldexp(magnitude(X(r, k)), -e);
          sq += x * x;
          sum += x;
        }
        squares(t, r) = sq;
        sums(t, r) = sum;
      });
  flat_for(
      "ozaki::crt::strided_row_norms_sum", space, rows, KOKKOS_LAMBDA(const std::int64_t r) {
        double sq = 0, sum = 0;
        for (std::int64_t t = 0; t < tiles; ++t) {
          sq += squares(t, r);
          sum += sums(t, r);
        }
        l2(r) = compat::sqrt(sq);
        l1(r) = sum;
      });
}

/// max_r l2(r) / l1(r) over nonzero rows (0 when all are zero): the q of crt_rules.hpp.
template <class ExecSpace>
double peak_ratio(const ExecSpace& space, const typename Views<ExecSpace>::Norms& l2,
                  const typename Views<ExecSpace>::Norms& l1) {
  double worst = 0;
  Kokkos::parallel_reduce(
      "ozaki::crt::peak_ratio",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, l2.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t r, double& w) {
        if (l1(r) > 0 && l2(r) / l1(r) > w) w = l2(r) / l1(r);
      },
      Kokkos::Max<double>(worst));
  return worst;
}

/// Fast rule: bits(r) = min(crt_max_bits, floor(log2(T / l2(r)))).  Returns the fewest.
template <class ExecSpace>
int fast_bits(const ExecSpace& space, const typename Views<ExecSpace>::Norms& l2, double T,
              const CrtBits<ExecSpace>& bits) {
  int fewest = crt_max_bits;
  Kokkos::parallel_reduce(
      "ozaki::crt::fast_bits",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, l2.extent(0)),
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
      Kokkos::Min<int>(fewest));
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

/// out(m) = min over n < N of value(n, m), for M x N values given by a function whose
/// consecutive m are adjacent in memory: per tile of crt_min_tile columns one thread per m
/// (coalesced), partial minima in partial(tile, m), then one thread per m over the tiles.
template <class ExecSpace, class Value>
void min_over_columns(
    const char* label, const ExecSpace& space, std::int64_t M, std::int64_t N, const Value& value,
    const Kokkos::View<int**, Kokkos::LayoutRight, typename Views<ExecSpace>::device_type>& partial,
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
int accurate_bits(
    const ExecSpace& space, const typename Views<ExecSpace>::Products& P, std::int64_t chunks,
    double range, const CrtBits<ExecSpace>& rho,
    const Kokkos::View<int**, Kokkos::LayoutRight, typename Views<ExecSpace>::device_type>& partial,
    const CrtBits<ExecSpace>& bits_a, const CrtBits<ExecSpace>& bits_b) {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
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
  Kokkos::parallel_reduce(
      "ozaki::crt::fewest_bits",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, M + N),
      KOKKOS_LAMBDA(const std::int64_t i, int& f) {
        if (i < M) {
          if (bits_a(i) > crt_max_bits) bits_a(i) = crt_max_bits;
          if (bits_a(i) < f) f = bits_a(i);
        } else if (bits_b(i - M) < f) {
          f = bits_b(i - M);
        }
      },
      Kokkos::Min<int>(fewest));
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
  Kokkos::parallel_reduce(
      "ozaki::crt::model_error",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, M * N),
      KOKKOS_LAMBDA(const std::int64_t idx, double& w) {
        const std::int64_t m = idx % M, n = idx / M;
        if (l1a(m) == 0 || l1b(n) == 0) return;  // an exact zero product
        const double numerator =
            compat::ldexp(l1b(n), -bits_a(m) - 1) + compat::ldexp(l1a(m), -bits_b(n) - 1);
        const double d = D(n, m);
        const double e = d > 0 ? numerator / (root_k * d) : positive_infinity();
        if (e > w) w = e;
      },
      Kokkos::Max<double>(worst));
  return worst > 0 ? worst : 0.0;
}

namespace detail {

/// f(std::integral_constant<int, L>{}) for the runtime moduli count L: the kernels below are
/// compiled per L, so that their loops over the moduli unroll (all products' loads of an
/// entry issue at once; the constants become immediate operands).
template <int L = min_moduli, class F>
void with_moduli_count(int moduli, const F& f) {
  if constexpr (L <= max_moduli) {
    if (moduli == L) {
      f(std::integral_constant<int, L>{});
    } else {
      with_moduli_count<L + 1>(moduli, f);
    }
  }
}

template <int L, class ExecSpace>
void crt_residues_fixed(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                        const typename Views<ExecSpace>::Exponents& exponents,
                        const CrtBits<ExecSpace>& bits, const CrtConstants& c,
                        const typename Views<ExecSpace>::Digits& residues) {
  const std::int64_t rows = X.extent(0);
  const std::int64_t kpad = residues.extent(1) / L;
  for_each_quad(
      "ozaki::crt::residues", space, X, residues.extent(0), kpad,
      KOKKOS_LAMBDA(const int r, const std::int64_t k, const double(&x)[4]) {
        const int b = r < rows ? bits(r) : 0;
        const int shift = r < rows ? b - exponents(r) : 0;
        const double p1 = power_of_two(shift / 2), p2 = power_of_two(shift - shift / 2);
        // x' = hi 2^64 + mid 2^32 + lo with signed pieces (nearest-integer splits, exact);
        // a row of at most 62 bits has hi = 0.
        double hi[4], mid[4], lo[4];
        for (int j = 0; j < 4; ++j) {
          const double t = round_half_away(x[j] * p1 * p2);
          hi[j] = b > 62 ? round_small(t * 0x1p-64) : 0.0;
          const double rest = t - hi[j] * 0x1p64;
          mid[j] = round_small(rest * 0x1p-32);
          lo[j] = rest - mid[j] * 0x1p32;
        }
#pragma unroll
        for (int l = 0; l < L; ++l) {
          std::uint32_t word = 0;
          for (int j = 0; j < 4; ++j) {
            // |y| < 2^40, so y / m is within 2^-19 of its rounding, and for odd m at least
            // 2^-9 from a tie: v = y - m round(y / m) is the symmetric residue itself.  For
            // m = 256 a tie gives +-128, whose low byte is -128's either way.
            const double y = hi[j] * c.pow64[l] + (mid[j] * c.pow32[l] + lo[j]);
            const double v = y - round_small(y * c.inverse[l]) * c.modulus[l];
            word |= low_byte(v) << (8 * j);
          }
          // Aligned: rows are 256-byte aligned, kpad and k multiples of 4.
          *reinterpret_cast<std::uint32_t*>(&residues(r, l * kpad + k)) = word;
        }
      });
}

template <int L, class ExecSpace>
void crt_reconstruct_fixed(const ExecSpace& space, const typename Views<ExecSpace>::Products& P,
                           std::int64_t chunks, std::int64_t n0, std::int64_t width,
                           const CrtConstants& c,
                           const typename Views<ExecSpace>::Exponents& exponents_a,
                           const CrtBits<ExecSpace>& bits_a,
                           const typename Views<ExecSpace>::Exponents& exponents_b,
                           const CrtBits<ExecSpace>& bits_b, double alpha, double beta,
                           const typename Views<ExecSpace>::Matrix& C) {
  constexpr int parts = crt_parts(L);
  grid_for(
      "ozaki::crt::reconstruct", space, C.extent(0), width,
      KOKKOS_LAMBDA(const std::int64_t m, const std::int64_t j) {
        const std::int64_t n = n0 + j;
        // All L (times chunks) loads first: they are independent.
        double y[L];
#pragma unroll
        for (int l = 0; l < L; ++l) y[l] = P(l * chunks, j, m);
        for (std::int64_t ch = 1; ch < chunks; ++ch) {
#pragma unroll
          for (int l = 0; l < L; ++l) y[l] += P(l * chunks + ch, j, m);
        }
        double S[parts] = {};
#pragma unroll
        for (int l = 0; l < L; ++l) {
          const double r = y[l] - round_small(y[l] * c.inverse[l]) * c.modulus[l];
#pragma unroll
          for (int p = 0; p < parts; ++p) S[p] += c.weight[l][p] * r;
        }
        double q = 0;
#pragma unroll
        for (int p = 0; p < parts; ++p) q += S[p] * c.quotient[p];
        const double k = round_small(q);
#pragma unroll
        for (int p = 0; p < parts; ++p) S[p] -= k * c.range[p];
#pragma unroll
        for (int p = parts - 1; p >= 1; --p) {
          const double carry = round_small(S[p] * 0x1p-40);
          S[p] -= carry * 0x1p40;
          S[p - 1] += carry;
        }
        double v = 0;
#pragma unroll
        for (int p = parts - 1; p >= 0; --p) v = S[p] + v * 0x1p-40;
        const double ab = compat::ldexp(
            v, c.top_exponent + exponents_a(m) - bits_a(m) + exponents_b(n) - bits_b(n));
        C(m, n) = beta == 0 ? alpha * ab : alpha * ab + beta * C(m, n);
      });
}

}  // namespace detail

/// Every element x of row r becomes x' = round(x 2^(bits_r - e_r)) (half away from zero,
/// |x'| < 2^94, an exact double) and its symmetric residue modulo each of the L moduli is
/// written to residues(r, l * kpad + k).  Padding columns and rows are zero.
///
/// Exactness: x 2^(bits - e) is two multiplications by powers of two, split so that neither
/// leaves the normal range for any x whose x' is nonzero.  x' is cut into exact pieces
/// x' = hi 2^64 + mid 2^32 + lo (|hi| <= 2^30, |mid|, |lo| <= 2^31), so that
/// y = hi (2^64 mod m) + mid (2^32 mod m) + lo is an exact integer below 2^40 congruent to x',
/// and y - m round(y / m) is exact too.  No conversion instruction is used.  One thread per 4
/// consecutive k (for_each_quad) writes each modulus' 4 residues as one 32-bit store.
template <class ExecSpace>
void crt_residues(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                  const typename Views<ExecSpace>::Exponents& exponents,
                  const CrtBits<ExecSpace>& bits, const CrtConstants& constants,
                  const typename Views<ExecSpace>::Digits& residues) {
  detail::with_moduli_count(constants.moduli, [&](auto count) {
    detail::crt_residues_fixed<decltype(count)::value>(space, X, exponents, bits, constants,
                                                       residues);
  });
}

/// C(m, n0 + j) from the INT32 products of one column block: P(l * chunks + c, j, m) is chunk c
/// of modulus l.  Per entry:
///   r_l = (sum_c P) mod m_l, |r_l| <= m_l/2 + 1;
///   S_p = sum_l weight[l][p] r_l                (exact FP64 integers, crt_rules.hpp)
///   k   = round(sum_p S_p quotient[p])          (|C'| < M/2 (1 - 2^-16): far from a tie)
///   D_p = S_p - k range[p]                      (exact), carries normalised to |D_p| <= 2^39
///   C'  = sum_p D_p 2^(top - 40p)               (summed from the least significant part:
///                                                within 2u |C'|, docs/design.md §5)
///   C(m, n) = alpha 2^(e_m - b_m + f_n - c_n) C' (+ beta C(m, n)).
template <class ExecSpace>
void crt_reconstruct(const ExecSpace& space, const typename Views<ExecSpace>::Products& P,
                     std::int64_t chunks, std::int64_t n0, std::int64_t width,
                     const CrtConstants& constants,
                     const typename Views<ExecSpace>::Exponents& exponents_a,
                     const CrtBits<ExecSpace>& bits_a,
                     const typename Views<ExecSpace>::Exponents& exponents_b,
                     const CrtBits<ExecSpace>& bits_b, double alpha, double beta,
                     const typename Views<ExecSpace>::Matrix& C) {
  detail::with_moduli_count(constants.moduli, [&](auto count) {
    detail::crt_reconstruct_fixed<decltype(count)::value>(space, P, chunks, n0, width, constants,
                                                          exponents_a, bits_a, exponents_b, bits_b,
                                                          alpha, beta, C);
  });
}

}  // namespace Impl
}  // namespace ozaki
