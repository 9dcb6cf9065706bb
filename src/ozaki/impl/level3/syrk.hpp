#pragma once
/// \file syrk.hpp
/// ozaki::syrk and ozaki::herk (docs/design.md §12.1).  Under Auto or Int8Crt: one scheme II
/// call on the triangle alone (RankKUpdate::whole_triangle).  Otherwise, and wherever
/// that call declines, the recursion: the triangle of C is halved until its diagonal blocks
/// have at most `leaf` rows; each off-diagonal block is one GEMM written into C, each diagonal
/// block one GEMM into the routine's scratch, of which the triangle is added to C.  Every entry
/// of C comes from exactly one GEMM.

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

/// C = D + beta C on the upper or lower triangle of the square C (D empty: beta C); beta = 0
/// does not read C.  hermitian: the diagonal is real (its imaginary parts, which BLAS assumes
/// zero, are not read, and set to zero).
template <class ExecSpace, class Matrix, class T>
void add_triangle(const ExecSpace& space, const Matrix& C, const Matrix& D, const T& beta,
                  bool upper, bool hermitian) {
  const bool beta_zero = beta == T(0), product = D.data() != nullptr;
  grid_for(
      "ozaki::rank_k_triangle", space, C.extent(0), C.extent(1),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        if (upper ? i > j : i < j) return;
        const T d = product ? D(i, j) : T(0);
        if (hermitian && i == j) {
          C(i, i) = T(real_part(d) + (beta_zero ? 0.0 : real_part(beta) * real_part(C(i, i))));
        } else {
          C(i, j) = beta_zero ? d : d + beta * C(i, j);
        }
      });
}

/// C = alpha op(A) op(A)^T + beta C (syrk) or alpha op(A) op(A)^H + beta C (herk: alpha, beta
/// real, C's diagonal real), on the `uplo` triangle of C only.
template <class ExecSpace, class T>
class RankKUpdate {
 public:
  using ConstMatrix = typename StridedViews<ExecSpace, T>::ConstMatrix;
  using Matrix = typename StridedViews<ExecSpace, T>::Matrix;

  /// Checks every argument before anything is written (a throw leaves C untouched).
  RankKUpdate(const ExecSpace& space, bool hermitian, const char uplo[], const char trans[],
              const T& alpha, const ConstMatrix& A, const T& beta, const Matrix& C,
              const Options& options, PartsScratch<ExecSpace>& scratch)
      : space_(space),
        hermitian_(hermitian),
        upper_(parse_choice(uplo, "uplo", 'U', 'L')),
        op_(parse_op<T>(trans, "trans", allowed_ops(hermitian))),
        alpha_(alpha),
        beta_(beta),
        A_(A),
        C_(C),
        options_(options),
        scratch_(scratch) {
    const std::int64_t n = C.extent(0);
    const std::int64_t rows = op_ == Op::None ? A.extent(0) : A.extent(1);
    if (static_cast<std::int64_t>(C.extent(1)) != n || rows != n) {
      std::ostringstream os;
      os << (hermitian ? "herk" : "syrk") << ": C is " << C.extent(0) << " x " << C.extent(1)
         << " and op(A) has " << rows << " rows: C must be square with op(A)'s rows";
      throw InvalidArgument(os.str());
    }
    if (overlaps(C, A)) throw InvalidArgument("C overlaps A in memory (C must not alias A)");
    check_call(space, options);
    leaf_ = leaf_rows<ExecSpace>(options, 128, 1024);
  }

  Report run() {
    const std::int64_t n = C_.extent(0), k = inner_length();
    Report& report = sum_.report();
    if (n == 0) return report;
    if (k == 0 || alpha_ == T(0)) {
      merge_triangle(0, n, Matrix());
      report.reason = k == 0 ? "K = 0: C = beta C" : "alpha = 0: C = beta C";
      return report;
    }
    if (!whole_triangle()) recurse();
    report.error_bound = sum_.bounded() ? report.error_bound + fp64_unit_roundoff : 0;
    return report;
  }

 private:
  /// The triangle as one scheme II call whose passes multiply and reconstruct only its entries
  /// (CallPlan::triangle), where that call may run scheme II (Auto or Int8Crt; complex data in
  /// Karatsuba's form): each entry the full GEMM's bits, from about half its INT8 products and
  /// one set of residues of op(A)'s rows instead of one per level of the recursion.  Whatever
  /// that call would run instead (native FP64, scheme I, the real embedding, a captured
  /// stream, NaN or Inf, scratch it cannot have) runs the recursion as its native GEMM.  False
  /// where the call is not made.
  bool whole_triangle() {
    if (options_.algorithm != Algorithm::Auto && options_.algorithm != Algorithm::Int8Crt) {
      return false;
    }
    // The declined call runs nothing itself and leaves C untouched; the recursion runs after
    // it returns, outside its hold on the instance (instance_turn), since its GEMMs take it.
    bool declined = false;
    Options options = options_;
    options.experimental.native_gemm = [&declined] { declined = true; };
    const Triangle triangle = upper_ ? Triangle::Upper : Triangle::Lower;
    const char* first = op_letters(op_);
    const char* second = op_letters(second_op());
    Report part;
    try {
      if constexpr (std::is_same<T, double>::value) {
        part = gemm_strided<ExecSpace>(space_, first, second, alpha_, A_, A_, beta_, C_, options,
                                       scratch_.buffer, nullptr, nullptr, 0, triangle);
      } else {
        part = gemm_complex_strided<ExecSpace>(space_, first, second, alpha_, A_, A_, beta_, C_,
                                               options, scratch_.buffer, scratch_.operands, 0,
                                               triangle, hermitian_);
      }
    } catch (const ScratchUnavailable&) {
      // Thrown before anything is written (an explicit Int8Crt): the recursion's GEMMs need
      // less, and each takes native GEMM where even that cannot be had (gemm_part).
      declined = true;
    }
    if (declined) {
      recurse();
    } else {
      const double n = static_cast<double>(C_.extent(0));
      sum_.add(part, n * n * static_cast<double>(inner_length()));
    }
    return true;
  }

