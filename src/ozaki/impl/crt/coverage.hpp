#pragma once
/// \file coverage.hpp
/// The coverage certificate of scheme II (docs/design.md §5.7): a lower bound of every
/// (|A||B|)_mn from how far each element lies below its row's scale exponent, with no product.
/// It gives the componentwise bound a call guarantees (Report::error_bound) and tells whether
/// the fast rule's mean-field count may be trusted on the data.  Plain arithmetic on counts,
/// the same in the Kokkos kernels (crt/coverage_kernels.hpp) and in the serial oracle.
///
/// Layers.  Scale each row x_r of op(A) (or of op(B)^T) by its scale exponent e_r, so that
/// x = |x_rk| 2^-e_r lies in [0, 1).  Element k is in layer j when x lies in [2^-(j+1), 2^-j).
/// The norm tiles count their elements by layer below the tile's own exponent e_t (bins 0 to
/// coverage_tile_bins - 2 exactly, the last bin "deeper, or zero"); a tile d = e_r - e_t
/// below its row moves them d layers down.  Per row that gives, for t = 1 .. coverage_layers,
///     below_r(t) >= #{k : x_rk < 2^-t}            (an upper bound of the count)
/// and, per layer j, top_r(j): elements no larger than 2^-j, so that the s largest elements sum
/// to at most topmass_r(s), filling s from layer 0 down (an upper bound of the mass).
///
/// The bound.  For any x in [0, 1),  x >= sum_{t >= 0} 2^-(t+2) [x >= 2^-(t+1)]  (for x in
/// layer j the indicators hold from t = j on, and they sum to 2^-(j+1) <= x).  With y_n a row
/// of the other operand and G_y(s) = max_n topmass_n(s) / l1_n, for every n:
///     sum_k x_mk y_nk >= sum_t 2^-(t+2) sum_{k: x_mk >= 2^-(t+1)} y_nk
///                     >= l1_n sum_{t < coverage_layers} 2^-(t+2) (1 - G_y(below_m(t+1)))_+
///                      = l1_n lambda_m,
/// since the k with x_mk < 2^-(t+1) are at most below_m(t+1) of them and carry at most the mass
/// of as many of y_n's largest.  So (|A||B|)_mn >= 2^(e_m + f_n) max(l1b_n lambda_m, l1a_m
/// lambda'_n) for every entry, from per-row numbers alone.

#include <ozaki/impl/common/bounds.hpp>

#include <cstdint>

#if defined(KOKKOS_INLINE_FUNCTION)
#define OZAKI_COVERAGE_FUNCTION KOKKOS_INLINE_FUNCTION
#else
#define OZAKI_COVERAGE_FUNCTION inline
#endif

