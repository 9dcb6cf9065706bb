#pragma once
/// \file driver.hpp
/// ozaki::gemm on Kokkos::complex<double> Views: checks, early returns and native ZGEMM here;
/// every other algorithm runs the real GEMM of the embedding (embedding.hpp) through the real
/// dispatch, so that the complex product inherits, unchanged, the real schemes' exactness,
/// error bounds, automatic counts, Auto's choice and the same bits on every backend.
///
///   1. A row-major C is computed as C^T = op(B)^T op(A)^T (C^T then has unit stride along its
///      rows), as the real path does.
///   2. X = op(A) rows, Y = op(B)^T rows (conjugated where the transpose is 'C') are embedded
///      into X_e (2M x 2K) and Y_e (N x 2K) in the operand scratch.
///   3. The real dispatch computes C_e = alpha X_e Y_e^T + beta C_e.  With real alpha and beta
///      and C of unit stride along m, C_e is C itself seen as doubles (2M x N, strides 1 and
///      2 ldc); otherwise C_e is scratch with alpha = 1, beta = 0, and a last pass forms
///      C = alpha C_e + beta C in complex arithmetic.
///   4. Wherever the real dispatch runs native FP64 (Algorithm::Native, Auto's choice, NaN or
///      Inf, scratch that cannot be had under Auto), it runs native ZGEMM on the caller's
///      operands instead (Options::experimental.native_gemm), and C_e is never written.

#include <ozaki/errors.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/native.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/complex/embedding.hpp>
#include <ozaki/impl/crt/karatsuba.hpp>
#include <ozaki/impl/dispatch.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>

