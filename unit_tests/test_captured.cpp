// Calls made while their stream is captured into a graph (docs/design.md §7, "Scheme II inside
// a graph"; src/ozaki/impl/crt/captured.hpp): scheme II takes its count from the shape and the
// device decides at every launch whether that count keeps the promise, else native FP64 GEMM
// runs in the graph.  Compiled for every space: on Cuda the capture is real and the graph is
// replayed with new data; on host spaces the library emulates the device's branch.
#include "captured_common.hpp"
#include "complex_common.hpp"

#include <ozaki/impl/crt/captured.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace ozaki_test;
using ozaki::Algorithm;
using ozaki::CrtScaling;

constexpr std::int64_t M = 96, N = 80, K = 1024;

/// Bit for bit, NaN payloads included.
bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

/// Int8Crt, with scheme II inside graphs on (Options::experimental.graph_products, the
/// default).
ozaki::Options crt_options() {
  ozaki::Options o;
  o.algorithm = Algorithm::Int8Crt;
  return o;
}

/// The eager call a captured Int8Crt call's products branch equals: the captured count under
/// the fast rule.
ozaki::Options eager_equivalent() {
  ozaki::Options o;
  o.algorithm = Algorithm::Int8Crt;
  o.moduli = ozaki::Impl::crt_capture_moduli(K);
  o.crt_scaling = CrtScaling::Fast;
  return o;
}

ozaki::Options native_options() {
  ozaki::Options o;
  o.algorithm = Algorithm::Native;
  return o;
}

/// Operands scaled against each other along k by up to 2^+-25: no count from the shape is
/// certified for them, so the verdict takes native FP64 GEMM.
std::pair<HostMatrix, HostMatrix> anti_aligned(Random& rng) {
  HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
  scale_against_each_other(A, B, 25, rng);
  return {A, B};
}

TEST(Captured, Int8CrtRunsTheShapesCountWithTheEagerCallsBits) {
  Random rng(501);
  const HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  const GemmRun captured = run_gemm_captured('N', 'N', 1.5, A, B, -0.5, C0, crt_options());
  EXPECT_EQ(captured.report.algorithm, Algorithm::Int8Crt) << captured.report.reason;
  EXPECT_EQ(captured.report.moduli, ozaki::Impl::crt_capture_moduli(K));
  EXPECT_FALSE(captured.report.fallback);
  EXPECT_NE(captured.report.reason.find("captured into a graph"), std::string::npos);
  EXPECT_EQ(captured.report.error_bound, ozaki::Impl::native_componentwise_bound(K));
  const GemmRun eager = run_gemm('N', 'N', 1.5, A, B, -0.5, C0, eager_equivalent());
  ASSERT_EQ(eager.report.algorithm, Algorithm::Int8Crt);
  EXPECT_TRUE(same_bits(captured.C.values, eager.C.values));
}

TEST(Captured, DataTheCountCannotCertifyRunNativeInTheGraph) {
  Random rng(502);
  const auto [A, B] = anti_aligned(rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  const GemmRun captured = run_gemm_captured('N', 'N', 1.0, A, B, 0.25, C0, crt_options());
  EXPECT_EQ(captured.report.algorithm, Algorithm::Int8Crt) << captured.report.reason;
  const GemmRun native = run_gemm('N', 'N', 1.0, A, B, 0.25, C0, native_options());
  EXPECT_TRUE(agrees_with_native(captured.C, native.C, A, B));
  // The same count on the same data, eagerly: its bound is far above native's, which is why
  // the verdict took native FP64 GEMM.
  const GemmRun eager = run_gemm('N', 'N', 1.0, A, B, 0.25, C0, eager_equivalent());
  EXPECT_GT(eager.report.error_bound, ozaki::Impl::native_componentwise_bound(K));
}

TEST(Captured, NanOrInfRunNativeInTheGraph) {
  Random rng(503);
  HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
  A.values[5 + 17 * M] = std::nan("");
  B.values[3 + 7 * K] = HUGE_VAL;
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  const GemmRun captured = run_gemm_captured('N', 'N', 1.0, A, B, 0.0, C0, crt_options());
  const GemmRun native = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, native_options());
  EXPECT_TRUE(agrees_with_native(captured.C, native.C, A, B));
  EXPECT_TRUE(std::isnan(captured.C(5, 0)));
}

