#pragma once
/// \file driver.hpp
/// Ozaki scheme I (Algorithm::Int8Slices) on op(A) (M x K) and op(B)^T (N x K): plan, then
/// execute, as scheme II (crt/driver.hpp).
///
///   SlicesPlanner     pass 1 (scale exponents; NaN/Inf -> native FP64); an automatic S from
///                     an INT8 estimate of the error (estimate.hpp), certified against native
///                     FP64's componentwise bound; Auto may stop here for native FP64; scratch
///                     for S (grown once, pass 1 redone if it grew).  Returns a SlicesPlan: S,
///                     the products' schedule (schedule.hpp), the bound.
///   SlicesExecution   all S slices of both operands in one pass each (split.hpp); one INT8
///                     GEMM per diagonal i+j (and K chunk) of the selected pairs, recombined
///                     into C in FP64 per batch (recombine.hpp).
///
/// All scratch comes from one ScratchBuffer (layout.hpp); nothing is allocated otherwise.

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/pipeline.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/cost_model.hpp>
#include <ozaki/impl/slices/accuracy.hpp>
#include <ozaki/impl/slices/estimate.hpp>
#include <ozaki/impl/slices/layout.hpp>
#include <ozaki/impl/slices/recombine.hpp>
#include <ozaki/impl/slices/schedule.hpp>
#include <ozaki/impl/slices/split.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace ozaki {
namespace Impl {

/// Scheme I's decisions for one call: the slice count, the products' schedule and the
/// componentwise bound of that count (0 for an explicit count: none is computed).
struct SlicesPlan {
  int slices = 0;
  ProductSchedule schedule;
  double error_bound = 0;
};

using SlicesPlanned = Planned<SlicesPlan>;

/// The decisions, from the data: pass 1 (NaN/Inf), an automatic S from the INT8 estimate of
/// the error, grown until its componentwise bound is within native FP64's (docs/design.md
/// §3a), and Auto's cost test.  Leaves the exponents, and the copies the split reads, in the
/// scratch for SlicesExecution.
template <class ExecSpace>
class SlicesPlanner {
  using V = Views<ExecSpace>;

 public:
  explicit SlicesPlanner(PipelineState<ExecSpace>& call) : call_(call) {}

  SlicesPlanned plan() {
    const CallPlan& plan = call_.plan;
    call_.base = call_.scratch.reserve(
        int8_slices_bytes<ExecSpace>(plan, plan.slices, plan.auto_slices, call_.ops));
    if (!scale_rows()) return {Int8Outcome::NonFinite, {}};
    call_.clock.lap(call_.report.seconds_split);
    int slices = plan.slices;
    double bound = 0;
    if (plan.auto_slices) {
      const SlicesPlanned chosen = automatic_slices();
      call_.decided();
      if (chosen.outcome != Int8Outcome::Done) return chosen;
      slices = chosen.plan.slices;
      bound = chosen.plan.error_bound;
    }
    check_pair_count(plan, slices);
    make_room(slices);
    return {Int8Outcome::Done, SlicesPlan{slices, schedule_of(slices), bound}};
  }

  /// The operands as the split reads them: their K-contiguous copies where made.
  const typename V::ConstMatrix& rows_a() const { return rows_a_; }
  const typename V::ConstMatrix& rows_b() const { return rows_b_; }

 private:
  ProductSchedule schedule_of(int slices) const {
    const CallPlan& plan = call_.plan;
    return make_schedule(slices, plan.pairs, plan.pair_count, plan.shape.k, plan.k_block);
  }

  /// Carves exponents and row copies, then pass 1 of every operand split here.  The operands
  /// as the row kernels read them (rows_a_, rows_b_) are their K-contiguous copies where made.
  /// False on NaN/Inf.
  bool scale_rows() {
    rows_a_ = call_.opA;
    rows_b_ = call_.opBt;
    call_.phase_offset = call_.carve_row_regions().used();
    const bool a_bad =
        call_.ops.split_a &&
        operand_pass1(call_.space, call_.ops.copy_a, call_.ops.strided_a, call_.opA, call_.copies.a,
                      call_.copies.max_a, call_.exponents.a, rows_a_);
    const bool b_bad =
        call_.ops.split_b &&
        operand_pass1(call_.space, call_.ops.copy_b, call_.ops.strided_b, call_.opBt,
                      call_.copies.b, call_.copies.max_b, call_.exponents.b, rows_b_);
    return !(a_bad || b_bad);
  }

