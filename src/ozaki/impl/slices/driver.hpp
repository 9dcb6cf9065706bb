#pragma once
/// \file driver.hpp
/// Ozaki scheme I (Algorithm::Int8Slices) on op(A) (M x K) and op(B)^T (N x K), as a sequence
/// of named steps:
///
///   scale_rows        scale exponents of every row; NaN/Inf -> native FP64 (common/pass1.hpp)
///   choose_slices     automatic S from an INT8 estimate of the error (estimate.hpp), if asked
///                     for; Auto may stop here for native FP64
///   make_room         scratch for S: grown once, pass 1 redone if it grew
///   split             all S slices of both operands in one pass each (split.hpp)
///   multiply_and_recombine   one INT8 GEMM per diagonal i+j (and K chunk) of the selected
///                     pairs (schedule.hpp), recombined into C in FP64 per batch (recombine.hpp)
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

template <class ExecSpace>
class SlicesPipeline {
  using V = Views<ExecSpace>;
  using Backend = Int8Gemm<ExecSpace>;

 public:
  /// `prepared_a` / `prepared_b`, when not null, hold that operand already split (its view is
  /// then only a shape), and the plan's S is theirs.
  SlicesPipeline(PipelineState<ExecSpace>& call, const SliceStorage<ExecSpace>* prepared_a,
                 const SliceStorage<ExecSpace>* prepared_b)
      : call_(call), prepared_a_(prepared_a), prepared_b_(prepared_b), S_(call.plan.slices) {}

  /// Writes C only when it returns Done.
  Int8Outcome run(double alpha, double beta, const typename V::Matrix& C) {
    call_.base = call_.scratch.reserve(
        int8_slices_bytes<ExecSpace>(call_.plan, S_, call_.plan.auto_slices, call_.ops));
    if (!scale_rows()) return Int8Outcome::NonFinite;
    call_.clock.lap(call_.report.seconds_split);
    if (call_.plan.auto_slices) {
      const bool int8 = choose_slices();
      call_.decided();
      if (uncertified_) return Int8Outcome::Uncertified;
      if (!int8) return Int8Outcome::NativeFaster;
    }
    check_pair_count(call_.plan, S_);
    schedule_ = make_schedule(S_, call_.plan.pairs, call_.plan.pair_count, call_.plan.shape.k,
                              call_.plan.k_block);
    make_room();
    split();
    call_.clock.lap(call_.report.seconds_split);
    multiply_and_recombine(alpha, beta, C);
    fill_report();
    return Int8Outcome::Done;
  }

 private:
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

  /// S for FP64-equivalent accuracy from the INT8 estimate.  False when Auto then prefers
  /// native FP64 GEMM (the Report says why).
  bool choose_slices() {
    const Shape& s = call_.plan.shape;
    Carver phase1(call_.base, call_.phase_offset);
    const EstimateRegion<ExecSpace> estimate =
        EstimateRegion<ExecSpace>::carve(phase1, s, call_.plan.k_chunks);
    const SliceCountChoice choice =
        choose_slice_count(call_.space, rows_a_, rows_b_, call_.exponents.a, call_.exponents.b,
                           call_.plan.k_block, estimate);
    S_ = fp64_equivalent_slices(choice.ratios, s.k, call_.plan.pairs, call_.plan.pair_count);
    call_.report.estimate_int8_gemms = choice.int8_gemms;
    call_.report.int8_operations += 2.0 * call_.plan.mpad * call_.plan.npad * call_.plan.kpad *
                                    choice.int8_gemms / static_cast<double>(call_.plan.k_chunks);
    call_.report.modeled_error =
        modeled_error(choice.ratios, s.k, S_, call_.plan.pairs, call_.plan.pair_count);
    if (!certify(choice.ratios)) return false;
    call_.clock.lap(call_.report.seconds_estimate);
    if (call_.plan.requested != Algorithm::Auto) return true;
    const int products = slices_products(S_, call_.plan.pairs, call_.plan.pair_count);
    const double cost = slices_relative_cost(device_rates(call_.space), products);
    if (!native_is_faster(cost)) return true;
    call_.report.slices = S_;
    call_.report.reason = native_faster_reason(
        "S = " + std::to_string(S_) + " needs " + std::to_string(products) + " INT8 products",
        cost);
    return false;
  }

