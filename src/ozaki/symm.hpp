#pragma once
/// \file symm.hpp
/// ozaki::symm and ozaki::hemm: C = alpha A B + beta C (side "L") or alpha B A + beta C (side
/// "R") with A symmetric (hemm: Hermitian) and only its `uplo` triangle read:
///
///   ozaki::symm(space, "L", "U", 1.0, A, B, 0.0, C);
///   ozaki::hemm(space, "R", "L", alpha, H, B, beta, C);   // Kokkos::complex<double>
///
/// A is m x m (side L) or n x n (side R), B and C m x n; double or Kokkos::complex<double>
/// (symm on complex data is complex symmetric, no conjugation); hemm's diagonal is real, its
/// imaginary parts not read.  The stored triangle is copied into a full square in the
/// routine's scratch (8 or 16 bytes per entry of A) and the product is one GEMM
/// (Options::algorithm), whose componentwise promise the Report states (docs/design.md §12.4).
/// Bad arguments throw InvalidArgument before C is written.

#include <ozaki/impl/level3/symmetric.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ozaki {

/// C = alpha A B + beta C (side "L") or alpha B A + beta C (side "R"), A symmetric, on `space`
/// with scratch from `workspace`.
template <class ExecSpace, class AViewType, class BViewType, class CViewType>
Report symm(const ExecSpace& space, const char side[], const char uplo[],
            const typename CViewType::non_const_value_type& alpha, const AViewType& A,
            const BViewType& B, const typename CViewType::non_const_value_type& beta,
            const CViewType& C, const Options& options, Workspace<ExecSpace>& workspace) {
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::symmetric_views(space, false, side, uplo, alpha, A, B, beta, C, options, scratch);
  });
}

/// The same with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class BViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report symm(const ExecSpace& space, const char side[], const char uplo[],
            const typename CViewType::non_const_value_type& alpha, const AViewType& A,
            const BViewType& B, const typename CViewType::non_const_value_type& beta,
            const CViewType& C, const Options& options = Options{}) {
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::symmetric_views(space, false, side, uplo, alpha, A, B, beta, C, options, scratch);
  });
}

/// The same as hemm: A Hermitian (Kokkos::complex<double>), with a Workspace.
template <class ExecSpace, class AViewType, class BViewType, class CViewType>
Report hemm(const ExecSpace& space, const char side[], const char uplo[],
            const typename CViewType::non_const_value_type& alpha, const AViewType& A,
            const BViewType& B, const typename CViewType::non_const_value_type& beta,
            const CViewType& C, const Options& options, Workspace<ExecSpace>& workspace) {
  static_assert(
      std::is_same<typename CViewType::non_const_value_type, Kokkos::complex<double>>::value,
      "ozaki::hemm: C must hold Kokkos::complex<double>");
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::symmetric_views(space, true, side, uplo, alpha, A, B, beta, C, options, scratch);
  });
}

/// hemm with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class BViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report hemm(const ExecSpace& space, const char side[], const char uplo[],
            const typename CViewType::non_const_value_type& alpha, const AViewType& A,
            const BViewType& B, const typename CViewType::non_const_value_type& beta,
            const CViewType& C, const Options& options = Options{}) {
  static_assert(
      std::is_same<typename CViewType::non_const_value_type, Kokkos::complex<double>>::value,
      "ozaki::hemm: C must hold Kokkos::complex<double>");
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::symmetric_views(space, true, side, uplo, alpha, A, B, beta, C, options, scratch);
  });
}

}  // namespace ozaki
