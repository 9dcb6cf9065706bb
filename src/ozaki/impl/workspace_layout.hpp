#pragma once
/// \file workspace_layout.hpp
/// How one call carves its scratch out of an ozaki::Workspace (memory formulas in
/// workspace.hpp and docs/design.md).  The same code sizes and carves, so the two cannot
/// disagree: carving from a null base only counts bytes.
///
/// Layout: [exponents of A | exponents of B | phase scratch].  The phase scratch holds first
/// the automatic-S estimate (magnitudes, norms, lower bounds, its INT8 products), then, reusing
/// the same bytes, the slices, the weights and the INT32 products.  Reuse is safe because all
/// kernels of a call run in order on one execution space instance.

#include <ozaki/impl/schedule.hpp>
#include <ozaki/impl/views.hpp>
#include <ozaki/options.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ozaki {
namespace Impl {

/// Workspace limit used when Options::workspace_limit is 0.
constexpr std::int64_t default_workspace_limit = std::int64_t(8) << 30;
/// Slice count assumed when sizing a workspace for an automatic S.
constexpr int assumed_auto_slices = 8;
/// Magnitude levels of the automatic-S estimate (slice_count.hpp: levels 0..2).
constexpr int magnitude_levels = 3;

/// Hands out aligned, typed pieces of a byte buffer, or only counts them (null base).
class Carver {
 public:
  static constexpr std::size_t alignment = 256;
  explicit Carver(unsigned char* base, std::size_t offset = 0) : base_(base), offset_(offset) {}
  template <class T>
  T* take(std::size_t count) {
    offset_ = (offset_ + alignment - 1) / alignment * alignment;
    T* p = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + offset_);
    offset_ += count * sizeof(T);
    return p;
  }
  std::size_t used() const { return offset_; }

 private:
  unsigned char* base_;
  std::size_t offset_;
};

/// Rows of slice storage and of INT32 products as stored: M (or N) rounded up to 16.  With K
/// padded likewise, every INT8 GEMM has m, n, k, lda, ldb, ldc multiples of 16 and 16-byte
/// aligned operands, the form cuBLAS's INT8 tensor-core kernels require (lda, ldb multiples
/// of 4, aligned pointers) and run fastest in (docs/design.md).  Padding rows hold zeros.
inline std::int64_t padded_rows(std::int64_t m) { return (m + 15) / 16 * 16; }

struct Shape3 {
  std::int64_t m = 0, n = 0, k = 0;
};

/// How a call reads each operand's rows: through a K-contiguous FP64 copy (GPU spaces, and
/// only where the INT8 estimate reads the rows: copy_to_k_contiguous), strided in place (rows
/// not K-contiguous: tile kernels, for_each_quad), or plainly; and which operands it splits
/// (a prepared operand is neither).
struct OperandPlan {
  bool copy_a = false, copy_b = false;
  bool strided_a = false, strided_b = false;
  bool split_a = true, split_b = true;
  /// Scheme II: K-contiguous copies made for its automatic count's estimate only, in phase-1
  /// scratch (its pass 1 reads strided rows in place; copy_* stay false).
  bool estimate_copy_a = false, estimate_copy_b = false;
};

/// Scale exponents: they live through the whole call.
template <class ExecSpace>
struct ExponentRegion {
  typename Views<ExecSpace>::Exponents a, b;
  static ExponentRegion carve(Carver& c, const Shape3& s) {
    ExponentRegion r;
    r.a = typename Views<ExecSpace>::Exponents(c.take<int>(s.m), s.m);
    r.b = typename Views<ExecSpace>::Exponents(c.take<int>(s.n), s.n);
    return r;
  }
};

/// K-contiguous copies of the operands whose rows are copied (plan.copy_*), and per-tile
/// partial results for rows read in tiles (copied or strided).  They live through the whole
/// call.
template <class ExecSpace>
struct RowCopyRegion {
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, typename Views<ExecSpace>::device_type>;
  Rows a, b;
  Rows max_a, max_b;    // per 32-column tile, each row's max |x| (later: its sum of squares)
  Rows sums_a, sums_b;  // strided rows: per tile, each row's scaled 1-norm (scheme II)
  static RowCopyRegion carve(Carver& c, const Shape3& s, const OperandPlan& plan) {
    RowCopyRegion r;
    const std::int64_t tiles = row_tiles(s.k);
    if (plan.copy_a) r.a = Rows(c.take<double>(s.m * s.k), s.m, s.k);
    if (plan.copy_a || plan.strided_a) r.max_a = Rows(c.take<double>(tiles * s.m), tiles, s.m);
    if (plan.strided_a) r.sums_a = Rows(c.take<double>(tiles * s.m), tiles, s.m);
    if (plan.copy_b) r.b = Rows(c.take<double>(s.n * s.k), s.n, s.k);
    if (plan.copy_b || plan.strided_b) r.max_b = Rows(c.take<double>(tiles * s.n), tiles, s.n);
    if (plan.strided_b) r.sums_b = Rows(c.take<double>(tiles * s.n), tiles, s.n);
    return r;
  }
};