TEST(Captured, TransposesAndRowMajorResultsKeepTheEagerCallsBits) {
  Random rng(504);
  const HostMatrix At = random_host(K, M, 0.5, rng), Bt = random_host(N, K, 0.5, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  for (const Layout lc : {Layout::Left, Layout::Right}) {
    const DeviceMatrix dA = device_copy(At, Layout::Left), dB = device_copy(Bt, Layout::Right);
    const DeviceMatrix dC = device_copy(C0, lc), eC = device_copy(C0, lc);
    const ozaki::Report r = captured_call([&](const TestSpace& space) {
      return dC.visit([&](const auto& c) {
        return ozaki::gemm(space, "T", "T", 1.0, dA.left, dB.right, 1.0, c, crt_options());
      });
    });
    EXPECT_EQ(r.algorithm, Algorithm::Int8Crt) << r.reason;
    eC.visit([&](const auto& c) {
      return ozaki::gemm(TestSpace(), "T", "T", 1.0, dA.left, dB.right, 1.0, c, eager_equivalent());
    });
    EXPECT_TRUE(same_bits(to_host(dC.view).values, to_host(eC.view).values))
        << "C layout " << int(lc);
  }
}

TEST(Captured, AutoRunsNativeWhereTheCostModelSaysSo) {
  // 64^3: Auto takes native FP64 GEMM from the shape, captured or not.
  Random rng(505);
  const std::int64_t n = 64;
  const HostMatrix A = random_host(n, n, 0.5, rng), B = random_host(n, n, 0.5, rng);
  const HostMatrix C0 = random_host(n, n, 0.5, rng);
  const GemmRun captured = run_gemm_captured('N', 'N', 1.0, A, B, 1.0, C0, ozaki::Options{});
  EXPECT_EQ(captured.report.algorithm, Algorithm::Native);
  EXPECT_FALSE(captured.report.fallback);
  EXPECT_NE(captured.report.reason.find("captured into a graph"), std::string::npos)
      << captured.report.reason;
  const GemmRun native = run_gemm('N', 'N', 1.0, A, B, 1.0, C0, native_options());
  EXPECT_TRUE(agrees_with_native(captured.C, native.C, A, B));
}

TEST(Captured, OtherAlgorithmsRunNativeAndSaySo) {
  Random rng(506);
  const HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  const GemmRun native = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, native_options());
  ozaki::Options slices;
  slices.algorithm = Algorithm::Int8Slices;
  ozaki::Options off = crt_options();
  off.experimental.graph_products = false;
  ozaki::Options fixed = crt_options();
  fixed.moduli = 16;
  ozaki::Options accurate = crt_options();
  accurate.crt_scaling = CrtScaling::Accurate;
  for (const ozaki::Options& o : {slices, off, fixed, accurate}) {
    const GemmRun captured = run_gemm_captured('N', 'N', 1.0, A, B, 0.0, C0, o);
    EXPECT_EQ(captured.report.algorithm, Algorithm::Native);
    EXPECT_TRUE(captured.report.fallback);
    EXPECT_NE(captured.report.reason.find("native FP64 GEMM on the stream ("), std::string::npos)
        << captured.report.reason;
    EXPECT_TRUE(agrees_with_native(captured.C, native.C, A, B));
  }
}

