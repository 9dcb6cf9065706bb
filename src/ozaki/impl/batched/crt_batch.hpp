#pragma once
/// \file crt_batch.hpp
/// Scheme II for a batch of real FP64 products of one shape planned together (docs/design.md
/// §13, "One plan for the batch").  A single call pays a fixed cost beside its products: the
/// wait after pass 1 (the host needs the summary of the data to choose the count) and the
/// launches that follow it while the GPU idles.  Across a batch that wait is made once:
///   pass 1, the row norms, the coverage certificate and the summary partials of every
///   product, one after another on the caller's instance;
///   one copy of all the partials and one wait;
///   on the host, per product, the count an eager Int8Crt call with an automatic count would
///   take under the fast rule (crt_fast_auto_moduli, grown until the componentwise bound
///   holds: crt_fast_bound_at); the batch takes the largest, which keeps every product's
///   promise (a larger count only adds bits);
///   per product, the fast rule's bits for that count, then its residues, INT8 products and
///   reconstruction (CrtExecution), in the phase-2 scratch the products share in turn.
/// Every product gives the bits of an eager Int8Crt call with that count and the fast rule.
/// Products whose data the fast rule cannot certify (NaN or Inf, wide exponent ranges,
/// operands scaled against each other) are left to the caller, which runs each as its own
/// call with every rule and fallback of gemm.

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/pipeline.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/cost_model.hpp>
#include <ozaki/impl/crt/captured.hpp>
#include <ozaki/impl/crt/execution.hpp>
#include <ozaki/impl/dispatch.hpp>
#include <ozaki/impl/gemm_parts.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace ozaki {
namespace Impl {

/// The options a batch's products run under: Int8Crt, the fast rule, an automatic count.
inline Options crt_batch_options(const Options& o) {
  Options b = o;
  b.algorithm = Algorithm::Int8Crt;
  b.crt_scaling = CrtScaling::Fast;
  b.moduli.reset();
  return b;
}

/// The count the batch gives a product with summary maxima `v` (summary_maxima): the first
/// count from the fast model's (crt_fast_auto_moduli) whose componentwise bound under the fast
/// rule is within the promise, as an eager call with an automatic count grows it; 0 where the
/// eager call would not take the fast rule (NaN or Inf, peaks beyond the fast classes, the
/// coverage certificate past its gate: crt_fast_bound_at is +Inf at every count) or no count
/// up to max_moduli is certified.
inline int crt_batch_count(std::int64_t K, double promise, double u, const double* v) {
  const RowSummary s = row_summary_of(v);
  for (int L = crt_fast_auto_moduli(K, s.a.peak, s.b.peak, u); L <= max_moduli; ++L) {
    if (crt_fast_bound_at(crt_capture_constants(L, K, promise, u), v) <= promise) return L;
  }
  return 0;
}

/// The batch's front scratch (CrtBatch::launch_summaries): each product's exponents and scale
/// region, `item_bytes` apart, then one set of tile partials and every product's summary
/// partials.
template <class ExecSpace>
struct CrtBatchFront {
  std::size_t item_bytes = 0, bytes = 0;
  static CrtBatchFront of(const Shape& s, std::int64_t items, const OperandPlan& ops) {
    Carver per_item(nullptr);
    ExponentRegion<ExecSpace>::carve(per_item, s);
    CrtScaleRegion<ExecSpace>::carve(per_item, s);
    CrtBatchFront f;
    f.item_bytes =
        (per_item.used() + Carver::alignment - 1) / Carver::alignment * Carver::alignment;
    Carver shared(nullptr, items * f.item_bytes);
    RowCopyRegion<ExecSpace>::carve(shared, s, ops);
    shared.take<double>(items * summary_teams(s.m + s.n) * summary_values);
    f.bytes = shared.used();
    return f;
  }
};

/// Front bytes of a batch of `items` real products of C's shape `s` (either orientation of
/// its rows along K: rows_along_k), for Workspace reservations (reserve_batched).
template <class ExecSpace>
std::size_t crt_batch_front_bytes(const Shape& s, std::int64_t items) {
  OperandPlan ops;
  ops.crt_norm_tiles = true;
  return std::max(CrtBatchFront<ExecSpace>::of(s, items, ops).bytes,
                  CrtBatchFront<ExecSpace>::of(Shape{s.n, s.m, s.k}, items, ops).bytes);
}

/// Auto's choice for a batch of `items` real products of shape `s` planned as one: whether
/// scheme II, the scheme Auto starts from here (auto_scheme), beats native GEMM with the
/// fixed cost paid once (crt_batch_cost at the count of uniformly distributed data,
/// crt_first_guess), on a space that runs INT8 GEMMs.
template <class ExecSpace>
bool crt_batch_auto_pays(const ExecSpace& space, const Shape& s, std::int64_t items,
                         const Options& o) {
  std::string why;
  if (!Int8Gemm<ExecSpace>::supported(space, why)) return false;
  if (auto_scheme(make_plan(s, o), false) != Algorithm::Int8Crt) return false;
  const CallPlan plan = make_plan(s, crt_batch_options(o));
  const int guess = crt_first_guess(s.k, plan.unit_roundoff);
  return !native_is_faster(crt_batch_cost(device_rates(space), plan, guess, items));
}

/// One product of the batch: its rows along K, its pipeline state and scale region (carved
/// from the batch's front scratch), its Report and its summary maxima.
template <class ExecSpace>
struct CrtBatchItem {
  RowsAlongK<ExecSpace> rows;
  Report report;
  std::unique_ptr<PipelineState<ExecSpace>> state;
  CrtScaleRegion<ExecSpace> scale;
  std::array<double, summary_values> maxima{};
  int count = 0;  // crt_batch_count; 0: left to the caller
};

/// The batch of one call (the file comment).
template <class ExecSpace>
class CrtBatch {
  using V = Views<ExecSpace>;

