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

/// One complex gemm call, in steps: the checks (the constructor: a throw leaves C untouched),
/// the early returns and native ZGEMM, Auto's decision, then Karatsuba or the real embedding.
template <class ExecSpace>
class ComplexGemm {
  using V = Views<ExecSpace>;

 public:
  ComplexGemm(const ExecSpace& space, const char transA[], const char transB[],
              Kokkos::complex<double> alpha, const typename V::ConstComplexMatrix& A,
              const typename V::ConstComplexMatrix& B, Kokkos::complex<double> beta,
              const typename V::ComplexMatrix& C, const Options& options,
              ScratchBuffer<ExecSpace>& scratch, ScratchBuffer<ExecSpace>& operands,
              std::chrono::steady_clock::time_point call_start, double promise, Triangle triangle,
              bool real_diagonal)
      : space_(space),
        op_a_(parse_complex_op(transA, "transA")),
        op_b_(parse_complex_op(transB, "transB")),
        alpha_(alpha),
        beta_(beta),
        A_(A),
        B_(B),
        C_(C),
        options_(checked(options)),
        scratch_(scratch),
        operands_(operands),
        call_start_(call_start),
        shape_(
            checked_shape(transposed_if(A, op_a_.transpose), transposed_if(B, op_b_.transpose), C)),
        promise_(promise > 0
                     ? promise
                     : native_complex_componentwise_bound(shape_.k, unit_roundoff_of(options))),
        real_promise_((promise_ - scalars()) / (1 + scalars())),
        triangle_(triangle),
        real_diagonal_(real_diagonal),
        rows_(orient()) {}