namespace ozaki {
namespace Impl {

/// 'N' -> N, 'T' -> T, 'C' -> conjugate transpose (complex data).
inline BlasOp parse_complex_op(const char* trans, const char* which) {
  const bool transpose = parse_trans(trans, which);  // throws on anything else
  return BlasOp{transpose, trans[0] == 'C' || trans[0] == 'c'};
}

/// The operand scratch of one complex call: X_e, Y_e and, where C cannot be C_e, C_e.
template <class ExecSpace>
struct ComplexEmbeddingRegion {
  typename Views<ExecSpace>::Rows x, y;  // empty where the operand is read in place
  typename Views<ExecSpace>::Matrix c;   // empty when C_e is C itself
  static ComplexEmbeddingRegion carve(Carver& carver, std::int64_t rows_x, std::int64_t rows_y,
                                      std::int64_t K, bool c_in_scratch, bool doubled = true,
                                      bool copy_x = true, bool copy_y = true) {
    using V = Views<ExecSpace>;
    ComplexEmbeddingRegion r;
    const std::int64_t x_rows = doubled ? 2 * rows_x : rows_x;
    if (copy_x) r.x = typename V::Rows(carver.take<double>(2 * x_rows * K), x_rows, 2 * K);
    if (copy_y) r.y = typename V::Rows(carver.take<double>(2 * rows_y * K), rows_y, 2 * K);
    if (c_in_scratch) {
      r.c = typename V::Matrix(carver.take<double>(2 * rows_x * rows_y),
                               Kokkos::LayoutStride(2 * rows_x, 1, rows_y, 2 * rows_x));
    }
    return r;
  }
  /// Bytes: 8 (4 R_x K + 2 R_y K) plus 16 R_x R_y where C_e is scratch; 8 (2 R_x K + 2 R_y K)
  /// undoubled (Karatsuba); less an operand read in place.
  static std::size_t bytes(std::int64_t rows_x, std::int64_t rows_y, std::int64_t K,
                           bool c_in_scratch, bool doubled = true, bool copy_x = true,
                           bool copy_y = true) {
    Carver counter(nullptr);
    carve(counter, rows_x, rows_y, K, c_in_scratch, doubled, copy_x, copy_y);
    return counter.used();
  }
};

/// X (R x K complex) as the undoubled embedding's real rows of 2K parts, read in place: where
/// its rows are K-contiguous and it is not conjugated, X seen as doubles is that embedding (a
/// Kokkos::complex<double> holds its real part, then its imaginary part), with a row stride of
/// twice X's.  Otherwise an empty view: the rows are copied (embed_complex_rows).
template <class ExecSpace>
typename Views<ExecSpace>::ConstMatrix complex_rows_in_place(
    const typename Views<ExecSpace>::ConstComplexMatrix& X, bool conjugate) {
  using Matrix = typename Views<ExecSpace>::ConstMatrix;
  const std::int64_t R = X.extent(0), K = X.extent(1);
  static_assert(sizeof(Kokkos::complex<double>) == 2 * sizeof(double), "complex as two doubles");
  if (conjugate || !(K <= 1 || X.stride(1) == 1) || X.data() == nullptr) return Matrix();
  return Matrix(reinterpret_cast<const double*>(X.data()),
                Kokkos::LayoutStride(R, 2 * static_cast<std::int64_t>(X.stride(0)), 2 * K, 1));
}

/// The body of ozaki::gemm for strided complex views (A, B as stored; transA/transB as given).
template <class ExecSpace>
Report gemm_complex_strided(const ExecSpace& space, const char transA[], const char transB[],
                            Kokkos::complex<double> alpha,
                            const typename Views<ExecSpace>::ConstComplexMatrix& A,
                            const typename Views<ExecSpace>::ConstComplexMatrix& B,
                            Kokkos::complex<double> beta,
                            const typename Views<ExecSpace>::ComplexMatrix& C,
                            const Options& options, ScratchBuffer<ExecSpace>& scratch,
                            ScratchBuffer<ExecSpace>& operands) {
  using V = Views<ExecSpace>;
  const auto call_start = std::chrono::steady_clock::now();
  if (const char* why = compat::unusable_here(space)) throw BackendError(why);
  const auto turn = instance_turn(space);
  // Every check before any kernel: a throw leaves C untouched.
  const BlasOp op_a = parse_complex_op(transA, "transA");
  const BlasOp op_b = parse_complex_op(transB, "transB");
  check_options(options);
  const typename V::ConstComplexMatrix opA = transposed_if(A, op_a.transpose);
  const typename V::ConstComplexMatrix opB = transposed_if(B, op_b.transpose);
  const Shape shape = check_operands(opA, opB, C);
  if (shape.k > std::numeric_limits<std::int64_t>::max() / 4) {
    throw InvalidArgument("K is too large for the complex embedding's 2K columns");
  }

  Report report;
  // Relative to |alpha| |A||B| with complex moduli: the real paths' bounds hold relative to the
  // embedding's |X_e||Y_e|, whose entries sum |ar||br| + |ai||bi| or |ar||bi| + |ai||br|, each
  // at most (|A||B|)_mn; a complex alpha and beta applied afterwards add sqrt(2) gamma_2 each.
  const double promise = native_complex_componentwise_bound(shape.k);
  const double scalars = 1.4142135623730951 * gamma_bound(4);
  const double real_promise = (promise - scalars) / (1 + scalars);  // the real paths' share
  auto finish = [&](Report r) {
    r.options = replay_options(options, r);
    return r;
  };
  // A real path's bound (Report::error_bound, DGEMM on the embedding's too) for the complex
  // call: a complex alpha and beta applied after it.
  auto complex_bound = [scalars](double real_bound) {
    return real_bound > 0 ? real_bound * (1 + scalars) + scalars : 0.0;
  };

  if (shape.m == 0 || shape.n == 0) {
    report.reason = "empty C: nothing to do";
    return finish(report);
  }
  const bool alpha_zero = alpha.real() == 0 && alpha.imag() == 0;
  if (shape.k == 0 || alpha_zero) {
    scale_complex(space, beta, C);
    report.reason =
        shape.k == 0 ? "K == 0: C = beta*C" : "alpha == 0: C = beta*C, A and B not read";
    return finish(report);
  }
  // Native ZGEMM on the caller's operands: the caller's callback where it gave one.
  auto native = [&, op_a, op_b] {
    if (options.experimental.native_gemm) {
      options.experimental.native_gemm();
    } else {
      NativeGemm<ExecSpace>::run(space, op_a, op_b, alpha, A, B, beta, C);
    }
  };
  const std::string native_backend =
      options.experimental.native_gemm ? "the caller's native GEMM" : NativeGemm<ExecSpace>::name();
  // The whole call as native ZGEMM, reported (`decision`: the Report so far).
  auto run_native = [&](Report decision, const std::string& why, bool fallback) {
    native();
    decision.algorithm = Algorithm::Native;
    decision.backend = native_backend;
    decision.reason = why;
    decision.fallback = fallback;
    decision.error_bound = promise;
    return finish(decision);
  };
  if (options.algorithm == Algorithm::Native) return run_native(report, "", false);
  if (StreamCapture<ExecSpace>::active(space)) {
    return run_native(report, stream_capture_reason, options.algorithm != Algorithm::Auto);
  }

  // 1. Row-major C: C^T = op(B)^T op(A)^T.
  const bool c_row_major =
      !has_unit_stride(C.extent(0), C.stride(0)) && has_unit_stride(C.extent(1), C.stride(1));
  const typename V::ComplexMatrix out = transposed_if(C, c_row_major);
  const typename V::ConstComplexMatrix opBt = transposed_if(opB, true);
  const typename V::ConstComplexMatrix X = c_row_major ? opBt : opA;
  const typename V::ConstComplexMatrix Y = c_row_major ? opA : opBt;
  const bool conj_x = c_row_major ? op_b.conjugate : op_a.conjugate;
  const bool conj_y = c_row_major ? op_a.conjugate : op_b.conjugate;
  const std::int64_t rows_x = X.extent(0), rows_y = Y.extent(0), K = shape.k;
  const bool c_is_ce =
      alpha.imag() == 0 && beta.imag() == 0 && has_unit_stride(out.extent(0), out.stride(0));

  // Auto decides before anything is embedded, on the plan of the form that would run (the
  // real dispatch and pipeline then decide the same), and where the rule may be accurate, from
  // a sample of rows read in place: wide exponent ranges take the accurate rule, which runs on
  // the embedding (2M x N x 2K).
  const Shape embedding_shape{2 * rows_x, rows_y, 2 * K};
  CallPlan plan = auto_first_plan(Shape{rows_x, rows_y, K}, options, true);
  const bool karatsuba_form = plan.complex_karatsuba;
  Algorithm scheme = options.algorithm;
  bool peaks_sampled = false;
  if (options.algorithm == Algorithm::Auto) {
    std::string why;
    scheme = choose_auto(space, plan, false, why);
    if (scheme == Algorithm::Int8Crt && crt_auto_may_stop_early(plan)) {
      constexpr std::int64_t sample = 64;
      const SampledPeaks q = sampled_peak_ratios(space, X, Y, sample);
      peaks_sampled = true;
      if (crt_native_wins_at_peaks(device_rates(space), embedding_shape, plan.crt_scaling, q.x, q.y,
                                   "a sample of rows", why)) {
        scheme = Algorithm::Native;
      }
    }
    if (scheme == Algorithm::Native) {
      report.seconds_decision =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count();
      return run_native(report, why, false);
    }
  }

  // 2. Karatsuba where scheme II with the fast rule may run: X and Y as undoubled rows of
  //    2K interleaved parts (the real pipeline scales them as the embedding's rows: the same
  //    norms), three INT8 products per modulus, both parts reconstructed into C itself.
  //    Otherwise, or where the data turns out to need the accurate rule, the real embedding.
  const std::int64_t allocations = scratch.allocations() + operands.allocations();
  const bool karatsuba_possible = karatsuba_form && scheme == Algorithm::Int8Crt;
  Options real_options = options;
  real_options.experimental.native_gemm = native;  // 4. native runs ZGEMM on the caller's operands
  std::string detour;
  // The embedded rows: copies, or an undoubled operand read in place (complex_rows_in_place:
  // op(B)^T of a column-major B, say, which saves its copy, 16 N K bytes of traffic and
  // scratch).
  typename V::ConstMatrix rows_xe, rows_ye;
  auto embed = [&](bool doubled, bool c_in_scratch, ComplexEmbeddingRegion<ExecSpace>& region) {
    const typename V::ConstMatrix x_in_place =
        doubled ? typename V::ConstMatrix() : complex_rows_in_place<ExecSpace>(X, conj_x);
    const typename V::ConstMatrix y_in_place = complex_rows_in_place<ExecSpace>(Y, conj_y);
    const bool copy_x = x_in_place.data() == nullptr, copy_y = y_in_place.data() == nullptr;
    const std::size_t bytes = ComplexEmbeddingRegion<ExecSpace>::bytes(
        rows_x, rows_y, K, c_in_scratch, doubled, copy_x, copy_y);
    Carver carver(operands.reserve(bytes));
    region = ComplexEmbeddingRegion<ExecSpace>::carve(carver, rows_x, rows_y, K, c_in_scratch,
                                                      doubled, copy_x, copy_y);
    if (copy_x) embed_complex_rows(space, X, conj_x, doubled, region.x);
    if (copy_y) embed_complex_rows(space, Y, conj_y, false, region.y);
    rows_xe = copy_x ? k_contiguous_rows<ExecSpace>(region.x) : x_in_place;
    rows_ye = copy_y ? k_contiguous_rows<ExecSpace>(region.y) : y_in_place;
    return bytes;
  };
  std::size_t embedding_bytes = 0;
  try {
    if (karatsuba_possible) {
      ComplexEmbeddingRegion<ExecSpace> region;
      embedding_bytes = embed(false, false, region);
      bool needs_embedding = false;
      const CrtComplexTarget<ExecSpace> target{out, alpha, beta, c_is_ce, &needs_embedding};
      GemmCall<ExecSpace> call = checked_call<ExecSpace>(
          "N", "T", rows_xe, rows_ye,
          typename V::Matrix(nullptr, Kokkos::LayoutStride(rows_x, 1, rows_y, rows_x)),
          real_options, nullptr, nullptr);
      call.complex = &target;
      call.peaks_sampled = peaks_sampled;
      call.promise = real_promise;
      // (The real scalars are placeholders: the target carries alpha and beta.  They must
      // not be 0, or the dispatch's "alpha == 0" return would write the shape-only C.)
      report = dispatch(space, call, 1.0, 1.0, real_options, scratch, call_start);
      report.error_bound = complex_bound(report.error_bound);
      if (!needs_embedding) {
        if (report.algorithm == Algorithm::Native) report.backend = native_backend;
        report.workspace_bytes += embedding_bytes;
        report.scratch_allocated = scratch.allocations() + operands.allocations() != allocations;
        return finish(report);
      }
      detour =
          "the data needs the accurate scaling rule, which Karatsuba does not run: the "
          "real embedding (4 products per modulus)";
    }
    real_options.experimental.complex_products = Experimental::ComplexProducts::Embedding;

    // 3. The real embedding: C_e = alpha X_e Y_e^T + beta C_e through the real dispatch.
    ComplexEmbeddingRegion<ExecSpace> region;
    embedding_bytes = embed(true, !c_is_ce, region);
    const typename V::Matrix Ce =
        c_is_ce ? typename V::Matrix(reinterpret_cast<double*>(out.data()),
                                     Kokkos::LayoutStride(2 * rows_x, 1, rows_y, 2 * out.stride(1)))
                : region.c;
    GemmCall<ExecSpace> call =
        checked_call<ExecSpace>("N", "T", rows_xe, rows_ye, Ce, real_options, nullptr, nullptr);
    call.peaks_sampled = peaks_sampled;
    call.promise = real_promise;
    report = dispatch(space, call, c_is_ce ? alpha.real() : 1.0, c_is_ce ? beta.real() : 0.0,
                      real_options, scratch, call_start);
    report.error_bound = complex_bound(report.error_bound);
    if (report.algorithm == Algorithm::Native) {
      report.backend = native_backend;
    } else if (!c_is_ce) {
      combine_complex(space, Ce, alpha, beta, out);
    }
    if (report.algorithm == Algorithm::Int8Crt) report.complex_products = 4;
  } catch (const ScratchUnavailable& e) {
    // The embedding's operand scratch (the real dispatch handles its own).  C is untouched.
    if (options.algorithm != Algorithm::Auto) throw;
    return run_native(Report{},
                      std::string(e.what()) + " (the complex embedding): native ZGEMM used instead",
                      true);
  }
  if (!detour.empty())
    report.reason = report.reason.empty() ? detour : detour + "; " + report.reason;
  report.workspace_bytes += embedding_bytes;
  report.scratch_allocated = scratch.allocations() + operands.allocations() != allocations;
  return finish(report);
}

}  // namespace Impl
}  // namespace ozaki