 public:
  /// The products' rows along K and the plan they share, or nothing (`ok` false) where the
  /// batch does not apply: see applies().
  template <class List>
  CrtBatch(const ExecSpace& space, const List& list, const Options& options,
           PartsScratch<ExecSpace>& scratch)
      : space_(space), options_(crt_batch_options(options)), asked_(options), scratch_(scratch) {
    using Item = typename std::decay<decltype(list.items[0])>::type;
    if constexpr (std::is_same<typename Item::Scalar, double>::value &&
                  std::is_same<typename Item::Operand, double>::value) {
      ok_ = applies(list, options) && prepare(list);
    }
  }

  /// Whether the batch runs here; then run() does it.
  bool ok() const { return ok_; }

  /// The batch: `sum` gets the Reports of the products it ran; `rest` the indices of those
  /// the caller runs one by one.  Nothing is written to a C the caller then runs.
  void run(ReportSum& sum, std::vector<std::size_t>& rest) {
    const auto turn = instance_turn(space_);
    allocations_before_ = allocations();
    if (!launch_summaries()) {
      leave_all(rest);
      return;
    }
    const int L = choose_count();
    if (L == 0 || !batch_pays(L) || !reserve_phase(L)) {
      leave_all(rest);
      return;
    }
    int batched = 0;
    for (std::size_t i = 0; i < items_.size(); ++i) {
      if (items_[i].count == 0) {
        rest.push_back(i);
        continue;
      }
      if (batched == 0) items_[i].state->decided();  // the batch's one decision
      execute(items_[i], L);
      ++batched;
    }
    const bool allocated = allocations() != allocations_before_;
    for (std::size_t i = 0; i < items_.size(); ++i) {
      if (items_[i].count == 0) continue;
      items_[i].report.scratch_allocated = allocated;
      sum.add(items_[i].report, flops_);
    }
    batched_ = batched;
  }

  /// The products the last run() ran as one batch.
  int batched() const { return batched_; }

