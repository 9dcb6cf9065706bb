#pragma once
/// \file trsm.hpp
/// ozaki::trsm's recursion (docs/design.md §12.2): op(A) X = alpha B (or X op(A) = alpha B) is
/// halved until the diagonal blocks have at most `leaf` rows; the off-diagonal block's update
/// of the unsolved half is one GEMM (Int8Crt, Int8Slices, Auto or native, as Options say), the
/// diagonal blocks are solved by FP64 substitution, one right-hand side per thread.

#include <ozaki/errors.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/level3/common.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// The diagonal block [b0, b1) of op(A) solved by substitution in FP64 (dot form), forward
/// or backward: side L, op(A) X = B on rows [b0, b1), one column of B per thread; side R,
/// X op(A) = B on columns [b0, b1), one row of B per thread.
template <class ExecSpace, class ConstMatrix, class Matrix>
void substitute(const ExecSpace& space, const ConstMatrix& A, const Matrix& B, std::int64_t b0,
                std::int64_t b1, bool left, Op op, bool forward, bool unit) {
  using T = typename Matrix::non_const_value_type;
  const bool transposed = op != Op::None, conjugate = op == Op::ConjugateTranspose;
  // op(A)(r, s) as stored
  const auto op_a = [=] KOKKOS_FUNCTION(std::int64_t r, std::int64_t s) {
    return conj_if(transposed ? A(s, r) : A(r, s), conjugate);
  };
  if (left) {
    flat_for(
        "ozaki::trsm_substitute_left", space, B.extent(1), KOKKOS_LAMBDA(const std::int64_t j) {
          for (std::int64_t step = 0; step < b1 - b0; ++step) {
            const std::int64_t i = forward ? b0 + step : b1 - 1 - step;
            T x = B(i, j);
            const std::int64_t first = forward ? b0 : i + 1, last = forward ? i : b1;
            for (std::int64_t s = first; s < last; ++s) x -= op_a(i, s) * B(s, j);
            B(i, j) = unit ? x : x / op_a(i, i);
          }
        });
  } else {
    flat_for(
        "ozaki::trsm_substitute_right", space, B.extent(0), KOKKOS_LAMBDA(const std::int64_t i) {
          for (std::int64_t step = 0; step < b1 - b0; ++step) {
            const std::int64_t j = forward ? b0 + step : b1 - 1 - step;
            T x = B(i, j);
            const std::int64_t first = forward ? b0 : j + 1, last = forward ? j : b1;
            for (std::int64_t s = first; s < last; ++s) x -= B(i, s) * op_a(s, j);
            B(i, j) = unit ? x : x / op_a(j, j);
          }
        });
  }
}

template <class ExecSpace, class T>
class TriangularSolve {
 public:
  using ConstMatrix = typename StridedViews<ExecSpace, T>::ConstMatrix;
  using Matrix = typename StridedViews<ExecSpace, T>::Matrix;

  /// Checks every argument before anything is written (a throw leaves B untouched).
  TriangularSolve(const ExecSpace& space, const char side[], const char uplo[], const char trans[],
                  const char diag[], const T& alpha, const ConstMatrix& A, const Matrix& B,
                  const Options& options, Level3Scratch<ExecSpace>& scratch)
      : space_(space),
        left_(parse_choice(side, "side", 'L', 'R')),
        op_(parse_op<T>(trans, "trans", "NTC")),
        unit_diagonal_(parse_choice(diag, "diag", 'U', 'N')),
        alpha_(alpha),
        A_(A),
        B_(B),
        options_(options),
        scratch_(scratch) {
    const bool upper = parse_choice(uplo, "uplo", 'U', 'L');
    // op(A) is lower triangular where A is lower and not transposed, or upper and transposed.
    op_lower_ = upper == (op_ != Op::None);
    const std::int64_t n = left_ ? B.extent(0) : B.extent(1);
    if (static_cast<std::int64_t>(A.extent(0)) != n ||
        static_cast<std::int64_t>(A.extent(1)) != n) {
      std::ostringstream os;
      os << "trsm: A is " << A.extent(0) << " x " << A.extent(1) << " but B is " << B.extent(0)
         << " x " << B.extent(1) << ": A must be " << n << " x " << n << " (side "
         << (left_ ? 'L' : 'R') << ")";
      throw InvalidArgument(os.str());
    }
    if (overlaps(B, A)) throw InvalidArgument("trsm: B overlaps A in memory (B must not alias A)");
    check_options(options);
    check_tuning(options.experimental);
    if (const char* why = compat::unusable_here(space)) throw BackendError(why);
    leaf_ = leaf_rows<ExecSpace>(options, 64, 128);
  }

  Report run() {
    const std::int64_t n = A_.extent(0);
    Report& report = sum_.report();
    if (B_.extent(0) == 0 || B_.extent(1) == 0) return report;
    // B = alpha B first, as BLAS does (alpha = 0: zeros, B not read).
    if (alpha_ != T(1)) scale_c(space_, alpha_, B_);
    if (alpha_ == T(0)) {
      report.reason = "alpha = 0: B = 0, no solve";
      return report;
    }
    const double bound = left_ ? solve_left(0, n) : solve_right(0, n);
    if (report.algorithm == Algorithm::None) {
      report.algorithm = Algorithm::Native;
      report.reason = "op(A) is one diagonal block: FP64 substitution, no GEMM";
    }
    report.error_bound = sum_.bounded() ? bound + fp64_unit_roundoff : 0;  // u: alpha B
    return report;
  }

