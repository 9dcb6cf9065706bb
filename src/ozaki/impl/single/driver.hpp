#pragma once
/// \file single/driver.hpp
/// FP32 data: ozaki::gemm on float and Kokkos::complex<float> Views, and on float operands
/// with a double C (docs/design.md §9).
///
/// Every float is a double, so staging the operands to FP64 loses nothing: the FP64 pipeline
/// (real, or complex/driver.hpp) runs on the staged operands with the counts and promise of the
/// accuracy asked for (Options::accuracy: FP32 GEMM's by default for a float C), writing
/// T = alpha op(A) op(B) in FP64, and one kernel rounds T + beta C once to C's precision.  The
/// promise the pipeline keeps leaves room for that rounding (staged_promise), so the result
/// keeps native GEMM's componentwise bound in C's precision.  With a double C there is no
/// rounding step: the pipeline writes C itself.
///
/// Native FP32 GEMM (KokkosBlas::gemm, cuBLAS's SGEMM and CGEMM on the CUDA backend) runs the
/// call where Auto's cost model prefers it, for Algorithm::Native, and inside a CUDA graph
/// capture.

#include <ozaki/errors.hpp>
#include <ozaki/impl/auto.hpp>
#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/bounds.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/native.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/complex/driver.hpp>
#include <ozaki/impl/dispatch.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>

