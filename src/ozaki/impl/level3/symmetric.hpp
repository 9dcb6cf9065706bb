#pragma once
/// \file symmetric.hpp
/// ozaki::symm and ozaki::hemm (docs/design.md §12.4): the stored triangle of A is copied into
/// the whole square (transposed, or conjugate transposed for hemm, whose diagonal is real) in
/// the routine's scratch, and C = alpha A B + beta C (side L) or alpha B A + beta C (side R) is
/// one GEMM.  symm multiplies as many products as GEMM, so nothing is saved by blocks; the copy
/// is exact and the GEMM's componentwise promise is the routine's.

#include <ozaki/errors.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/level3/common.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <sstream>
#include <string>

namespace ozaki {
namespace Impl {

/// full = A with the triangle not stored filled from the stored one; hermitian: conjugated,
/// the diagonal's imaginary parts (not read) zero.
template <class ExecSpace, class ConstMatrix, class Matrix>
void fill_symmetric(const ExecSpace& space, const ConstMatrix& A, const Matrix& full, bool upper,
                    bool hermitian) {
  using T = typename Matrix::non_const_value_type;
  grid_for(
      "ozaki::fill_symmetric", space, A.extent(0), A.extent(1),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        const bool stored = upper ? i <= j : i >= j;
        const T x = stored ? A(i, j) : conj_if(A(j, i), hermitian);
        full(i, j) = hermitian && i == j ? T(real_part(x)) : x;
      });
}

/// C = alpha A B + beta C or alpha B A + beta C, A symmetric or Hermitian, one triangle read.
template <class ExecSpace, class T>
Report symmetric_views_strided(const ExecSpace& space, bool hermitian, const char side[],
                               const char uplo[], const T& alpha,
                               const typename StridedViews<ExecSpace, T>::ConstMatrix& A,
                               const typename StridedViews<ExecSpace, T>::ConstMatrix& B,
                               const T& beta, const typename StridedViews<ExecSpace, T>::Matrix& C,
                               const Options& options, PartsScratch<ExecSpace>& scratch) {
  using Matrix = typename StridedViews<ExecSpace, T>::Matrix;
  const char* name = hermitian ? "hemm" : "symm";
  const bool left = parse_choice(side, "side", 'L', 'R');
  const bool upper = parse_choice(uplo, "uplo", 'U', 'L');
  const std::int64_t n = left ? C.extent(0) : C.extent(1);
  if (static_cast<std::int64_t>(A.extent(0)) != n || static_cast<std::int64_t>(A.extent(1)) != n ||
      B.extent(0) != C.extent(0) || B.extent(1) != C.extent(1)) {
    std::ostringstream os;
    os << name << ": A is " << A.extent(0) << " x " << A.extent(1) << ", B " << B.extent(0) << " x "
       << B.extent(1) << ", C " << C.extent(0) << " x " << C.extent(1)
       << ": B and C must have one shape and A be square with C's " << (left ? "rows" : "columns");
    throw InvalidArgument(os.str());
  }
  if (overlaps(C, A)) {
    throw InvalidArgument(std::string(name) + ": C overlaps A in memory (C must not alias A)");
  }
  check_call(space, options);
  ReportSum sum;
  if (n == 0 || C.extent(0) == 0 || C.extent(1) == 0) return sum.report();
  auto* bytes = scratch.blocks.reserve(static_cast<std::size_t>(n * n) * sizeof(T));
  const Matrix full(reinterpret_cast<T*>(bytes), Kokkos::LayoutStride(n, 1, n, n));
  fill_symmetric(space, A, full, upper, hermitian);
  if (left) {
    level3_gemm(space, Op::None, typename StridedViews<ExecSpace, T>::ConstMatrix(full), Op::None,
                B, alpha, beta, C, options, scratch, sum);
  } else {
    level3_gemm(space, Op::None, B, Op::None,
                typename StridedViews<ExecSpace, T>::ConstMatrix(full), alpha, beta, C, options,
                scratch, sum);
  }
  return sum.report();
}

/// ozaki::symm / ozaki::hemm on Views of any layout.
template <class ExecSpace, class AViewType, class BViewType, class CViewType, class T>
Report symmetric_views(const ExecSpace& space, bool hermitian, const char side[], const char uplo[],
                       const T& alpha, const AViewType& A, const BViewType& B, const T& beta,
                       const CViewType& C, const Options& options,
                       PartsScratch<ExecSpace>& scratch) {
  static_assert(is_level3_scalar<T>::value,
                "ozaki::symm, ozaki::hemm: C must hold double or Kokkos::complex<double>");
  using V = StridedViews<ExecSpace, T>;
  return symmetric_views_strided<ExecSpace, T>(
      space, hermitian, side, uplo, alpha, level3_view<ExecSpace, typename V::ConstMatrix>(A),
      level3_view<ExecSpace, typename V::ConstMatrix>(B), beta,
      level3_view<ExecSpace, typename V::Matrix>(C), options, scratch);
}

}  // namespace Impl
}  // namespace ozaki