 private:
  /// The bound of §12.2 for a block solved by substitution, relative to |op(A)||X| + |B|:
  /// gamma_b (complex data: sqrt(2) gamma_(b+6), for the complex products and division).
  static double substitution_bound(std::int64_t b) {
    const double u = fp64_unit_roundoff;
    if (std::is_same<T, double>::value) return gamma_bound(static_cast<double>(b), u);
    return 1.4142135623730951 * gamma_bound(static_cast<double>(b) + 6, u);
  }

  /// After solving one half (bound `solved`) and updating the other by a GEMM (the Report's
  /// bound `update`, plus gamma_2 for its beta C = B), the other half's solve (bound `next`)
  /// has the residual bound next + update + gamma_2 on its rows, first order in u.
  static double combined_bound(double solved, double update, double next) {
    return std::max(solved, next + update + gamma_bound(2, fp64_unit_roundoff));
  }

  /// Rows [r0, r1) and columns [c0, c1) of op(A): the block of A that holds them, which the
  /// GEMM takes with op_.
  ConstMatrix op_block(std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) const {
    return op_ == Op::None ? block(A_, r0, r1, c0, c1) : block(A_, c0, c1, r0, r1);
  }

  /// op(A)[r0:r1, r0:r1] X = B[r0:r1, :], the rows of B already updated for the solved part:
  /// the first half solved, the second updated by one GEMM, then solved.  Returns the
  /// residual bound of the rows [r0, r1).
  double solve_left(std::int64_t r0, std::int64_t r1) {
    if (r1 - r0 <= leaf_) {
      substitute_left(r0, r1);
      return substitution_bound(r1 - r0);
    }
    const std::int64_t h = r0 + split_point(r1 - r0), cols = B_.extent(1);
    // Forward where op(A) is lower: rows [r0, h) first.
    const std::int64_t s0 = op_lower_ ? r0 : h, s1 = op_lower_ ? h : r1;
    const std::int64_t u0 = op_lower_ ? h : r0, u1 = op_lower_ ? r1 : h;
    const double solved = solve_left(s0, s1);
    const double update = level3_gemm(space_, op_, op_block(u0, u1, s0, s1), Op::None,
                                      ConstMatrix(block(B_, s0, s1, 0, cols)), T(-1), T(1),
                                      block(B_, u0, u1, 0, cols), options_, scratch_, sum_);
    return combined_bound(solved, update, solve_left(u0, u1));
  }

  /// X op(A)[c0:c1, c0:c1] = B[:, c0:c1]: columns left to right where op(A) is upper.
  double solve_right(std::int64_t c0, std::int64_t c1) {
    if (c1 - c0 <= leaf_) {
      substitute_right(c0, c1);
      return substitution_bound(c1 - c0);
    }
    const std::int64_t h = c0 + split_point(c1 - c0), rows = B_.extent(0);
    const std::int64_t s0 = op_lower_ ? h : c0, s1 = op_lower_ ? c1 : h;
    const std::int64_t u0 = op_lower_ ? c0 : h, u1 = op_lower_ ? h : c1;
    const double solved = solve_right(s0, s1);
    const double update = level3_gemm(space_, Op::None, ConstMatrix(block(B_, 0, rows, s0, s1)),
                                      op_, op_block(s0, s1, u0, u1), T(-1), T(1),
                                      block(B_, 0, rows, u0, u1), options_, scratch_, sum_);
    return combined_bound(solved, update, solve_right(u0, u1));
  }

  void substitute_left(std::int64_t r0, std::int64_t r1) {
    substitute(space_, A_, B_, r0, r1, true, op_, op_lower_, unit_diagonal_);
  }
  void substitute_right(std::int64_t c0, std::int64_t c1) {
    substitute(space_, A_, B_, c0, c1, false, op_, !op_lower_, unit_diagonal_);
  }

  ExecSpace space_;
  bool left_, op_lower_ = false;
  Op op_;
  bool unit_diagonal_;
  T alpha_;
  ConstMatrix A_;
  Matrix B_;
  Options options_;
  Level3Scratch<ExecSpace>& scratch_;
  std::int64_t leaf_ = 1;
  ReportSum sum_;
};

/// ozaki::trsm on Views of any layout: checked, seen strided, solved.
template <class ExecSpace, class AViewType, class BViewType, class T>
Report trsm_views(const ExecSpace& space, const char side[], const char uplo[], const char trans[],
                  const char diag[], const T& alpha, const AViewType& A, const BViewType& B,
                  const Options& options, Level3Scratch<ExecSpace>& scratch) {
  static_assert(is_level3_scalar<T>::value,
                "ozaki::trsm: B must hold double or Kokkos::complex<double>");
  using V = StridedViews<ExecSpace, T>;
  return TriangularSolve<ExecSpace, T>(space, side, uplo, trans, diag, alpha,
                                       level3_view<ExecSpace, typename V::ConstMatrix>(A),
                                       level3_view<ExecSpace, typename V::Matrix>(B), options,
                                       scratch)
      .run();
}

}  // namespace Impl
}  // namespace ozaki
