// The componentwise promise of every automatic count (docs/design.md §3a): on data whose
// exponents are spread against each other along k, C satisfies
//     |C - AB|_mn <= Report::error_bound (|A||B|)_mn
// with error_bound at most native FP64 GEMM's own gamma_K, and its measured error stays
// within max(4 x native's, 16u) of a double-double reference.  Each family below is a way in
// which per-row and per-column scaling alone loses the entries that carry (|A||B|)_mn.
#include "captured_common.hpp"
#include "complex_common.hpp"

#include <ozaki/impl/common/bounds.hpp>
#include <ozaki/impl/crt/captured.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace ozaki_test;
using ozaki::Algorithm;
using ozaki::CrtScaling;

constexpr double u = 0x1p-53;

/// Data families: A (M x K) and B (K x N) from a seed.
enum class Family {
  Iid,                 // (U - 1/2) exp(phi N): the control
  AntiAlignedAll,      // A X D, D^-1 Y with D = 2^d_k, d_k uniform in [-r, r] for every k
  AntiAlignedHalf,     // the same on the first half of k only
  AntiAlignedBlocks,   // the same on random blocks of 32 consecutive k, one d per block
  OutlierPerRow,       // one element of each row of A 2^r times larger
  OutlierPerColumn,    // one element of each column of B 2^r times larger
  RankOneAlternating,  // A = x w^T, B = z y^T with signs alternating along k
  SpanWithinRows,      // every element its own exponent, uniform in [-r, r]
  SpanAcrossRows,      // every row of A and column of B its own exponent, uniform in [-r, r]
};

const char* name(Family f) {
  switch (f) {
    case Family::Iid: return "iid";
    case Family::AntiAlignedAll: return "anti-aligned (all k)";
    case Family::AntiAlignedHalf: return "anti-aligned (half of k)";
    case Family::AntiAlignedBlocks: return "anti-aligned (blocks of k)";
    case Family::OutlierPerRow: return "outlier per row";
    case Family::OutlierPerColumn: return "outlier per column";
    case Family::RankOneAlternating: return "rank 1, alternating signs";
    case Family::SpanWithinRows: return "exponents spread within rows";
    case Family::SpanAcrossRows: return "exponents spread across rows";
  }
  return "?";
}

struct Case {
  Family family;
  int r;  // the family's exponent range (phi x 10 for Iid)
  std::int64_t M, N, K;
  std::uint64_t seed;
};

std::string describe(const Case& c) {
  return std::string(name(c.family)) + " r = " + std::to_string(c.r) + ", " + std::to_string(c.M) +
         "x" + std::to_string(c.N) + "x" + std::to_string(c.K) + ", seed " + std::to_string(c.seed);
}

int uniform_int(Random& rng, int r) {
  return static_cast<int>(std::floor(rng.uniform() * (2 * r + 1))) - r;
}