/// Whether this space reads strided rows through a K-contiguous copy (GPU spaces: coalescing).
template <class ExecSpace>
constexpr bool copies_strided_rows() {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                     typename ExecSpace::memory_space>::accessible;
}

/// Phase 1: the automatic-S estimate.
template <class ExecSpace>
struct EstimateRegion {
  using V = Views<ExecSpace>;
  typename V::Norms l1a, l1b;
  Kokkos::View<double**, Kokkos::LayoutRight, typename V::device_type> lower;
  typename V::Digits magnitudes_a[magnitude_levels], magnitudes_b[magnitude_levels];
  typename V::Products products;
  static EstimateRegion carve(Carver& c, const Shape3& s, std::int64_t chunks) {
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

/// Phase 2: slices, weights and a batch of INT32 products.
template <class ExecSpace>
struct ProductRegion {
  using V = Views<ExecSpace>;
  typename V::Digits digits_a, digits_b;
  typename V::Weights weights;
  typename V::Products products;
  static ProductRegion carve(Carver& c, const Shape3& s, int S, std::int64_t G, std::int64_t batch,
                             const OperandPlan& plan) {
    ProductRegion r;
    const std::int64_t kpad = padded_k(s.k);
    const std::int64_t mpad = padded_rows(s.m), npad = padded_rows(s.n);
    if (plan.split_a) {
      r.digits_a = typename V::Digits(c.take<std::int8_t>(mpad * S * kpad), mpad, S * kpad);
    }
    if (plan.split_b) {
      r.digits_b = typename V::Digits(c.take<std::int8_t>(npad * S * kpad), npad, S * kpad);
    }
    r.weights = typename V::Weights(c.take<double>(G), G);
    r.products = typename V::Products(c.take<std::int32_t>(batch * npad * mpad), batch, npad, mpad);
    return r;
  }
};

// ---- Int8Crt (scheme II) ----------------------------------------------------------------------

/// Moduli assumed when sizing a workspace for an automatic moduli count.
constexpr int assumed_auto_moduli = 16;
/// Columns of the accurate rule's per-row minima handled by one thread (crt.hpp,
/// min_over_columns); its partial minima take ceil(N / crt_min_tile) ints per row.
constexpr std::int64_t crt_min_tile = 256;
/// Fewest columns of C per pass of scheme II's products, whatever the workspace limit: INT8
/// GEMMs much narrower than this lose tensor-core efficiency.
constexpr std::int64_t crt_min_block_columns = 1024;
/// Most columns of C per pass where op(A) has at least crt_narrow_pass_extent rows and K is
/// at least as long, whatever room the limit leaves.  Measured on the H200 (14 moduli,
/// docs/benchmarks.md): passes of 2048 columns beat one pass over all columns at 8192^3
/// (13.97 ms against 14.80) and at 16384^3 (100.3 against 103.4; 4096: 101.7, 1024: 108.5),
/// but lost at 4096^3 (2.58 against 2.41) and at 16384 x 16384 x 1024 (15.2 against 14.3), so
/// smaller M or K keep passes as wide as the limit allows.
constexpr std::int64_t crt_narrow_pass_columns = 2048;
constexpr std::int64_t crt_narrow_pass_extent = 8192;

/// Bits, norms and the accurate rule's scratch per row: they live through the whole call.
template <class ExecSpace>
struct CrtScaleRegion {
  using V = Views<ExecSpace>;
  typename V::Exponents bits_a, bits_b, rho;
  typename V::Norms l2a, l1a, l2b, l1b;
  using Partial = Kokkos::View<int**, Kokkos::LayoutRight, typename V::device_type>;
  Partial partial;  // the accurate rule's per-row minima, per tile of 256 columns
  static CrtScaleRegion carve(Carver& c, const Shape3& s) {
    CrtScaleRegion r;
    const std::int64_t tiles = (s.n + crt_min_tile - 1) / crt_min_tile;
    r.partial = Partial(c.take<int>(tiles * s.m), tiles, s.m);
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

/// The accurate rule's magnitudes and bound product (used before the residues, same bytes).
template <class ExecSpace>
struct CrtBoundRegion {
  using V = Views<ExecSpace>;
  typename V::Digits q_a, q_b;
  typename V::Products bound;
  static CrtBoundRegion carve(Carver& c, const Shape3& s, std::int64_t chunks) {
    CrtBoundRegion r;
    const std::int64_t kpad = padded_k(s.k), mpad = padded_rows(s.m), npad = padded_rows(s.n);
    r.q_a = typename V::Digits(c.take<std::int8_t>(mpad * kpad), mpad, kpad);
    r.q_b = typename V::Digits(c.take<std::int8_t>(npad * kpad), npad, kpad);
    r.bound = typename V::Products(c.take<std::int32_t>(chunks * npad * mpad), chunks, npad, mpad);
    return r;
  }
};

/// Scheme II's operand plan: strided rows read in place, and (GPU spaces) K-contiguous copies
/// for the automatic count's estimate where it may run (it reads rows K-contiguously).
template <class ExecSpace>
OperandPlan crt_operand_plan(bool strided_a, bool strided_b, bool estimate_possible) {
  OperandPlan plan;
  plan.strided_a = strided_a;
  plan.strided_b = strided_b;
  plan.estimate_copy_a = copies_strided_rows<ExecSpace>() && strided_a && estimate_possible;
  plan.estimate_copy_b = copies_strided_rows<ExecSpace>() && strided_b && estimate_possible;
  return plan;
}

/// The estimate's K-contiguous copies (phase 1, after the estimate's own scratch).
template <class ExecSpace>
struct EstimateCopyRegion {
  typename RowCopyRegion<ExecSpace>::Rows a, b;
  static EstimateCopyRegion carve(Carver& c, const Shape3& s, const OperandPlan& plan) {
    EstimateCopyRegion r;
    using Rows = typename RowCopyRegion<ExecSpace>::Rows;
    if (plan.estimate_copy_a) r.a = Rows(c.take<double>(s.m * s.k), s.m, s.k);
    if (plan.estimate_copy_b) r.b = Rows(c.take<double>(s.n * s.k), s.n, s.k);
    return r;
  }
};

/// Residues of op(A), and the residues of the rows of op(B)^T and the INT32 products of one
/// block of `width` columns of C.
template <class ExecSpace>
struct CrtProductRegion {
  using V = Views<ExecSpace>;
  typename V::Digits residues_a, residues_b;
  typename V::Products products;  // (modulus * chunks + chunk, column in block, m)
  static CrtProductRegion carve(Carver& c, const Shape3& s, int L, std::int64_t chunks,
                                std::int64_t width) {
    CrtProductRegion r;
    const std::int64_t kpad = padded_k(s.k), mpad = padded_rows(s.m);
    r.residues_a = typename V::Digits(c.take<std::int8_t>(mpad * L * kpad), mpad, L * kpad);
    r.residues_b = typename V::Digits(c.take<std::int8_t>(width * L * kpad), width, L * kpad);
    r.products = typename V::Products(c.take<std::int32_t>(L * chunks * width * mpad), L * chunks,
                                      width, mpad);
    return r;
  }
};

inline std::int64_t resolved_workspace_limit(const Options& o) {
  return o.workspace_limit == 0 ? default_workspace_limit : o.workspace_limit;
}

/// INT32 products held at once: all G if they fit the limit, else as many as do, at least 1.
template <class ExecSpace>
std::int64_t product_batch(const Shape3& s, int S, std::int64_t G, const Options& o,
                           const OperandPlan& plan) {
  Carver without_products(nullptr);
  ExponentRegion<ExecSpace>::carve(without_products, s);
  RowCopyRegion<ExecSpace>::carve(without_products, s, plan);
  ProductRegion<ExecSpace>::carve(without_products, s, S, G, 0, plan);
  const std::int64_t room =
      resolved_workspace_limit(o) - static_cast<std::int64_t>(without_products.used());
  const std::int64_t per_product =
      std::max<std::int64_t>(4 * padded_rows(s.n) * padded_rows(s.m), 1);
  return std::max<std::int64_t>(1, std::min(G, room / per_product));
}

/// Bytes of the phase-2 layout for S slices, and of the phase-1 layout when S is automatic.
template <class ExecSpace>
std::size_t int8_slices_bytes(const Shape3& s, int S, const Options& o, bool automatic_s,
                              const OperandPlan& plan) {
  const ProductSchedule schedule =
      make_schedule(S, o.pairs, std::min(o.pair_count, S * S), s.k, o.k_block);
  const std::int64_t G = static_cast<std::int64_t>(schedule.products.size());
  Carver phase2(nullptr);
  ExponentRegion<ExecSpace>::carve(phase2, s);
  RowCopyRegion<ExecSpace>::carve(phase2, s, plan);
  const std::size_t after_exponents = phase2.used();
  ProductRegion<ExecSpace>::carve(phase2, s, S, G, product_batch<ExecSpace>(s, S, G, o, plan),
                                  plan);
  std::size_t bytes = phase2.used();
  if (automatic_s) {
    Carver phase1(nullptr, after_exponents);
    EstimateRegion<ExecSpace>::carve(phase1, s, k_chunks(s.k, o.k_block));
    bytes = std::max(bytes, phase1.used());
  }
  return bytes;
}

/// Columns of C per pass of scheme II: as many as the products and the residues of their rows
/// of op(B)^T fit in the workspace limit (a multiple of 16), at least min(npad,
/// crt_min_block_columns), at most crt_narrow_pass_columns for large M and K; then evened out
/// over the passes, so that the last pass is not a sliver.
template <class ExecSpace>
std::int64_t crt_block_columns(const Shape3& s, int L, const Options& o, const OperandPlan& plan) {
  const std::int64_t chunks = k_chunks(s.k, o.k_block);
  Carver without_blocks(nullptr);
  ExponentRegion<ExecSpace>::carve(without_blocks, s);
  RowCopyRegion<ExecSpace>::carve(without_blocks, s, plan);
  CrtScaleRegion<ExecSpace>::carve(without_blocks, s);
  CrtProductRegion<ExecSpace>::carve(without_blocks, s, L, chunks, 0);
  const std::int64_t room =
      resolved_workspace_limit(o) - static_cast<std::int64_t>(without_blocks.used());
  const std::int64_t npad = padded_rows(s.n);
  const std::int64_t per_column = 4 * L * chunks * padded_rows(s.m) + L * padded_k(s.k);
  const std::int64_t fits = room / per_column / 16 * 16;
  const bool narrow = s.m >= crt_narrow_pass_extent && s.k >= crt_narrow_pass_extent;
  const std::int64_t widest = std::min({npad, narrow ? crt_narrow_pass_columns : npad,
                                        std::max(std::min(npad, crt_min_block_columns), fits)});
  if (widest == 0) return 0;
  const std::int64_t passes = (npad + widest - 1) / widest;
  return padded_rows((npad + passes - 1) / passes);
}

/// Bytes scheme II needs for L moduli (and the accurate rule's bound, if `accurate`, with the
/// estimate for an automatic count if `automatic`).
template <class ExecSpace>
std::size_t crt_bytes(const Shape3& s, int L, const Options& o, bool accurate, bool automatic,
                      const OperandPlan& plan) {
  const std::int64_t chunks = k_chunks(s.k, o.k_block);
  Carver c(nullptr);
  ExponentRegion<ExecSpace>::carve(c, s);
  RowCopyRegion<ExecSpace>::carve(c, s, plan);
  CrtScaleRegion<ExecSpace>::carve(c, s);
  const std::size_t phase_offset = c.used();
  CrtProductRegion<ExecSpace>::carve(c, s, L, chunks, crt_block_columns<ExecSpace>(s, L, o, plan));
  std::size_t bytes = c.used();
  if (accurate) {
    Carver bound(nullptr, phase_offset);
    CrtBoundRegion<ExecSpace>::carve(bound, s, chunks);
    if (automatic) {
      EstimateRegion<ExecSpace>::carve(bound, s, chunks);
      EstimateCopyRegion<ExecSpace>::carve(bound, s, plan);
    }
    bytes = std::max(bytes, bound.used());
  }
  return bytes;
}

}  // namespace Impl
}  // namespace ozaki