  /// S for FP64-equivalent accuracy from the INT8 estimate, certified; the outcome that ends
  /// the call where no S is certified (Uncertified) or Auto then prefers native FP64 GEMM
  /// (NativeFaster; the Report says why).
  SlicesPlanned automatic_slices() {
    const CallPlan& plan = call_.plan;
    const Shape& s = plan.shape;
    Carver phase1(call_.base, call_.phase_offset);
    const EstimateRegion<ExecSpace> estimate =
        EstimateRegion<ExecSpace>::carve(phase1, s, plan.k_chunks);
    const SliceCountChoice choice =
        choose_slice_count(call_.space, rows_a_, rows_b_, call_.exponents.a, call_.exponents.b,
                           plan.k_block, estimate);
    const int modelled =
        equivalent_slices(choice.ratios, s.k, plan.pairs, plan.pair_count, plan.unit_roundoff);
    call_.report.estimate_int8_gemms = choice.int8_gemms;
    call_.report.int8_operations += 2.0 * plan.mpad * plan.npad * plan.kpad * choice.int8_gemms /
                                    static_cast<double>(plan.k_chunks);
    call_.report.modeled_error =
        modeled_error(choice.ratios, s.k, modelled, plan.pairs, plan.pair_count);
    const SlicesPlan certified = certify(choice.ratios, modelled);
    call_.report.error_bound = certified.error_bound;
    if (certified.error_bound > plan.promise) return {Int8Outcome::Uncertified, {}};
    call_.clock.lap(call_.report.seconds_estimate);
    if (plan.requested != Algorithm::Auto) return {Int8Outcome::Done, certified};
    const int S = certified.slices;
    const int products = slices_products(S, plan.pairs, plan.pair_count);
    const double cost = slices_relative_cost(device_rates(call_.space), products);
    if (!native_is_faster(cost)) return {Int8Outcome::Done, certified};
    call_.report.slices = S;
    call_.report.reason = native_faster_reason(
        "S = " + std::to_string(S) + " needs " + std::to_string(products) + " INT8 products", cost);
    return {Int8Outcome::NativeFaster, {}};
  }

  /// The componentwise promise (docs/design.md §3a): the first S from the model's up to
  /// max_slices whose rigorous bound of the estimate's ratios is at most native FP64's
  /// gamma_(K+2) (max_slices' bound, above the promise, where none is: some (|A||B|)_mn below
  /// the estimate's resolution, or exponent ranges beyond 8 max_slices bits), with the
  /// Report's reason for either.
  SlicesPlan certify(const ErrorRatios& ratios, int modelled) {
    const CallPlan& plan = call_.plan;
    const std::int64_t K = plan.shape.k;
    const auto bound_at = [&](int S) {
      return slices_componentwise_bound(ratios, K, S, plan.pairs, plan.pair_count,
                                        static_cast<int>(schedule_of(S).products.size()));
    };
    int S = modelled;
    double bound = bound_at(S);
    while (bound > plan.promise && S < max_slices) bound = bound_at(++S);
    if (bound > plan.promise) {
      call_.report.reason =
          !(ratios.inverse < HUGE_VAL)
              ? "auto slices: some (|A||B|)_mn lies below the resolution of the int8 estimate, "
                "so no slice count can bound its error: native FP64 GEMM"
              : "auto slices: no S up to " + std::to_string(max_slices) +
                    " keeps the componentwise error bound within native GEMM's gamma_K on "
                    "this data (exponent ranges beyond its bits): native FP64 GEMM";
    } else if (S != modelled) {
      call_.report.reason = "auto slices: S raised from " + std::to_string(modelled) + " to " +
                            std::to_string(S) +
                            " so that the componentwise bound stays within native GEMM's";
    }
    return SlicesPlan{S, {}, bound};
  }

  /// Scratch for the products of S slices: growing loses the buffer's contents, so the
  /// exponents and copies are carved and computed again.
  void make_room(int slices) {
    ensure_scratch(call_.scratch,
                   int8_slices_bytes<ExecSpace>(call_.plan, slices, false, call_.ops), call_.base,
                   [&] { scale_rows(); });
  }

  PipelineState<ExecSpace>& call_;
  typename V::ConstMatrix rows_a_, rows_b_;
};

/// Scheme I's products for a SlicesPlan: the slices of both operands, the INT8 products of the
/// schedule, recombined into C.  Only it writes C.
template <class ExecSpace>
class SlicesExecution {
  using V = Views<ExecSpace>;
  using Backend = Int8Gemm<ExecSpace>;

 public:
  /// `prepared_a` / `prepared_b`, when not null, hold that operand already split (its view is
  /// then only a shape), and the plan's S is theirs; `rows_a`, `rows_b`: the operands as the
  /// split reads them.
  SlicesExecution(PipelineState<ExecSpace>& call, const SlicesPlan& plan,
                  const SliceStorage<ExecSpace>* prepared_a,
                  const SliceStorage<ExecSpace>* prepared_b, const typename V::ConstMatrix& rows_a,
                  const typename V::ConstMatrix& rows_b)
      : call_(call),
        plan_(plan),
        prepared_a_(prepared_a),
        prepared_b_(prepared_b),
        rows_a_(rows_a),
        rows_b_(rows_b) {}

  void run(double alpha, double beta, const typename V::Matrix& C) {
    split();
    call_.clock.lap(call_.report.seconds_split);
    multiply_and_recombine(alpha, beta, C);
    fill_report();
  }

