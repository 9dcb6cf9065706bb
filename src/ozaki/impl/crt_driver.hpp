#pragma once
/// \file crt_driver.hpp
/// Ozaki scheme II (Algorithm::Int8Crt) on op(A) (M x K) and op(B)^T (N x K):
///
///   scale exponents (NaN/Inf -> native FP64), row norms           (split.hpp, crt.hpp)
///   -> scaling rule: fast (norms only) or accurate (one INT8 product of magnitudes)
///   -> automatic moduli count from the rule's error model, if asked for  (crt_rules.hpp)
///   -> residues of op(A), all moduli in one pass
///   -> per block of columns of C: the residues of those rows of op(B)^T, one INT8 GEMM per
///      modulus (and K chunk), then the CRT reconstruction straight into C.
///
/// All scratch comes from the caller's Workspace (workspace_layout.hpp).

#include <ozaki/impl/accuracy.hpp>
#include <ozaki/impl/backends.hpp>
#include <ozaki/impl/crt.hpp>
#include <ozaki/impl/crt_rules.hpp>
#include <ozaki/impl/driver_common.hpp>
#include <ozaki/impl/slice_count.hpp>
#include <ozaki/impl/split.hpp>
#include <ozaki/impl/workspace_layout.hpp>
#include <ozaki/options.hpp>
#include <ozaki/workspace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace ozaki {
namespace Impl {

template <class ExecSpace>
struct Int8CrtGemm {
  using V = Views<ExecSpace>;
  using Backend = Int8Gemm<ExecSpace>;