namespace ozaki {
namespace Impl {

template <class T>
struct is_fp32_scalar
    : std::integral_constant<bool,
                             std::is_same<std::remove_cv_t<T>, float>::value ||
                                 std::is_same<std::remove_cv_t<T>, Kokkos::complex<float>>::value> {
};

/// The FP64 type FP32 data is staged to: double, or Kokkos::complex<double>.
template <class T>
using staged_scalar_t = std::conditional_t<std::is_same<std::remove_cv_t<T>, float>::value, double,
                                           Kokkos::complex<double>>;

/// Rounding the staged result once to FP32: T + beta C is formed in FP64 (beta C exactly for
/// real data, at most two roundings of u64 for complex) and then rounded to FP32 (u32 relative
/// to each part, so to the modulus), at most fp32_output_rounding relative to |T + beta C|.
constexpr double fp32_output_rounding = fp32_unit_roundoff + 4 * fp64_unit_roundoff;

/// The promise the FP64 pipeline keeps so that the rounded result keeps `promise`: with
/// |T - alpha AB| <= P |alpha| |A||B| and the rounding r above,
///     |C - (alpha AB + beta C0)| <= (P + r (1 + P)) (|alpha| |A||B| + |beta C0|) = promise.
inline double staged_promise(double promise) {
  return (promise - fp32_output_rounding) / (1 + fp32_output_rounding);
}

/// A compact rows x cols layout, row-major or column-major.
inline Kokkos::LayoutStride compact_layout(std::int64_t rows, std::int64_t cols, bool row_major) {
  return row_major ? Kokkos::LayoutStride(rows, cols, cols, 1)
                   : Kokkos::LayoutStride(rows, 1, cols, rows);
}

/// X (rows x cols, any strides) copied to FP64 at `to`, compact, column-major where X is or
/// where X has no unit stride, row-major where X is: the pipeline then sees the layout the
/// caller gave (and transposes nothing).  Returns the staged view.
template <class ExecSpace, class T>
typename StridedViews<ExecSpace, staged_scalar_t<T>>::Matrix stage(
    const ExecSpace& space, const typename StridedViews<ExecSpace, T>::ConstMatrix& X,
    staged_scalar_t<T>* to) {
  using Staged = typename StridedViews<ExecSpace, staged_scalar_t<T>>::Matrix;
  const std::int64_t rows = X.extent(0), cols = X.extent(1);
  const bool row_major = stored_row_major(X);
  const Staged S(to, compact_layout(rows, cols, row_major));
  // Consecutive threads run along the unit stride of both X and S (grid_for: no 64-bit
  // division per element).
  grid_for(
      "ozaki::stage_fp32", space, row_major ? cols : rows, row_major ? rows : cols,
      KOKKOS_LAMBDA(const std::int64_t fast, const std::int64_t slow) {
        const std::int64_t r = row_major ? slow : fast, c = row_major ? fast : slow;
        S(r, c) = static_cast<staged_scalar_t<T>>(X(r, c));
      });
  return S;
}

/// C = fl(T + beta C) in C's precision (beta == 0: C is not read, as BLAS does).
template <class ExecSpace, class T, class Staged>
void round_staged_result(const ExecSpace& space, const Staged& staged, T beta,
                         const typename StridedViews<ExecSpace, T>::Matrix& C) {
  using T64 = staged_scalar_t<T>;
  const std::int64_t rows = C.extent(0), cols = C.extent(1);
  const bool row_major = stored_row_major(C);
  const T64 beta64 = static_cast<T64>(beta);
  const bool beta_zero = beta == T(0);
  grid_for(
      "ozaki::round_fp32", space, row_major ? cols : rows, row_major ? rows : cols,
      KOKKOS_LAMBDA(const std::int64_t fast, const std::int64_t slow) {
        const std::int64_t r = row_major ? slow : fast, c = row_major ? fast : slow;
        const T64 sum =
            beta_zero ? staged(r, c) : staged(r, c) + beta64 * static_cast<T64>(C(r, c));
        C(r, c) = static_cast<T>(sum);
      });
}

/// The options of the FP64 call made for an FP32 C: MatchNative resolved to FP32's accuracy.
inline Options fp32_call_options(Options o) {
  if (o.accuracy == Accuracy::MatchNative) o.accuracy = Accuracy::Fp32;
  return o;
}

/// Auto's first decision for FP32 data from the shape alone: the FP32 accuracy's counts
/// against native FP32 GEMM (auto_first_choice).
template <class ExecSpace>
Algorithm fp32_first_choice(const ExecSpace& space, const Shape& s, const Options& o, bool complex,
                            std::string& why) {
  return auto_first_choice(space, s, fp32_call_options(o), complex, fp32_yardstick(space), why);
}

/// Native FP32 GEMM's componentwise bound for inner length K (complex: CGEMM's).
inline double native_fp32_bound(std::int64_t K, bool complex) {
  return complex ? native_complex_componentwise_bound(K, fp32_unit_roundoff)
                 : native_componentwise_bound(K, fp32_unit_roundoff);
}

/// One call on FP32 operands.  `T`: the operands' scalar (float or Kokkos::complex<float>);
/// `CT`: C's (T, or its FP64 type for a mixed-precision call whose result stays in FP64).
template <class ExecSpace, class T, class CT>
class SingleGemm {
  using In = StridedViews<ExecSpace, T>;
  using Out = StridedViews<ExecSpace, CT>;
  using T64 = staged_scalar_t<T>;
  using Staged = StridedViews<ExecSpace, T64>;
  static constexpr bool complex = !std::is_same<T, float>::value;
  static constexpr bool rounds = std::is_same<CT, T>::value;  // C is FP32

 public:
  SingleGemm(const ExecSpace& space, const char transA[], const char transB[], CT alpha,
             const typename In::ConstMatrix& A, const typename In::ConstMatrix& B, CT beta,
             const typename Out::Matrix& C, const Options& options,
             ScratchBuffer<ExecSpace>& scratch, ScratchBuffer<ExecSpace>& operands,
             ScratchBuffer<ExecSpace>& staged)
      : space_(space),
        trans_a_(transA),
        trans_b_(transB),
        alpha_(alpha),
        beta_(beta),
        A_(A),
        B_(B),
        C_(C),
        options_(options),
        scratch_(scratch),
        operands_(operands),
        staged_(staged) {}

