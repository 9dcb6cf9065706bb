#pragma once
/// \file layout.hpp
/// Scheme I's scratch (memory formulas in docs/design.md §6): after the exponents and row
/// copies of common/scratch.hpp, phase 1 holds the automatic-S estimate (estimate.hpp), and
/// phase 2, in the same bytes, the slices, the weights and a batch of INT32 products.

#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/slices/estimate.hpp>
#include <ozaki/impl/slices/schedule.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ozaki {
namespace Impl {

/// Scheme I's operand plan for the operands it splits (`split_*`: not prepared).  Strided rows
/// (`strided_*`: not K-contiguous) are read in place (tile kernels), except where the
/// automatic-S estimate reads them too: a GPU then copies them once (copy_to_k_contiguous).
template <class ExecSpace>
OperandPlan slices_operand_plan(const CallPlan& plan, bool split_a, bool split_b, bool strided_a,
                                bool strided_b) {
  OperandPlan ops;
  ops.split_a = split_a;
  ops.split_b = split_b;
  constexpr bool copies = copies_strided_rows<ExecSpace>();
  ops.copy_a = copies && split_a && strided_a && plan.auto_slices;
  ops.copy_b = copies && split_b && strided_b && plan.auto_slices;
  ops.strided_a = split_a && strided_a && !ops.copy_a;
  ops.strided_b = split_b && strided_b && !ops.copy_b;
  return ops;
}

/// Phase 2: slices, weights and a batch of INT32 products.
template <class ExecSpace>
struct ProductRegion {
  using V = Views<ExecSpace>;
  typename V::Digits digits_a, digits_b;
  typename V::Weights weights;
  typename V::Products products;
  static ProductRegion carve(Carver& c, const CallPlan& p, int S, std::int64_t G,
                             std::int64_t batch, const OperandPlan& ops) {
    ProductRegion r;
    if (ops.split_a) {
      r.digits_a = typename V::Digits(c.take<std::int8_t>(p.mpad * S * p.kpad), p.mpad, S * p.kpad);
    }
    if (ops.split_b) {
      r.digits_b = typename V::Digits(c.take<std::int8_t>(p.npad * S * p.kpad), p.npad, S * p.kpad);
    }
    r.weights = typename V::Weights(c.take<double>(G), G);
    r.products =
        typename V::Products(c.take<std::int32_t>(batch * p.npad * p.mpad), batch, p.npad, p.mpad);
    return r;
  }
};

/// INT32 products held at once: all G if they fit the limit, else as many as do, at least 1.
/// The batch count decides how many FP64 passes accumulate into C, so it changes the bits: it
/// is computed from the plan alone, with the largest operand layout any space or call could
/// use (both operands split and copied), never from this space's own layout (a GPU copies
/// strided operands for an automatic S, a host does not): the same options then give the same
/// bits on every backend (docs/design.md §7).
template <class ExecSpace>
std::int64_t product_batch(const CallPlan& p, int S, std::int64_t G, const OperandPlan&) {
  OperandPlan largest;
  largest.split_a = largest.split_b = true;
  largest.copy_a = largest.copy_b = true;
  largest.strided_a = largest.strided_b = true;
  Carver without_products(nullptr, row_regions_bytes<ExecSpace>(p.shape, largest));
  ProductRegion<ExecSpace>::carve(without_products, p, S, G, 0, largest);
  const std::int64_t room = p.workspace_limit - static_cast<std::int64_t>(without_products.used());
  const std::int64_t per_product = std::max<std::int64_t>(4 * p.npad * p.mpad, 1);
  return std::max<std::int64_t>(1, std::min(G, room / per_product));
}

/// Bytes of the phase-2 layout for S slices, and of the phase-1 layout when S is estimated.
template <class ExecSpace>
std::size_t int8_slices_bytes(const CallPlan& p, int S, bool with_estimate,
                              const OperandPlan& ops) {
  const ProductSchedule schedule =
      make_schedule(S, p.pairs, p.pair_count_for(S), p.shape.k, p.k_block);
  const std::int64_t G = static_cast<std::int64_t>(schedule.products.size());
  const std::size_t front = row_regions_bytes<ExecSpace>(p.shape, ops);
  Carver phase2(nullptr, front);
  ProductRegion<ExecSpace>::carve(phase2, p, S, G, product_batch<ExecSpace>(p, S, G, ops), ops);
  std::size_t bytes = phase2.used();
  if (with_estimate) {
    Carver phase1(nullptr, front);
    EstimateRegion<ExecSpace>::carve(phase1, p.shape, p.k_chunks);
    bytes = std::max(bytes, phase1.used());
  }
  return bytes;
}

}  // namespace Impl
}  // namespace ozaki