  /// The componentwise promise (docs/design.md §3a): S grows from the model's until the
  /// rigorous bound of the estimate's ratios is at most native FP64's gamma_(K+2); where no S
  /// up to max_slices gets there (some (|A||B|)_mn below the estimate's resolution, or exponent
  /// ranges beyond 8 max_slices bits) the call runs native FP64 GEMM (uncertified_, with the
  /// reason).
  bool certify(const ErrorRatios& ratios) {
    const std::int64_t K = call_.plan.shape.k;
    const double promise = call_.plan.promise;
    const auto bound_at = [&](int S) {
      const ProductSchedule schedule =
          make_schedule(S, call_.plan.pairs, call_.plan.pair_count, K, call_.plan.k_block);
      return slices_componentwise_bound(ratios, K, S, call_.plan.pairs, call_.plan.pair_count,
                                        static_cast<int>(schedule.products.size()));
    };
    const int chosen = S_;
    double bound = bound_at(S_);
    while (bound > promise && S_ < max_slices) bound = bound_at(++S_);
    call_.report.error_bound = bound;
    if (bound > promise) {
      call_.report.reason =
          !(ratios.inverse < HUGE_VAL)
              ? "auto slices: some (|A||B|)_mn lies below the resolution of the int8 estimate, "
                "so no slice count can bound its error: native FP64 GEMM"
              : "auto slices: no S up to " + std::to_string(max_slices) +
                    " keeps the componentwise error bound within native FP64's gamma_K on "
                    "this data (exponent ranges beyond its bits): native FP64 GEMM";
      uncertified_ = true;
      return false;
    }
    if (S_ != chosen) {
      call_.report.reason = "auto slices: S raised from " + std::to_string(chosen) + " to " +
                            std::to_string(S_) +
                            " so that the componentwise bound stays within native FP64's";
    }
    return true;
  }

  /// Scratch for the products of S slices: growing loses the buffer's contents, so the
  /// exponents and copies are carved and computed again.
  void make_room() {
    ensure_scratch(call_.scratch, int8_slices_bytes<ExecSpace>(call_.plan, S_, false, call_.ops),
                   call_.base, [&] { scale_rows(); });
  }

  void split() {
    const std::int64_t G = static_cast<std::int64_t>(schedule_.products.size());
    Carver phase2(call_.base, call_.phase_offset);
    region_ = ProductRegion<ExecSpace>::carve(
        phase2, call_.plan, S_, G, product_batch<ExecSpace>(call_.plan, S_, G, call_.ops),
        call_.ops);
    sa_ = prepared_a_ != nullptr
              ? *prepared_a_
              : SliceStorage<ExecSpace>{region_.digits_a,   call_.exponents.a, S_,
                                        call_.plan.shape.k, call_.plan.kpad,   false};
    sb_ = prepared_b_ != nullptr
              ? *prepared_b_
              : SliceStorage<ExecSpace>{region_.digits_b,   call_.exponents.b, S_,
                                        call_.plan.shape.k, call_.plan.kpad,   true};
    if (call_.ops.split_a) split_rows(call_.space, rows_a_, sa_);
    if (call_.ops.split_b) split_rows(call_.space, rows_b_, sb_);
  }

  /// The INT8 products of the schedule, recombined into C region_.products.extent(0) at a time.
  void multiply_and_recombine(double alpha, double beta, const typename V::Matrix& C) {
    const std::int64_t G = static_cast<std::int64_t>(schedule_.products.size());
    const std::int64_t batch = region_.products.extent(0);
    upload_weights();
    for (std::int64_t first = 0; first < G; first += batch) {
      const std::int64_t count = std::min(batch, G - first);
      for (std::int64_t g = 0; g < count; ++g) {
        const Int8Product& prod = schedule_.products[first + g];
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
    const std::int64_t G = static_cast<std::int64_t>(schedule_.products.size());
    std::vector<double> host(static_cast<std::size_t>(G));
    for (std::int64_t g = 0; g < G; ++g)
      host[g] = compat::ldexp(1.0, -bits_per_slice * schedule_.products[g].diagonal);
    Kokkos::deep_copy(call_.space, region_.weights,
                      Kokkos::View<const double*, Kokkos::HostSpace>(host.data(), host.size()));
    call_.space.fence();  // `host` dies here
  }

  void fill_report() {
    call_.report.algorithm = Algorithm::Int8Slices;
    call_.report.backend = Backend::name();
    call_.report.slices = S_;
    call_.report.slice_pairs = schedule_.slice_pairs;
    call_.report.int8_gemms = static_cast<int>(schedule_.products.size());
    call_.report.k_chunk = schedule_.longest;
    call_.report.workspace_bytes =
        int8_slices_bytes<ExecSpace>(call_.plan, S_, call_.plan.auto_slices, call_.ops);
  }

  PipelineState<ExecSpace>& call_;
  const SliceStorage<ExecSpace>*prepared_a_, *prepared_b_;
  int S_;
  bool uncertified_ = false;  // an automatic S that no count up to max_slices certifies
  typename V::ConstMatrix rows_a_, rows_b_;
  ProductSchedule schedule_;
  ProductRegion<ExecSpace> region_;
  SliceStorage<ExecSpace> sa_, sb_;
};

}  // namespace Impl
}  // namespace ozaki