std::pair<HostMatrix, HostMatrix> make_data(const Case& c) {
  Random rng(c.seed);
  const double phi = c.family == Family::Iid ? c.r / 10.0 : 0.5;
  HostMatrix A = random_host(c.M, c.K, phi, rng), B = random_host(c.K, c.N, phi, rng);
  const auto scale_along_k = [&](const std::vector<int>& d) {
    for (std::int64_t k = 0; k < c.K; ++k) {
      for (std::int64_t m = 0; m < c.M; ++m)
        A.values[m + k * c.M] = std::ldexp(A.values[m + k * c.M], d[k]);
      for (std::int64_t n = 0; n < c.N; ++n)
        B.values[k + n * c.K] = std::ldexp(B.values[k + n * c.K], -d[k]);
    }
  };
  std::vector<int> d(static_cast<std::size_t>(c.K), 0);
  switch (c.family) {
    case Family::Iid: break;
    case Family::AntiAlignedAll:
      for (auto& v : d) v = uniform_int(rng, c.r);
      scale_along_k(d);
      break;
    case Family::AntiAlignedHalf:
      for (std::int64_t k = 0; k < c.K / 2; ++k) d[k] = uniform_int(rng, c.r);
      scale_along_k(d);
      break;
    case Family::AntiAlignedBlocks:
      for (std::int64_t k0 = 0; k0 < c.K; k0 += 32) {
        const int v = rng.uniform() < 0.5 ? uniform_int(rng, c.r) : 0;
        for (std::int64_t k = k0; k < std::min(c.K, k0 + 32); ++k) d[k] = v;
      }
      scale_along_k(d);
      break;
    case Family::OutlierPerRow:
      for (std::int64_t m = 0; m < c.M; ++m) {
        const auto k = static_cast<std::int64_t>(rng.uniform() * c.K);
        A.values[m + k * c.M] = std::ldexp(A.values[m + k * c.M], c.r);
      }
      break;
    case Family::OutlierPerColumn:
      for (std::int64_t n = 0; n < c.N; ++n) {
        const auto k = static_cast<std::int64_t>(rng.uniform() * c.K);
        B.values[k + n * c.K] = std::ldexp(B.values[k + n * c.K], c.r);
      }
      break;
    case Family::RankOneAlternating: {
      std::vector<double> x(c.M), w(c.K), z(c.K), y(c.N);
      for (auto& v : x) v = rng.spread(1.0);
      for (auto& v : w) v = std::fabs(rng.spread(1.0));
      for (auto& v : z) v = std::fabs(rng.spread(1.0));
      for (auto& v : y) v = rng.spread(1.0);
      for (std::int64_t k = 0; k < c.K; ++k) {
        const double sign = k % 2 == 0 ? 1.0 : -1.0;
        for (std::int64_t m = 0; m < c.M; ++m) A.values[m + k * c.M] = sign * x[m] * w[k];
        for (std::int64_t n = 0; n < c.N; ++n) B.values[k + n * c.K] = sign * z[k] * y[n];
      }
      break;
    }
    case Family::SpanWithinRows:
      for (auto& v : A.values) v = std::ldexp(v, uniform_int(rng, c.r));
      for (auto& v : B.values) v = std::ldexp(v, uniform_int(rng, c.r));
      break;
    case Family::SpanAcrossRows:
      for (std::int64_t m = 0; m < c.M; ++m) {
        const int e = uniform_int(rng, c.r);
        for (std::int64_t k = 0; k < c.K; ++k)
          A.values[m + k * c.M] = std::ldexp(A.values[m + k * c.M], e);
      }
      for (std::int64_t n = 0; n < c.N; ++n) {
        const int e = uniform_int(rng, c.r);
        for (std::int64_t k = 0; k < c.K; ++k)
          B.values[k + n * c.K] = std::ldexp(B.values[k + n * c.K], e);
      }
      break;
  }
  return {A, B};
}

/// The configurations whose counts are automatic; `captured`: the call is made while its
/// stream is captured into a graph (captured_common.hpp), where scheme II's count comes from
/// the shape and the device's verdict decides at each launch (crt/captured.hpp).
struct Config {
  const char* label;
  Algorithm algorithm;
  CrtScaling scaling;
  bool captured = false;
};
const Config configs[] = {
    {"Auto", Algorithm::Auto, CrtScaling::Auto},
    {"Int8Crt, auto count, auto rule", Algorithm::Int8Crt, CrtScaling::Auto},
    {"Int8Crt, auto count, fast rule", Algorithm::Int8Crt, CrtScaling::Fast},
    {"Int8Crt, auto count, accurate rule", Algorithm::Int8Crt, CrtScaling::Accurate},
    {"Int8Slices, auto S", Algorithm::Int8Slices, CrtScaling::Auto},
    {"Int8Crt, auto count, captured in a graph", Algorithm::Int8Crt, CrtScaling::Auto, true},
};

/// max_mn |C - ref| / (|A||B|)_mn over every entry with (|A||B|)_mn > 0.
double componentwise_error(const HostMatrix& C, const HostMatrix& ref,
                           const std::vector<double>& abs_ab) {
  double worst = 0;
  for (std::size_t i = 0; i < C.values.size(); ++i) {
    if (!(abs_ab[i] > 0)) {
      // (|A||B|)_mn = 0: every product is 0, and so must C be.
      worst = std::max(worst, C.values[i] == 0 ? 0.0 : HUGE_VAL);
      continue;
    }
    worst = std::max(worst, std::fabs(C.values[i] - ref.values[i]) / abs_ab[i]);
  }
  return worst;
}

/// The branch a captured call's verdict took is never more permissive than the eager planner:
/// where its C is the products' (the bits of an eager call with the captured count under the
/// fast rule), the eager call with an automatic count took the fast rule (not the counted one)
/// with at most that count.  Otherwise it ran native FP64 GEMM: the same bits as the eager
/// native call on host spaces.
void check_captured_branch(const Case& c, const HostMatrix& A, const HostMatrix& B,
                           const HostMatrix& C0, const GemmRun& captured,
                           const ozaki::Report& automatic, const std::string& what) {
  ozaki::Options fixed;
  fixed.algorithm = Algorithm::Int8Crt;
  fixed.moduli = ozaki::Impl::crt_capture_moduli(c.K);
  fixed.crt_scaling = CrtScaling::Fast;
  const GemmRun eager = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, fixed);
  if (captured.C.values == eager.C.values) {
    EXPECT_EQ(automatic.algorithm, Algorithm::Int8Crt) << what << "; " << automatic.reason;
    EXPECT_LE(automatic.moduli, *fixed.moduli) << what << "; " << automatic.reason;
    EXPECT_EQ(automatic.crt_scaling, CrtScaling::Fast) << what << "; " << automatic.reason;
    EXPECT_EQ(automatic.estimate_int8_gemms, 0) << what << "; " << automatic.reason;
    return;
  }
  if constexpr (ozaki::Impl::is_host_space<TestSpace>()) {
    ozaki::Options native;
    native.algorithm = Algorithm::Native;
    EXPECT_EQ(captured.C.values, run_gemm('N', 'N', 1.0, A, B, 0.0, C0, native).C.values) << what;
  }
}

