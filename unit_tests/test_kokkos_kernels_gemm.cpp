// Kokkos Kernels' own gemm test (unit_test/blas/Test_Blas3_gemm.hpp of the Kokkos Kernels
// source this build's Kokkos Kernels came from) with ozaki::gemm in place of KokkosBlas::gemm:
// the build writes a copy of that header whose calls go to ozaki_substitute::gemm below
// (unit_tests/CMakeLists.txt).  Its cases are float, double, Kokkos::complex<float> and
// Kokkos::complex<double>, LayoutLeft and LayoutRight, every transpose, beta 0 and not, shapes
// from 0x0x0 to 12x3071x517, against its own reference kernel and its own tolerance.
//
// OZAKI_KK_GEMM_ALGORITHM (crt, slices or auto; ctest runs each) picks the algorithm every
// substituted call asks for; an explicit INT8 algorithm must be the one that ran, so that the
// test cannot pass on native GEMM.

#include <ozaki/gemm.hpp>

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ozaki_substitute {

inline ozaki::Algorithm algorithm_under_test() {
  const char* name = std::getenv("OZAKI_KK_GEMM_ALGORITHM");
  const std::string s = name == nullptr ? "crt" : name;
  if (s == "crt") return ozaki::Algorithm::Int8Crt;
  if (s == "slices") return ozaki::Algorithm::Int8Slices;
  if (s == "auto") return ozaki::Algorithm::Auto;
  throw std::invalid_argument("OZAKI_KK_GEMM_ALGORITHM = " + s + ": expected crt, slices or auto");
}

/// How many substituted calls ran an INT8 algorithm, and how many reported a fallback to
/// native GEMM (the suite's last test checks both).
inline int& int8_calls() {
  static int calls = 0;
  return calls;
}
inline int& fallbacks() {
  static int calls = 0;
  return calls;
}

/// KokkosBlas::gemm's signature, forwarded to ozaki::gemm on C's execution space.  An explicit
/// algorithm runs, or falls back with its reason only where it cannot certify native's
/// componentwise bound: Int8Slices at small K, where the FP64 sum of its pair products alone
/// rounds more than native's gamma_K allows (docs/design.md §3a).
template <class AView, class BView, class CView>
void gemm(const char transA[], const char transB[], typename AView::const_value_type& alpha,
          const AView& A, const BView& B, typename CView::const_value_type& beta, const CView& C) {
  ozaki::Options options;
  options.algorithm = algorithm_under_test();
  const ozaki::Report report =
      ozaki::gemm(typename CView::execution_space(), transA, transB, alpha, A, B, beta, C, options);
  const bool a_transposed = transA[0] != 'N' && transA[0] != 'n';
  const std::size_t K = a_transposed ? A.extent(0) : A.extent(1);
  const bool products = C.extent(0) > 0 && C.extent(1) > 0 && K > 0 &&
                        alpha != typename AView::non_const_value_type(0);
  if (report.fallback) ++fallbacks();
  if (products && options.algorithm != ozaki::Algorithm::Auto) {
    if (report.fallback) {
      EXPECT_EQ(options.algorithm, ozaki::Algorithm::Int8Slices) << report.reason;
      EXPECT_LT(K, 32u) << report.reason;
      EXPECT_FALSE(report.reason.empty());
    } else {
      EXPECT_EQ(report.algorithm, options.algorithm) << ozaki::to_string(report.algorithm);
    }
  }
  if (report.algorithm == ozaki::Algorithm::Int8Crt ||
      report.algorithm == ozaki::Algorithm::Int8Slices) {
    ++int8_calls();
  }
}

}  // namespace ozaki_substitute

class TestCategory : public ::testing::Test {};
using TestExecSpace = OZAKI_TEST_SPACE;

#include "Test_Blas3_gemm_ozaki.hpp"

// Runs after the suite's own tests (GoogleTest keeps the order of definition).
TEST(KokkosKernelsGemmWithOzaki, Int8ProductsRanWhereAsked) {
  if (ozaki_substitute::algorithm_under_test() == ozaki::Algorithm::Auto) {
    EXPECT_EQ(ozaki_substitute::fallbacks(), 0);  // Auto chooses; it never falls back
  } else {
    // 4 element types x 2 layouts x 8 modes x 3 non-empty shapes
    EXPECT_EQ(ozaki_substitute::int8_calls() + ozaki_substitute::fallbacks(), 4 * 2 * 8 * 3);
    // The fallbacks are the smallest shape's (K = 17) at most.
    EXPECT_LE(ozaki_substitute::fallbacks(), 4 * 2 * 8);
  }
}
