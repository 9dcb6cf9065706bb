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
///  - host_blas says whether Kokkos Kernels reaches a vendor BLAS on host spaces (its BLAS TPL,
///    KOKKOSKERNELS_ENABLE_TPL_BLAS in every version): the host INT8 products then go through
///    its SGEMM (backend.hpp).
///  - Threads: Kokkos 3.x's OpenMP space runs kernels only on the thread that initialised
///    Kokkos (its state is thread-local there): unusable_here() says so before a call starts.
///    (Calls on one instance take turns on every version: backend.hpp's instance_turn.)

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
template <class Space, class AView, class BView, class CView, class Scalar>
void native_gemm(const Space& space, const char transA[], const char transB[], Scalar alpha,
                 const AView& A, const BView& B, Scalar beta, const CView& C) {
  if constexpr (HasSpaceGemm<Space, AView, BView, CView>::value) {
    KokkosBlas::gemm(space, transA, transB, alpha, A, B, beta, C);
  } else {
    space.fence();
    KokkosBlas::gemm(transA, transB, alpha, A, B, beta, C);
    Space().fence();
  }
}

#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
constexpr bool host_blas = true;
#else
constexpr bool host_blas = false;
#endif

/// Why `space` cannot run kernels on the calling thread, or nullptr where it can.
template <class ExecSpace>
const char* unusable_here(const ExecSpace&) {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_VERSION) && KOKKOS_VERSION < 40000
  if constexpr (std::is_same<ExecSpace, Kokkos::OpenMP>::value) {
    if (!Kokkos::OpenMP::impl_is_initialized()) {
      return "Kokkos 3.x runs OpenMP kernels only on the thread that initialised Kokkos; call "
             "from that thread, or use Kokkos::Serial on this one (the same bits)";
    }
  }
#endif
  return nullptr;
}

}  // namespace compat
}  // namespace Impl
}  // namespace ozaki