  /// Writes C only when it returns Done.
  static Int8Outcome run(const ExecSpace& space, const typename V::ConstMatrix& opA,
                         const typename V::ConstMatrix& opBt, double alpha, double beta,
                         const typename V::Matrix& C, const Options& options,
                         Workspace<ExecSpace>& ws, Report& report) {
    const Shape3 s{static_cast<std::int64_t>(opA.extent(0)),
                   static_cast<std::int64_t>(opBt.extent(0)),
                   static_cast<std::int64_t>(opA.extent(1))};
    const std::int64_t kpad = padded_k(s.k), mpad = padded_rows(s.m), npad = padded_rows(s.n);
    const std::int64_t block = resolved_k_block(options.k_block);
    const std::int64_t chunks = k_chunks(s.k, options.k_block);
    const bool automatic = options.moduli == auto_moduli;
    PhaseClock<ExecSpace> clock(space, options.time_phases);
    // Strided rows are read in place (tile kernels), except by the estimate of an automatic
    // count under the accurate rule: a GPU copies them for it, in the estimate's scratch, once
    // the estimate is sure to run (ordinary data takes the fast rule, and Auto on wide-range
    // data often stops at native first).
    const bool estimate_possible = automatic && options.crt_scaling != CrtScaling::Fast;
    const OperandPlan plan = crt_operand_plan<ExecSpace>(
        s.k > 1 && opA.stride(1) != 1, s.k > 1 && opBt.stride(1) != 1, estimate_possible);

    int L = automatic ? assumed_auto_moduli : options.moduli;
    const bool maybe_accurate = options.crt_scaling != CrtScaling::Fast;
    unsigned char* base = WorkspaceAccess<ExecSpace>::reserve(
        ws, crt_bytes<ExecSpace>(s, L, options, maybe_accurate, automatic, plan));

    ExponentRegion<ExecSpace> exponents;
    RowCopyRegion<ExecSpace> copies_of;
    CrtScaleRegion<ExecSpace> scale;
    CrtBoundRegion<ExecSpace> bound;
    std::size_t phase_offset = 0, bound_end = 0;
    CrtScaling scaling = options.crt_scaling;
    double q_a = 0, q_b = 0;

    // Everything before the residues; run again if the workspace has to grow (growing loses
    // the buffer's contents).  False on NaN/Inf.
    auto prepare = [&]() {
      Carver carver(base);
      exponents = ExponentRegion<ExecSpace>::carve(carver, s);
      copies_of = RowCopyRegion<ExecSpace>::carve(carver, s, plan);
      scale = CrtScaleRegion<ExecSpace>::carve(carver, s);
      phase_offset = carver.used();
      const bool a_bad =
          operand_pass1_in_place(space, plan.strided_a, opA, copies_of.max_a, exponents.a);
      const bool b_bad =
          operand_pass1_in_place(space, plan.strided_b, opBt, copies_of.max_b, exponents.b);
      if (a_bad || b_bad) return false;
      // (The tile maxima are consumed: their storage takes the partial sums of squares.)
      if (plan.strided_a) {
        strided_row_norms(space, opA, exponents.a, copies_of.max_a, copies_of.sums_a, scale.l2a,
                          scale.l1a);
      } else {
        row_norms(space, opA, exponents.a, scale.l2a, scale.l1a);
      }
      if (plan.strided_b) {
        strided_row_norms(space, opBt, exponents.b, copies_of.max_b, copies_of.sums_b, scale.l2b,
                          scale.l1b);
      } else {
        row_norms(space, opBt, exponents.b, scale.l2b, scale.l1b);
      }
      q_a = peak_ratio(space, scale.l2a, scale.l1a);
      q_b = peak_ratio(space, scale.l2b, scale.l1b);
      if (scaling == CrtScaling::Auto) {
        const double k = static_cast<double>(s.k);
        scaling = k * q_a * q_b > crt_accurate_peak ? CrtScaling::Accurate : CrtScaling::Fast;
      }
      return true;
    };
    // The accurate rule's bound product P = q(A) q(B); after prepare, again if it runs again.
    auto bound_product = [&]() {
      Carver phase1(base, phase_offset);
      bound = CrtBoundRegion<ExecSpace>::carve(phase1, s, chunks);
      bound_end = phase1.used();
      magnitudes7(space, opA, exponents.a, bound.q_a);
      magnitudes7(space, opBt, exponents.b, bound.q_b);
      Int8GemmProblem p;
      p.rows_a = mpad;
      p.rows_b = npad;
      p.length = kpad;
      p.a = bound.q_a.data();
      p.lda = kpad;
      p.b = bound.q_b.data();
      p.ldb = kpad;
      p.c = bound.bound.data();
      p.ldc = mpad;
      int8_gemm_in_k_chunks(space, p, block, npad * mpad);
    };
    // The bits of every row and column for L moduli; returns the fewest.
    auto choose_bits = [&](int moduli) {
      if (scaling == CrtScaling::Fast) {
        const double T = crt_fast_target(moduli, s.k);
        if (!(T >= 1)) return -1;
        return std::min(fast_bits(space, scale.l2a, T, scale.bits_a),
                        fast_bits(space, scale.l2b, T, scale.bits_b));
      }
      return accurate_bits(space, bound.bound, chunks, crt_accurate_range(moduli), scale.rho,
                           scale.partial, scale.bits_a, scale.bits_b);
    };

    if (!prepare()) return Int8Outcome::NonFinite;
    const double ratio = Backend::int8_over_fp64_throughput(space);
    auto cost_of = [&](int moduli, int products) {
      return crt_relative_cost(ratio, Backend::fp64_flops_per_byte(space), products, moduli, s.m,
                               s.n, s.k);
    };
    // Auto on wide-range data: the accurate rule needed 2 to 4 moduli more than the fast
    // model's count in our measurements (docs/benchmarks.md), plus its bound and estimate
    // products.  Where even that makes native faster, stop before the bound product.
    if (automatic && options.algorithm == Algorithm::Auto && scaling == CrtScaling::Accurate) {
      const int hopeful = std::min(max_moduli, crt_fast_moduli(s.k, q_a, q_b) + 2);
      if (cost_of(hopeful, hopeful + 2) >= 1) {
        report.reason = "Auto: native FP64 GEMM is faster here (wide exponent range: at least " +
                        std::to_string(hopeful) + " moduli under the accurate scaling rule)";
        return Int8Outcome::NativeFaster;
      }
    }
    if (scaling == CrtScaling::Accurate) {
      bound_product();
      report.estimate_int8_gemms = static_cast<int>(chunks);
      report.int8_operations += 2.0 * mpad * npad * kpad;
    }
    clock.lap(report.seconds_split);
    if (automatic) {
      if (scaling == CrtScaling::Fast) {
        L = crt_fast_moduli(s.k, q_a, q_b);
        report.modeled_error = crt_fast_model(L, s.k, q_a, q_b);
      } else {
        // Lower bounds of |A||B| from INT8 magnitudes (as for scheme I's automatic S), then
        // the model with the bits of max_moduli.
        Carver after_bound(base, bound_end);
        const EstimateRegion<ExecSpace> estimate =
            EstimateRegion<ExecSpace>::carve(after_bound, s, chunks);
        // The estimate reads K-contiguous rows: copies of strided ones, in scratch that the
        // residues reuse (the copy's tile maxima go where pass 1's were: the norms consumed
        // them).
        const EstimateCopyRegion<ExecSpace> copied =
            EstimateCopyRegion<ExecSpace>::carve(after_bound, s, plan);
        typename V::ConstMatrix estimate_a = opA, estimate_b = opBt;
        if (plan.estimate_copy_a) {
          copy_to_k_contiguous(space, opA, copied.a, copies_of.max_a);
          estimate_a = k_contiguous_rows<ExecSpace>(copied.a);
        }
        if (plan.estimate_copy_b) {
          copy_to_k_contiguous(space, opBt, copied.b, copies_of.max_b);
          estimate_b = k_contiguous_rows<ExecSpace>(copied.b);
        }
        const SliceCountChoice choice = choose_slice_count(
            space, estimate_a, estimate_b, exponents.a, exponents.b, options.k_block, estimate);
        report.estimate_int8_gemms += choice.int8_gemms;
        report.int8_operations +=
            2.0 * mpad * npad * kpad * choice.int8_gemms / static_cast<double>(chunks);
        choose_bits(max_moduli);
        const double at_max =
            choice.lower_stored
                ? crt_model_error(space, estimate.lower, s.k, scale.bits_a, scale.bits_b, scale.l1a,
                                  scale.l1b)
                : crt_model_error(space,
                                  ProductLowerBound<ExecSpace>{estimate.products, chunks, 0x1p-14},
                                  s.k, scale.bits_a, scale.bits_b, scale.l1a, scale.l1b);
        L = crt_accurate_moduli(at_max);
        if (!(at_max < HUGE_VAL)) {
          report.reason =
              "auto moduli: some (|A||B|)_mn lies below the resolution of the int8 estimate, "
              "so the largest count was taken";
        }
        report.modeled_error =
            at_max * std::exp2(0.5 * (crt_log2_range(max_moduli) - crt_log2_range(L)));
      }
      const int products = L + report.estimate_int8_gemms;
      const double cost = cost_of(L, products);
      if (options.algorithm == Algorithm::Auto && cost >= 1) {
        report.moduli = L;
        report.reason = "Auto: native FP64 GEMM is faster here (" + std::to_string(L) +
                        " moduli, " + std::string(to_string(scaling)) + " scaling, need " +
                        std::to_string(products) +
                        " INT8 products and their memory traffic: modelled at " +
                        std::to_string(cost) + " native GEMMs)";
        return Int8Outcome::NativeFaster;
      }
    }
    clock.lap(report.seconds_estimate);

    const std::size_t needed =
        crt_bytes<ExecSpace>(s, L, options, scaling == CrtScaling::Accurate, automatic, plan);
    if (needed > ws.bytes()) {
      base = WorkspaceAccess<ExecSpace>::reserve(ws, needed);
      prepare();
      if (scaling == CrtScaling::Accurate) bound_product();
    }
    const int fewest = choose_bits(L);
    check_crt_bits(fewest, L, s.k);

    const std::int64_t width = crt_block_columns<ExecSpace>(s, L, options, plan);
    Carver phase2(base, phase_offset);
    const CrtProductRegion<ExecSpace> region =
        CrtProductRegion<ExecSpace>::carve(phase2, s, L, chunks, width);
    const CrtConstants constants = make_crt_constants(L);
    crt_residues(space, opA, exponents.a, scale.bits_a, constants, region.residues_a);
    clock.lap(report.seconds_split);

    int gemms = 0;
    const std::int64_t ld = L * kpad;
    for (std::int64_t n0 = 0; n0 < s.n; n0 += width) {
      const std::int64_t columns = std::min(width, s.n - n0);
      const std::int64_t padded_columns = std::min(width, npad - n0);
      // Residues of this block's rows of op(B)^T only: a pass needs (M + width) L K bytes of
      // residues instead of (M + N) L K, which buys wider passes under the workspace limit.
      crt_residues(space, row_block(opBt, n0, columns), row_block(exponents.b, n0, columns),
                   row_block(scale.bits_b, n0, columns), constants,
                   typename V::Digits(region.residues_b.data(), padded_columns, ld));
      clock.lap(report.seconds_split);
      for (int l = 0; l < L; ++l) {
        Int8GemmProblem p;
        p.rows_a = mpad;
        p.rows_b = padded_columns;
        p.length = kpad;
        p.a = region.residues_a.data() + l * kpad;
        p.lda = ld;
        p.b = region.residues_b.data() + l * kpad;
        p.ldb = ld;
        p.c = region.products.data() + l * chunks * width * mpad;
        p.ldc = mpad;
        gemms += int8_gemm_in_k_chunks(space, p, block, width * mpad);
        report.int8_operations += 2.0 * p.rows_a * p.rows_b * p.length;
      }
      clock.lap(report.seconds_int8);
      crt_reconstruct(space, region.products, chunks, n0, columns, constants, exponents.a,
                      scale.bits_a, exponents.b, scale.bits_b, alpha, beta, C);
      ++report.recombine_passes;
      clock.lap(report.seconds_recombine);
    }

    report.algorithm = Algorithm::Int8Crt;
    report.backend = Backend::name();
    report.moduli = L;
    report.crt_scaling = scaling;
    report.crt_bits = fewest;
    report.int8_gemms = gemms;
    report.k_chunk = std::min(block, kpad);
    report.workspace_bytes = ws.bytes();
    return Int8Outcome::Done;
  }
};

}  // namespace Impl
}  // namespace ozaki