  Report run() {
    check_options(options_);
    const BlasOp op_a = parse_op(trans_a_, "transA"), op_b = parse_op(trans_b_, "transB");
    const Shape shape =
        check_operands(transposed_if(A_, op_a.transpose), transposed_if(B_, op_b.transpose), C_);
    if (!rounds && captured(space_)) {
      // Staging needs scratch, which may not be allocated while the stream is captured, and
      // no native GEMM takes FP32 operands into an FP64 C.
      throw BackendError(
          "FP32 operands with an FP64 C cannot run while the stream is being captured into a "
          "graph: stage them to FP64 before the capture");
    }
    if (options_.algorithm == Algorithm::Native) return native(op_a, op_b, "");
    if (shape.m == 0 || shape.n == 0) {
      Report report;
      report.reason = "empty C: nothing to do";
      return report;
    }
    if (shape.k == 0 || alpha_ == CT(0)) {
      // BLAS semantics: C = beta C, and A and B are not read.
      scale_c(space_, beta_, C_);
      Report report;
      report.reason =
          shape.k == 0 ? "K == 0: C = beta*C" : "alpha == 0: C = beta*C, A and B not read";
      return report;
    }
    // Where Auto takes native FP32 GEMM from the shape, so would a capture: the call is the
    // same captured or not, and need not ask whether its stream is captured.
    if (rounds && options_.algorithm == Algorithm::Auto) {
      std::string why;
      if (fp32_first_choice(space_, shape, options_, complex, why) == Algorithm::Native) {
        return native(op_a, op_b, why);
      }
    }
    if (captured(space_)) {
      return native(op_a, op_b,
                    "the stream is being captured into a graph: native FP32 GEMM on the stream",
                    options_.algorithm != Algorithm::Auto);
    }
    try {
      return staged_call(shape);
    } catch (const ScratchUnavailable& e) {
      // C is untouched: the staging scratch is had before anything is written, and an FP32 C
      // is written only after the FP64 call.  An explicit algorithm says so with the
      // exception; Auto takes native FP32 GEMM, which needs none, and reports it.
      if (!rounds || options_.algorithm != Algorithm::Auto) throw;
      return native(op_a, op_b, std::string(e.what()) + ": native FP32 GEMM used instead", true);
    }
  }

 private:
  BlasOp parse_op(const char* trans, const char* which) const {
    if constexpr (complex) {
      return parse_complex_op(trans, which);
    } else {
      return BlasOp{parse_trans(trans, which), false};
    }
  }

  /// The options of the FP64 call: the accuracy resolved to a precision (a float C's
  /// MatchNative is FP32's, a double C's FP64's).  An FP32 C's FP64 call goes without the
  /// caller's native GEMM (Options::experimental.native_gemm): that GEMM writes C, whereas the
  /// FP64 call writes the staged result that is rounded into C after it; so the FP64 call's
  /// fallbacks (NaN/Inf, ...) run native FP64 GEMM on the staged operands.
  Options staged_options() const {
    if constexpr (!rounds) {
      return options_;
    } else {
      Options o = fp32_call_options(options_);
      o.experimental.native_gemm = nullptr;
      return o;
    }
  }

  /// The promise of the FP64 call (0: the FP64 call's own): for an FP32 C at FP32's accuracy,
  /// native FP32 GEMM's bound less the room the final rounding takes; with a double C, or FP64
  /// accuracy asked for, the FP64 call's own (the rounding to FP32 then dominates the bound).
  double promise(const Shape& shape) const {
    if (!rounds || staged_options().accuracy != Accuracy::Fp32) return 0;
    return staged_promise(native_fp32_bound(shape.k, complex));
  }