namespace ozaki {
namespace Impl {

/// Bins of a norm tile's layer counts of its nonzero elements: layers 0 .. 6 below the tile's
/// exponent, then one bin for deeper ones (zeros are the tile's other elements).  Each bin
/// holds at most 32 (a tile's elements) in one byte of a 64-bit word.
constexpr int coverage_tile_bins = 8;
constexpr int coverage_tile_deep = coverage_tile_bins - 1;
/// Layers a row's counts resolve: below(t) for t = 1 .. coverage_layers, top(j) for j = 0 ..
/// coverage_layers (the last: everything at or below layer coverage_layers).  Layers beyond
/// carry at most 2^-12 of an element's weight, far below what the certificate needs.
constexpr int coverage_layers = 12;
/// Per row: below(1 .. coverage_layers), then top(0 .. coverage_layers).
constexpr int coverage_row_counts = 2 * coverage_layers + 1;
/// The grid of G: s = 0, 1, 2, 4, ..., 2^(coverage_grid - 2) (K < 2^32).
constexpr int coverage_grid = 34;

/// The tile bin of a finite nonzero element with frexp exponent `exponent` (|x| in
/// [2^(exponent-1), 2^exponent)) in a tile of scale exponent e_t (|x| < 2^e_t): e_t - exponent,
/// or the deep bin.
OZAKI_COVERAGE_FUNCTION int coverage_tile_bin(int exponent, int tile_exponent) {
  const int layer = tile_exponent - exponent;
  return layer < coverage_tile_deep ? layer : coverage_tile_deep;
}

/// One element of bin b added to a tile's packed counts.
OZAKI_COVERAGE_FUNCTION std::uint64_t coverage_bin_unit(int bin) {
  return std::uint64_t(1) << (8 * bin);
}

OZAKI_COVERAGE_FUNCTION std::uint32_t coverage_bin_count(std::uint64_t packed, int bin) {
  return static_cast<std::uint32_t>((packed >> (8 * bin)) & 0xffu);
}

/// A row's layer counts while its tiles are merged in: exact[j] nonzero elements known to lie
/// in layer j, deep[j] known only to lie in layer j or deeper (j = coverage_layers: at or
/// beyond it), and the zeros.
struct CoverageCounts {
  std::uint32_t exact[coverage_layers] = {};
  std::uint32_t deep[coverage_layers + 1] = {};
  std::uint32_t zeros = 0;
};

/// A tile of `count` elements, largest magnitude `mu` and packed bins, d = e_r - e_t >= 0
/// layers below its row's exponent (d unused for a zero tile).
OZAKI_COVERAGE_FUNCTION void coverage_merge_tile(CoverageCounts& c, std::uint64_t packed, int count,
                                                 bool zero_tile, int d) {
  if (zero_tile) {
    c.zeros += static_cast<std::uint32_t>(count);
    return;
  }
  std::uint32_t nonzero = 0;
  for (int b = 0; b < coverage_tile_deep; ++b) {
    const int j = b + d;
    const std::uint32_t n = coverage_bin_count(packed, b);
    nonzero += n;
    if (j < coverage_layers) {
      c.exact[j] += n;
    } else {
      c.deep[coverage_layers] += n;
    }
  }
  const std::uint32_t n = coverage_bin_count(packed, coverage_tile_deep);
  nonzero += n;
  const int j = coverage_tile_deep + d;
  c.deep[j < coverage_layers ? j : coverage_layers] += n;
  c.zeros += static_cast<std::uint32_t>(count) - nonzero;
}

OZAKI_COVERAGE_FUNCTION void coverage_join(CoverageCounts& acc, const CoverageCounts& c) {
  for (int j = 0; j < coverage_layers; ++j) acc.exact[j] += c.exact[j];
  for (int j = 0; j <= coverage_layers; ++j) acc.deep[j] += c.deep[j];
  acc.zeros += c.zeros;
}

/// The row's counts in their stored form, out(i) for i < coverage_row_counts: below(t) for
/// t = 1 .. coverage_layers, then top(j) for j = 0 .. coverage_layers.  An element deep from
/// layer j may lie anywhere at or below it, so it counts below every threshold (below) and as
/// large as 2^-j (top); zeros count below every threshold and add no mass.
template <class Out>
OZAKI_COVERAGE_FUNCTION void coverage_row_values(const CoverageCounts& c, const Out& out) {
  std::uint32_t anywhere = c.zeros;
  for (int j = 0; j <= coverage_layers; ++j) anywhere += c.deep[j];
  std::uint32_t exact_below = 0;  // exact elements in layers t .. coverage_layers - 1
  for (int t = coverage_layers; t >= 1; --t) {
    if (t < coverage_layers) exact_below += c.exact[t];
    out(t - 1, exact_below + anywhere);
  }
  for (int j = 0; j < coverage_layers; ++j) out(coverage_layers + j, c.exact[j] + c.deep[j]);
  out(2 * coverage_layers, c.deep[coverage_layers]);
}

/// 2^-j for 0 <= j < 64, exactly.
OZAKI_COVERAGE_FUNCTION double coverage_power(int j) {
  return 1.0 / static_cast<double>(std::uint64_t(1) << j);
}

/// s at grid point g: 0, then 2^(g-1).
OZAKI_COVERAGE_FUNCTION double coverage_grid_count(int g) {
  return g == 0 ? 0.0 : static_cast<double>(std::uint64_t(1) << (g - 1));
}

/// The first grid point at or above count s.
OZAKI_COVERAGE_FUNCTION int coverage_grid_up(std::uint32_t s) {
  int g = 0;
  while (g + 1 < coverage_grid && coverage_grid_count(g) < static_cast<double>(s)) ++g;
  return g;
}

/// An upper bound of the sum of the s largest elements of a row whose top counts are
/// top(j) = `top(j)` (j = 0 .. coverage_layers): fill s from layer 0 down, each at 2^-j.
template <class Top>
OZAKI_COVERAGE_FUNCTION double coverage_topmass(const Top& top, double s) {
  double mass = 0, left = s;
  for (int j = 0; j <= coverage_layers && left > 0; ++j) {
    const double c = static_cast<double>(top(j));
    const double take = c < left ? c : left;
    mass += take * coverage_power(j);
    left -= take;
  }
  return mass;
}

/// sqrt(s_g) for grid point g >= 1 (s_g = 2^(g-1)), rounded up: a power of two, times sqrt(2)
/// rounded up where g - 1 is odd.
OZAKI_COVERAGE_FUNCTION double coverage_grid_root(int g) {
  const int half = (g - 1) / 2;
  const double power = static_cast<double>(std::uint64_t(1) << half);
  return (g - 1) % 2 == 0 ? power : power * 0x1.6a09e667f3bcdp+0;
}

/// One row's G at every grid point, v[g] = min(topmass(s_g), sqrt(s_g) n) / l1 for g <
/// coverage_grid: the layer counts' mass filled from layer 0 down, or Cauchy-Schwarz on the s
/// largest elements (n >= the row's 2-norm), whichever is less, both upper bounds (the second
/// times 1 + 2^-40 for its roundings).  One walk down the layers.  Zero for a row with l1 = 0 (all
/// zero: every entry of |A||B| it meets is 0).
template <class Top>
OZAKI_COVERAGE_FUNCTION void coverage_grid_of_row(const Top& top, double l1, double n, double* v) {
  for (int g = 0; g < coverage_grid; ++g) v[g] = 0;
  if (!(l1 > 0)) return;
  int j = 0;
  double count_above = 0, mass_above = 0;  // the layers before j
  for (int g = 1; g < coverage_grid; ++g) {
    const double s = coverage_grid_count(g);
    while (j <= coverage_layers && count_above + static_cast<double>(top(j)) < s) {
      count_above += static_cast<double>(top(j));
      mass_above += static_cast<double>(top(j)) * coverage_power(j);
      ++j;
    }
    // Beyond the nonzero elements the rest are zeros.
    const double mass =
        j <= coverage_layers ? mass_above + (s - count_above) * coverage_power(j) : mass_above;
    const double root = coverage_grid_root(g) * n * (1 + 0x1p-40);
    v[g] = (mass < root ? mass : root) / l1;
  }
}

/// lambda_r from the row's below counts and the other operand's G on the grid (header).
template <class Below, class Grid>
OZAKI_COVERAGE_FUNCTION double coverage_lambda(const Below& below, const Grid& G) {
  double lambda = 0;
  for (int t = 0; t < coverage_layers; ++t) {
    const double g = G(coverage_grid_up(below(t)));  // below(t) = below_r(t + 1)
    if (g < 1) lambda += coverage_power(t + 2) * (1 - g);
  }
  return lambda;
}

/// The fast rule's mean-field count may be trusted where the certificate bounds every entry's
/// mean-field estimate l1a_m l1b_n / K within this factor of (|A||B|)_mn (scaled): beyond it
/// an automatic count takes the counted fast rule's per-entry lower bound instead.  The
/// certificate is loose: on iid data at phi = 0.5 its factor is 8 to 9 where the true one is
/// about 1.1 (Crt.CoverageCertifiesTheMeanFieldCountOnIidData), on data spread against itself
/// by 2^10 along half of k it is in the thousands.
constexpr double crt_coverage_gate = 24;

/// The componentwise bound of the split for the given fewest bits and certificate numbers:
/// with 2^-(b_m+1) <= split_a(m) (the fast rule: n_m / T), one operand's term is
///     max_m split_a(m) / lambda_m,
/// the l1 norms' rounding (each at most (K + tiles) 2^-31 below the true one, which is at
/// least 1/4 for a nonzero row) covered by coverage_l1_slack.
inline double coverage_l1_slack(std::int64_t K) {
  return 1 + 8.0 * static_cast<double>(K + K / 32 + 1) * 0x1p-31;
}

/// The whole bound relative to |alpha| (|A||B|)_mn from the two operands' split terms, the
/// cross term and the reconstruction's, alpha's and beta's roundings (gamma_4, §5.4).
/// (gamma_4 written out as gamma_bound(4) computes it: the device's verdict of a captured call
/// evaluates this too, captured.hpp.)
OZAKI_COVERAGE_FUNCTION double crt_componentwise_bound(double split_a, double split_b,
                                                       double cross) {
  const double split = split_a + split_b + cross;
  const double gamma_4 = 4 * 0x1p-53 / (1 - 4 * 0x1p-53);
  return split + gamma_4 * (1 + split);
}

}  // namespace Impl
}  // namespace ozaki
