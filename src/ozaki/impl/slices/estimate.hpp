#pragma once
/// \file estimate.hpp
/// Bounds the error ratios of accuracy.hpp with INT8 GEMMs, from which S is chosen (and scheme
/// II's accurate rule its moduli count).
///
/// (|A||B|)_mn is bounded from below by INT8 GEMMs of the magnitudes of row_magnitudes:
/// at level l, q_l(x) = min(127, floor(|x| 2^(7+7l-e))) <= |x| 2^(7+7l-e), so for any pair of
/// levels (la, lb)
///     2^(-14-7la-7lb) sum_k q_la(a_mk) q_lb(b_kn) <= 2^(-e_m-e_n) (|A||B|)_mn,
/// and the largest of these is a lower bound of D_mn too.  Dividing by it bounds both ratios
/// of accuracy.hpp from above: S chosen from them can only err towards accuracy.
///
/// Level pairs come in rings: (0,0) first, which suffices for data of one magnitude (one INT8
/// GEMM); only while some D_mn is still zero, ring 1 {(0,1),(1,0),(1,1)} and then ring 2 add
/// entries 7 and 14 binades further below the scales.  If D_mn is still zero after that, nothing
/// bounds the error and the largest S is taken.  A zero row (or column) contributes no error
/// at all: its products are exactly zero for any S.

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/slices/accuracy.hpp>
#include <ozaki/impl/slices/split.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace ozaki {
namespace Impl {

/// Magnitude levels of the estimate: levels 0..max_magnitude_level.
constexpr int magnitude_levels = 3;
constexpr int max_magnitude_level = magnitude_levels - 1;

/// Phase 1: the automatic-S estimate.
template <class ExecSpace>
struct EstimateRegion {
  using V = Views<ExecSpace>;
  typename V::Norms l1a, l1b;
  Kokkos::View<double**, Kokkos::LayoutRight, typename V::device_type> lower;
  typename V::Digits magnitudes_a[magnitude_levels], magnitudes_b[magnitude_levels];
  typename V::Products products;
  static EstimateRegion carve(Carver& c, const Shape& s, std::int64_t chunks) {
    EstimateRegion r;
    const std::int64_t kpad = padded_k(s.k);
    r.l1a = typename V::Norms(c.take<double>(s.m), s.m);
    r.l1b = typename V::Norms(c.take<double>(s.n), s.n);
    r.lower = decltype(r.lower)(c.take<double>(s.m * s.n), s.n, s.m);
    const std::int64_t mpad = padded_rows(s.m), npad = padded_rows(s.n);
    for (int l = 0; l < magnitude_levels; ++l) {
      r.magnitudes_a[l] = typename V::Digits(c.take<std::int8_t>(mpad * kpad), mpad, kpad);
      r.magnitudes_b[l] = typename V::Digits(c.take<std::int8_t>(npad * kpad), npad, kpad);
    }
    r.products =
        typename V::Products(c.take<std::int32_t>(chunks * npad * mpad), chunks, npad, mpad);
    return r;
  }
};

/// The level pairs of ring r: every (la, lb) with max(la, lb) == r.
inline std::vector<std::pair<int, int>> magnitude_ring(int r) {
  std::vector<std::pair<int, int>> ring;
  for (int l = 0; l < r; ++l) {
    ring.emplace_back(l, r);
    ring.emplace_back(r, l);
  }
  ring.emplace_back(r, r);
  return ring;
}

template <class ExecSpace>
using LowerBounds = decltype(EstimateRegion<ExecSpace>::lower);

/// lower(n, m) = max(lower(n, m), scale * sum_c P(c, n, m)).
template <class ExecSpace>
void raise_lower_bound(const ExecSpace& space, const typename Views<ExecSpace>::Products& P,
                       std::int64_t chunks, double scale, const LowerBounds<ExecSpace>& lower) {
  const std::int64_t N = lower.extent(0), M = lower.extent(1);
  flat_for(
      "ozaki::estimate::raise_lower_bound", space, M * N, KOKKOS_LAMBDA(const std::int64_t idx) {
        const std::int64_t m = idx % M;
        const std::int64_t n = idx / M;
        double sum = 0;
        for (std::int64_t c = 0; c < chunks; ++c) sum += P(c, n, m);
        const double bound = scale * sum;
        if (bound > lower(n, m)) lower(n, m) = bound;
      });
}

/// The two ratios of accuracy.hpp from a lower bound D(n, m) of D_mn:
/// max_mn (l1b_n [l1a_m > 0] + l1a_m [l1b_n > 0]) / D(n, m) and max_mn 1 / D(n, m) over the
/// entries with any error; +Inf where D is 0 there.
template <class ExecSpace, class LowerBound>
ErrorRatios error_ratios(const ExecSpace& space, const LowerBound& D,
                         const typename Views<ExecSpace>::Norms& l1a,
                         const typename Views<ExecSpace>::Norms& l1b) {
  const std::int64_t M = l1a.extent(0);
  const std::int64_t N = l1b.extent(0);
  double split = 0, inverse = 0;
  // A two-value reduction would fuse the two passes; each reads only what D reads.
  for (int which = 0; which < 2; ++which) {
    double result = 0;
    flat_reduce<Kokkos::Max>(
        "ozaki::estimate::error_ratios", space, M * N,
        KOKKOS_LAMBDA(const std::int64_t idx, double& worst) {
          const std::int64_t m = idx % M;
          const std::int64_t n = idx / M;
          const double a = l1a(m), b = l1b(n);
          const double error = (a > 0 ? b : 0.0) + (b > 0 ? a : 0.0);
          if (error == 0) return;
          const double d = D(n, m);
          const double numerator = which == 0 ? error : 1.0;
          const double r = d > 0 ? numerator / d : positive_infinity();
          if (r > worst) worst = r;
        },
        result);
    (which == 0 ? split : inverse) = result > 0 ? result : 0.0;  // Max starts at -DBL_MAX
  }
  return {split, inverse};
}

/// D(n, m) = scale * sum_c P(c, n, m): the lower bound of one level pair, read straight from
/// its INT8 products (ring 0 needs no stored bound).
template <class ExecSpace>
struct ProductLowerBound {
  typename Views<ExecSpace>::Products P;
  std::int64_t chunks;
  double scale;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t n, std::int64_t m) const {
    double sum = 0;
    for (std::int64_t c = 0; c < chunks; ++c) sum += P(c, n, m);
    return scale * sum;
  }
};