 private:
  /// From the arguments alone (real FP64 products: the constructor): at least 2 products of
  /// one shape, transposes and scalars, none empty, alpha nonzero; Auto or Int8Crt with an
  /// automatic count under the fast or automatic rule; a space that runs INT8 GEMMs and is not
  /// being captured into a graph (a captured call cannot wait: crt/captured.hpp); for Auto,
  /// crt_batch_auto_pays.
  template <class List>
  bool applies(const List& list, const Options& o) const {
    const auto& items = list.items;
    if (items.size() < 2) return false;
    if (o.algorithm != Algorithm::Auto && o.algorithm != Algorithm::Int8Crt) return false;
    if (o.moduli || o.slices || o.crt_scaling == CrtScaling::Accurate) return false;
    const auto& first = items[0];
    for (const auto& p : items) {
      if (p.op_a != first.op_a || p.op_b != first.op_b || !(p.alpha == first.alpha) ||
          !(p.beta == first.beta) || p.C.extent(0) != first.C.extent(0) ||
          p.C.extent(1) != first.C.extent(1) || p.A.extent(0) != first.A.extent(0) ||
          p.A.extent(1) != first.A.extent(1)) {
        return false;
      }
    }
    const std::int64_t k =
        static_cast<std::int64_t>(transposed_if(first.A, first.op_a.transpose).extent(1));
    if (first.C.size() == 0 || k == 0 || first.alpha == 0) return false;
    std::string why;
    if (captured(space_) || !Int8Gemm<ExecSpace>::supported(space_, why) ||
        Int8Gemm<ExecSpace>::torn_down(why)) {
      return false;
    }
    if (o.algorithm != Algorithm::Auto) return true;
    const Shape shape{static_cast<std::int64_t>(first.C.extent(0)),
                      static_cast<std::int64_t>(first.C.extent(1)), k};
    return crt_batch_auto_pays(space_, shape, static_cast<std::int64_t>(items.size()), o);
  }

  /// Every product's rows along K (one shape and layout for all), the shared plan and operand
  /// plan.
  template <class List>
  bool prepare(const List& list) {
    for (const auto& p : list.items) {
      const GemmCall<ExecSpace> call = checked_call<ExecSpace>(
          p.op_a.blas_char(), p.op_b.blas_char(), p.A, p.B, p.C, options_, nullptr, nullptr);
      CrtBatchItem<ExecSpace> item;
      item.rows = rows_along_k(call);
      if (!items_.empty()) {
        const RowsAlongK<ExecSpace>& r0 = items_[0].rows;
        if (item.rows.shape.m != r0.shape.m || item.rows.shape.n != r0.shape.n ||
            item.rows.strided_a != r0.strided_a || item.rows.strided_b != r0.strided_b) {
          return false;
        }
      }
      items_.push_back(std::move(item));
    }
    alpha_ = list.items[0].alpha;
    beta_ = list.items[0].beta;
    const RowsAlongK<ExecSpace>& r0 = items_[0].rows;
    plan_ = make_plan(r0.shape, options_, 0, Int8Gemm<ExecSpace>::padding);
    ops_ = crt_operand_plan<ExecSpace>(plan_, r0.strided_a, r0.strided_b);
    flops_ = 2.0 * static_cast<double>(r0.shape.m) * static_cast<double>(r0.shape.n) *
             static_cast<double>(r0.shape.k);
    return true;
  }

  /// Front scratch in the call's own buffer (PartsScratch::blocks): each product's exponents
  /// and scale region for the whole call, one set of tile partials (pass 1's, which the norms
  /// and the certificate consume before the next product's pass 1 writes them), and the
  /// summary partials of all products, contiguous for one copy.  Then pass 1 and the summary
  /// of every product, and the one wait.  False where the scratch cannot be had (nothing ran).
  bool launch_summaries() {
    const Shape& s = plan_.shape;
    const std::int64_t teams = summary_teams(s.m + s.n);
    const std::int64_t count = static_cast<std::int64_t>(items_.size());
    const CrtBatchFront<ExecSpace> layout = CrtBatchFront<ExecSpace>::of(s, count, ops_);
    const std::size_t item_bytes = layout.item_bytes;
    unsigned char* front = nullptr;
    try {
      front = scratch_.blocks.reserve(layout.bytes);
    } catch (const ScratchUnavailable&) {
      return false;
    }
    Carver tail(front, count * item_bytes);
    const RowCopyRegion<ExecSpace> copies = RowCopyRegion<ExecSpace>::carve(tail, s, ops_);
    double* partials = tail.take<double>(count * teams * summary_values);
    const typename V::Rows all(partials, count * teams, summary_values);
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < count; ++i) {
      CrtBatchItem<ExecSpace>& item = items_[i];
      OperandPlan ops = ops_;
      ops.same_rows = same_matrix(item.rows.a, item.rows.b);
      item.state = std::make_unique<PipelineState<ExecSpace>>(
          space_, plan_, item.rows.a, item.rows.b, ops, scratch_.buffer, item.report, start);
      PipelineState<ExecSpace>& state = *item.state;
      Carver own(front, i * item_bytes);
      state.exponents = ExponentRegion<ExecSpace>::carve(own, s);
      item.scale = CrtScaleRegion<ExecSpace>::carve(own, s);
      state.copies = copies;
      share_same_rows(state, item.scale);
      launch_row_scaling(space_, state, item.scale);
      const typename V::Rows mine(partials + i * teams * summary_values, teams, summary_values);
      launch_row_summary(space_, s.k,
                         SummaryRows<ExecSpace>{state.exponents.a, item.scale.l2a, item.scale.l1a,
                                                item.scale.coverage_a.lambda},
                         SummaryRows<ExecSpace>{state.exponents.b, item.scale.l2b, item.scale.l1b,
                                                item.scale.coverage_b.lambda},
                         mine);
    }
    const auto host = Kokkos::create_mirror_view(all);
    Kokkos::deep_copy(space_, host, all);
    space_.fence();
    for (std::int64_t i = 0; i < count; ++i) {
      summary_maxima(host.data() + i * teams * summary_values, static_cast<int>(teams),
                     items_[i].maxima.data());
    }
    return true;
  }