 private:
  void split() {
    const int S = plan_.slices;
    const std::int64_t G = static_cast<std::int64_t>(plan_.schedule.products.size());
    Carver phase2(call_.base, call_.phase_offset);
    region_ = ProductRegion<ExecSpace>::carve(
        phase2, call_.plan, S, G, product_batch<ExecSpace>(call_.plan, S, G, call_.ops), call_.ops);
    sa_ = prepared_a_ != nullptr
              ? *prepared_a_
              : SliceStorage<ExecSpace>{region_.digits_a,   call_.exponents.a, S,
                                        call_.plan.shape.k, call_.plan.kpad,   false};
    sb_ = prepared_b_ != nullptr
              ? *prepared_b_
              : SliceStorage<ExecSpace>{region_.digits_b,   call_.exponents.b, S,
                                        call_.plan.shape.k, call_.plan.kpad,   true};
    if (call_.ops.split_a) split_rows(call_.space, rows_a_, sa_);
    if (call_.ops.split_b) split_rows(call_.space, rows_b_, sb_);
  }

  /// The INT8 products of the schedule, recombined into C region_.products.extent(0) at a time.
  void multiply_and_recombine(double alpha, double beta, const typename V::Matrix& C) {
    const std::int64_t G = static_cast<std::int64_t>(plan_.schedule.products.size());
    const std::int64_t batch = region_.products.extent(0);
    upload_weights();
    for (std::int64_t first = 0; first < G; first += batch) {
      const std::int64_t count = std::min(batch, G - first);
      for (std::int64_t g = 0; g < count; ++g) {
        const Int8Product& prod = plan_.schedule.products[first + g];
        Int8GemmProblem problem;
        problem.rows_a = static_cast<std::int64_t>(sa_.digits.extent(0));  // padded to 16
        problem.rows_b = static_cast<std::int64_t>(sb_.digits.extent(0));
        problem.length = prod.length;
        problem.a = sa_.digits.data() + prod.a_column;
        problem.lda = static_cast<std::int64_t>(sa_.digits.stride(0));
        problem.b = sb_.digits.data() + prod.b_column;
        problem.ldb = static_cast<std::int64_t>(sb_.digits.stride(0));
        problem.ldc = static_cast<std::int64_t>(region_.products.extent(2));
        problem.c = region_.products.data() + g * problem.rows_b * problem.ldc;
        Backend::run(call_.space, problem);
        call_.report.int8_operations += 2.0 * problem.rows_a * problem.rows_b * prod.length;
      }
      call_.clock.lap(call_.report.seconds_int8);
      const typename V::Weights w(region_.weights.data() + first, count);
      const CUpdate update = first > 0   ? CUpdate::Accumulate
                             : beta == 0 ? CUpdate::Overwrite
                                         : CUpdate::Scale;
      recombine(call_.space, region_.products, count, w, sa_.exponents, sb_.exponents, alpha, beta,
                update, C);
      ++call_.report.recombine_passes;
      call_.clock.lap(call_.report.seconds_recombine);
    }
  }

  /// Product g's weight 2^(-8 d_g), d_g its diagonal.
  void upload_weights() {
    const std::int64_t G = static_cast<std::int64_t>(plan_.schedule.products.size());
    std::vector<double> host(static_cast<std::size_t>(G));
    for (std::int64_t g = 0; g < G; ++g)
      host[g] = compat::ldexp(1.0, -bits_per_slice * plan_.schedule.products[g].diagonal);
    Kokkos::deep_copy(call_.space, region_.weights,
                      Kokkos::View<const double*, Kokkos::HostSpace>(host.data(), host.size()));
    call_.space.fence();  // `host` dies here
  }

  void fill_report() {
    call_.report.algorithm = Algorithm::Int8Slices;
    call_.report.backend = Backend::name();
    call_.report.slices = plan_.slices;
    call_.report.slice_pairs = plan_.schedule.slice_pairs;
    call_.report.int8_gemms = static_cast<int>(plan_.schedule.products.size());
    call_.report.k_chunk = plan_.schedule.longest;
    call_.report.workspace_bytes =
        int8_slices_bytes<ExecSpace>(call_.plan, plan_.slices, call_.plan.auto_slices, call_.ops);
  }

  PipelineState<ExecSpace>& call_;
  const SlicesPlan plan_;
  const SliceStorage<ExecSpace>*prepared_a_, *prepared_b_;
  const typename V::ConstMatrix rows_a_, rows_b_;
  ProductRegion<ExecSpace> region_;
  SliceStorage<ExecSpace> sa_, sb_;
};

/// Scheme I for one call: plan, then execute.  Writes C only when it returns Done.
template <class ExecSpace>
Int8Outcome run_slices(PipelineState<ExecSpace>& call, const SliceStorage<ExecSpace>* prepared_a,
                       const SliceStorage<ExecSpace>* prepared_b, double alpha, double beta,
                       const typename Views<ExecSpace>::Matrix& C) {
  SlicesPlanner<ExecSpace> planner(call);
  const SlicesPlanned planned = planner.plan();
  if (planned.outcome != Int8Outcome::Done) return planned.outcome;
  SlicesExecution<ExecSpace>(call, planned.plan, prepared_a, prepared_b, planner.rows_a(),
                             planner.rows_b())
      .run(alpha, beta, C);
  return Int8Outcome::Done;
}

}  // namespace Impl
}  // namespace ozaki
