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
  // 64^3: Auto takes native FP64 GEMM from the shape, captured or not, with the same Report:
  // the call declines before it asks whether its stream is captured (dispatch.hpp).
  Random rng(505);
  const std::int64_t n = 64;
  const HostMatrix A = random_host(n, n, 0.5, rng), B = random_host(n, n, 0.5, rng);
  const HostMatrix C0 = random_host(n, n, 0.5, rng);
  const GemmRun captured = run_gemm_captured('N', 'N', 1.0, A, B, 1.0, C0, ozaki::Options{});
  const GemmRun eager = run_gemm('N', 'N', 1.0, A, B, 1.0, C0, ozaki::Options{});
  EXPECT_EQ(captured.report.algorithm, Algorithm::Native);
  EXPECT_FALSE(captured.report.fallback);
  EXPECT_EQ(captured.report.reason, eager.report.reason);
  EXPECT_NE(captured.report.reason.find("faster"), std::string::npos) << captured.report.reason;
  const GemmRun native = run_gemm('N', 'N', 1.0, A, B, 1.0, C0, native_options());
  EXPECT_TRUE(agrees_with_native(captured.C, native.C, A, B));
}

TEST(Captured, AShapeAutoDeclinesIsDeclinedByACaptureToo) {
  // Why a call that Auto hands to native from the shape need not ask about a capture
  // (declines_captured_too): the captured count is never below Auto's first guess, and scheme
  // II's modelled cost never falls as the count grows, so the capture's own test
  // (captured_crt_applies) finds native GEMM faster as well.
  const ozaki::Impl::DeviceRates rates = ozaki::Impl::device_rates(TestSpace());
  for (const double u : {ozaki::Impl::fp64_unit_roundoff, ozaki::Impl::fp32_unit_roundoff}) {
    for (std::int64_t k = 1; k <= (std::int64_t(1) << 22); k = k * 3 / 2 + 1) {
      const std::string at = "K = " + std::to_string(k) + ", u = " + std::to_string(u);
      EXPECT_GE(ozaki::Impl::crt_capture_moduli(k, u), ozaki::Impl::crt_first_guess(k, u)) << at;
      for (const bool karatsuba : {false, true}) {
        ozaki::Impl::CallPlan plan = ozaki::Impl::make_plan({64, 2048, k}, ozaki::Options{});
        plan.complex_karatsuba = karatsuba;
        for (int L = 1; L < ozaki::max_moduli; ++L) {
          EXPECT_LE(ozaki::Impl::crt_plan_cost(rates, plan, L),
                    ozaki::Impl::crt_plan_cost(rates, plan, L + 1))
              << at << ", L = " << L;
        }
      }
    }
  }
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

/// A complex matrix with parts (U - 1/2) exp(phi N).
HostZ complex_host(std::int64_t rows, std::int64_t cols, Random& rng) {
  return random_z(rows, cols, 0.5, rng);
}

/// A complex call made as a captured call: op(A) op(B) with A and B stored as op's letters ask
/// (column-major), C column-major; C back on the host.
ZRun run_z_captured(char ta, char tb, zdouble alpha, const HostZ& A, const HostZ& B, zdouble beta,
                    const HostZ& C0, const ozaki::Options& options) {
  const DeviceZ<TestSpace> dA(A, Layout::Left), dB(B, Layout::Left), dC(C0, Layout::Left);
  const std::string sa(1, ta), sb(1, tb);
  ZRun run;
  run.report = captured_call([&](const TestSpace& space) {
    return ozaki::gemm(space, sa.c_str(), sb.c_str(), KC(alpha.real(), alpha.imag()), dA.view,
                       dB.view, KC(beta.real(), beta.imag()), dC.view, options);
  });
  run.C = dC.to_host();
  return run;
}

/// Native ZGEMM's result inside a graph against an eager one (agrees_with_native's rule for
/// complex data: the same bits on host spaces, within twice ZGEMM's bound on a GPU, NaN where
/// the other has NaN).
bool agrees_with_native_z(const HostZ& C, const HostZ& native, char ta, const HostZ& A, char tb,
                          const HostZ& B, zdouble alpha) {
  if (C.values.size() != native.values.size()) return false;
  if constexpr (ozaki::Impl::is_host_space<TestSpace>()) {
    return std::memcmp(C.values.data(), native.values.data(), C.values.size() * sizeof(zdouble)) ==
           0;
  }
  const std::int64_t K = ta == 'N' ? A.cols : A.rows;
  const double bound = 2 * ozaki::Impl::native_complex_componentwise_bound(K) * std::abs(alpha);
  for (std::int64_t n = 0; n < C.cols; ++n) {
    for (std::int64_t m = 0; m < C.rows; ++m) {
      const zdouble c = C(m, n), x = native(m, n);
      if (std::isnan(std::abs(c)) || std::isnan(std::abs(x))) {
        if (std::isnan(std::abs(c)) != std::isnan(std::abs(x))) return false;
        continue;
      }
      double abs_ab = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        abs_ab += std::abs(ta == 'N' ? A(m, k) : A(k, m)) * std::abs(tb == 'N' ? B(k, n) : B(n, k));
      }
      if (!(std::abs(c - x) <= bound * abs_ab)) return false;
    }
  }
  return true;
}

