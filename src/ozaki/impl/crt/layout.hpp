#pragma once
/// \file layout.hpp
/// Scheme II's scratch (memory formulas in docs/design.md §6): after the exponents and tile
/// partials of common/scratch.hpp, the bits and norms of every row (CrtScaleRegion) live
/// through the call; phase 1 holds the accurate rule's bound product and, for an automatic
/// count, scheme I's estimate; phase 2, in the same bytes, op(A)'s residues and, per pass of
/// columns of C, the residues of those rows of op(B)^T and their INT32 products.

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/crt/coverage_kernels.hpp>
#include <ozaki/impl/crt/scaling.hpp>
#include <ozaki/impl/slices/estimate.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ozaki {
namespace Impl {

/// Fewest columns of C per pass of scheme II's products, whatever the workspace limit: INT8
/// GEMMs much narrower than this lose tensor-core efficiency.
constexpr std::int64_t crt_min_block_columns = 1024;
/// Most columns of C per pass where op(A) has at least crt_narrow_pass_extent rows and K is
/// at least as long, whatever room the limit leaves: the fastest width measured on sm_90
/// (the benchmarks diary in docs/history/, optimisation log 10); smaller M or K keep passes as
/// wide as the limit allows.  Under the library's own limit (CallPlan::library_limit) it is
/// also the fewest there: passes of 1024 columns make 16384^3 and 32768^3 calls slower (at
/// 32768^3 op(A)'s residues alone exceed 8 GiB; docs/benchmarks.md, "DGEMM"), so the call
/// takes the room for wider ones beyond the 8 GiB, falling back to 1024-column passes where
/// that room cannot be allocated (dispatch.hpp).
constexpr std::int64_t crt_narrow_pass_columns = 2048;
constexpr std::int64_t crt_narrow_pass_extent = 8192;

/// The INT8 products of one modulus: `parts` products of inner length `kpad` (in `k_chunks`
/// chunks).  Real data: one product over the plan's K.  Complex data by Karatsuba: 3 (of the
/// real parts, the imaginary parts and their sums) over K = half the embedded row length.
struct CrtProducts {
  int parts = 1;
  std::int64_t kpad = 0, k_chunks = 1;
};

inline CrtProducts crt_products(const CallPlan& p) {
  if (!p.complex_karatsuba) return {1, p.kpad, p.k_chunks};
  const std::int64_t kpad = padded_k(p.shape.k / 2, p.pad);
  return {3, kpad, k_chunks(kpad, p.k_block)};
}

/// Bits, norms and the accurate rule's scratch per row: they live through the whole call.
template <class ExecSpace>
struct CrtScaleRegion {
  using V = Views<ExecSpace>;
  typename V::Exponents bits_a, bits_b, rho;
  typename V::Norms l2a, l1a, l2b, l1b;
  typename V::IntTiles partial;  // the accurate rule's per-row minima, per tile of 256 columns
  typename V::Rows summary;      // row_summary's partial maxima
  CoverageViews<ExecSpace> coverage_a, coverage_b;  // the coverage certificate (coverage.hpp)
  static CoverageViews<ExecSpace> carve_coverage(Carver& c, std::int64_t rows) {
    CoverageViews<ExecSpace> v;
    v.counts = typename V::RowCounts(c.take<std::uint32_t>(coverage_row_counts * rows),
                                     coverage_row_counts, rows);
    const std::int64_t teams = coverage_grid_teams(rows);
    v.partials = typename V::Rows(c.take<double>(teams * coverage_grid), teams, coverage_grid);
    v.grid = typename V::Norms(c.take<double>(coverage_grid), coverage_grid);
    v.lambda = typename V::Norms(c.take<double>(rows), rows);
    return v;
  }
  static CrtScaleRegion carve(Carver& c, const Shape& s) {
    CrtScaleRegion r;
    r.coverage_a = carve_coverage(c, s.m);
    r.coverage_b = carve_coverage(c, s.n);
    const std::int64_t summary_rows = summary_teams(s.m + s.n);
    r.summary = typename V::Rows(c.take<double>(summary_rows * summary_values), summary_rows,
                                 summary_values);
    const std::int64_t tiles = (s.n + crt_min_tile - 1) / crt_min_tile;
    r.partial = typename V::IntTiles(c.take<int>(tiles * s.m), tiles, s.m);
    r.bits_a = typename V::Exponents(c.take<int>(s.m), s.m);
    r.bits_b = typename V::Exponents(c.take<int>(s.n), s.n);
    r.rho = typename V::Exponents(c.take<int>(s.m), s.m);
    r.l2a = typename V::Norms(c.take<double>(s.m), s.m);
    r.l1a = typename V::Norms(c.take<double>(s.m), s.m);
    r.l2b = typename V::Norms(c.take<double>(s.n), s.n);
    r.l1b = typename V::Norms(c.take<double>(s.n), s.n);
    return r;
  }
};

/// The accurate rule's magnitudes and bound product (phase 1).
template <class ExecSpace>
struct CrtBoundRegion {
  using V = Views<ExecSpace>;
  typename V::Products bound;  // P = q(A) q(B), per K chunk
  typename V::Digits q_a, q_b;
  static CrtBoundRegion carve(Carver& c, const CallPlan& p) {
    CrtBoundRegion r;
    r.q_a = typename V::Digits(c.take<std::int8_t>(p.mpad * p.kpad), p.mpad, p.kpad);
    r.q_b = typename V::Digits(c.take<std::int8_t>(p.npad * p.kpad), p.npad, p.kpad);
    r.bound = typename V::Products(c.take<std::int32_t>(p.k_chunks * p.npad * p.mpad), p.k_chunks,
                                   p.npad, p.mpad);
    return r;
  }
};

/// The counted rule's sample (scaling.hpp, sampled_counted_ratio), at the start of the scratch:
/// it runs before anything else is carved.
template <class ExecSpace>
struct CountedSampleRegion {
  using V = Views<ExecSpace>;
  typename V::Digits codes;
  typename V::Rows stats;
  static CountedSampleRegion carve(Carver& c, std::int64_t K) {
    CountedSampleRegion r;
    const std::int64_t rows = 2 * counted_sample_rows;
    const std::int64_t row_bytes = (K + 3) / 4 * 4;  // whole 32-bit words (zero padding)
    r.codes = typename V::Digits(c.take<std::int8_t>(rows * row_bytes), rows, row_bytes);
    r.stats = typename V::Rows(c.take<double>(rows * 2), rows, 2);
    return r;
  }
};

/// Scheme II's operand plan: strided rows (`strided_*`: rows not K-contiguous) are read in
/// place (tile kernels), except by the estimate of an automatic count under the accurate rule:
/// a GPU copies them for it, in the estimate's scratch, once the estimate is sure to run
/// (ordinary data takes the fast rule, and Auto on wide-range data often stops at native first).
template <class ExecSpace>
OperandPlan crt_operand_plan(const CallPlan& plan, bool strided_a, bool strided_b) {
  const bool estimate_possible = plan.auto_moduli && plan.crt_scaling != CrtScaling::Fast;
  OperandPlan ops;
  ops.strided_a = strided_a;
  ops.strided_b = strided_b;
  ops.estimate_copy_a = copies_strided_rows<ExecSpace>() && strided_a && estimate_possible;
  ops.estimate_copy_b = copies_strided_rows<ExecSpace>() && strided_b && estimate_possible;
  ops.crt_norm_tiles = true;
  return ops;
}

/// The estimate's K-contiguous copies (phase 1, after the estimate's own scratch).
template <class ExecSpace>
struct EstimateCopyRegion {
  typename Views<ExecSpace>::Rows a, b;
  static EstimateCopyRegion carve(Carver& c, const Shape& s, const OperandPlan& plan) {
    EstimateCopyRegion r;
    using Rows = typename Views<ExecSpace>::Rows;
    if (plan.estimate_copy_a) r.a = Rows(c.take<double>(s.m * s.k), s.m, s.k);
    if (plan.estimate_copy_b) r.b = Rows(c.take<double>(s.n * s.k), s.n, s.k);
    return r;
  }
};

/// How scheme II's products are cut into passes of columns of C: `width` columns per pass
/// (padded), `count` passes, and `buffers` sets of pass scratch: 2 where consecutive passes
/// overlap (one pass's INT8 products run while the next one's residues and the previous one's
/// reconstruction run on a side instance), else 1.
struct CrtPasses {
  std::int64_t width = 0;
  std::int64_t count = 0;
  int buffers = 1;
};

/// Residues of op(A), and per buffer the residues of one pass's rows of op(B)^T and the INT32
/// products of its `width` columns of C (phase 2).
template <class ExecSpace>
struct CrtProductRegion {
  using V = Views<ExecSpace>;
  typename V::Digits residues_a;
  typename V::Digits residues_b[2];
  typename V::Products products[2];  // (modulus * chunks + chunk, column in pass, m)
  static CrtProductRegion carve(Carver& c, const CallPlan& p, int L, const CrtPasses& passes) {
    CrtProductRegion r;
    const CrtProducts g = crt_products(p);
    const std::int64_t w = passes.width, row = L * g.parts * g.kpad;
    r.residues_a = typename V::Digits(c.take<std::int8_t>(p.mpad * row), p.mpad, row);
    for (int b = 0; b < passes.buffers; ++b) {
      r.residues_b[b] = typename V::Digits(c.take<std::int8_t>(w * row), w, row);
      r.products[b] =
          typename V::Products(c.take<std::int32_t>(L * g.parts * g.k_chunks * w * p.mpad),
                               L * g.parts * g.k_chunks, w, p.mpad);
    }
    return r;
  }
};

/// Bytes in front of the phases: the row regions, then bits and norms.
template <class ExecSpace>
std::size_t crt_front_bytes(const CallPlan& p, const OperandPlan& ops) {
  Carver front(nullptr, row_regions_bytes<ExecSpace>(p.shape, ops));
  CrtScaleRegion<ExecSpace>::carve(front, p.shape);
  return front.used();
}

/// Columns of C per pass of scheme II with `buffers` sets of pass scratch: as many as fit in
/// the workspace limit (a multiple of the plan's padding), at least min(npad,
/// crt_min_block_columns) (crt_narrow_pass_columns for large M and K under the library's
/// limit), at most crt_narrow_pass_columns for large M and K, or what
/// Options::experimental.crt_pass_columns asks for; then evened out over the passes, so that the
/// last pass is not a sliver (for the narrow cap: over the nearest count of passes, where they
/// fit).
template <class ExecSpace>
CrtPasses crt_passes_with(const CallPlan& p, int L, const OperandPlan& ops, int buffers) {
  Carver without_passes(nullptr, crt_front_bytes<ExecSpace>(p, ops));
  CrtProductRegion<ExecSpace>::carve(without_passes, p, L, CrtPasses{0, 0, 0});
  const std::int64_t room = p.workspace_limit - static_cast<std::int64_t>(without_passes.used());
  const CrtProducts g = crt_products(p);
  const std::int64_t per_column = buffers * L * g.parts * (4 * g.k_chunks * p.mpad + g.kpad);
  const std::int64_t fits = room / per_column / p.pad * p.pad;
  const bool narrow = p.shape.m >= crt_narrow_pass_extent && p.shape.k >= crt_narrow_pass_extent;
  const std::int64_t asked = p.pass_columns > 0 ? p.pass_columns
                             : narrow           ? crt_narrow_pass_columns
                                                : p.npad;
  const std::int64_t fewest =
      narrow && p.library_limit ? crt_narrow_pass_columns : crt_min_block_columns;
  const std::int64_t least = std::min({p.npad, fewest, asked});
  const std::int64_t widest = std::min({p.npad, asked, std::max(least, fits)});
  if (widest == 0) return {};
  std::int64_t count = (p.npad + widest - 1) / widest;
  // Where the narrow cap, not the room, sets the width: the nearest count of such passes, ties
  // to the fewer, not the next count up, so that widths stay within (2/3, 3/2] of the cap
  // instead of falling to half of it.  At 20000 x 3000 x 12000 (3072 padded columns on CUDA)
  // one pass runs faster than two of 1536, its INT8 products at a higher rate (the benchmarks
  // diary in docs/history/, "pass widths, the residue changes measured"; a likely cause, not
  // measured: in 256 x 128 tiles on 132 SMs, 1536 columns of 20000 rows make 7.2 waves, run
  // as 8, and 3072 columns 14.4, run as 15).  Squares whose N is a multiple of 2048 keep their
  // passes.
  if (narrow && p.pass_columns == 0 && widest == crt_narrow_pass_columns) {
    const std::int64_t nearest = std::max<std::int64_t>(1, (p.npad + widest / 2 - 1) / widest);
    if (padded_rows((p.npad + nearest - 1) / nearest, p.pad) <= std::max(least, fits)) {
      count = nearest;
    }
  }
  return {padded_rows((p.npad + count - 1) / count, p.pad), count, buffers};
}

/// The passes of a call: overlapped (2 buffers) where the plan asks for overlap, the space
/// has a side instance, there are at least 2 passes and both sets fit the workspace limit;
/// else one buffer.
template <class ExecSpace>
CrtPasses crt_passes(const CallPlan& p, int L, const OperandPlan& ops) {
  if (p.overlap && SideInstance<ExecSpace>::available) {
    const CrtPasses overlapped = crt_passes_with<ExecSpace>(p, L, ops, 2);
    Carver bytes(nullptr, crt_front_bytes<ExecSpace>(p, ops));
    CrtProductRegion<ExecSpace>::carve(bytes, p, L, overlapped);
    const bool fits = static_cast<std::int64_t>(bytes.used()) <= p.workspace_limit;
    if (overlapped.count >= 2 && fits) return overlapped;
  }
  return crt_passes_with<ExecSpace>(p, L, ops, 1);
}

/// Columns of C per pass (crt_passes).
template <class ExecSpace>
std::int64_t crt_block_columns(const CallPlan& p, int L, const OperandPlan& ops) {
  return crt_passes<ExecSpace>(p, L, ops).width;
}

/// Whether a call of this plan may take a product of magnitudes, before its rule is chosen:
/// under the accurate rule, and under any rule with an automatic count (the counted fast
/// rule's window product).  The call reserves its scratch so, and Workspace sizes so.
inline bool crt_may_take_bound(const CallPlan& p) {
  return p.crt_scaling != CrtScaling::Fast || p.auto_moduli;
}

/// Bytes scheme II needs for L moduli, and for a product of magnitudes if `with_bound` (the
/// accurate rule's bound product, the counted fast rule's window product, the counted
/// sample), with the estimate for an automatic count if `with_estimate`.
template <class ExecSpace>
std::size_t crt_bytes(const CallPlan& p, int L, bool with_bound, bool with_estimate,
                      const OperandPlan& ops) {
  const std::size_t front = crt_front_bytes<ExecSpace>(p, ops);
  Carver phase2(nullptr, front);
  CrtProductRegion<ExecSpace>::carve(phase2, p, L, crt_passes<ExecSpace>(p, L, ops));
  std::size_t bytes = phase2.used();
  if (with_bound) {
    Carver phase1(nullptr, front);
    CrtBoundRegion<ExecSpace>::carve(phase1, p);
    if (with_estimate) {
      EstimateRegion<ExecSpace>::carve(phase1, p.shape, p.k_chunks);
      EstimateCopyRegion<ExecSpace>::carve(phase1, p.shape, ops);
    }
    bytes = std::max(bytes, phase1.used());
    // The counted fast rule's sample may be taken in phase-1 scratch after pass 1 (driver.hpp).
    Carver sample(nullptr, front);
    CountedSampleRegion<ExecSpace>::carve(sample, p.shape.k);
    bytes = std::max(bytes, sample.used());
  }
  return bytes;
}

}  // namespace Impl
}  // namespace ozaki