  Report run() {
    if (shape_.m == 0 || shape_.n == 0) {
      Report report;
      report.reason = "empty C: nothing to do";
      return finish(report);
    }
    if (triangle_ != Triangle::Full) return run_triangle();
    const bool alpha_zero = alpha_.real() == 0 && alpha_.imag() == 0;
    if (shape_.k == 0 || alpha_zero) {
      scale_c(space_, beta_, C_);
      Report report;
      report.reason =
          shape_.k == 0 ? "K == 0: C = beta*C" : "alpha == 0: C = beta*C, A and B not read";
      return finish(report);
    }
    if (options_.algorithm == Algorithm::Native) return run_native(Report{}, "", false);
    std::string why;
    // Where Auto declines from the shape as a capture would too, the call is the same captured
    // or not, and need not ask whether its stream is captured (dispatch.hpp, capture_matters).
    const bool declined = declined_from_shape(why);
    if (!declined && captured(space_)) return run_captured();
    // Auto decides before anything is embedded.
    const Algorithm scheme = declined ? Algorithm::Native : chosen_scheme(why);
    if (scheme == Algorithm::Native) {
      Report report;
      report.seconds_decision =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start_).count();
      return run_native(report, why, false);
    }
    return run_int8(scheme);
  }

 private:
  /// A call that writes one triangle of C (its caller's native_gemm sees to the triangle):
  /// Karatsuba's call on the triangle (dispatch_triangle) where Auto or Int8Crt takes it
  /// eagerly in Karatsuba's form; everything else, the real embedding included (it writes all
  /// of C_e), runs only that native_gemm.
  Report run_triangle() {
    const bool alpha_zero = alpha_.real() == 0 && alpha_.imag() == 0;
    std::string why;
    Algorithm scheme = Algorithm::Native;
    if (captured(space_)) {
      why = stream_capture_reason;
    } else if (shape_.k > 0 && !alpha_zero && options_.algorithm != Algorithm::Native) {
      scheme = chosen_scheme(why);
    }
    if (scheme != Algorithm::Int8Crt || !karatsuba_form_) {
      if (why.empty() && scheme != Algorithm::Native) {
        why = "complex data outside Karatsuba's form writes all of C: the triangle in blocks";
      }
      return run_native(Report{}, why, false);
    }
    Options real_options = options_;
    real_options.experimental.native_gemm = [this] { native(); };
    Report report;
    allocations_ = scratch_.allocations() + operands_.allocations();
    if (karatsuba(real_options, report)) return report;
    return run_native(Report{},
                      "the data needs the accurate scaling rule, which Karatsuba does not run "
                      "and the real embedding runs on all of C: the triangle in blocks",
                      false);
  }

  /// The slack of a complex alpha and beta applied after a real path: sqrt(2) gamma_2 each.
  static double scalars() { return 1.4142135623730951 * gamma_bound(4); }

  static const Options& checked(const Options& options) {
    check_options(options);
    return options;
  }
  static Shape checked_shape(const typename V::ConstComplexMatrix& opA,
                             const typename V::ConstComplexMatrix& opB,
                             const typename V::ComplexMatrix& C) {
    const Shape shape = check_operands(opA, opB, C);
    if (shape.k > std::numeric_limits<std::int64_t>::max() / 4) {
      throw InvalidArgument("K is too large for the complex embedding's 2K columns");
    }
    return shape;
  }

  Report finish(Report r) const {
    r.options = replay_options(options_, r);
    return r;
  }

  /// A real path's bound (Report::error_bound, DGEMM on the embedding's too) for the complex
  /// call, relative to |alpha| |A||B| with complex moduli: the real paths' bounds hold relative
  /// to the embedding's |X_e||Y_e|, whose entries sum |ar||br| + |ai||bi| or |ar||bi| +
  /// |ai||br|, each at most (|A||B|)_mn; a complex alpha and beta applied after it add
  /// scalars() each.
  static double complex_bound(double real_bound) {
    return real_bound > 0 ? real_bound * (1 + scalars()) + scalars() : 0.0;
  }

  /// The complex call's bound from its real dispatch's Report: where that ran native, it ran
  /// native ZGEMM on the caller's operands, whose own bound is ZGEMM's for K (not the real
  /// embedding's for 2K, made complex).
  double stated_bound(const Report& real) const {
    return real.algorithm == Algorithm::Native ? native_complex_componentwise_bound(shape_.k)
                                               : complex_bound(real.error_bound);
  }

  /// Native ZGEMM on the caller's operands: the caller's callback where it gave one.
  void native() const {
    if (options_.experimental.native_gemm) {
      options_.experimental.native_gemm();
    } else {
      NativeGemm<ExecSpace>::run(space_, op_a_, op_b_, alpha_, A_, B_, beta_, C_);
    }
  }
  std::string native_backend() const {
    return options_.experimental.native_gemm ? "the caller's native GEMM"
                                             : NativeGemm<ExecSpace>::name();
  }

  /// The whole call as native ZGEMM, reported (`decision`: the Report so far).
  Report run_native(Report decision, const std::string& why, bool fallback) const {
    native();
    decision.algorithm = Algorithm::Native;
    decision.backend = native_backend();
    decision.reason = why;
    decision.fallback = fallback;
    decision.error_bound = promise_;
    return finish(decision);
  }

  /// A call on a stream being captured into a graph.  Where the options take Karatsuba's form,
  /// the real dispatch's captured path (dispatch.hpp, run_captured) on rows that are read in
  /// place or copied inside the graph (crt/captured.hpp): Karatsuba with the count from the
  /// shape and the device's verdict, whose other branch is native ZGEMM, or native ZGEMM on
  /// the stream where the real path declines.  Otherwise native ZGEMM on the stream.
  Report run_captured() {
    const Oriented& o = rows_;
    const CallPlan plan = auto_first_plan(Shape{o.rows_x, o.rows_y, shape_.k}, options_, true);
    if (!plan.complex_karatsuba) {
      return run_native(Report{},
                        std::string(stream_capture_reason) +
                            " (inside a graph complex data runs Karatsuba's form only, which "
                            "the accurate rule and the real embedding's products are not)",
                        options_.algorithm != Algorithm::Auto);
    }
    bool needs_embedding = false;
    CrtComplexTarget<ExecSpace> target{o.out, alpha_, beta_, o.c_is_ce, &needs_embedding};
    const std::int64_t length = 2 * shape_.k;
    const auto rows_of = [&](const typename V::ConstComplexMatrix& X, bool conjugate,
                             CrtComplexRowsToCopy<ExecSpace>& copy) {
      const typename V::ConstMatrix in_place = complex_rows_in_place<ExecSpace>(X, conjugate);
      if (in_place.data() != nullptr) return in_place;
      copy = CrtComplexRowsToCopy<ExecSpace>{X, conjugate};
      // The copy's shape (crt/captured.hpp carves and fills it inside the graph).
      return k_contiguous_rows<ExecSpace>(typename V::Rows(nullptr, X.extent(0), length));
    };
    const typename V::ConstMatrix x = rows_of(o.X, o.conj_x, target.copy_x);
    const typename V::ConstMatrix y = rows_of(o.Y, o.conj_y, target.copy_y);
    target.native_on = [this](const ExecSpace& on) {
      NativeGemm<ExecSpace>::run(on, op_a_, op_b_, alpha_, A_, B_, beta_, C_);
    };
    Options real_options = options_;
    real_options.experimental.native_gemm = [this] { native(); };
    Report report = karatsuba_dispatch(x, y, target, real_options);
    if (report.algorithm == Algorithm::Native) report.backend = native_backend();
    return finish(report);
  }

  /// Karatsuba's real call on the rows x and y (read in place, copied, or the shape of the
  /// copies a captured call makes) through the real dispatch, writing C through `target`; its
  /// Report with the complex call's bound.  (The real scalars are placeholders: the target
  /// carries alpha and beta.  They must not be 0, or the dispatch's "alpha == 0" return would
  /// write the shape-only C.)
  Report karatsuba_dispatch(const typename V::ConstMatrix& x, const typename V::ConstMatrix& y,
                            const CrtComplexTarget<ExecSpace>& target,
                            const Options& real_options) {
    const Oriented& o = rows_;
    GemmCall<ExecSpace> call = checked_call<ExecSpace>(
        "N", "T", x, y,
        typename V::Matrix(nullptr, Kokkos::LayoutStride(o.rows_x, 1, o.rows_y, o.rows_x)),
        real_options, nullptr, nullptr);
    call.complex = &target;
    call.peaks_sampled = peaks_sampled_;
    call.promise = real_promise_;
    call.triangle = o.triangle;
    Report report = dispatch(space_, call, 1.0, 1.0, real_options, scratch_, call_start_);
    report.error_bound = stated_bound(report);
    return report;
  }

  /// 1. Row-major C: C^T = op(B)^T op(A)^T.  X holds the rows of the product's left factor,
  /// Y those of its right one, both along K (conjugated where the transpose is 'C').
  struct Oriented {
    typename V::ComplexMatrix out;
    typename V::ConstComplexMatrix X, Y;
    bool conj_x = false, conj_y = false;
    std::int64_t rows_x = 0, rows_y = 0;
    /// C is C_e seen as doubles: real alpha and beta, C of unit stride along m.
    bool c_is_ce = false;
    Triangle triangle = Triangle::Full;  // of out
  };
  Oriented orient() const {
    const typename V::ConstComplexMatrix opA = transposed_if(A_, op_a_.transpose);
    const typename V::ConstComplexMatrix opB = transposed_if(B_, op_b_.transpose);
    const bool c_row_major = stored_row_major(C_);
    const typename V::ConstComplexMatrix opBt = transposed_if(opB, true);
    Oriented o;
    o.out = transposed_if(C_, c_row_major);
    o.X = c_row_major ? opBt : opA;
    o.Y = c_row_major ? opA : opBt;
    o.conj_x = c_row_major ? op_b_.conjugate : op_a_.conjugate;
    o.conj_y = c_row_major ? op_a_.conjugate : op_b_.conjugate;
    o.rows_x = o.X.extent(0);
    o.rows_y = o.Y.extent(0);
    o.c_is_ce = alpha_.imag() == 0 && beta_.imag() == 0 &&
                has_unit_stride(o.out.extent(0), o.out.stride(0));
    o.triangle = c_row_major ? transposed(triangle_) : triangle_;
    return o;
  }

  /// Whether Auto hands the call to native GEMM from its shape alone in a way a capture would
  /// too (declines_captured_too), with the reason in `why`.
  bool declined_from_shape(std::string& why) {
    if (options_.algorithm != Algorithm::Auto) return false;
    const CallPlan plan =
        auto_first_plan(Shape{rows_.rows_x, rows_.rows_y, shape_.k}, options_, true);
    return choose_auto(space_, plan, false, why) == Algorithm::Native &&
           declines_captured_too(plan);
  }

  /// Auto's decision on the plan of the form that would run (the real dispatch and pipeline
  /// then decide the same), and where the rule may be accurate, from a sample of rows read in
  /// place: wide exponent ranges take the accurate rule, which runs on the embedding
  /// (2M x N x 2K).  An explicit algorithm is kept.
  Algorithm chosen_scheme(std::string& why) {
    const std::int64_t K = shape_.k;
    const CallPlan plan = auto_first_plan(Shape{rows_.rows_x, rows_.rows_y, K}, options_, true);
    karatsuba_form_ = plan.complex_karatsuba;
    if (options_.algorithm != Algorithm::Auto) return options_.algorithm;
    const Algorithm scheme = choose_auto(space_, plan, false, why);
    if (scheme != Algorithm::Int8Crt || !crt_auto_may_stop_early(plan)) return scheme;
    constexpr std::int64_t sample = 64;
    const SampledPeaks q = sampled_peak_ratios(space_, rows_.X, rows_.Y, sample);
    peaks_sampled_ = true;
    const Shape embedding_shape{2 * rows_.rows_x, rows_.rows_y, 2 * K};
    if (crt_native_wins_at_peaks(device_rates(space_), embedding_shape, plan.crt_scaling, q.x, q.y,
                                 plan.unit_roundoff, "a sample of rows", why)) {
      return Algorithm::Native;
    }
    return scheme;
  }

  /// 2. Karatsuba where scheme II with the fast rule may run, else (or where the data turns out
  /// to need the accurate rule) 3. the real embedding; 4. native runs ZGEMM on the caller's
  /// operands.  Operand scratch that cannot be had leaves C untouched: Auto runs native ZGEMM.
  Report run_int8(Algorithm scheme) {
    allocations_ = scratch_.allocations() + operands_.allocations();
    Options real_options = options_;
    real_options.experimental.native_gemm = [this] { native(); };
    try {
      std::string detour;
      if (karatsuba_form_ && scheme == Algorithm::Int8Crt) {
        Report report;
        if (karatsuba(real_options, report)) return report;
        detour =
            "the data needs the accurate scaling rule, which Karatsuba does not run: the "
            "real embedding (4 products per modulus)";
      }
      real_options.experimental.complex_products = Experimental::ComplexProducts::Embedding;
      Report report = embedding(real_options);
      if (!detour.empty())
        report.reason = report.reason.empty() ? detour : detour + "; " + report.reason;
      return finished_int8(report);
    } catch (const ScratchUnavailable& e) {
      // The embedding's operand scratch (the real dispatch handles its own).  C is untouched.
      if (options_.algorithm != Algorithm::Auto) throw;
      return run_native(
          Report{}, std::string(e.what()) + " (the complex embedding): native ZGEMM used instead",
          true);
    }
  }

  /// The embedding's operand scratch in the Report.
  Report finished_int8(Report report) const {
    report.workspace_bytes += embedding_bytes_;
    report.scratch_allocated = scratch_.allocations() + operands_.allocations() != allocations_;
    return finish(report);
  }

  /// The embedded rows into rows_xe_ and rows_ye_: copies, or an undoubled operand read in
  /// place (complex_rows_in_place: op(B)^T of a column-major B, say, which saves its copy,
  /// 16 N K bytes of traffic and scratch).  Returns the region carved.
  ComplexEmbeddingRegion<ExecSpace> embed(bool doubled, bool c_in_scratch) {
    const Oriented& o = rows_;
    const std::int64_t K = shape_.k;
    // One operand for both sides (A A^T, A A^H: zsyrk's and zherk's calls): X's rows, in place
    // or one copy, serve as Y's too, so that the real pipeline sees one operand
    // (OperandPlan::same_rows); where one side alone is conjugated the rows are read as they
    // are and that side's residues take the conjugate (conjugate_x_, conjugate_y_).
    const bool y_is_x = !doubled && same_matrix(o.X, o.Y);
    conjugate_x_ = y_is_x && o.conj_x && !o.conj_y;
    conjugate_y_ = y_is_x && o.conj_y && !o.conj_x;
    const bool read_conj_x = o.conj_x && !conjugate_x_;
    const typename V::ConstMatrix x_in_place =
        doubled ? typename V::ConstMatrix() : complex_rows_in_place<ExecSpace>(o.X, read_conj_x);
    const typename V::ConstMatrix y_in_place = complex_rows_in_place<ExecSpace>(o.Y, o.conj_y);
    const bool copy_x = x_in_place.data() == nullptr;
    const bool copy_y = y_in_place.data() == nullptr && !y_is_x;
    embedding_bytes_ = ComplexEmbeddingRegion<ExecSpace>::bytes(o.rows_x, o.rows_y, K, c_in_scratch,
                                                                doubled, copy_x, copy_y);
    Carver carver(operands_.reserve(embedding_bytes_));
    const ComplexEmbeddingRegion<ExecSpace> region = ComplexEmbeddingRegion<ExecSpace>::carve(
        carver, o.rows_x, o.rows_y, K, c_in_scratch, doubled, copy_x, copy_y);
    if (copy_x) embed_complex_rows(space_, o.X, read_conj_x, doubled, region.x);
    if (copy_y) embed_complex_rows(space_, o.Y, o.conj_y, false, region.y);
    rows_xe_ = copy_x ? k_contiguous_rows<ExecSpace>(region.x) : x_in_place;
    rows_ye_ = y_is_x ? rows_xe_ : copy_y ? k_contiguous_rows<ExecSpace>(region.y) : y_in_place;
    return region;
  }

  /// 2. X and Y as undoubled rows of 2K interleaved parts (the real pipeline scales them as the
  /// embedding's rows: the same norms), three INT8 products per modulus, both parts
  /// reconstructed into C itself.  False where the data needs the accurate rule (the
  /// embedding then runs); otherwise `report` is the call's.
  bool karatsuba(const Options& real_options, Report& report) {
    const Oriented& o = rows_;
    embed(false, false);
    bool needs_embedding = false;
    CrtComplexTarget<ExecSpace> target{o.out, alpha_, beta_, o.c_is_ce, &needs_embedding};
    target.real_diagonal = real_diagonal_;
    target.conjugate_x = conjugate_x_;
    target.conjugate_y = conjugate_y_;
    report = karatsuba_dispatch(rows_xe_, rows_ye_, target, real_options);
    if (needs_embedding) return false;
    if (report.algorithm == Algorithm::Native) report.backend = native_backend();
    report = finished_int8(report);
    return true;
  }

  /// 3. The real embedding: C_e = alpha X_e Y_e^T + beta C_e through the real dispatch.
  Report embedding(const Options& real_options) {
    const Oriented& o = rows_;
    const ComplexEmbeddingRegion<ExecSpace> region = embed(true, !o.c_is_ce);
    const typename V::Matrix Ce =
        o.c_is_ce ? typename V::Matrix(
                        reinterpret_cast<double*>(o.out.data()),
                        Kokkos::LayoutStride(2 * o.rows_x, 1, o.rows_y, 2 * o.out.stride(1)))
                  : region.c;
    GemmCall<ExecSpace> call =
        checked_call<ExecSpace>("N", "T", rows_xe_, rows_ye_, Ce, real_options, nullptr, nullptr);
    call.peaks_sampled = peaks_sampled_;
    call.promise = real_promise_;
    Report report = dispatch(space_, call, o.c_is_ce ? alpha_.real() : 1.0,
                             o.c_is_ce ? beta_.real() : 0.0, real_options, scratch_, call_start_);
    report.error_bound = stated_bound(report);
    if (report.algorithm == Algorithm::Native) {
      report.backend = native_backend();
    } else if (!o.c_is_ce) {
      combine_complex(space_, Ce, alpha_, beta_, o.out);
    }
    if (report.algorithm == Algorithm::Int8Crt) report.complex_products = 4;
    return report;
  }

  const ExecSpace space_;
  const BlasOp op_a_, op_b_;
  const Kokkos::complex<double> alpha_, beta_;
  const typename V::ConstComplexMatrix A_, B_;
  const typename V::ComplexMatrix C_;
  const Options& options_;
  ScratchBuffer<ExecSpace>& scratch_;
  ScratchBuffer<ExecSpace>& operands_;
  const std::chrono::steady_clock::time_point call_start_;
  const Shape shape_;
  const double promise_, real_promise_;
  const Triangle triangle_;   // the entries of C the call writes (GemmCall::triangle)
  const bool real_diagonal_;  // herk's (CrtComplexTarget::real_diagonal)
  const Oriented rows_;
  bool karatsuba_form_ = false;   // Auto's first plan takes Karatsuba's form (chosen_scheme)
  bool peaks_sampled_ = false;    // Auto sampled the peak ratios (chosen_scheme)
  std::int64_t allocations_ = 0;  // both scratch buffers' allocations before the INT8 paths
  std::size_t embedding_bytes_ = 0;
  typename V::ConstMatrix rows_xe_, rows_ye_;       // the embedded rows (embed)
  bool conjugate_x_ = false, conjugate_y_ = false;  // ... one of them read unconjugated (embed)
};