  /// The triangle by halves (update), with the largest diagonal block's scratch reserved once:
  /// growing it between blocks would free a buffer the previous block's kernel may still read.
  void recurse() {
    const std::int64_t n = C_.extent(0), b = std::min(n, leaf_);
    scratch_.blocks.reserve(static_cast<std::size_t>(b * b) * sizeof(T));
    update(0, n);
  }

  static const char* allowed_ops(bool hermitian) {
    if (hermitian) return "NC";
    return std::is_same<T, double>::value ? "NTC" : "NT";
  }

  /// K: the columns of op(A).
  std::int64_t inner_length() const { return op_ == Op::None ? A_.extent(1) : A_.extent(0); }

  /// Rows [r0, r1) of op(A) as a GEMM's first operand.
  ConstMatrix rows_of_op(std::int64_t r0, std::int64_t r1) const {
    const std::int64_t k = inner_length();
    return op_ == Op::None ? block(A_, r0, r1, 0, k) : block(A_, 0, k, r0, r1);
  }
  /// The transpose (herk: conjugate transpose) that makes rows_of_op the second operand.
  Op second_op() const {
    if (op_ != Op::None) return Op::None;
    return hermitian_ ? Op::ConjugateTranspose : Op::Transpose;
  }

  /// The triangle of rows and columns [r0, r1): the two halves' triangles and the block
  /// between them.
  void update(std::int64_t r0, std::int64_t r1) {
    if (r1 - r0 <= leaf_) return diagonal_block(r0, r1);
    const std::int64_t h = r0 + split_point(r1 - r0);
    update(r0, h);
    const std::int64_t top = upper_ ? r0 : h, bottom = upper_ ? h : r1;
    const std::int64_t left = upper_ ? h : r0, right = upper_ ? r1 : h;
    level3_gemm(space_, op_, rows_of_op(top, bottom), second_op(), rows_of_op(left, right), alpha_,
                beta_, block(C_, top, bottom, left, right), options_, scratch_, sum_);
    update(h, r1);
  }

  /// The whole square of rows [r0, r1) into scratch, then its triangle added to C.
  void diagonal_block(std::int64_t r0, std::int64_t r1) {
    const std::int64_t b = r1 - r0;
    auto* bytes = scratch_.blocks.reserve(static_cast<std::size_t>(b * b) * sizeof(T));
    const Matrix D(reinterpret_cast<T*>(bytes), Kokkos::LayoutStride(b, 1, b, b));
    level3_gemm(space_, op_, rows_of_op(r0, r1), second_op(), rows_of_op(r0, r1), alpha_, T(0), D,
                options_, scratch_, sum_);
    merge_triangle(r0, r1, D);
  }

  void merge_triangle(std::int64_t r0, std::int64_t r1, const Matrix& D) {
    add_triangle(space_, block(C_, r0, r1, r0, r1), D, beta_, upper_, hermitian_);
  }

  ExecSpace space_;
  bool hermitian_, upper_;
  Op op_;
  T alpha_, beta_;
  ConstMatrix A_;
  Matrix C_;
  Options options_;
  PartsScratch<ExecSpace>& scratch_;
  std::int64_t leaf_ = 1;
  ReportSum sum_;
};

/// ozaki::syrk on Views of any layout (`hermitian`: herk's alpha and beta as T).
template <class ExecSpace, class AViewType, class CViewType, class T>
Report rank_k_views(const ExecSpace& space, bool hermitian, const char uplo[], const char trans[],
                    const T& alpha, const AViewType& A, const T& beta, const CViewType& C,
                    const Options& options, PartsScratch<ExecSpace>& scratch) {
  static_assert(is_level3_scalar<T>::value,
                "ozaki::syrk: C must hold double or Kokkos::complex<double>");
  using V = StridedViews<ExecSpace, T>;
  return RankKUpdate<ExecSpace, T>(space, hermitian, uplo, trans, alpha,
                                   level3_view<ExecSpace, typename V::ConstMatrix>(A), beta,
                                   level3_view<ExecSpace, typename V::Matrix>(C), options, scratch)
      .run();
}

/// ozaki::herk: complex C, real alpha and beta.
template <class ExecSpace, class AViewType, class CViewType>
Report hermitian_views(const ExecSpace& space, const char uplo[], const char trans[], double alpha,
                       const AViewType& A, double beta, const CViewType& C, const Options& options,
                       PartsScratch<ExecSpace>& scratch) {
  using T = typename CViewType::non_const_value_type;
  static_assert(std::is_same<T, Kokkos::complex<double>>::value,
                "ozaki::herk: C must hold Kokkos::complex<double>");
  return rank_k_views(space, true, uplo, trans, T(alpha), A, T(beta), C, options, scratch);
}

}  // namespace Impl
}  // namespace ozaki
