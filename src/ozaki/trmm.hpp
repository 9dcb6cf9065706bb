#pragma once
/// \file trmm.hpp
/// ozaki::trmm: triangular matrix times many vectors, whose off-diagonal blocks are ozaki
/// GEMMs, in the style of KokkosBlas::trmm:
///
///   ozaki::trmm(space, "L", "U", "N", "N", 1.0, A, B);   // B := A B, A upper triangular
///   ozaki::trmm(space, "R", "L", "C", "U", 2.0, A, B);   // B := 2 B A^H, unit diagonal
///
/// side "L" computes alpha op(A) B, "R" alpha B op(A), into B; uplo names the triangle of A
/// that is read ("U" or "L"); trans is "N", "T" or "C" (conjugate transpose, complex data);
/// diag "U" takes A's diagonal as ones without reading it.  A and B are rank-2 Views of double
/// or Kokkos::complex<double> in any layout.
///
/// The recursion halves op(A): the half of B that the off-diagonal block feeds is multiplied
/// first, then fed by one GEMM (Options::algorithm) from the other half, which is multiplied
/// last; diagonal blocks are multiplied in FP64.  Half the products of a GEMM with the full
/// op(A).  With automatic counts every entry satisfies
///     |B - alpha op(A) B0| <= Report::error_bound |alpha| |op(A)||B0|,
/// an FP64 trmm's gamma_n plus a few units per level to first order (docs/design.md §12.3).
/// Bad arguments throw InvalidArgument before B is written.

#include <ozaki/impl/level3/triangular.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ozaki {

/// B := alpha op(A) B (side "L") or alpha B op(A) (side "R") on `space`, with scratch from
/// `workspace`.
template <class ExecSpace, class AViewType, class BViewType>
Report trmm(const ExecSpace& space, const char side[], const char uplo[], const char trans[],
            const char diag[], const typename BViewType::non_const_value_type& alpha,
            const AViewType& A, const BViewType& B, const Options& options,
            Workspace<ExecSpace>& workspace) {
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::triangular_views(space, true, side, uplo, trans, diag, alpha, A, B, options,
                                  scratch);
  });
}

/// The same with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class BViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report trmm(const ExecSpace& space, const char side[], const char uplo[], const char trans[],
            const char diag[], const typename BViewType::non_const_value_type& alpha,
            const AViewType& A, const BViewType& B, const Options& options = Options{}) {
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::triangular_views(space, true, side, uplo, trans, diag, alpha, A, B, options,
                                  scratch);
  });
}

/// The same on a default-constructed instance of B's execution space.
template <class AViewType, class BViewType,
          class = std::enable_if_t<Kokkos::is_view<BViewType>::value>>
Report trmm(const char side[], const char uplo[], const char trans[], const char diag[],
            const typename BViewType::non_const_value_type& alpha, const AViewType& A,
            const BViewType& B, const Options& options = Options{}) {
  return trmm(typename BViewType::execution_space(), side, uplo, trans, diag, alpha, A, B, options);
}

}  // namespace ozaki