/// The body of ozaki::gemm for strided complex views (A, B as stored; transA/transB as given).
/// `triangle`: the entries of C the call writes (GemmCall::triangle; the caller's native_gemm
/// sees to them where the call declines); `real_diagonal`: herk's
/// (CrtComplexTarget::real_diagonal).
template <class ExecSpace>
Report gemm_complex_strided(const ExecSpace& space, const char transA[], const char transB[],
                            Kokkos::complex<double> alpha,
                            const typename Views<ExecSpace>::ConstComplexMatrix& A,
                            const typename Views<ExecSpace>::ConstComplexMatrix& B,
                            Kokkos::complex<double> beta,
                            const typename Views<ExecSpace>::ComplexMatrix& C,
                            const Options& options, ScratchBuffer<ExecSpace>& scratch,
                            ScratchBuffer<ExecSpace>& operands, double promise = 0,
                            Triangle triangle = Triangle::Full, bool real_diagonal = false) {
  const auto call_start = std::chrono::steady_clock::now();
  if (const char* why = compat::unusable_here(space)) throw BackendError(why);
  const auto turn = instance_turn(space);
  return ComplexGemm<ExecSpace>(space, transA, transB, alpha, A, B, beta, C, options, scratch,
                                operands, call_start, promise, triangle, real_diagonal)
      .run();
}

}  // namespace Impl
}  // namespace ozaki
