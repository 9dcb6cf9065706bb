#pragma once
/// \file execution.hpp
/// Scheme II's products for a CrtPlan (planner.hpp): the residues of op(A), all moduli in one
/// pass; then per pass of columns of C the residues of those rows of op(B)^T, one INT8 GEMM per
/// modulus (and K chunk), and the CRT reconstruction straight into C.  The passes' shapes and
/// scratch (CrtPassLayout) follow from the plan alone.

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/pipeline.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/crt/karatsuba.hpp>
#include <ozaki/impl/crt/layout.hpp>
#include <ozaki/impl/crt/planner.hpp>
#include <ozaki/impl/crt/residues.hpp>
#include <ozaki/report.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace ozaki {
namespace Impl {

/// The passes of a plan and the phase-2 scratch they use (layout.hpp).
template <class ExecSpace>
struct CrtPassLayout {
  CrtPasses passes;
  CrtProductRegion<ExecSpace> region;
  CrtConstants constants;
  CrtProducts products;
  bool residue_tiles = false;  // the backend reduces the pass products (reduces_products)
  /// op(B)^T is op(A) itself with the same bits (OperandPlan::same_rows under a rule whose bits
  /// are a function of the row alone: not the accurate rule, whose bits come from the bound
  /// product's rows for op(A) and its columns for op(B)^T): each pass reads its rows of
  /// op(B)^T from op(A)'s residues, which are the same bytes.
  bool shared_residues = false;
};

template <class ExecSpace>
class CrtExecution {
  using V = Views<ExecSpace>;

 public:
  /// `scale`: the scale region the planner left the plan's bits in; `complex`: Karatsuba on
  /// complex rows, written to its target.
  CrtExecution(PipelineState<ExecSpace>& call, const CrtPlan& plan,
               const CrtScaleRegion<ExecSpace>& scale, const CrtComplexTarget<ExecSpace>* complex)
      : call_(call),
        plan_(plan),
        scale_(scale),
        complex_(complex),
        layout_(layout_of(call, plan, complex)) {}

  /// Residues of op(A), then per pass of columns of C: residues of those rows of op(B)^T only
  /// (a pass needs (M + width) L K bytes of residues instead of (M + N) L K, which buys wider
  /// passes under the workspace limit), one INT8 GEMM per modulus and K chunk, and the
  /// reconstruction into C.
  void run(double alpha, double beta, const typename V::Matrix& C) {
    residues_of(call_.space, call_.opA, rows_a(), layout_.region.residues_a,
                complex_ != nullptr && complex_->conjugate_x);
    call_.clock.lap(call_.report.seconds_split);
    if (layout_.passes.buffers == 2) {
      overlapped_passes(alpha, beta, C);
    } else {
      for (std::int64_t p = 0; p < layout_.passes.count; ++p) {
        residues_of_pass(call_.space, p);
        call_.clock.lap(call_.report.seconds_split);
        products_of_pass(p);
        call_.clock.lap(call_.report.seconds_int8);
        reconstruct_pass(call_.space, p, alpha, beta, C);
        call_.clock.lap(call_.report.seconds_recombine);
      }
    }
    fill_report();
  }

 private:
  static CrtPassLayout<ExecSpace> layout_of(PipelineState<ExecSpace>& call, const CrtPlan& plan,
                                            const CrtComplexTarget<ExecSpace>* complex) {
    CrtPassLayout<ExecSpace> layout;
    layout.passes = crt_passes<ExecSpace>(call.plan, plan.moduli, call.ops);
    Carver phase2(call.base, call.phase_offset);
    layout.region =
        CrtProductRegion<ExecSpace>::carve(phase2, call.plan, plan.moduli, layout.passes);
    layout.constants = crt_constants(plan.moduli);
    layout.products = crt_products(call.plan);
    // (A side whose conjugate is taken as its residues are made has residues of its own.)
    const bool conjugated = complex != nullptr && (complex->conjugate_x || complex->conjugate_y);
    layout.shared_residues = call.ops.same_rows && !plan.rule.accurate() && !conjugated;
    layout.residue_tiles = complex == nullptr && reduces_products(call, plan.moduli, layout);
    return layout;
  }

