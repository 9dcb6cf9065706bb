#pragma once
/// \file trsm.hpp
/// ozaki::trsm: triangular solves with many right-hand sides whose updates are ozaki GEMMs,
/// in the style of KokkosBlas::trsm:
///
///   ozaki::trsm(space, "L", "L", "N", "N", 1.0, A, B);   // B := A^-1 B, A lower triangular
///   ozaki::trsm(space, "R", "U", "T", "U", 2.0, A, B);   // B := 2 B A^-T, unit diagonal
///
/// side "L" solves op(A) X = alpha B, "R" solves X op(A) = alpha B; X overwrites B.  uplo names
/// the triangle of A that is read ("U" or "L"); trans is "N", "T" or "C" (conjugate transpose,
/// complex data); diag "U" takes A's diagonal as ones without reading it.  A and B are rank-2
/// Views of double or Kokkos::complex<double> in any layout.
///
/// The recursion halves op(A): one half is solved, the other updated by one GEMM
/// (Options::algorithm: Auto, Int8Crt, Int8Slices or Native), down to diagonal blocks solved
/// by FP64 substitution.  The result's componentwise backward error,
///     |alpha B - op(A) X| <= Report::error_bound (|op(A)||X| + |alpha B|),
/// is that of an FP64 trsm to first order where every GEMM's count is automatic
/// (docs/design.md §12.2).  The Report sums the GEMMs: the largest one's algorithm and counts,
/// any fallback.  Bad arguments throw InvalidArgument before B is written.

#include <ozaki/impl/level3/triangular.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ozaki {

/// B := alpha op(A)^-1 B (side "L") or alpha B op(A)^-1 (side "R") on `space`, with scratch
/// from `workspace`.
template <class ExecSpace, class AViewType, class BViewType>
Report trsm(const ExecSpace& space, const char side[], const char uplo[], const char trans[],
            const char diag[], const typename BViewType::non_const_value_type& alpha,
            const AViewType& A, const BViewType& B, const Options& options,
            Workspace<ExecSpace>& workspace) {
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::triangular_views(space, false, side, uplo, trans, diag, alpha, A, B, options,
                                  scratch);
  });
}

/// The same with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class BViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report trsm(const ExecSpace& space, const char side[], const char uplo[], const char trans[],
            const char diag[], const typename BViewType::non_const_value_type& alpha,
            const AViewType& A, const BViewType& B, const Options& options = Options{}) {
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::triangular_views(space, false, side, uplo, trans, diag, alpha, A, B, options,
                                  scratch);
  });
}

/// The same on a default-constructed instance of B's execution space.
template <class AViewType, class BViewType,
          class = std::enable_if_t<Kokkos::is_view<BViewType>::value>>
Report trsm(const char side[], const char uplo[], const char trans[], const char diag[],
            const typename BViewType::non_const_value_type& alpha, const AViewType& A,
            const BViewType& B, const Options& options = Options{}) {
  return trsm(typename BViewType::execution_space(), side, uplo, trans, diag, alpha, A, B, options);
}

}  // namespace ozaki