  /// Native GEMM in C's precision on the caller's views (the caller's own, where it gave one:
  /// Options::experimental.native_gemm).
  Report native(BlasOp op_a, BlasOp op_b, const std::string& why, bool fallback = false) {
    Report report;
    if constexpr (rounds) {
      if (options_.experimental.native_gemm) {
        options_.experimental.native_gemm();  // the caller's own GEMM of this call (options.hpp)
        report.backend = "the caller's native GEMM";
      } else {
        NativeGemm<ExecSpace>::run(space_, op_a, op_b, alpha_, A_, B_, beta_, C_);
        report.backend = NativeGemm<ExecSpace>::name();
      }
      report.algorithm = Algorithm::Native;
      report.reason = why;
      report.fallback = fallback;
      const std::int64_t K = op_a.transpose ? A_.extent(0) : A_.extent(1);
      report.error_bound = native_fp32_bound(K, complex);
      report.options = replay_options(options_, report);
      return report;
    } else {
      // FP32 operands with a double C: native FP64 GEMM on the staged operands.
      (void)op_a;
      (void)op_b;
      Options o = options_;
      o.algorithm = Algorithm::Native;
      Report r = staged_call_with(o, Shape{});
      r.reason = why;
      r.fallback = fallback;
      return r;
    }
  }

  Report staged_call(const Shape& shape) { return staged_call_with(staged_options(), shape); }

  /// Stages A and B (and for an FP32 C the result), runs the FP64 call, rounds.
  Report staged_call_with(const Options& o, const Shape& shape) {
    const std::size_t a = A_.extent(0) * A_.extent(1), b = B_.extent(0) * B_.extent(1);
    const std::size_t c = rounds ? C_.extent(0) * C_.extent(1) : 0;
    Carver count(nullptr);
    count.take<T64>(a);
    count.take<T64>(b);
    count.take<T64>(c);
    Carver carve(staged_.reserve(count.used()));
    T64* a64 = carve.take<T64>(a);
    T64* b64 = carve.take<T64>(b);
    T64* c64 = carve.take<T64>(c);
    const auto A64 = stage<ExecSpace, T>(space_, A_, a64);
    const auto B64 = stage<ExecSpace, T>(space_, B_, b64);
    Report r;
    if constexpr (rounds) {
      const std::int64_t rows = C_.extent(0), cols = C_.extent(1);
      const typename Staged::Matrix C64(c64, compact_layout(rows, cols, stored_row_major(C_)));
      r = fp64_call(o, static_cast<T64>(alpha_), A64, B64, T64(0), C64, promise(shape));
      round_staged_result<ExecSpace, T>(space_, C64, beta_, C_);
      if (r.error_bound > 0) {
        r.error_bound += fp32_output_rounding * (1 + r.error_bound);
      }
    } else {
      (void)c64;
      (void)shape;
      r = fp64_call(o, alpha_, A64, B64, beta_, C_, 0);
    }
    r.options = replay_options(options_, r);
    r.options.accuracy = options_.accuracy;
    return r;
  }

  template <class Matrix>
  Report fp64_call(const Options& o, T64 alpha, const typename Staged::Matrix& A64,
                   const typename Staged::Matrix& B64, T64 beta, const Matrix& C64,
                   double promise) {
    const typename Staged::ConstMatrix A(A64), B(B64);
    if constexpr (complex) {
      return gemm_complex_strided<ExecSpace>(space_, trans_a_, trans_b_, alpha, A, B, beta, C64, o,
                                             scratch_, operands_, promise);
    } else {
      return gemm_strided<ExecSpace>(space_, trans_a_, trans_b_, alpha, A, B, beta, C64, o,
                                     scratch_, nullptr, nullptr, promise);
    }
  }

  const ExecSpace space_;
  const char* const trans_a_;
  const char* const trans_b_;
  const CT alpha_, beta_;
  const typename In::ConstMatrix A_, B_;
  const typename Out::Matrix C_;
  const Options& options_;
  ScratchBuffer<ExecSpace>& scratch_;
  ScratchBuffer<ExecSpace>& operands_;
  ScratchBuffer<ExecSpace>& staged_;
};

}  // namespace Impl
}  // namespace ozaki