  /// Whether the backend reduces the pass products modulo the moduli itself
  /// (ResidueGemmBackend: 1 byte per entry and modulus for the reconstruction to read instead
  /// of 4): real data in one K chunk, where the widest pass's tiles fit in its INT32 products'
  /// bytes (they need L (M + 127) (width + 255) bytes against 4 L M width: always, for passes
  /// of at least 128 columns).  The same bits either way.
  static bool reduces_products(const PipelineState<ExecSpace>& call, int moduli,
                               const CrtPassLayout<ExecSpace>& layout) {
    if constexpr (ResidueGemmBackend<ExecSpace>::available) {
      if (layout.products.parts != 1 || layout.products.k_chunks != 1) return false;
      const ResidueTiles widest =
          ResidueTiles::of(call.plan.mpad, padded_columns(call.plan, layout.passes, 0));
      const std::int64_t room = static_cast<std::int64_t>(layout.region.products[0].span()) *
                                std::int64_t(sizeof(std::int32_t));
      if (moduli * widest.plane_bytes() > room) return false;
      std::string why_not;
      return ResidueGemmBackend<ExecSpace>::supported(
          call.space, pass_problem(call.plan, moduli, layout, 0), why_not);
    } else {
      (void)call, (void)moduli, (void)layout;
      return false;
    }
  }

  /// Event slots of the side instance's lease.
  enum Slot { start = 0, residues_done = 1, products_done = 3, reconstructed = 5 };

  /// The passes with their memory-bound work on a side instance: pass p's INT8 products (the
  /// caller's instance) run while pass p+1's residues and pass p-1's reconstruction run on the
  /// side.  Buffer p % 2 holds pass p's residues and products; events order each buffer's
  /// reuse: products(p) after residues(p) and after reconstruct(p-2), which last read its
  /// products; residues(p+1) after products(p-1), which last read its residues;
  /// reconstruct(p) after products(p).  Every kernel gets the same inputs as in the serial
  /// order, so C is the same bits.
  void overlapped_passes(double alpha, double beta, const typename V::Matrix& C) {
    if constexpr (SideInstance<ExecSpace>::available) {
      const std::int64_t count = layout_.passes.count;
      auto lane = SideInstance<ExecSpace>::lease(call_.space);
      const ExecSpace& main = call_.space;
      const ExecSpace side = lane.side();
      lane.record(start, main);  // the side sees everything enqueued so far (bits, exponents, C)
      lane.wait(side, start);
      residues_of_pass(side, 0);
      lane.record(residues_done + 0, side);
      for (std::int64_t p = 0; p < count; ++p) {
        const int b = static_cast<int>(p % 2), other = 1 - b;
        lane.wait(main, residues_done + b);
        if (p >= 2) lane.wait(main, reconstructed + b);
        products_of_pass(p);
        lane.record(products_done + b, main);
        if (p + 1 < count) {
          if (p >= 1) lane.wait(side, products_done + other);
          residues_of_pass(side, p + 1);
          lane.record(residues_done + other, side);
        }
        lane.wait(side, products_done + b);
        reconstruct_pass(side, p, alpha, beta, C);
        lane.record(reconstructed + b, side);
      }
      lane.wait(main, reconstructed + static_cast<int>((count - 1) % 2));
    } else {
      (void)alpha, (void)beta, (void)C;
    }
  }

  /// Residues of rows of op(A) or op(B)^T: one block per modulus, or Karatsuba's three (of the
  /// rows' conjugates where `conjugate`: CrtComplexTarget::conjugate_x, conjugate_y).
  void residues_of(const ExecSpace& on, const typename V::ConstMatrix& X,
                   const CrtRowScaling<ExecSpace>& scaling, const typename V::Digits& residues,
                   bool conjugate) {
    if (complex_ != nullptr) {
      crt_complex_residues(on, X, scaling, layout_.constants, residues, conjugate);
    } else {
      crt_residues(on, X, scaling, layout_.constants, residues);
    }
  }

  CrtRowScaling<ExecSpace> rows_a() const { return {call_.exponents.a, scale_.bits_a}; }
  CrtRowScaling<ExecSpace> rows_b() const { return {call_.exponents.b, scale_.bits_b}; }