void check_family(const Case& c) {
  const auto [A, B] = make_data(c);
  Random c_rng(c.seed + 1);
  const HostMatrix C0 = random_host(c.M, c.N, 0.5, c_rng);
  HostMatrix ref = C0;
  ozaki::serial::dd_gemm('N', 'N', 1.0, A.cref(), B.cref(), 0.0, ref.ref());
  const std::vector<double> abs_ab = abs_product('N', 'N', A, B);
  ozaki::Options native_options;
  native_options.algorithm = Algorithm::Native;
  const GemmRun native = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, native_options);
  const double native_error = componentwise_error(native.C, ref, abs_ab);
  const double allowed = std::max(4 * native_error, 16 * u);
  const double gamma_K = ozaki::Impl::native_componentwise_bound(c.K);  // gamma_(K+2)
  ozaki::Report automatic;  // the eager Int8Crt call's with an automatic count and rule
  for (const Config& config : configs) {
    ozaki::Options o;
    o.algorithm = config.algorithm;
    o.crt_scaling = config.scaling;
    o.experimental.graph_products = config.captured;
    const GemmRun run = config.captured ? run_gemm_captured('N', 'N', 1.0, A, B, 0.0, C0, o)
                                        : run_gemm('N', 'N', 1.0, A, B, 0.0, C0, o);
    const double error = componentwise_error(run.C, ref, abs_ab);
    const std::string what = describe(c) + ", " + config.label + ": ran " +
                             ozaki::to_string(run.report.algorithm) + " (" +
                             std::to_string(run.report.moduli) +
                             " moduli, S = " + std::to_string(run.report.slices) +
                             ", reason: " + run.report.reason + ")";
    EXPECT_LE(error, allowed) << what << ": error " << error << ", native " << native_error;
    ::testing::Test::RecordProperty(std::string(config.label) + ": " + describe(c),
                                    std::string(ozaki::to_string(run.report.algorithm)) +
                                        " L=" + std::to_string(run.report.moduli) +
                                        " S=" + std::to_string(run.report.slices));
    // The bound the Report states holds, and keeps the promise: no worse than native's own.
    EXPECT_GT(run.report.error_bound, 0.0) << what;
    // (A few units of 2^-1074 where C is subnormal: none of these families has such entries.)
    EXPECT_LE(error, run.report.error_bound) << what;
    EXPECT_LE(run.report.error_bound, gamma_K) << what;
    if (run.report.algorithm != config.algorithm && config.algorithm != Algorithm::Auto) {
      EXPECT_TRUE(run.report.fallback) << what;
      EXPECT_FALSE(run.report.reason.empty()) << what;
    }
    if (config.algorithm == Algorithm::Int8Crt && config.scaling == CrtScaling::Auto) {
      if (config.captured) {
        check_captured_branch(c, A, B, C0, run, automatic, what);
      } else {
        automatic = run.report;
      }
    }
  }
}

/// The complex form of a family: A + i (A o W) and B + i (B o W') with |W|, |W'| in [1/2, 1]
/// and random signs, so that both parts carry the family's exponent structure.
HostZ complex_of(const HostMatrix& X, Random& rng) {
  HostZ z;
  z.rows = X.rows;
  z.cols = X.cols;
  for (const double x : X.values) {
    const double w = (0.5 + 0.5 * rng.uniform()) * (rng.uniform() < 0.5 ? -1 : 1);
    z.values.push_back(zdouble(x, x * w));
  }
  return z;
}

/// max_mn |C - ref| / (|A||B|)_mn with complex moduli (|C - ref| the modulus too).
double componentwise_error(const HostZ& C, const HostZ& ref, const HostZ& A, const HostZ& B) {
  double worst = 0;
  for (std::int64_t n = 0; n < C.cols; ++n) {
    for (std::int64_t m = 0; m < C.rows; ++m) {
      double abs_ab = 0;
      for (std::int64_t k = 0; k < A.cols; ++k) abs_ab += std::abs(A(m, k)) * std::abs(B(k, n));
      const double diff = std::abs(C(m, n) - ref(m, n));
      worst = std::max(worst, abs_ab > 0 ? diff / abs_ab : (diff == 0 ? 0.0 : HUGE_VAL));
    }
  }
  return worst;
}

