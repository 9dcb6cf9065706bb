#pragma once
/// \file gemm_driver.hpp
/// ozaki::gemm after the public entry has turned the caller's Views into strided ones:
/// checks, early returns, algorithm choice, then Ozaki scheme I:
///
///   scale exponents of op(A) rows and op(B) columns; NaN/Inf -> native FP64 (split.hpp)
///   -> automatic S from an INT8 estimate of the error (slice_count.hpp), if asked for
///   -> all S slices of both operands in one pass each (split.hpp)
///   -> one INT8 GEMM per diagonal i+j (and K chunk) of the selected pairs (schedule.hpp)
///   -> FP64 recombination into C, a batch of INT32 products per pass (recombine.hpp).
///
/// All scratch comes from the caller's Workspace (workspace_layout.hpp).

#include <ozaki/impl/accuracy.hpp>
#include <ozaki/impl/arguments.hpp>
#include <ozaki/impl/backend_traits.hpp>
#include <ozaki/impl/backends.hpp>
#include <ozaki/impl/crt_driver.hpp>
#include <ozaki/impl/driver_common.hpp>
#include <ozaki/impl/native.hpp>
#include <ozaki/impl/recombine.hpp>
#include <ozaki/impl/schedule.hpp>
#include <ozaki/impl/slice_count.hpp>
#include <ozaki/impl/split.hpp>
#include <ozaki/impl/workspace_layout.hpp>
#include <ozaki/options.hpp>
#include <ozaki/workspace.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ozaki {
namespace Impl {

template <class ExecSpace>
struct Int8SlicesGemm {
  using V = Views<ExecSpace>;
  using Backend = Int8Gemm<ExecSpace>;

  /// Runs the INT8 products of `schedule` and recombines them into C, region.products.extent(0)
  /// products per pass.
  static void multiply_and_recombine(const ExecSpace& space, const SliceStorage<ExecSpace>& sa,
                                     const SliceStorage<ExecSpace>& sb,
                                     const ProductSchedule& schedule, double alpha, double beta,
                                     const typename V::Matrix& C,
                                     const ProductRegion<ExecSpace>& region,
                                     PhaseClock<ExecSpace>& clock, Report& report) {
    const std::int64_t M = C.extent(0);
    const std::int64_t N = C.extent(1);
    const std::int64_t G = static_cast<std::int64_t>(schedule.products.size());
    const std::int64_t batch = region.products.extent(0);
    {
      std::vector<double> host(static_cast<std::size_t>(G));
      for (std::int64_t g = 0; g < G; ++g)
        host[g] = compat::ldexp(1.0, -bits_per_slice * schedule.products[g].diagonal);
      Kokkos::deep_copy(space, region.weights,
                        Kokkos::View<const double*, Kokkos::HostSpace>(host.data(), host.size()));
      space.fence();  // `host` dies here; the reductions before this already synchronised
    }
    for (std::int64_t first = 0; first < G; first += batch) {
      const std::int64_t count = std::min(batch, G - first);
      for (std::int64_t g = 0; g < count; ++g) {
        const Int8Product& prod = schedule.products[first + g];
        Int8GemmProblem problem;
        problem.rows_a = static_cast<std::int64_t>(sa.digits.extent(0));  // padded to 16
        problem.rows_b = static_cast<std::int64_t>(sb.digits.extent(0));
        problem.length = prod.length;
        problem.a = sa.digits.data() + prod.a_column;
        problem.lda = static_cast<std::int64_t>(sa.digits.stride(0));
        problem.b = sb.digits.data() + prod.b_column;
        problem.ldb = static_cast<std::int64_t>(sb.digits.stride(0));
        problem.ldc = static_cast<std::int64_t>(region.products.extent(2));
        problem.c = region.products.data() + g * problem.rows_b * problem.ldc;
        Backend::run(space, problem);
        report.int8_operations += 2.0 * problem.rows_a * problem.rows_b * prod.length;
      }
      clock.lap(report.seconds_int8);
      const typename V::Weights w(region.weights.data() + first, count);
      const CUpdate update = first > 0   ? CUpdate::Accumulate
                             : beta == 0 ? CUpdate::Overwrite
                                         : CUpdate::Scale;
      recombine(space, region.products, count, w, sa.exponents, sb.exponents, alpha, beta, update,
                C);
      ++report.recombine_passes;
      clock.lap(report.seconds_recombine);
    }
  }

