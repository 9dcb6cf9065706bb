#pragma once
/// \file syrk.hpp
/// ozaki::syrk and ozaki::herk: symmetric and Hermitian rank-k updates on one triangle of C,
/// with ozaki GEMMs for about half the products of the full GEMM:
///
///   ozaki::syrk(space, "L", "N", 1.0, A, 0.0, C);   // lower triangle of C = A A^T
///   ozaki::herk(space, "U", "C", 1.0, Z, 1.0, H);   // upper triangle of H += Z^H Z
///
/// syrk: C := alpha op(A) op(A)^T + beta C, trans "N" (op(A) = A, n x k) or "T" (A^T; "C" too
/// on real data), double or Kokkos::complex<double> (complex symmetric, no conjugation).
/// herk: C := alpha op(A) op(A)^H + beta C with real alpha and beta, trans "N" or "C", complex
/// data; C's diagonal is real: its imaginary parts are not read and are set to zero, as BLAS
/// does.  Only the `uplo` triangle of C ("U" or "L") is read or written; beta = 0 does not read
/// it.
///
/// Every entry of the triangle comes from one GEMM (Options::algorithm), so the GEMM's
/// componentwise promise holds for it: with automatic counts
///     |C - (alpha op(A) op(A)^T + beta C0)| <= Report::error_bound |alpha| |op(A)||op(A)^T|
///                                                + gamma_2 |beta C0|
/// with error_bound at most native's gamma_(K+2) plus one rounding (docs/design.md §12.1).
/// Bad arguments throw InvalidArgument before C is written.

#include <ozaki/impl/level3/syrk.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ozaki {

/// C := alpha op(A) op(A)^T + beta C on the `uplo` triangle, on `space`, with scratch from
/// `workspace`.
template <class ExecSpace, class AViewType, class CViewType>
Report syrk(const ExecSpace& space, const char uplo[], const char trans[],
            const typename CViewType::non_const_value_type& alpha, const AViewType& A,
            const typename CViewType::non_const_value_type& beta, const CViewType& C,
            const Options& options, Workspace<ExecSpace>& workspace) {
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::rank_k_views(space, false, uplo, trans, alpha, A, beta, C, options, scratch);
  });
}

/// The same with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report syrk(const ExecSpace& space, const char uplo[], const char trans[],
            const typename CViewType::non_const_value_type& alpha, const AViewType& A,
            const typename CViewType::non_const_value_type& beta, const CViewType& C,
            const Options& options = Options{}) {
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::rank_k_views(space, false, uplo, trans, alpha, A, beta, C, options, scratch);
  });
}

/// The same on a default-constructed instance of C's execution space.
template <class AViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_view<CViewType>::value>>
Report syrk(const char uplo[], const char trans[],
            const typename CViewType::non_const_value_type& alpha, const AViewType& A,
            const typename CViewType::non_const_value_type& beta, const CViewType& C,
            const Options& options = Options{}) {
  return syrk(typename CViewType::execution_space(), uplo, trans, alpha, A, beta, C, options);
}

/// C := alpha op(A) op(A)^H + beta C on the `uplo` triangle (complex C, real alpha and beta),
/// on `space`, with scratch from `workspace`.
template <class ExecSpace, class AViewType, class CViewType>
Report herk(const ExecSpace& space, const char uplo[], const char trans[], double alpha,
            const AViewType& A, double beta, const CViewType& C, const Options& options,
            Workspace<ExecSpace>& workspace) {
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::hermitian_views(space, uplo, trans, alpha, A, beta, C, options, scratch);
  });
}

/// The same with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report herk(const ExecSpace& space, const char uplo[], const char trans[], double alpha,
            const AViewType& A, double beta, const CViewType& C,
            const Options& options = Options{}) {
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::hermitian_views(space, uplo, trans, alpha, A, beta, C, options, scratch);
  });
}

/// The same on a default-constructed instance of C's execution space.
template <class AViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_view<CViewType>::value>>
Report herk(const char uplo[], const char trans[], double alpha, const AViewType& A, double beta,
            const CViewType& C, const Options& options = Options{}) {
  return herk(typename CViewType::execution_space(), uplo, trans, alpha, A, beta, C, options);
}

}  // namespace ozaki