void check_complex_family(const Case& c) {
  const auto [Ar, Br] = make_data(c);
  Random rng(c.seed + 2);
  const HostZ A = complex_of(Ar, rng), B = complex_of(Br, rng);
  HostZ C0;
  C0.rows = c.M;
  C0.cols = c.N;
  C0.values.assign(static_cast<std::size_t>(c.M * c.N), zdouble(0.25, -0.5));
  HostZ ref = C0;
  ozaki::serial::zdd_gemm('N', 'N', zdouble(1, 0), A.cref(), B.cref(), zdouble(0, 0), ref.ref());
  ozaki::Options native_options;
  native_options.algorithm = Algorithm::Native;
  const ZRun native = run_z('N', 'N', zdouble(1, 0), A, B, zdouble(0, 0), C0, native_options);
  const double native_error = componentwise_error(native.C, ref, A, B);
  const double allowed = std::max(4 * native_error, 16 * u);
  // Native ZGEMM's own bound; DGEMM on the real embedding (where the embedding's real call
  // runs native) has gamma_(2K+2), and a complex alpha and beta after it.
  const double zgemm_bound = ozaki::Impl::native_complex_componentwise_bound(c.K);
  const double embedding_bound =
      ozaki::Impl::native_componentwise_bound(2 * c.K) * (1 + 1e-15) + 1e-15;
  for (const Config& config : configs) {
    ozaki::Options o;
    o.algorithm = config.algorithm;
    o.crt_scaling = config.scaling;
    if (config.captured) {
      // A captured complex call runs native ZGEMM in the graph (complex/driver.hpp):
      // test_captured.cpp asserts that.
      continue;
    }
    const ZRun run = run_z('N', 'N', zdouble(1, 0), A, B, zdouble(0, 0), C0, o);
    const double error = componentwise_error(run.C, ref, A, B);
    const std::string what = "complex " + describe(c) + ", " + config.label + ": ran " +
                             ozaki::to_string(run.report.algorithm) + " (" +
                             std::to_string(run.report.moduli) + " moduli, " +
                             std::to_string(run.report.complex_products) +
                             " products per modulus, reason: " + run.report.reason + ")";
    EXPECT_LE(error, allowed) << what << ": error " << error << ", native " << native_error;
    EXPECT_GT(run.report.error_bound, 0.0) << what;
    EXPECT_LE(error, run.report.error_bound) << what;
    EXPECT_LE(run.report.error_bound, run.report.algorithm == Algorithm::Native
                                          ? std::max(zgemm_bound, embedding_bound)
                                          : zgemm_bound)
        << what;
    ::testing::Test::RecordProperty(std::string("complex ") + config.label + ": " + describe(c),
                                    std::string(ozaki::to_string(run.report.algorithm)) +
                                        " L=" + std::to_string(run.report.moduli));
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  std::uint64_t seed = 7100;
  for (const std::int64_t K : {300, 2048}) {
    const std::int64_t M = 40, N = 36;
    for (const int phi10 : {5, 20}) out.push_back({Family::Iid, phi10, M, N, K, ++seed});
    for (const Family f :
         {Family::AntiAlignedAll, Family::AntiAlignedHalf, Family::AntiAlignedBlocks}) {
      for (const int r : {1, 3, 10, 25, 60}) out.push_back({f, r, M, N, K, ++seed});
    }
    for (const int r : {10, 20, 40}) {
      out.push_back({Family::OutlierPerRow, r, M, N, K, ++seed});
      out.push_back({Family::OutlierPerColumn, r, M, N, K, ++seed});
    }
    out.push_back({Family::RankOneAlternating, 0, M, N, K, ++seed});
    for (const int r : {40, 500}) out.push_back({Family::SpanWithinRows, r, M, N, K, ++seed});
    out.push_back({Family::SpanAcrossRows, 500, M, N, K, ++seed});
  }
  return out;
}

class Componentwise : public ::testing::TestWithParam<Case> {};

TEST_P(Componentwise, EveryAutomaticCountKeepsThePromise) { check_family(GetParam()); }

TEST_P(Componentwise, EveryAutomaticCountKeepsThePromiseOnComplexData) {
  check_complex_family(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Families, Componentwise, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string s = describe(info.param);
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return std::to_string(info.index) + "_" + s;
                         });

}  // namespace