  /// Ozaki scheme I on op(A) (M x K) and op(B)^T (N x K).  `prepared_a` / `prepared_b`, when
  /// not null, hold that operand already split (its view is then only a shape), and fix S.
  /// Writes C only when it returns Done.
  static Int8Outcome run(const ExecSpace& space, const typename V::ConstMatrix& opA,
                         const typename V::ConstMatrix& opBt,
                         const SliceStorage<ExecSpace>* prepared_a,
                         const SliceStorage<ExecSpace>* prepared_b, double alpha, double beta,
                         const typename V::Matrix& C, const Options& options,
                         Workspace<ExecSpace>& ws, Report& report) {
    const Shape3 s{static_cast<std::int64_t>(opA.extent(0)),
                   static_cast<std::int64_t>(opBt.extent(0)),
                   static_cast<std::int64_t>(opA.extent(1))};
    const SliceStorage<ExecSpace>* prepared = prepared_a != nullptr ? prepared_a : prepared_b;
    const bool automatic = options.slices == auto_slices && prepared == nullptr;
    PhaseClock<ExecSpace> clock(space, options.time_phases);
    constexpr bool copies = copies_strided_rows<ExecSpace>();
    OperandPlan plan;
    plan.split_a = prepared_a == nullptr;
    plan.split_b = prepared_b == nullptr;
    // Strided rows are read in place (tile kernels), except where the automatic-S estimate
    // reads them too: a GPU then copies them once (copy_to_k_contiguous).
    const bool strided_a = plan.split_a && s.k > 1 && opA.stride(1) != 1;
    const bool strided_b = plan.split_b && s.k > 1 && opBt.stride(1) != 1;
    plan.copy_a = copies && strided_a && automatic;
    plan.copy_b = copies && strided_b && automatic;
    plan.strided_a = strided_a && !plan.copy_a;
    plan.strided_b = strided_b && !plan.copy_b;
    // Reserve what the expected S needs; an automatic S that comes out larger grows it below.
    const int expected_s = prepared != nullptr ? prepared->slices
                           : automatic         ? assumed_auto_slices
                                               : options.slices;
    unsigned char* base = WorkspaceAccess<ExecSpace>::reserve(
        ws, int8_slices_bytes<ExecSpace>(s, expected_s, options, automatic, plan));
    Carver carver(base);
    ExponentRegion<ExecSpace> exponents = ExponentRegion<ExecSpace>::carve(carver, s);
    RowCopyRegion<ExecSpace> copies_of = RowCopyRegion<ExecSpace>::carve(carver, s, plan);
    const std::size_t phase_offset = carver.used();
    // The operands as the row kernels read them: K-contiguous copies where made.
    typename V::ConstMatrix rows_a = opA, rows_b = opBt;
    auto scale_exponents = [&]() {
      const bool a_bad =
          plan.split_a && operand_pass1(space, plan.copy_a, plan.strided_a, opA, copies_of.a,
                                        copies_of.max_a, exponents.a, rows_a);
      const bool b_bad =
          plan.split_b && operand_pass1(space, plan.copy_b, plan.strided_b, opBt, copies_of.b,
                                        copies_of.max_b, exponents.b, rows_b);
      return !(a_bad || b_bad);
    };
    if (!scale_exponents()) return Int8Outcome::NonFinite;
    clock.lap(report.seconds_split);

    int S = prepared != nullptr ? prepared->slices : options.slices;
    if (automatic) {
      Carver phase1(base, phase_offset);
      const EstimateRegion<ExecSpace> estimate =
          EstimateRegion<ExecSpace>::carve(phase1, s, k_chunks(s.k, options.k_block));
      const SliceCountChoice choice = choose_slice_count(space, rows_a, rows_b, exponents.a,
                                                         exponents.b, options.k_block, estimate);
      S = fp64_equivalent_slices(choice.ratios, s.k, options.pairs, options.pair_count);
      report.estimate_int8_gemms = choice.int8_gemms;
      report.int8_operations += 2.0 * padded_rows(s.m) * padded_rows(s.n) * padded_k(s.k) *
                                choice.int8_gemms /
                                static_cast<double>(k_chunks(s.k, options.k_block));
      report.modeled_error =
          modeled_error(choice.ratios, s.k, S, options.pairs, options.pair_count);
      if (!(choice.ratios.inverse < HUGE_VAL)) {
        report.reason =
            "auto slices: some (|A||B|)_mn lies below the resolution of the int8 "
            "estimate, so S = " +
            std::to_string(S) + " was taken to be safe";
      }
      clock.lap(report.seconds_estimate);
      if (options.algorithm == Algorithm::Auto &&
          native_is_faster(Backend::int8_over_fp64_throughput(space), S, options.pairs,
                           options.pair_count, 0)) {
        report.slices = S;
        report.reason = "Auto: native FP64 GEMM is faster here (S = " + std::to_string(S) +
                        " needs " +
                        std::to_string(selected_pair_count(S, options.pairs, options.pair_count)) +
                        " INT8 products; INT8/FP64 throughput ratio " +
                        std::to_string(Backend::int8_over_fp64_throughput(space)) + ")";
        return Int8Outcome::NativeFaster;
      }
    }
    check_resolved_options(options, S);

    const ProductSchedule schedule =
        make_schedule(S, options.pairs, options.pair_count, s.k, options.k_block);
    const std::int64_t G = static_cast<std::int64_t>(schedule.products.size());
    const std::size_t needed = int8_slices_bytes<ExecSpace>(s, S, options, false, plan);
    if (needed > ws.bytes()) {
      // Growing loses the buffer's contents: carve again, copy again, recompute the exponents.
      base = WorkspaceAccess<ExecSpace>::reserve(ws, needed);
      Carver again(base);
      exponents = ExponentRegion<ExecSpace>::carve(again, s);
      copies_of = RowCopyRegion<ExecSpace>::carve(again, s, plan);
      scale_exponents();
    }
    Carver phase2(base, phase_offset);
    const ProductRegion<ExecSpace> region = ProductRegion<ExecSpace>::carve(
        phase2, s, S, G, product_batch<ExecSpace>(s, S, G, options, plan), plan);
    const SliceStorage<ExecSpace> sa =
        prepared_a != nullptr
            ? *prepared_a
            : SliceStorage<ExecSpace>{region.digits_a, exponents.a, S, s.k, padded_k(s.k), false};
    const SliceStorage<ExecSpace> sb =
        prepared_b != nullptr
            ? *prepared_b
            : SliceStorage<ExecSpace>{region.digits_b, exponents.b, S, s.k, padded_k(s.k), true};
    if (plan.split_a) split_rows(space, rows_a, sa);
    if (plan.split_b) split_rows(space, rows_b, sb);
    clock.lap(report.seconds_split);

    multiply_and_recombine(space, sa, sb, schedule, alpha, beta, C, region, clock, report);

    report.algorithm = Algorithm::Int8Slices;
    report.backend = Backend::name();
    report.slices = S;
    report.slice_pairs = schedule.slice_pairs;
    report.int8_gemms = static_cast<int>(G);
    report.k_chunk = schedule.longest;
    report.workspace_bytes = ws.bytes();
    return Int8Outcome::Done;
  }
};

/// Algorithm::CublasEmulation where the backend has it; false with `why_not` otherwise.
template <class ExecSpace>
bool run_emulation(const ExecSpace& space, bool trans_a, bool trans_b, double alpha,
                   const typename Views<ExecSpace>::ConstMatrix& A,
                   const typename Views<ExecSpace>::ConstMatrix& B, double beta,
                   const typename Views<ExecSpace>::Matrix& C, const Options& options,
                   Workspace<ExecSpace>& workspace, Report& report, std::string& why_not) {
  using Emulation = EmulationBackend<ExecSpace>;
  ColumnMajorGemm g;
  if (!Emulation::available) {
    return Emulation::run(space, false, false, 0, 0, 0, 0, nullptr, 0, nullptr, 0, 0, nullptr, 0, 0,
                          nullptr, 0, why_not);
  }
  if (!as_column_major(trans_a, trans_b, A, B, C, g)) {
    why_not = "an operand has no unit stride, and cuBLAS needs column- or row-major matrices";
    return false;
  }
  // 8 bits per slice as for Int8Slices, at most the 55 bits cuBLAS documents for FP64.
  const int bits =
      options.slices == auto_slices ? 0 : std::min(bits_per_slice * options.slices, 55);
  const std::size_t bytes = Emulation::workspace_bytes(g.m, g.n, g.k, bits);
  if (static_cast<std::int64_t>(bytes) > resolved_workspace_limit(options)) {
    why_not = "its workspace of " + std::to_string(bytes) +
              " bytes exceeds the workspace limit of " +
              std::to_string(resolved_workspace_limit(options)) + " bytes";
    return false;
  }
  unsigned char* memory = nullptr;
  try {
    memory = WorkspaceAccess<ExecSpace>::reserve(workspace, bytes);
  } catch (const BackendError& e) {
    why_not = e.what();
    return false;
  }
  if (!Emulation::run(space, g.trans_x, g.trans_y, g.m, g.n, g.k, alpha, g.x, g.ldx, g.y, g.ldy,
                      beta, g.c, g.ldc, bits, memory, bytes, why_not)) {
    return false;
  }
  report.algorithm = Algorithm::CublasEmulation;
  report.backend = "cuBLAS";
  report.slices = options.slices;
  report.workspace_bytes = workspace.bytes();
  return true;
}

/// Algorithm::Auto's choice before any work, from the INT8 products each algorithm needs at
/// best (its first guess) and the device's INT8/FP64 throughput ratio:
///   - slices given (and moduli not): Int8Slices with that S;  moduli given: Int8Crt;
///   - neither: FP64-equivalent accuracy, from whichever scheme needs fewer products (scheme
///     II's first guess, crt_first_guess, against scheme I's pairs plus its estimate);
///   - prepared operands: Int8Slices (they hold slices);
/// and then Native where even that many products are slower than one FP64 GEMM.  A scheme
/// with an automatic count checks again once it knows the count (Int8Outcome::NativeFaster),
/// so that the estimate is not wasted where it then runs.
template <class ExecSpace>
Algorithm choose_auto(const ExecSpace& space, const Shape& shape, const Options& o, bool prepared,
                      std::string& why) {
  const std::int64_t K = shape.k;
  const double ratio = Int8Gemm<ExecSpace>::int8_over_fp64_throughput(space);
  const bool auto_slices_count = o.slices == auto_slices;
  const int S = auto_slices_count ? best_case_slices(K, o.pairs, o.pair_count) : o.slices;
  const int pairs = selected_pair_count(S, o.pairs, std::min(o.pair_count, S * S));
  const int slices_products = pairs + (auto_slices_count ? 1 : 0);
  const int crt_products = o.moduli != auto_moduli ? o.moduli : crt_first_guess(K);
  Algorithm pick = Algorithm::Int8Crt;
  if (prepared || (!auto_slices_count && o.moduli == auto_moduli) ||
      (auto_slices_count && o.moduli == auto_moduli && slices_products < crt_products)) {
    pick = Algorithm::Int8Slices;
  }
  if (prepared) return pick;
  const int products = pick == Algorithm::Int8Crt ? crt_products : slices_products;
  if (pick == Algorithm::Int8Crt) {
    const double cost = crt_relative_cost(ratio, Int8Gemm<ExecSpace>::fp64_flops_per_byte(space),
                                          products, products, shape.m, shape.n, K);
    if (cost < 1) return pick;
    why = "Auto: native FP64 GEMM is faster here (Int8Crt with at least " +
          std::to_string(products) + " moduli is modelled at " + std::to_string(cost) +
          " native GEMMs for this shape)";
    return Algorithm::Native;
  }
  if (!native_beats_products(ratio, products)) return pick;
  why = "Auto: native FP64 GEMM is faster here (Int8Slices needs at least " +
        std::to_string(products) + " INT8 products against an INT8/FP64 throughput ratio of " +
        std::to_string(ratio) + ")";
  return Algorithm::Native;
}

/// The rules for prepared operands; throws before anything runs.
template <class ExecSpace>
void check_prepared(const SliceStorage<ExecSpace>* a, const SliceStorage<ExecSpace>* b,
                    bool trans_a, bool trans_b, const Options& o) {
  if (a == nullptr && b == nullptr) return;
  if ((a != nullptr && trans_a) || (b != nullptr && trans_b)) {
    throw InvalidArgument("a prepared operand already holds op(X): its transpose must be \"N\"");
  }
  if (o.algorithm == Algorithm::Native || o.algorithm == Algorithm::CublasEmulation ||
      o.algorithm == Algorithm::Int8Crt) {
    throw InvalidArgument(
        "prepared operands hold int8 slices, not FP64 values or residues: they need "
        "Algorithm::Int8Slices (or Auto)");
  }
  const int S = a != nullptr ? a->slices : b->slices;
  if (a != nullptr && b != nullptr && a->slices != b->slices) {
    throw InvalidArgument("prepared operands have different slice counts (" +
                          std::to_string(a->slices) + " and " + std::to_string(b->slices) + ")");
  }
  if (o.slices != auto_slices && o.slices != S) {
    throw InvalidArgument("options.slices = " + std::to_string(o.slices) +
                          " differs from the prepared operand's " + std::to_string(S));
  }
  if (a != nullptr && a->reversed) throw InvalidArgument("operand prepared for B passed as A");
  if (b != nullptr && !b->reversed) throw InvalidArgument("operand prepared for A passed as B");
}

/// The body of ozaki::gemm for strided views.  A and B are as stored; transA/transB as given.
/// A or B may be prepared (already split): then its view carries only the shape of op(X)
/// (data null) and its transpose character must be 'N'.
template <class ExecSpace>
Report gemm_strided(const ExecSpace& space, const char transA[], const char transB[], double alpha,
                    const typename Views<ExecSpace>::ConstMatrix& A,
                    const typename Views<ExecSpace>::ConstMatrix& B, double beta,
                    const typename Views<ExecSpace>::Matrix& C, const Options& options,
                    Workspace<ExecSpace>& workspace, const SliceStorage<ExecSpace>* prepared_a,
                    const SliceStorage<ExecSpace>* prepared_b) {
  using V = Views<ExecSpace>;
  const bool trans_a = parse_trans(transA, "transA");
  const bool trans_b = parse_trans(transB, "transB");
  check_options(options);
  check_prepared(prepared_a, prepared_b, trans_a, trans_b, options);
  const typename V::ConstMatrix opA = transposed_if(A, trans_a);
  const typename V::ConstMatrix opB = transposed_if(B, trans_b);
  const Shape shape = check_operands(opA, opB, C);

  Report report;
  if (shape.m == 0 || shape.n == 0) {
    report.reason = "empty C: nothing to do";
    return report;
  }
  if (shape.k == 0 || alpha == 0) {
    // BLAS semantics: C = beta C, and A and B are not read.
    ProfilingRegion region("ozaki::gemm[scale]");
    scale_c(space, beta, C);
    report.reason =
        shape.k == 0 ? "K == 0: C = beta*C" : "alpha == 0: C = beta*C, A and B not read";
    return report;
  }
  auto native = [&](const std::string& why, bool fallback) {
    ProfilingRegion region("ozaki::gemm[Native]");
    NativeGemm<ExecSpace>::run(space, trans_a, trans_b, alpha, A, B, beta, C);
    report.algorithm = Algorithm::Native;
    report.backend = "KokkosBlas";
    report.fallback = fallback;
    report.reason = why;
    return report;
  };
  if (options.algorithm == Algorithm::Native) return native("", false);
  std::string why;
  const bool any_prepared = prepared_a != nullptr || prepared_b != nullptr;
  Algorithm algorithm = options.algorithm;
  if (algorithm == Algorithm::Auto) {
    algorithm = choose_auto(space, shape, options, any_prepared, why);
    if (algorithm == Algorithm::Native) return native(why, false);
  }
  if (options.algorithm == Algorithm::CublasEmulation) {
    ProfilingRegion region("ozaki::gemm[CublasEmulation]");
    if (run_emulation(space, trans_a, trans_b, alpha, A, B, beta, C, options, workspace, report,
                      why)) {
      return report;
    }
    report.fallback = true;
    report.reason = "CublasEmulation unavailable: " + why + "; Int8Slices used instead";
  }
  if (!Int8Gemm<ExecSpace>::supported(space, why)) {
    if (any_prepared) throw BackendError(why + ": prepared operands need INT8 GEMMs");
    return native(why + ": native FP64 GEMM used instead", true);
  }

  const bool crt = algorithm == Algorithm::Int8Crt;
  ProfilingRegion region(std::string(crt ? "ozaki::gemm[Int8Crt," : "ozaki::gemm[Int8Slices,") +
                         Int8Gemm<ExecSpace>::name() + "]");
  // op(B)^T: both operands become rows along K, split by the same kernels.  A row-major C is
  // computed as C^T = op(B)^T op(A)^T, so that the INT32 products (column-major) and the
  // recombination's writes run along C's contiguous index.
  const typename V::ConstMatrix opBt = transposed_if(opB, true);
  // (Not with prepared operands: their storage is made for their side.)
  const bool c_row_major =
      !any_prepared && C.stride(1) == 1 && C.stride(0) != 1 && shape.m > 1 && shape.n > 1;
  const typename V::Matrix Ct(
      C.data(), Kokkos::LayoutStride(C.extent(1), C.stride(1), C.extent(0), C.stride(0)));
  // Options as the drivers see them: Auto stays Auto (it may still pick native).
  Int8Outcome outcome;
  if (crt) {
    outcome = c_row_major ? Int8CrtGemm<ExecSpace>::run(space, opBt, opA, alpha, beta, Ct, options,
                                                        workspace, report)
                          : Int8CrtGemm<ExecSpace>::run(space, opA, opBt, alpha, beta, C, options,
                                                        workspace, report);
  } else {
    outcome = c_row_major
                  ? Int8SlicesGemm<ExecSpace>::run(space, opBt, opA, nullptr, nullptr, alpha, beta,
                                                   Ct, options, workspace, report)
                  : Int8SlicesGemm<ExecSpace>::run(space, opA, opBt, prepared_a, prepared_b, alpha,
                                                   beta, C, options, workspace, report);
  }
  if (outcome == Int8Outcome::NonFinite && any_prepared) {
    throw InvalidArgument(
        "the operand given as a View contains NaN or Inf, and the prepared operand keeps no FP64 "
        "values for native GEMM: pass both as Views for the IEEE result");
  }
  if (outcome == Int8Outcome::NonFinite) {
    // Slices cannot carry NaN or Inf; FP64 GEMM gives the IEEE result.
    return native("A or B contains NaN or Inf: native FP64 GEMM gives the IEEE result", true);
  }
  if (outcome == Int8Outcome::NativeFaster) {
    const std::string reason = report.reason;
    report = Report{};
    return native(reason, false);
  }
  return report;
}

}  // namespace Impl
}  // namespace ozaki
