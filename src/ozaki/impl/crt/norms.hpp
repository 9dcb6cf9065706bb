#pragma once
/// \file norms.hpp
/// Scheme II's row norms (docs/design.md §5.1, rules.hpp "Row norms"): pass 1 and n_r, l1_r
/// per row from one read of every element in norm tiles, as integer quanta summed exactly, so
/// the norms are order-independent and the same bits on every backend.
///
///   launch_exponents_and_norms   per-tile partials (norm_tile_partials), the rows' scale
///                                exponents, and the norms from the tiles (norms_from_tiles)

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

}  // namespace Impl
}  // namespace ozaki
