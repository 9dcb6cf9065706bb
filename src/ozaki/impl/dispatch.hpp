#pragma once
/// \file dispatch.hpp
/// ozaki::gemm after the public entry has turned the caller's Views into strided ones: checks,
/// early returns, the algorithm (Auto: auto.hpp), then one of
///   native FP64 GEMM                (common/native.hpp)
///   cuBLAS's FP64 emulation         (EmulationBackend, backend.hpp)
///   Ozaki scheme I, Int8Slices      (slices/driver.hpp)
///   Ozaki scheme II, Int8Crt        (crt/driver.hpp)
/// A scheme's pipeline may still hand back to native FP64 (NaN/Inf inputs, or Auto once it
/// knows the count the data needs); C is then untouched until native runs.

#include <ozaki/errors.hpp>
#include <ozaki/impl/auto.hpp>
#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/native.hpp>
#include <ozaki/impl/common/pipeline.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/crt/captured.hpp>
#include <ozaki/impl/crt/driver.hpp>
#include <ozaki/impl/slices/driver.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

namespace ozaki {
namespace Impl {

/// One call's arguments after the checks: A and B as stored, op(A) and op(B), the shape, and
/// the prepared operands (a prepared operand's view is only the shape of op(X), data null).
template <class ExecSpace>
struct GemmCall {
  using V = Views<ExecSpace>;
  bool trans_a = false, trans_b = false;
  typename V::ConstMatrix A, B, opA, opB;
  typename V::Matrix C;
  Shape shape;
  const SliceStorage<ExecSpace>* prepared_a = nullptr;
  const SliceStorage<ExecSpace>* prepared_b = nullptr;
  /// Complex Karatsuba (complex/driver.hpp): opA and opB hold complex rows as interleaved
  /// real rows of 2K, C is only the shape M x N, and scheme II writes this target instead.
  const CrtComplexTarget<ExecSpace>* complex = nullptr;
  /// Auto's sampled-rows test already ran (CallPlan::peaks_sampled).
  bool peaks_sampled = false;
  /// Where nonzero, the componentwise bound the call must keep instead of native FP64 GEMM's
  /// for its K (CallPlan::promise): complex/driver.hpp passes native ZGEMM's.
  double promise = 0;
  /// The entries of C the call writes (CallPlan::triangle): a triangular call runs scheme II
  /// on them or, for whatever else it would run, only Options::experimental::native_gemm, and
  /// the caller sees to the triangle (dispatch_triangle).
  Triangle triangle = Triangle::Full;
  bool any_prepared() const { return prepared_a != nullptr || prepared_b != nullptr; }
};

/// The rules for prepared operands; throws before anything runs.
template <class ExecSpace>
void check_prepared(const GemmCall<ExecSpace>& call, const Options& o) {
  const SliceStorage<ExecSpace>*a = call.prepared_a, *b = call.prepared_b;
  if (a == nullptr && b == nullptr) return;
  if ((a != nullptr && call.trans_a) || (b != nullptr && call.trans_b)) {
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
  if (o.slices && *o.slices != S) {
    throw InvalidArgument("options.slices = " + std::to_string(*o.slices) +
                          " differs from the prepared operand's " + std::to_string(S));
  }
  if (a != nullptr && a->reversed) throw InvalidArgument("operand prepared for B passed as A");
  if (b != nullptr && !b->reversed) throw InvalidArgument("operand prepared for A passed as B");
}

/// Every check on the arguments, before any kernel runs (a throw leaves C untouched).
template <class ExecSpace>
GemmCall<ExecSpace> checked_call(const char transA[], const char transB[],
                                 const typename Views<ExecSpace>::ConstMatrix& A,
                                 const typename Views<ExecSpace>::ConstMatrix& B,
                                 const typename Views<ExecSpace>::Matrix& C, const Options& options,
                                 const SliceStorage<ExecSpace>* prepared_a,
                                 const SliceStorage<ExecSpace>* prepared_b) {
  GemmCall<ExecSpace> call;
  call.trans_a = parse_trans(transA, "transA");
  call.trans_b = parse_trans(transB, "transB");
  call.A = A;
  call.B = B;
  call.C = C;
  call.prepared_a = prepared_a;
  call.prepared_b = prepared_b;
  check_options(options);
  check_prepared(call, options);
  call.opA = transposed_if(A, call.trans_a);
  call.opB = transposed_if(B, call.trans_b);
  call.shape = check_operands(call.opA, call.opB, C);
  return call;
}

/// The Report's reason for a call made while its stream is captured into a graph that runs
/// native FP64 GEMM there (followed by why scheme II does not run inside the graph).
constexpr const char* stream_capture_reason =
    "the stream is being captured into a graph: native FP64 GEMM on the stream";

/// Native FP64 GEMM, reported with its reason (in `report`, which may carry the decision's
/// cost already).
template <class ExecSpace>
Report run_native(const ExecSpace& space, const GemmCall<ExecSpace>& call, const Options& options,
                  double alpha, double beta, std::string why, bool fallback,
                  Report report = Report{}) {
  ProfilingRegion region("ozaki::gemm[Native]");
  if (options.experimental.native_gemm) {
    options.experimental.native_gemm();  // the caller's own FP64 GEMM of this call (options.hpp)
    report.backend = "the caller's native GEMM";
  } else {
    NativeGemm<ExecSpace>::run(space, call.trans_a, call.trans_b, alpha, call.A, call.B, beta,
                               call.C);
    report.backend = NativeGemm<ExecSpace>::name();
  }
  report.algorithm = Algorithm::Native;
  report.fallback = fallback;
  report.reason = std::move(why);
  report.error_bound = native_componentwise_bound(call.shape.k);
  return report;
}

/// Algorithm::CublasEmulation where the backend has it; false with `why_not` otherwise.
template <class ExecSpace>
bool run_emulation(const ExecSpace& space, const GemmCall<ExecSpace>& call, double alpha,
                   double beta, const Options& options, ScratchBuffer<ExecSpace>& scratch,
                   Report& report, std::string& why_not) {
  using Emulation = EmulationBackend<ExecSpace>;
  ProfilingRegion region("ozaki::gemm[CublasEmulation]");
  ColumnMajorGemm g;
  if (!Emulation::available) {
    return Emulation::run(space, false, false, 0, 0, 0, 0, nullptr, 0, nullptr, 0, 0, nullptr, 0, 0,
                          nullptr, 0, why_not);
  }
  if (!as_column_major(BlasOp{call.trans_a, false}, BlasOp{call.trans_b, false}, call.A, call.B,
                       call.C, g)) {
    why_not = "an operand has no unit stride, and cuBLAS needs column- or row-major matrices";
    return false;
  }
  // 8 bits per slice as for Int8Slices, at most the 55 bits cuBLAS documents for FP64.
  const int bits = options.slices ? std::min(bits_per_slice * *options.slices, 55) : 0;
  const std::size_t bytes = Emulation::workspace_bytes(g.m, g.n, g.k, bits);
  const std::int64_t limit = resolved_workspace_limit(options);
  if (static_cast<std::int64_t>(bytes) > limit) {
    why_not = "its workspace of " + std::to_string(bytes) +
              " bytes exceeds the workspace limit of " + std::to_string(limit) + " bytes";
    return false;
  }
  unsigned char* memory = nullptr;
  try {
    memory = scratch.reserve(bytes);
  } catch (const BackendError& e) {
    why_not = e.what();
    return false;
  }
  if (!Emulation::run(space, g.op_x.transpose, g.op_y.transpose, g.m, g.n, g.k, alpha, g.x, g.ldx,
                      g.y, g.ldy, beta, g.c, g.ldc, bits, memory, bytes, why_not)) {
    return false;
  }
  report.algorithm = Algorithm::CublasEmulation;
  report.backend = "cuBLAS";
  report.slices = options.slices.value_or(0);
  report.workspace_bytes = bytes;
  return true;
}

/// The operands of an INT8 scheme as rows along K, and the C they write.  op(B)^T: both
/// operands become rows along K, split by the same kernels.  A row-major C is computed as
/// C^T = op(B)^T op(A)^T, so that the INT32 products (column-major) and the recombination's
/// writes run along C's contiguous index (not with prepared operands: their storage is made
/// for their side).
template <class ExecSpace>
struct RowsAlongK {
  typename Views<ExecSpace>::ConstMatrix a, b;
  typename Views<ExecSpace>::Matrix out;
  Shape shape;
  Triangle triangle = Triangle::Full;         // of out
  bool strided_a = false, strided_b = false;  // rows not K-contiguous
};

template <class ExecSpace>
RowsAlongK<ExecSpace> rows_along_k(const GemmCall<ExecSpace>& call) {
  const auto& C = call.C;
  const bool c_row_major = call.complex == nullptr && !call.any_prepared() && C.stride(1) == 1 &&
                           C.stride(0) != 1 && call.shape.m > 1 && call.shape.n > 1;
  const auto opBt = transposed_if(call.opB, true);
  RowsAlongK<ExecSpace> r;
  r.a = c_row_major ? opBt : call.opA;
  r.b = c_row_major ? call.opA : opBt;
  r.out = transposed_if(C, c_row_major);
  r.shape = c_row_major ? Shape{call.shape.n, call.shape.m, call.shape.k} : call.shape;
  r.triangle = c_row_major ? transposed(call.triangle) : call.triangle;
  r.strided_a = r.shape.k > 1 && r.a.stride(1) != 1;
  r.strided_b = r.shape.k > 1 && r.b.stride(1) != 1;
  return r;
}

/// Int8Slices or Int8Crt (rows_along_k).
template <class ExecSpace>
Int8Outcome run_int8(const ExecSpace& space, const GemmCall<ExecSpace>& call, Algorithm scheme,
                     double alpha, double beta, const Options& options,
                     ScratchBuffer<ExecSpace>& scratch, Report& report,
                     std::chrono::steady_clock::time_point call_start) {
  ProfilingRegion region(std::string("ozaki::gemm[") + to_string(scheme) + "," +
                         Int8Gemm<ExecSpace>::name() + "]");
  if (call.complex != nullptr && scheme != Algorithm::Int8Crt) {
    *call.complex->needs_embedding = true;  // Karatsuba is scheme II's only
    return Int8Outcome::NeedsEmbedding;
  }
  const RowsAlongK<ExecSpace> rows = rows_along_k(call);
  const SliceStorage<ExecSpace>* prepared = call.prepared_a ? call.prepared_a : call.prepared_b;
  // Scheme II pads its INT8 products as its backend runs them fastest; scheme I keeps the
  // 16-byte padding of its slice format (prepared operands and the serial oracle share it).
  const std::int64_t pad = scheme == Algorithm::Int8Crt ? Int8Gemm<ExecSpace>::padding : 16;
  if (options.experimental.graph_products) {
    DeviceBranch<ExecSpace>::prepare(space);  // for later calls captured into graphs
  }
  CallPlan plan = make_plan(rows.shape, options, prepared != nullptr ? prepared->slices : 0, pad);
  plan.complex_karatsuba = call.complex != nullptr;
  plan.peaks_sampled = call.peaks_sampled;
  if (call.promise > 0) plan.promise = call.promise;
  plan.triangle = rows.triangle;
  if (scheme == Algorithm::Int8Crt) {
    OperandPlan ops = crt_operand_plan<ExecSpace>(plan, rows.strided_a, rows.strided_b);
    ops.same_rows = same_matrix(rows.a, rows.b);
    PipelineState<ExecSpace> state(space, plan, rows.a, rows.b, ops, scratch, report, call_start);
    return run_crt(state, call.complex, alpha, beta, rows.out);
  }
  const bool split_a = call.prepared_a == nullptr, split_b = call.prepared_b == nullptr;
  PipelineState<ExecSpace> state(
      space, plan, rows.a, rows.b,
      slices_operand_plan<ExecSpace>(plan, split_a, split_b, rows.strided_a, rows.strided_b),
      scratch, report, call_start);
  return run_slices(state, call.prepared_a, call.prepared_b, alpha, beta, rows.out);
}

/// run_int8, and where scheme II's scratch cannot be had under the library's own limit, again
/// with the least scratch it runs with.  Under that limit scheme II may take more than 8 GiB
/// for its fastest pass width on large M and K (crt/layout.hpp); its narrowest passes are of
/// 1024 columns (C is still untouched: scratch is had before any pass writes it).  Under the
/// caller's limit the call already asked for the least the limit allows.
template <class ExecSpace>
Int8Outcome run_int8_or_narrowest(const ExecSpace& space, const GemmCall<ExecSpace>& call,
                                  Algorithm scheme, double alpha, double beta,
                                  const Options& options, ScratchBuffer<ExecSpace>& scratch,
                                  Report& report,
                                  std::chrono::steady_clock::time_point call_start) {
  const Report before = report;
  try {
    return run_int8(space, call, scheme, alpha, beta, options, scratch, report, call_start);
  } catch (const ScratchUnavailable& e) {
    if (scheme != Algorithm::Int8Crt || options.workspace_limit) throw;
    Options narrowest = options;
    narrowest.workspace_limit = 1;
    report = before;
    const Int8Outcome outcome =
        run_int8(space, call, scheme, alpha, beta, narrowest, scratch, report, call_start);
    report.reason = std::string(e.what()) + ": passes of 1024 columns instead";
    return outcome;
  }
}

/// The call's Report after an INT8 pipeline ended with `outcome`: its own where Done, else
/// native FP64 GEMM with the reason (or, where prepared operands hold no FP64 values, an
/// exception), or for complex data that needs the accurate rule, the embedding's turn.
template <class ExecSpace>
Report after_int8(const ExecSpace& space, const GemmCall<ExecSpace>& call, double alpha,
                  double beta, const Options& options, Int8Outcome outcome, Report& report) {
  switch (outcome) {
    case Int8Outcome::Done: return report;
    case Int8Outcome::NonFinite:
      if (call.any_prepared()) {
        throw InvalidArgument(
            "the operand given as a View contains NaN or Inf, and the prepared operand keeps no "
            "FP64 values for native GEMM: pass both as Views for the IEEE result");
      }
      // Slices and residues cannot carry NaN or Inf; FP64 GEMM gives the IEEE result.
      return run_native(space, call, options, alpha, beta,
                        "A or B contains NaN or Inf: native FP64 GEMM gives the IEEE result", true);
    case Int8Outcome::NeedsEmbedding:
      report.reason = "complex data that needs the accurate scaling rule: the real embedding";
      return report;  // the complex driver runs the embedding; C untouched
    case Int8Outcome::Uncertified:
      if (call.any_prepared()) {
        throw InvalidArgument(report.reason +
                              "; the prepared operand keeps no FP64 values for native GEMM: pass "
                              "both as Views");
      }
      return run_native(space, call, options, alpha, beta, report.reason,
                        options.algorithm != Algorithm::Auto);
    case Int8Outcome::NativeFaster: break;
  }
  Report decision;
  decision.seconds_decision = report.seconds_decision;
  return run_native(space, call, options, alpha, beta, report.reason, false, decision);
}

/// Whether a captured call runs scheme II inside the graph (where
/// Options::experimental.graph_products allows): Auto where scheme II with the
/// captured count (crt_capture_moduli) beats native FP64 GEMM by the cost model, or Int8Crt
/// with an automatic count under the fast or automatic rule; why not otherwise.  (Scheme I,
/// cuBLAS's emulation, a fixed count and the accurate rule decide on the host.)
template <class ExecSpace>
bool captured_crt_applies(const ExecSpace& space, const GemmCall<ExecSpace>& call, const Options& o,
                          std::string& why) {
  if (!o.experimental.graph_products) {
    why = " (scheme II inside graphs is off: Options::experimental.graph_products)";
    return false;
  }
  if (o.algorithm != Algorithm::Auto && o.algorithm != Algorithm::Int8Crt) {
    why = " (only Int8Crt runs inside a graph)";
    return false;
  }
  if (o.moduli || o.crt_scaling == CrtScaling::Accurate) {
    why =
        " (inside a graph Int8Crt takes its count from the shape under the fast rule: a fixed "
        "count or the accurate rule is decided on the host)";
    return false;
  }
  if (!Int8Gemm<ExecSpace>::supported(space, why)) {
    why = " (" + why + ")";
    return false;
  }
  if (o.algorithm != Algorithm::Auto) return true;
  CallPlan plan = make_plan(call.shape, o);
  plan.complex_karatsuba = call.complex != nullptr;
  const int moduli = crt_capture_moduli(call.shape.k, unit_roundoff_of(o));
  const double cost = crt_plan_cost(device_rates(space), plan, moduli);
  if (!native_is_faster(cost)) return true;
  why =
      " (" + native_faster_reason("Int8Crt with " + std::to_string(moduli) + " moduli", cost) + ")";
  return false;
}

/// A call on a stream being captured into a graph: scheme II inside the graph where
/// captured_crt_applies and the backend can branch on the device (crt/captured.hpp), native
/// FP64 GEMM on the stream otherwise.  The scheme II plan is an Int8Crt call's with the
/// captured count and the fast rule, its passes in order on one stream; a complex call's
/// (call.complex: Karatsuba) is the eager Karatsuba call's with that count, and its native
/// branch is the complex call's native GEMM.
template <class ExecSpace>
Report run_captured(const ExecSpace& space, const GemmCall<ExecSpace>& call, double alpha,
                    double beta, const Options& options, ScratchBuffer<ExecSpace>& scratch,
                    std::chrono::steady_clock::time_point call_start) {
  const bool fallback = options.algorithm != Algorithm::Auto;
  std::string why;
  if (!captured_crt_applies(space, call, options, why)) {
    return run_native(space, call, options, alpha, beta, stream_capture_reason + why, fallback);
  }
  Options captured_options = options;
  captured_options.algorithm = Algorithm::Int8Crt;
  captured_options.moduli = crt_capture_moduli(call.shape.k, unit_roundoff_of(options));
  captured_options.crt_scaling = CrtScaling::Fast;
  captured_options.experimental.overlap = false;
  captured_options.time_phases = false;
  const RowsAlongK<ExecSpace> rows = rows_along_k(call);
  CallPlan plan = make_plan(rows.shape, captured_options, 0, Int8Gemm<ExecSpace>::padding);
  plan.complex_karatsuba = call.complex != nullptr;
  if (call.promise > 0) plan.promise = call.promise;
  Report report;
  PipelineState<ExecSpace> state(space, plan, rows.a, rows.b,
                                 crt_operand_plan<ExecSpace>(plan, rows.strided_a, rows.strided_b),
                                 scratch, report, call_start);
  const std::function<void(const ExecSpace&)> native = [&](const ExecSpace& on) {
    if (call.complex != nullptr) {
      call.complex->native_on(on);
    } else {
      NativeGemm<ExecSpace>::run(on, call.trans_a, call.trans_b, alpha, call.A, call.B, beta,
                                 call.C);
    }
  };
  if (!run_crt_captured(state, alpha, beta, rows.out, native, why, call.complex)) {
    return run_native(space, call, options, alpha, beta,
                      std::string(stream_capture_reason) + " (" + why + ")", fallback);
  }
  report.reason = crt_captured_reason(plan.moduli);
  report.seconds_decision =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count();
  return report;
}

/// A call that writes one triangle of C (GemmCall::triangle; not empty, no prepared operands):
/// scheme II, whose passes multiply and reconstruct only the triangle's entries, where Auto
/// or Int8Crt takes it eagerly; everything else (K = 0, alpha = 0, a captured stream, native
/// FP64, the other schemes, every fallback) runs only the caller's native_gemm, which sees to
/// the triangle (syrk.hpp notes the decline and runs its recursion once the call has
/// returned): the others write all of C.  Complex data (Karatsuba's call) that needs
/// the accurate rule returns NeedsEmbedding's Report, C untouched, for the complex driver.
template <class ExecSpace>
Report dispatch_triangle(const ExecSpace& space, const GemmCall<ExecSpace>& call, double alpha,
                         double beta, const Options& options, ScratchBuffer<ExecSpace>& scratch,
                         std::chrono::steady_clock::time_point call_start) {
  if (!options.experimental.native_gemm || call.any_prepared()) {
    throw std::logic_error("ozaki: a triangular call needs Views and its own native_gemm");
  }
  std::string why;
  Algorithm scheme = options.algorithm;
  if (call.shape.k == 0 || alpha == 0) {
    scheme = Algorithm::Native;
  } else if (captured(space)) {
    scheme = Algorithm::Native;
    why = stream_capture_reason;
  } else if (scheme == Algorithm::Auto) {
    CallPlan plan = make_plan(call.shape, options);
    plan.complex_karatsuba = call.complex != nullptr;
    scheme = choose_auto(space, plan, false, why);
  }
  if (why.empty() && scheme != Algorithm::Native && scheme != Algorithm::Int8Crt) {
    why = std::string(to_string(scheme)) + " writes all of C: the triangle in blocks instead";
  }
  if (scheme != Algorithm::Int8Crt || !Int8Gemm<ExecSpace>::supported(space, why)) {
    return run_native(space, call, options, alpha, beta, why, false);
  }
  Report report;
  try {
    const Int8Outcome outcome = run_int8_or_narrowest(space, call, scheme, alpha, beta, options,
                                                      scratch, report, call_start);
    return after_int8(space, call, alpha, beta, options, outcome, report);
  } catch (const ScratchUnavailable& e) {
    if (options.algorithm != Algorithm::Auto) throw;
    return run_native(space, call, options, alpha, beta,
                      std::string(e.what()) + ": native FP64 GEMM used instead", true);
  }
}

/// Auto's choice for a call from its shape: a scheme, or Native with `why`.
/// `capture_matters`: whether the call must still ask if its stream is being captured (on
/// CUDA a runtime query, where the rest of a declined call's decision is host arithmetic):
/// not where Auto declines as a capture would too (declines_captured_too), and the call is
/// then the same captured or not.
template <class ExecSpace>
Algorithm auto_from_shape(const ExecSpace& space, const GemmCall<ExecSpace>& call,
                          const Options& options, std::string& why, bool& capture_matters) {
  // (The Karatsuba call's shape already holds rows of 2K parts: complex/driver.hpp made the
  // same choice on auto_first_plan of the complex shape.)
  CallPlan plan = make_plan(call.shape, options);
  plan.complex_karatsuba = call.complex != nullptr;
  const Algorithm scheme = choose_auto(space, plan, call.any_prepared(), why);
  capture_matters = scheme != Algorithm::Native || !declines_captured_too(plan);
  return scheme;
}

/// The algorithms in order after the checks: early returns, Auto's choice, then the one
/// chosen, with the fallbacks to native FP64.
template <class ExecSpace>
Report dispatch(const ExecSpace& space, const GemmCall<ExecSpace>& call, double alpha, double beta,
                const Options& options, ScratchBuffer<ExecSpace>& scratch,
                std::chrono::steady_clock::time_point call_start) {
  const typename Views<ExecSpace>::Matrix& C = call.C;
  auto decided = [&](Report r) {
    r.seconds_decision =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count();
    return r;
  };
  Report report;
  if (call.shape.m == 0 || call.shape.n == 0) {
    report.reason = "empty C: nothing to do";
    return report;
  }
  if (call.triangle != Triangle::Full) {
    return dispatch_triangle(space, call, alpha, beta, options, scratch, call_start);
  }
  if (call.shape.k == 0 || alpha == 0) {
    // BLAS semantics: C = beta C, and A and B are not read.
    ProfilingRegion region("ozaki::gemm[scale]");
    scale_c(space, beta, C);
    report.reason =
        call.shape.k == 0 ? "K == 0: C = beta*C" : "alpha == 0: C = beta*C, A and B not read";
    return report;
  }
  std::string why;
  // After exit began, a backend whose library is torn down (cuBLAS) is not called at all: a
  // clear error, C untouched, where the call would otherwise crash inside that library.
  if (Int8Gemm<ExecSpace>::torn_down(why)) throw BackendError(why);
  if (options.algorithm == Algorithm::Native)
    return run_native(space, call, options, alpha, beta, "", false);
  Algorithm scheme = options.algorithm;
  bool capture_matters = true;
  if (scheme == Algorithm::Auto)
    scheme = auto_from_shape(space, call, options, why, capture_matters);
  if (capture_matters && captured(space)) {
    // Inside a graph capture nothing may wait for the device or allocate outside stream order:
    // scheme II with its count from the shape and its verdict on the device, or native FP64
    // GEMM (docs/design.md §7, "Streams, graph capture, and declining for free").
    if (call.any_prepared()) {
      throw BackendError(
          "the stream is being captured into a graph, where prepared operands cannot run (no "
          "FP64 values for native GEMM): capture Views");
    }
    return run_captured(space, call, alpha, beta, options, scratch, call_start);
  }
  if (options.algorithm == Algorithm::Auto) {
    if (scheme == Algorithm::Native) {
      return run_native(space, call, options, alpha, beta, std::move(why), false,
                        decided(Report{}));
    }
    report = decided(report);
  }
  if (scheme == Algorithm::CublasEmulation) {
    if (run_emulation(space, call, alpha, beta, options, scratch, report, why)) return report;
    report.fallback = true;
    report.reason = "CublasEmulation unavailable: " + why + "; Int8Slices used instead";
    scheme = Algorithm::Int8Slices;
  }
  if (!Int8Gemm<ExecSpace>::supported(space, why)) {
    if (call.any_prepared()) throw BackendError(why + ": prepared operands need INT8 GEMMs");
    return run_native(space, call, options, alpha, beta, why + ": native FP64 GEMM used instead",
                      true);
  }
  Int8Outcome outcome = Int8Outcome::Done;
  try {
    outcome = run_int8_or_narrowest(space, call, scheme, alpha, beta, options, scratch, report,
                                    call_start);
  } catch (const ScratchUnavailable& e) {
    // C is untouched: scratch is had before any pass writes it.  An explicit algorithm says
    // so with the exception; Auto takes native FP64 GEMM, which needs none, and reports it.
    if (options.algorithm != Algorithm::Auto || call.any_prepared()) throw;
    return run_native(space, call, options, alpha, beta,
                      std::string(e.what()) + ": native FP64 GEMM used instead", true);
  }
  return after_int8(space, call, alpha, beta, options, outcome, report);
}

/// The caller's options with what this call chose made explicit (Report::options).
inline Options replay_options(Options o, const Report& r) {
  switch (r.algorithm) {
    case Algorithm::Int8Crt:
      o.moduli = r.moduli;
      o.crt_scaling = r.crt_scaling;
      break;
    case Algorithm::Int8Slices: o.slices = r.slices; break;
    case Algorithm::None:  // no product: any algorithm gives the same C
      return o;
    default: break;
  }
  o.algorithm = r.algorithm;
  o.experimental.native_gemm = nullptr;  // the caller's callback belongs to this call only
  return o;
}

/// The body of ozaki::gemm for strided views.  A and B are as stored; transA/transB as given.
/// `promise`, where nonzero, is the componentwise bound the call keeps instead of native GEMM's
/// (GemmCall::promise: FP32 data leaves room for its result's rounding, single/driver.hpp).
template <class ExecSpace>
Report gemm_strided(const ExecSpace& space, const char transA[], const char transB[], double alpha,
                    const typename Views<ExecSpace>::ConstMatrix& A,
                    const typename Views<ExecSpace>::ConstMatrix& B, double beta,
                    const typename Views<ExecSpace>::Matrix& C, const Options& options,
                    ScratchBuffer<ExecSpace>& scratch, const SliceStorage<ExecSpace>* prepared_a,
                    const SliceStorage<ExecSpace>* prepared_b, double promise = 0,
                    Triangle triangle = Triangle::Full) {
  const auto call_start = std::chrono::steady_clock::now();
  if (const char* why = compat::unusable_here(space)) throw BackendError(why);
  const auto turn = instance_turn(space);
  GemmCall<ExecSpace> call =
      checked_call<ExecSpace>(transA, transB, A, B, C, options, prepared_a, prepared_b);
  call.promise = promise;
  call.triangle = triangle;
  const std::int64_t allocations = scratch.allocations();
  Report report = dispatch(space, call, alpha, beta, options, scratch, call_start);
  report.scratch_allocated = scratch.allocations() != allocations;
  report.options = replay_options(options, report);
  return report;
}

}  // namespace Impl
}  // namespace ozaki