  /// The rows of op(A) pass p multiplies, [first, end) of the padded rows: all of them, or
  /// for a triangular call (CallPlan::triangle) those that meet its triangle in the pass's
  /// columns [n0, n0 + width): from n0 (Lower) or up to n0 + width (Upper).  Whole padded
  /// blocks, as the passes' columns are.
  struct PassRows {
    std::int64_t first, end;
  };
  static PassRows rows_of_pass(const CallPlan& plan, const CrtPasses& passes, std::int64_t p) {
    const std::int64_t n0 = p * passes.width;
    if (plan.triangle == Triangle::Lower) return {std::min(n0, plan.mpad), plan.mpad};
    if (plan.triangle == Triangle::Upper) return {0, std::min(plan.mpad, n0 + passes.width)};
    return {0, plan.mpad};
  }

  /// Pass p's columns of C and its INT32 products (buffer p % buffers), which hold the rows
  /// of rows_of_pass.
  static CrtPassProducts<ExecSpace> pass(const CallPlan& plan,
                                         const CrtPassLayout<ExecSpace>& layout, std::int64_t p) {
    const std::int64_t n0 = p * layout.passes.width;
    const PassRows rows = rows_of_pass(plan, layout.passes, p);
    return {layout.region.products[p % layout.passes.buffers], layout.products.k_chunks, n0,
            std::min(layout.passes.width, plan.shape.n - n0),
            CrtPassEntries::of(plan.triangle, rows.first, rows.end)};
  }
  CrtPassProducts<ExecSpace> pass(std::int64_t p) const { return pass(call_.plan, layout_, p); }

  /// Pass p's rows of op(B)^T as stored residues: padded_columns x L kpad (op(A)'s rows from
  /// the pass's first column on, where they are the same: shared_residues).
  static typename V::Digits residues_b(const CallPlan& plan, int moduli,
                                       const CrtPassLayout<ExecSpace>& layout, std::int64_t p) {
    const std::int64_t row = moduli * layout.products.parts * layout.products.kpad;
    std::int8_t* first = layout.shared_residues
                             ? layout.region.residues_a.data() + p * layout.passes.width * row
                             : layout.region.residues_b[p % layout.passes.buffers].data();
    return typename V::Digits(first, padded_columns(plan, layout.passes, p), row);
  }

  static std::int64_t padded_columns(const CallPlan& plan, const CrtPasses& passes,
                                     std::int64_t p) {
    return std::min(passes.width, plan.npad - p * passes.width);
  }

  void residues_of_pass(const ExecSpace& on, std::int64_t p) {
    if (layout_.shared_residues) return;  // op(A)'s, made before the passes
    const CrtPassProducts<ExecSpace> columns = pass(p);
    const CrtRowScaling<ExecSpace> all = rows_b();
    const CrtRowScaling<ExecSpace> these{row_block(all.exponents, columns.n0, columns.width),
                                         row_block(all.bits, columns.n0, columns.width)};
    residues_of(on, row_block(call_.opBt, columns.n0, columns.width), these,
                residues_b(call_.plan, plan_.moduli, layout_, p),
                complex_ != nullptr && complex_->conjugate_y);
  }

  void reconstruct_pass(const ExecSpace& on, std::int64_t p, double alpha, double beta,
                        const typename V::Matrix& C) {
    ++call_.report.recombine_passes;
    if constexpr (ResidueGemmBackend<ExecSpace>::available) {
      if (layout_.residue_tiles) {
        crt_reconstruct_tiles(on, tiles_of_pass(p), layout_.constants, rows_a(), rows_b(), alpha,
                              beta, C);
        return;
      }
    }
    if (complex_ != nullptr) {
      crt_complex_reconstruct(on, pass(p), layout_.constants, rows_a(), rows_b(), *complex_);
    } else {
      crt_reconstruct(on, pass(p), layout_.constants, rows_a(), rows_b(), alpha, beta, C);
    }
  }