struct SliceCountChoice {
  ErrorRatios ratios;  // upper bounds of the model's ratios
  int int8_gemms = 0;  // INT8 GEMM calls the estimate took
  /// Where the per-entry lower bounds are: ring 0 alone leaves them in its products
  /// (ProductLowerBound with scale 2^-14), deeper rings in EstimateRegion::lower.
  bool lower_stored = false;
};

/// The error ratios of accuracy.hpp for op(A) (rows along K) and op(B)^T, whose scale
/// exponents are known, computed in the scratch `region`.
template <class ExecSpace>
SliceCountChoice choose_slice_count(const ExecSpace& space,
                                    const typename Views<ExecSpace>::ConstMatrix& opA,
                                    const typename Views<ExecSpace>::ConstMatrix& opBt,
                                    const typename Views<ExecSpace>::Exponents& exponents_a,
                                    const typename Views<ExecSpace>::Exponents& exponents_b,
                                    std::int64_t k_block, const EstimateRegion<ExecSpace>& region) {
  const std::int64_t K = opA.extent(1);
  const std::int64_t kpad = padded_k(K);
  const std::int64_t block = resolved_k_block(k_block);
  const std::int64_t chunks = k_chunks(K, k_block);
  int levels_made = 0;  // magnitudes of levels [0, levels_made) exist for both operands
  auto ensure_level = [&](int l) {
    for (; levels_made <= l; ++levels_made) {
      row_magnitudes(space, opA, exponents_a, levels_made, region.magnitudes_a[levels_made],
                     region.l1a);
      row_magnitudes(space, opBt, exponents_b, levels_made, region.magnitudes_b[levels_made],
                     region.l1b);
    }
  };
  SliceCountChoice choice;
  // INT8 GEMM of the magnitudes of one level pair into region.products; returns its scale.
  auto multiply_levels = [&](const std::pair<int, int>& levels) {
    ensure_level(std::max(levels.first, levels.second));
    const auto& a = region.magnitudes_a[levels.first];
    const auto& b = region.magnitudes_b[levels.second];
    Int8GemmProblem problem;
    problem.rows_a = static_cast<std::int64_t>(a.extent(0));  // padded to 16, zero rows
    problem.rows_b = static_cast<std::int64_t>(b.extent(0));
    // The whole padded length: every chunk's length stays a multiple of 16.
    problem.length = kpad;
    problem.a = a.data();
    problem.lda = kpad;
    problem.b = b.data();
    problem.ldb = kpad;
    problem.ldc = static_cast<std::int64_t>(region.products.extent(2));
    problem.c = region.products.data();
    choice.int8_gemms += int8_gemm_in_k_chunks(space, problem, block, problem.rows_b * problem.ldc);
    return compat::ldexp(1.0, -14 - 7 * (levels.first + levels.second));
  };
  // Ring 0, one level pair: the ratios come straight from its products.  Data of one
  // magnitude stops here, after one INT8 GEMM and two passes over its products.
  const double scale0 = multiply_levels({0, 0});
  choice.ratios = error_ratios(space, ProductLowerBound<ExecSpace>{region.products, chunks, scale0},
                               region.l1a, region.l1b);
  if (choice.ratios.inverse < HUGE_VAL) return choice;
  // Deeper rings: keep the largest bound over all level pairs.
  Kokkos::deep_copy(space, region.lower, 0.0);
  choice.lower_stored = true;
  raise_lower_bound(space, region.products, chunks, scale0, region.lower);
  for (int ring = 1; ring <= max_magnitude_level; ++ring) {
    for (const auto& levels : magnitude_ring(ring)) {
      const double scale = multiply_levels(levels);
      raise_lower_bound(space, region.products, chunks, scale, region.lower);
    }
    choice.ratios = error_ratios(space, region.lower, region.l1a, region.l1b);
    if (choice.ratios.inverse < HUGE_VAL) break;
  }
  return choice;
}

}  // namespace Impl
}  // namespace ozaki
