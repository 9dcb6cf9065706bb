#pragma once
/// \file kokkos_compat.hpp
/// Everything that differs between the Kokkos / Kokkos Kernels versions ozaki supports
/// (3.4 and later: 4.x, 5.x).  Nothing else in ozaki may test a Kokkos version.
///
/// What differs, and how it is bridged:
///  - KokkosBlas::gemm gained an execution-space-instance overload after 3.4.  native_gemm()
///    detects it by overload resolution (no version macro: Kokkos Kernels 3.4 has none) and
///    otherwise fences around the instance-less call.
///  - Mathematical functions moved from Kokkos::Experimental to Kokkos and 3.4 has no frexp or
///    ldexp at all.  ozaki needs only frexp, ldexp (both exact operations) and sqrt; the global
///    ::frexp / ::ldexp / ::sqrt are callable from host code and from CUDA/HIP device code alike.
///  - Kokkos 5 requires C++20; ozaki's sources are C++17 and compile as C++20 too.

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <type_traits>
#include <utility>

namespace ozaki {
namespace Impl {
namespace compat {

KOKKOS_INLINE_FUNCTION double frexp(double x, int* exponent) { return ::frexp(x, exponent); }
KOKKOS_INLINE_FUNCTION double ldexp(double x, int exponent) { return ::ldexp(x, exponent); }
KOKKOS_INLINE_FUNCTION double sqrt(double x) { return ::sqrt(x); }

template <class Space, class AView, class BView, class CView, class = void>
struct HasSpaceGemm : std::false_type {};

template <class Space, class AView, class BView, class CView>
struct HasSpaceGemm<Space, AView, BView, CView,
                    decltype(KokkosBlas::gemm(
                        std::declval<const Space&>(), "N", "N", 1.0, std::declval<const AView&>(),
                        std::declval<const BView&>(), 1.0, std::declval<const CView&>()))>
    : std::true_type {};

/// KokkosBlas::gemm on the instance `space` where that overload exists, otherwise on the
/// default instance, fenced on both sides so that it is ordered with work on `space`.
template <class Space, class AView, class BView, class CView>
void native_gemm(const Space& space, const char transA[], const char transB[], double alpha,
                 const AView& A, const BView& B, double beta, const CView& C) {
  if constexpr (HasSpaceGemm<Space, AView, BView, CView>::value) {
    KokkosBlas::gemm(space, transA, transB, alpha, A, B, beta, C);
  } else {
    space.fence();
    KokkosBlas::gemm(transA, transB, alpha, A, B, beta, C);
    Space().fence();
  }
}

}  // namespace compat
}  // namespace Impl
}  // namespace ozaki