/// The eager call a captured complex Int8Crt call's products branch equals: Karatsuba with the
/// captured count of its rows of 2K parts under the fast rule.
ozaki::Options complex_eager_equivalent() {
  ozaki::Options o = eager_equivalent();
  o.moduli = ozaki::Impl::crt_capture_moduli(2 * K);
  return o;
}

TEST(Captured, ComplexCallsRunKaratsubaWithTheEagerCallsBits) {
  // op(A)'s rows copied inside the graph ("N": strided along K; "C": conjugated) or read in
  // place ("T"), and op(B)^T's the same way round.
  const char forms[][2] = {{'N', 'N'}, {'T', 'C'}, {'C', 'T'}};
  Random rng(507);
  for (const auto& form : forms) {
    const char ta = form[0], tb = form[1];
    const HostZ A = ta == 'N' ? complex_host(M, K, rng) : complex_host(K, M, rng);
    const HostZ B = tb == 'N' ? complex_host(K, N, rng) : complex_host(N, K, rng);
    const HostZ C0 = complex_host(M, N, rng);
    const zdouble alpha(1, 0.5), beta(-0.5, 0.25);
    const ZRun captured = run_z_captured(ta, tb, alpha, A, B, beta, C0, crt_options());
    const std::string what =
        std::string(1, ta) + std::string(1, tb) + ": " + captured.report.reason;
    EXPECT_EQ(captured.report.algorithm, Algorithm::Int8Crt) << what;
    EXPECT_EQ(captured.report.moduli, ozaki::Impl::crt_capture_moduli(2 * K)) << what;
    EXPECT_EQ(captured.report.complex_products, 3) << what;
    EXPECT_NE(captured.report.reason.find("captured into a graph"), std::string::npos) << what;
    EXPECT_NEAR(captured.report.error_bound, ozaki::Impl::native_complex_componentwise_bound(K),
                1e-12 * ozaki::Impl::native_complex_componentwise_bound(K))
        << what;
    const ZRun eager = run_z(ta, tb, alpha, A, B, beta, C0, complex_eager_equivalent());
    ASSERT_EQ(eager.report.complex_products, 3) << eager.report.reason;
    ASSERT_EQ(captured.C.values.size(), eager.C.values.size());
    EXPECT_EQ(std::memcmp(captured.C.values.data(), eager.C.values.data(),
                          eager.C.values.size() * sizeof(zdouble)),
              0)
        << what;
  }
}

TEST(Captured, ComplexDataTheCountCannotCertifyOrNanRunNativeZgemmInTheGraph) {
  Random rng(508);
  HostZ A = complex_host(M, K, rng), B = complex_host(K, N, rng);
  // Scaled against each other along k by up to 2^+-25 (scale_against_each_other's case).
  for (std::int64_t k = 0; k < K; ++k) {
    const int d = static_cast<int>(std::floor(rng.uniform() * 51)) - 25;
    for (std::int64_t m = 0; m < M; ++m) A.values[m + k * M] *= std::ldexp(1.0, d);
    for (std::int64_t n = 0; n < N; ++n) B.values[k + n * K] *= std::ldexp(1.0, -d);
  }
  HostZ with_nan = complex_host(M, K, rng);
  with_nan.values[5 + 17 * M] = zdouble(std::nan(""), 0);
  const HostZ tame = complex_host(K, N, rng), C0 = complex_host(M, N, rng);
  ozaki::Options native;
  native.algorithm = Algorithm::Native;
  const zdouble alpha(1, 0.5), beta(0.25, 0);
  for (const auto& [a, b] : {std::pair<const HostZ*, const HostZ*>{&A, &B}, {&with_nan, &tame}}) {
    const ZRun captured = run_z_captured('N', 'N', alpha, *a, *b, beta, C0, crt_options());
    EXPECT_EQ(captured.report.algorithm, Algorithm::Int8Crt) << captured.report.reason;
    const ZRun eager = run_z('N', 'N', alpha, *a, *b, beta, C0, native);
    EXPECT_TRUE(agrees_with_native_z(captured.C, eager.C, 'N', *a, 'N', *b, alpha));
  }
}

TEST(Captured, ComplexCallsOutsideKaratsubasFormRunNativeZgemmAndSaySo) {
  Random rng(509);
  const HostZ A = complex_host(M, K, rng), B = complex_host(K, N, rng),
              C0 = complex_host(M, N, rng);
  ozaki::Options accurate = crt_options();
  accurate.crt_scaling = CrtScaling::Accurate;
  ozaki::Options embedding = crt_options();
  embedding.experimental.complex_products = ozaki::Experimental::ComplexProducts::Embedding;
  ozaki::Options off = crt_options();
  off.experimental.graph_products = false;
  ozaki::Options native;
  native.algorithm = Algorithm::Native;
  const ZRun eager = run_z('N', 'N', zdouble(1, 0.5), A, B, zdouble(0, 0), C0, native);
  for (const ozaki::Options& o : {accurate, embedding, off}) {
    const ZRun captured = run_z_captured('N', 'N', zdouble(1, 0.5), A, B, zdouble(0, 0), C0, o);
    EXPECT_EQ(captured.report.algorithm, Algorithm::Native);
    EXPECT_TRUE(captured.report.fallback);
    EXPECT_NE(captured.report.reason.find("captured into a graph"), std::string::npos)
        << captured.report.reason;
    EXPECT_TRUE(agrees_with_native_z(captured.C, eager.C, 'N', A, 'N', B, zdouble(1, 0.5)));
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