  /// Each product's count (crt_batch_count) and the batch's: the largest, 0 where none is
  /// certified.
  int choose_count() {
    int L = 0;
    for (CrtBatchItem<ExecSpace>& item : items_) {
      item.count =
          crt_batch_count(plan_.shape.k, plan_.promise, plan_.unit_roundoff, item.maxima.data());
      L = std::max(L, item.count);
    }
    return L;
  }

  /// Auto: whether the batch at count L still beats native GEMM (crt_batch_cost over the
  /// products it certified).
  bool batch_pays(int L) const {
    if (asked_.algorithm != Algorithm::Auto) return true;
    const auto certified = std::count_if(items_.begin(), items_.end(),
                                         [](const CrtBatchItem<ExecSpace>& i) { return i.count; });
    return !native_is_faster(crt_batch_cost(device_rates(space_), plan_, L, certified));
  }

  /// Phase-2 scratch for L moduli (residues and products of one product at a time), in the
  /// buffer the products share in turn.
  bool reserve_phase(int L) {
    try {
      phase_ = scratch_.buffer.reserve(crt_bytes<ExecSpace>(plan_, L, false, false, ops_));
    } catch (const ScratchUnavailable&) {
      return false;
    }
    return true;
  }

  /// One product: the fast rule's bits for L moduli and its componentwise bound (L keeps it
  /// within the promise: its own count is at most L), then the residues, INT8 products and
  /// reconstruction into its C.
  void execute(CrtBatchItem<ExecSpace>& item, int L) {
    const std::int64_t K = plan_.shape.k;
    const CrtCaptureConstants c = crt_capture_constants(L, K, plan_.promise, plan_.unit_roundoff);
    set_fast_bits(space_, item.scale.l2a, c.target, item.scale.bits_a);
    set_fast_bits(space_, item.scale.l2b, c.target, item.scale.bits_b);
    const int fewest = crt_fast_fewest_bits(c, item.maxima.data());
    check_crt_bits(fewest, L, K);
    const CrtPlan plan{CrtRule{CrtScaling::Fast, false, false}, L, fewest,
                       crt_fast_bound_at(c, item.maxima.data())};
    PipelineState<ExecSpace>& state = *item.state;
    state.base = phase_;
    state.phase_offset = 0;
    CrtExecution<ExecSpace>(state, plan, item.scale, nullptr).run(alpha_, beta_, item.rows.out);
    Report& r = item.report;
    r.options = options_;
    r.options.moduli = L;
    r.reason = "one of " + std::to_string(items_.size()) +
               " products planned as one batch: one wait for all their scaling, and the largest "
               "of their automatic counts under the fast rule (" +
               std::to_string(item.count) + " for this product)";
  }

  std::int64_t allocations() const {
    return scratch_.blocks.allocations() + scratch_.buffer.allocations();
  }

  void leave_all(std::vector<std::size_t>& rest) const {
    for (std::size_t i = 0; i < items_.size(); ++i) rest.push_back(i);
  }

  ExecSpace space_;
  Options options_, asked_;
  PartsScratch<ExecSpace>& scratch_;
  bool ok_ = false;
  std::vector<CrtBatchItem<ExecSpace>> items_;
  CallPlan plan_;
  OperandPlan ops_;
  double alpha_ = 0, beta_ = 0, flops_ = 0;
  unsigned char* phase_ = nullptr;
  int batched_ = 0;
  std::int64_t allocations_before_ = 0;
};

}  // namespace Impl
}  // namespace ozaki