  /// One INT8 GEMM per modulus (three for Karatsuba), and K chunk, of op(A)'s residues and
  /// pass p's, on the caller's instance: the moduli of a chunk as one batch (residues of block
  /// l start l kpad into each row, its products l k_chunks width mpad into the pass's), which
  /// a backend that batches runs as one call.
  void products_of_pass(std::int64_t p) {
    const ProfilingRegion region("ozaki::crt::int8_products");
    const Int8GemmProblem g = pass_problem(call_.plan, plan_.moduli, layout_, p);
    call_.report.int8_operations += 2.0 * g.batch * g.rows_a * g.rows_b * g.length;
    if constexpr (ResidueGemmBackend<ExecSpace>::available) {
      if (layout_.residue_tiles) {
        ResidueGemmBackend<ExecSpace>::run(call_.space, g,
                                           reinterpret_cast<std::int8_t*>(pass(p).products.data()));
        gemms_ += static_cast<int>(g.batch);
        return;
      }
    }
    const std::int64_t width = pass(p).products.extent(1);
    gemms_ += int8_gemm_in_k_chunks(call_.space, g, call_.plan.k_block, width * call_.plan.mpad);
  }

  /// Pass p's INT8 products as one batched problem: one product per modulus (three for
  /// Karatsuba) over the whole K, residues of block l starting l kpad into each row, its
  /// products l k_chunks width mpad into the pass's (int8_gemm_in_k_chunks cuts K in chunks);
  /// the rows of rows_of_pass only, at their own place in the products.
  static Int8GemmProblem pass_problem(const CallPlan& plan, int moduli,
                                      const CrtPassLayout<ExecSpace>& layout, std::int64_t p) {
    const CrtPassProducts<ExecSpace> columns = pass(plan, layout, p);
    const CrtPassEntries& rows = columns.entries;
    const CrtProducts& products = layout.products;
    const std::int64_t blocks = moduli * products.parts;
    const std::int64_t width = columns.products.extent(1);
    Int8GemmProblem g;
    g.rows_a = rows.end_row - rows.first_row;
    g.rows_b = padded_columns(plan, layout.passes, p);
    g.length = products.kpad;
    g.lda = blocks * products.kpad;
    g.a = layout.region.residues_a.data() + rows.first_row * g.lda;
    g.b = residues_b(plan, moduli, layout, p).data();
    g.ldb = g.lda;
    g.c = columns.products.data() + rows.first_row;
    g.ldc = plan.mpad;
    g.batch = blocks;
    g.stride_a = g.stride_b = products.kpad;
    g.stride_c = products.k_chunks * width * plan.mpad;
    return g;
  }

  /// Pass p's products as residue tiles, in the bytes of its INT32 products (tile row 0 at
  /// the first of its rows).
  CrtPassTiles tiles_of_pass(std::int64_t p) const {
    const CrtPassProducts<ExecSpace> columns = pass(p);
    const CrtPassEntries& rows = columns.entries;
    return {reinterpret_cast<const std::int8_t*>(columns.products.data()),
            ResidueTiles::of(rows.end_row - rows.first_row,
                             padded_columns(call_.plan, layout_.passes, p)),
            columns.n0, columns.width, columns.entries};
  }

  void fill_report() {
    Report& r = call_.report;
    r.algorithm = Algorithm::Int8Crt;
    r.backend = Int8Gemm<ExecSpace>::name();
    r.moduli = plan_.moduli;
    r.crt_scaling = plan_.rule.scaling;
    r.crt_bits = plan_.fewest_bits;
    r.overlapped = layout_.passes.buffers == 2;
    r.residue_products = layout_.residue_tiles;
    r.shared_operand = call_.ops.same_rows;
    r.int8_gemms = gemms_;
    r.k_chunk = std::min(call_.plan.k_block, layout_.products.kpad);
    r.complex_products = complex_ != nullptr ? 3 : 0;
    r.workspace_bytes = crt_bytes<ExecSpace>(call_.plan, plan_.moduli, plan_.rule.took_bound(),
                                             call_.plan.auto_moduli, call_.ops);
    r.error_bound = plan_.error_bound;
  }

  PipelineState<ExecSpace>& call_;
  const CrtPlan plan_;
  const CrtScaleRegion<ExecSpace> scale_;
  const CrtComplexTarget<ExecSpace>* complex_;
  const CrtPassLayout<ExecSpace> layout_;
  int gemms_ = 0;  // INT8 GEMM calls made, for the Report
};

}  // namespace Impl
}  // namespace ozaki