TEST(Captured, ComplexCallsRunNativeZgemm) {
  Random rng(507);
  HostZ A, B, C0;
  A.rows = M, A.cols = K, B.rows = K, B.cols = N, C0.rows = M, C0.cols = N;
  for (HostZ* x : {&A, &B, &C0}) {
    x->values.resize(static_cast<std::size_t>(x->rows * x->cols));
    for (zdouble& v : x->values) v = zdouble(rng.spread(0.5), rng.spread(0.5));
  }
  const DeviceZ<TestSpace> dA(A, Layout::Left), dB(B, Layout::Left), dC(C0, Layout::Left);
  const ozaki::Report r = captured_call([&](const TestSpace& space) {
    return ozaki::gemm(space, "N", "N", KC(1, 0.5), dA.view, dB.view, KC(0, 0), dC.view,
                       crt_options());
  });
  EXPECT_EQ(r.algorithm, Algorithm::Native);
  EXPECT_NE(r.reason.find("captured into a graph"), std::string::npos) << r.reason;
  ozaki::Options native;
  native.algorithm = Algorithm::Native;
  const ZRun eager = run_z('N', 'N', zdouble(1, 0.5), A, B, zdouble(0, 0), C0, native);
  const HostZ C = dC.to_host();
  ASSERT_EQ(C.values.size(), eager.C.values.size());
  if constexpr (ozaki::Impl::is_host_space<TestSpace>()) {
    EXPECT_EQ(
        std::memcmp(C.values.data(), eager.C.values.data(), C.values.size() * sizeof(zdouble)), 0);
  } else {
    // cuBLAS may pick another kernel inside a graph: both within native ZGEMM's bound.
    const double bound = 2 * ozaki::Impl::native_complex_componentwise_bound(K);
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t m = 0; m < M; ++m) {
        double abs_ab = 0;
        for (std::int64_t k = 0; k < K; ++k) abs_ab += std::abs(A(m, k)) * std::abs(B(k, n));
        ASSERT_LE(std::abs(C(m, n) - eager.C(m, n)), bound * std::abs(zdouble(1, 0.5)) * abs_ab)
            << m << ", " << n;
      }
  }
}

TEST(Captured, TheHostsVerdictIsTheEagerPlannersDecision) {
  // crt_capture_verdict on the summary maxima of data the eager planner also sees: where it
  // keeps the captured count, an eager Int8Crt call with an automatic count takes the fast
  // rule with at most that count, and the count's bound keeps the promise.
  const int L = ozaki::Impl::crt_capture_moduli(K);
  for (const double phi : {0.25, 0.5, 1.0, 2.0}) {
    Random rng(510 + static_cast<std::uint64_t>(phi * 4));
    const HostMatrix A = random_host(M, K, phi, rng), B = random_host(K, N, phi, rng);
    HostMatrix C0;
    C0.rows = M;
    C0.cols = N;
    C0.values.assign(static_cast<std::size_t>(M * N), 0.0);
    const GemmRun automatic = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, crt_options());
    const GemmRun fixed = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, eager_equivalent());
    const GemmRun captured = run_gemm_captured('N', 'N', 1.0, A, B, 0.0, C0, crt_options());
    const bool products = same_bits(captured.C.values, fixed.C.values);
    const std::string what = "phi " + std::to_string(phi) + ": automatic count " +
                             std::to_string(automatic.report.moduli) + " (" +
                             automatic.report.reason + "), captured count " + std::to_string(L);
    if (products) {
      EXPECT_EQ(automatic.report.algorithm, Algorithm::Int8Crt) << what;
      EXPECT_LE(automatic.report.moduli, L) << what;
      EXPECT_LE(fixed.report.error_bound, ozaki::Impl::native_componentwise_bound(K)) << what;
    } else {
      const GemmRun native = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, native_options());
      EXPECT_TRUE(agrees_with_native(captured.C, native.C, A, B)) << what;
    }
    if (phi <= 0.5) EXPECT_TRUE(products) << what;  // well-scaled data run the products
  }
}

}  // namespace
