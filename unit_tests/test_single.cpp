// FP32 data (float and Kokkos::complex<float> Views, and float operands with a double C) on the
// test space (src/ozaki/impl/single/driver.hpp): every result within the componentwise bound
// the Report states, checked against a long double reference on data with a controlled
// exponent spread; that bound no looser than native FP32 GEMM's; the counts FP32 accuracy
// needs (fewer than FP64's); the INT8 paths bitwise the FP64 pipeline on the staged data
// rounded once, and the same bits on the host; BLAS semantics, NaN/Inf, bad arguments and
// workspaces.

#include "captured_common.hpp"

#include <ozaki/ozaki.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using namespace ozaki_test;
using ozaki::Accuracy;
using ozaki::Algorithm;
using ozaki::CrtScaling;
using ozaki::Options;
using ozaki::Report;
using CF = Kokkos::complex<float>;
using CD = Kokkos::complex<double>;

constexpr double u32 = 0x1p-24;

template <class T>
constexpr bool is_complex_v = !std::is_same<T, float>::value && !std::is_same<T, double>::value;

/// A host matrix of T, column-major.
template <class T>
struct Host {
  std::int64_t rows = 0, cols = 0;
  std::vector<T> values;
  T operator()(std::int64_t i, std::int64_t j) const { return values[i + j * rows]; }
  T& operator()(std::int64_t i, std::int64_t j) { return values[i + j * rows]; }
};

/// Entries (U - 1/2) exp(phi N) rounded to T.
template <class T>
Host<T> random_matrix(std::int64_t rows, std::int64_t cols, double phi, Random& rng) {
  Host<T> h;
  h.rows = rows;
  h.cols = cols;
  h.values.resize(static_cast<std::size_t>(rows * cols));
  for (T& x : h.values) x = spread_value<T>(rng, phi);
  return h;
}

template <class T>
Host<T> shaped(std::int64_t rows, std::int64_t cols, char trans, double phi, Random& rng) {
  return trans == 'N' ? random_matrix<T>(rows, cols, phi, rng)
                      : random_matrix<T>(cols, rows, phi, rng);
}

/// A matrix of T on Space's memory in the given layout (DeviceOf), with the host values copied
/// in.
template <class T, class Space = TestSpace>
struct Device : DeviceOf<T, Space> {
  Device(const Host<T>& h, Layout l) : DeviceOf<T, Space>(h.values.data(), h.rows, h.cols, l) {}

  Host<T> to_host() const {
    Host<T> h;
    h.rows = this->view.extent(0);
    h.cols = this->view.extent(1);
    h.values.resize(static_cast<std::size_t>(h.rows * h.cols));
    this->copy(h.values.data(), false);
    return h;
  }
};

template <class CT>
struct CallRun {
  Host<CT> C;
  Report report;
};

/// ozaki::gemm on Space with the operands in the given layouts; C back on the host.
template <class Space = TestSpace, class T, class CT>
CallRun<CT> run_gemm(char ta, char tb, CT alpha, const Host<T>& A, Layout la, const Host<T>& B,
                     Layout lb, CT beta, const Host<CT>& C0, Layout lc, const Options& options) {
  const Device<T, Space> dA(A, la), dB(B, lb);
  const Device<CT, Space> dC(C0, lc);
  const std::string sa(1, ta), sb(1, tb);
  CallRun<CT> run;
  run.report = dA.visit([&](const auto& a) {
    return dB.visit([&](const auto& b) {
      return dC.visit([&](const auto& c) {
        return ozaki::gemm(Space(), sa.c_str(), sb.c_str(), alpha, a, b, beta, c, options);
      });
    });
  });
  run.C = dC.to_host();
  return run;
}

template <class T, class CT>
CallRun<CT> run_gemm(char ta, char tb, CT alpha, const Host<T>& A, const Host<T>& B, CT beta,
                     const Host<CT>& C0, const Options& options) {
  return run_gemm(ta, tb, alpha, A, Layout::Left, B, Layout::Left, beta, C0, Layout::Left, options);
}

using LComplex = std::complex<long double>;

template <class T>
LComplex widen(T x) {
  if constexpr (is_complex_v<T>) {
    return LComplex(x.real(), x.imag());
  } else {
    return LComplex(static_cast<long double>(x), 0);
  }
}

template <class T>
LComplex op_entry(const Host<T>& X, char trans, std::int64_t i, std::int64_t j) {
  const LComplex x = trans == 'N' ? widen(X(i, j)) : widen(X(j, i));
  return trans == 'C' ? std::conj(x) : x;
}

/// The reference alpha op(A) op(B) + beta C0 in long double (64-bit significands: 2^-40 of
/// FP32's unit roundoff), and the yardstick |alpha| |op(A)||op(B)| + |beta C0|, per entry.
template <class T, class CT>
struct Reference {
  std::vector<LComplex> value;
  std::vector<long double> scale;
  Reference(char ta, char tb, CT alpha, const Host<T>& A, const Host<T>& B, CT beta,
            const Host<CT>& C0) {
    const std::int64_t M = C0.rows, N = C0.cols, K = ta == 'N' ? A.cols : A.rows;
    value.resize(static_cast<std::size_t>(M * N));
    scale.resize(value.size());
    const LComplex a = widen(alpha), b = widen(beta);
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t m = 0; m < M; ++m) {
        LComplex sum = 0;
        long double abs_sum = 0;
        for (std::int64_t k = 0; k < K; ++k) {
          const LComplex p = op_entry(A, ta, m, k) * op_entry(B, tb, k, n);
          sum += p;
          abs_sum += std::abs(op_entry(A, ta, m, k)) * std::abs(op_entry(B, tb, k, n));
        }
        const LComplex c0 = widen(C0(m, n));
        const bool beta_zero = b == LComplex(0);
        value[m + n * M] = a * sum + (beta_zero ? LComplex(0) : b * c0);
        scale[m + n * M] = std::abs(a) * abs_sum + (beta_zero ? 0 : std::abs(b * c0));
      }
  }

  /// Largest |C - reference| / scale over the entries (0 / 0 counts as 0).
  template <class CT2>
  double worst(const Host<CT2>& C) const {
    double w = 0;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const long double diff = std::abs(widen(C.values[i]) - value[i]);
      const double e =
          scale[i] > 0 ? static_cast<double>(diff / scale[i]) : (diff > 0 ? HUGE_VAL : 0.0);
      w = std::max(w, e);
    }
    return w;
  }
};

Options crt(std::optional<int> L = std::nullopt, CrtScaling scaling = CrtScaling::Auto) {
  Options o;
  o.algorithm = Algorithm::Int8Crt;
  o.moduli = L;
  o.crt_scaling = scaling;
  return o;
}

Options slices() {
  Options o;
  o.algorithm = Algorithm::Int8Slices;
  return o;
}

Options native() {
  Options o;
  o.algorithm = Algorithm::Native;
  return o;
}

template <class T>
T scalar(double re, double im) {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(re), static_cast<R>(im));
  } else {
    return static_cast<T>(re);
  }
}

template <class T>
void expect_bitwise(const Host<T>& got, const Host<T>& want, const std::string& what) {
  ASSERT_EQ(got.values.size(), want.values.size()) << what;
  for (std::size_t i = 0; i < got.values.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got.values[i], &want.values[i], sizeof(T)), 0)
        << what << ": entry " << i;
  }
}

/// Native FP32 GEMM's componentwise bound for inner length K (real or complex).
template <class T>
double native_fp32_bound(std::int64_t K) {
  return is_complex_v<T> ? ozaki::Impl::native_complex_componentwise_bound(K, u32)
                         : ozaki::Impl::native_componentwise_bound(K, u32);
}

// ---- the componentwise promise ----------------------------------------------------------------

template <class T>
void check_promise_everywhere() {
  Random rng(4100);
  const std::int64_t M = 70, N = 45, K = 300;
  const char transposes[] = {'N', 'T', is_complex_v<T> ? 'C' : 'T'};
  int cases = 0;
  for (double phi : {0.5, 2.0, 4.0})
    for (const Options& o : {Options{}, crt(), crt(std::nullopt, CrtScaling::Fast),
                             crt(std::nullopt, CrtScaling::Accurate), slices()})
      for (char ta : transposes) {
        const char tb = transposes[(cases + 1) % 3];
        const Layout la = Layout(cases % 3), lb = Layout((cases + 1) % 3),
                     lc = Layout((cases + 2) % 3);
        const Host<T> A = shaped<T>(M, K, ta, phi, rng), B = shaped<T>(K, N, tb, phi, rng);
        const Host<T> C0 = random_matrix<T>(M, N, 1.0, rng);
        const T alpha = scalar<T>(-1.25, 0.5), beta = scalar<T>(0.75, -0.25);
        const CallRun<T> run = run_gemm(ta, tb, alpha, A, la, B, lb, beta, C0, lc, o);
        const std::string what = std::string("phi ") + std::to_string(phi) + ", " +
                                 to_string(o.algorithm) + " " + to_string(o.crt_scaling) + ", " +
                                 ta + tb + ": " + run.report.reason;
        const Reference<T, T> ref(ta, tb, alpha, A, B, beta, C0);
        EXPECT_GT(run.report.error_bound, 0) << what;
        EXPECT_LE(run.report.error_bound, native_fp32_bound<T>(K)) << what;
        EXPECT_LE(ref.worst(run.C), run.report.error_bound) << what;
        ++cases;
      }
  EXPECT_EQ(cases, 45);
}

TEST(Single, FloatKeepsTheReportedBoundAndNativeFp32sBound) { check_promise_everywhere<float>(); }
TEST(Single, ComplexFloatKeepsTheReportedBoundAndNativeFp32sBound) {
  check_promise_everywhere<CF>();
}

template <class T>
void check_fewer_moduli() {
  // FP32's promise needs about half of FP64's moduli.
  Random rng(4101);
  const std::int64_t M = 64, N = 48, K = 512;
  const Host<T> A = random_matrix<T>(M, K, 0.5, rng), B = random_matrix<T>(K, N, 0.5, rng);
  const Host<T> C0 = random_matrix<T>(M, N, 0.5, rng);
  const CallRun<T> fp32 = run_gemm('N', 'N', scalar<T>(1, 0), A, B, scalar<T>(0, 0), C0, crt());
  Options fp64_options = crt();
  fp64_options.accuracy = Accuracy::Fp64;
  const CallRun<T> fp64 =
      run_gemm('N', 'N', scalar<T>(1, 0), A, B, scalar<T>(0, 0), C0, fp64_options);
  ASSERT_EQ(fp32.report.algorithm, Algorithm::Int8Crt) << fp32.report.reason;
  ASSERT_EQ(fp64.report.algorithm, Algorithm::Int8Crt) << fp64.report.reason;
  EXPECT_LE(fp32.report.moduli, 9) << fp32.report.reason;
  EXPECT_GE(fp64.report.moduli, 13) << fp64.report.reason;
  // Accuracy::Fp64 with an FP32 C: FP64-accurate products rounded once, a few units of FP32's
  // roundoff relative to |A||B| at most (the rounding of C itself).
  const Reference<T, T> ref('N', 'N', scalar<T>(1, 0), A, B, scalar<T>(0, 0), C0);
  EXPECT_LE(ref.worst(fp64.C), 2 * u32);
  EXPECT_LE(fp64.report.error_bound, 2 * u32) << fp64.report.reason;
  EXPECT_LE(ref.worst(fp64.C), fp64.report.error_bound);
  EXPECT_LE(ref.worst(fp32.C), fp32.report.error_bound);
}

/// FP32 versions of the componentwise families (test_componentwise.cpp): ways in which per-row
/// and per-column scaling alone loses the entries that carry (|A||B|)_mn, within FP32's range.
enum class Family {
  Iid,
  AntiAlignedAll,
  AntiAlignedHalf,
  AntiAlignedBlocks,
  OutlierPerRow,
  OutlierPerColumn,
  RankOneAlternating,
  SpanWithinRows,
  SpanAcrossRows
};

int uniform_int(Random& rng, int r) {
  return static_cast<int>(std::floor(rng.uniform() * (2 * r + 1))) - r;
}

template <class T>
T scaled(T x, int e) {
  if constexpr (is_complex_v<T>) {
    return T(std::ldexp(x.real(), e), std::ldexp(x.imag(), e));
  } else {
    return std::ldexp(x, e);
  }
}

template <class T>
std::pair<Host<T>, Host<T>> family_data(Family f, int r, std::int64_t M, std::int64_t N,
                                        std::int64_t K, std::uint64_t seed) {
  Random rng(seed);
  Host<T> A = random_matrix<T>(M, K, 0.5, rng), B = random_matrix<T>(K, N, 0.5, rng);
  std::vector<int> d(static_cast<std::size_t>(K), 0);
  switch (f) {
    case Family::Iid: break;
    case Family::AntiAlignedAll:
      for (auto& v : d) v = uniform_int(rng, r);
      break;
    case Family::AntiAlignedHalf:
      for (std::int64_t k = 0; k < K / 2; ++k) d[k] = uniform_int(rng, r);
      break;
    case Family::AntiAlignedBlocks:
      for (std::int64_t k0 = 0; k0 < K; k0 += 32) {
        const int v = rng.uniform() < 0.5 ? uniform_int(rng, r) : 0;
        for (std::int64_t k = k0; k < std::min(K, k0 + 32); ++k) d[k] = v;
      }
      break;
    case Family::OutlierPerRow:
      for (std::int64_t m = 0; m < M; ++m) {
        const auto k = static_cast<std::int64_t>(rng.uniform() * K);
        A(m, k) = scaled(A(m, k), r);
      }
      break;
    case Family::OutlierPerColumn:
      for (std::int64_t n = 0; n < N; ++n) {
        const auto k = static_cast<std::int64_t>(rng.uniform() * K);
        B(k, n) = scaled(B(k, n), r);
      }
      break;
    case Family::RankOneAlternating:
      for (std::int64_t k = 0; k < K; ++k) {
        const float w = std::fabs(static_cast<float>(rng.spread(1.0))) + 0.25f;
        for (std::int64_t m = 0; m < M; ++m) A(m, k) = A(m, 0) * (k % 2 == 0 ? w : -w);
        for (std::int64_t n = 0; n < N; ++n) B(k, n) = B(0, n) * (k % 2 == 0 ? 1.0f : -1.0f);
      }
      break;
    case Family::SpanWithinRows:
      for (auto& v : A.values) v = scaled(v, uniform_int(rng, r));
      for (auto& v : B.values) v = scaled(v, uniform_int(rng, r));
      break;
    case Family::SpanAcrossRows:
      for (std::int64_t m = 0; m < M; ++m) {
        const int e = uniform_int(rng, r);
        for (std::int64_t k = 0; k < K; ++k) A(m, k) = scaled(A(m, k), e);
      }
      for (std::int64_t n = 0; n < N; ++n) {
        const int e = uniform_int(rng, r);
        for (std::int64_t k = 0; k < K; ++k) B(k, n) = scaled(B(k, n), e);
      }
      break;
  }
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t m = 0; m < M; ++m) A(m, k) = scaled(A(m, k), d[k]);
    for (std::int64_t n = 0; n < N; ++n) B(k, n) = scaled(B(k, n), -d[k]);
  }
  return {A, B};
}

template <class T>
void check_families() {
  // Every automatic count under every rule, on each family: every entry within the Report's
  // bound, and within max(4 x native FP32 GEMM's measured error, 16 u32) relative to |A||B|.
  struct Case {
    Family family;
    int r;
  };
  const Case cases[] = {{Family::Iid, 0},
                        {Family::AntiAlignedAll, 10},
                        {Family::AntiAlignedAll, 25},
                        {Family::AntiAlignedAll, 60},
                        {Family::AntiAlignedHalf, 25},
                        {Family::AntiAlignedBlocks, 25},
                        {Family::OutlierPerRow, 20},
                        {Family::OutlierPerColumn, 40},
                        {Family::RankOneAlternating, 0},
                        {Family::SpanWithinRows, 40},
                        {Family::SpanAcrossRows, 60}};
  const std::int64_t M = 40, N = 36, K = 300;
  int checked = 0;
  std::uint64_t seed = 4200;
  for (const Case& c : cases) {
    const auto [A, B] = family_data<T>(c.family, c.r, M, N, K, ++seed);
    Random rng(seed);
    const Host<T> C0 = random_matrix<T>(M, N, 0.5, rng);
    const T one = scalar<T>(1, 0), zero = scalar<T>(0, 0);
    const Reference<T, T> ref('N', 'N', one, A, B, zero, C0);
    const double native_error = ref.worst(run_gemm('N', 'N', one, A, B, zero, C0, native()).C);
    for (const Options& o : {Options{}, crt(), crt(std::nullopt, CrtScaling::Fast),
                             crt(std::nullopt, CrtScaling::Accurate), slices()}) {
      const CallRun<T> run = run_gemm('N', 'N', one, A, B, zero, C0, o);
      const std::string what = "family " + std::to_string(int(c.family)) + " r " +
                               std::to_string(c.r) + ", " + to_string(o.algorithm) + " " +
                               to_string(o.crt_scaling) + ": " + run.report.reason;
      const double error = ref.worst(run.C);
      EXPECT_LE(error, std::max(4 * native_error, 16 * u32))
          << what << " (native " << native_error << ")";
      EXPECT_LE(error, run.report.error_bound) << what;
      EXPECT_LE(run.report.error_bound, native_fp32_bound<T>(K)) << what;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 55);
}

TEST(Single, FloatFamiliesKeepTheComponentwisePromise) { check_families<float>(); }
TEST(Single, ComplexFloatFamiliesKeepTheComponentwisePromise) { check_families<CF>(); }

TEST(Single, FloatTakesTheModuliFp32AccuracyNeeds) { check_fewer_moduli<float>(); }
TEST(Single, ComplexFloatTakesTheModuliFp32AccuracyNeeds) { check_fewer_moduli<CF>(); }

TEST(Single, FloatOperandsWithADoubleResultAreMultipliedToFp64Accuracy) {
  // Mixed precision: float A and B, double C: the FP64 promise, no rounding to FP32.
  Random rng(4102);
  const std::int64_t M = 50, N = 40, K = 260;
  const Host<float> A = random_matrix<float>(M, K, 1.0, rng),
                    B = random_matrix<float>(K, N, 1.0, rng);
  const Host<double> C0 = random_matrix<double>(M, N, 1.0, rng);
  const Host<float> At = random_matrix<float>(K, M, 1.0, rng);
  for (const Options& o : {Options{}, crt(), slices()}) {
    const CallRun<double> run = run_gemm('T', 'N', 0.5, At, B, -2.0, C0, o);
    const Reference<float, double> ref('T', 'N', 0.5, At, B, -2.0, C0);
    EXPECT_LE(run.report.error_bound, ozaki::Impl::native_componentwise_bound(K))
        << run.report.reason;
    EXPECT_LE(ref.worst(run.C), run.report.error_bound) << run.report.reason;
  }
  for (const Options& o : {crt(), slices()}) {
    const CallRun<double> run = run_gemm('N', 'N', 0.5, A, B, -2.0, C0, o);
    const Reference<float, double> ref('N', 'N', 0.5, A, B, -2.0, C0);
    EXPECT_LE(run.report.error_bound, ozaki::Impl::native_componentwise_bound(K))
        << run.report.reason;
    EXPECT_LE(ref.worst(run.C), run.report.error_bound) << run.report.reason;
    if (o.algorithm == Algorithm::Int8Crt) EXPECT_GE(run.report.moduli, 13) << run.report.reason;
  }
  const CallRun<double> with_native = run_gemm('N', 'N', 0.5, A, B, -2.0, C0, native());
  const Reference<float, double> ref('N', 'N', 0.5, A, B, -2.0, C0);
  EXPECT_EQ(with_native.report.algorithm, Algorithm::Native);
  EXPECT_LE(ref.worst(with_native.C), ozaki::Impl::native_componentwise_bound(K));
}

TEST(Single, DoubleDataAtFp32AccuracyTakesFewerModuli) {
  Random rng(4103);
  const std::int64_t M = 64, N = 64, K = 512;
  const Host<double> A = random_matrix<double>(M, K, 0.5, rng),
                     B = random_matrix<double>(K, N, 0.5, rng);
  const Host<double> C0 = random_matrix<double>(M, N, 0.5, rng);
  Options fp32 = crt();
  fp32.accuracy = Accuracy::Fp32;
  const CallRun<double> fast = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, fp32);
  const CallRun<double> full = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, crt());
  ASSERT_EQ(fast.report.algorithm, Algorithm::Int8Crt) << fast.report.reason;
  EXPECT_LT(fast.report.moduli, full.report.moduli - 4);
  const Reference<double, double> ref('N', 'N', 1.0, A, B, 0.0, C0);
  EXPECT_LE(fast.report.error_bound, ozaki::Impl::native_componentwise_bound(K, u32));
  EXPECT_LE(ref.worst(fast.C), fast.report.error_bound);
  EXPECT_EQ(fast.report.options.accuracy, Accuracy::Fp32);
}

TEST(Single, AutoComparesWithNativeFp32Gemm) {
  // 64^3: Auto takes native FP32 GEMM from the shape, and says so.
  std::string why;
  EXPECT_EQ(ozaki::auto_choice<float>(TestSpace(), 64, 64, 64, Options{}, &why), Algorithm::Native);
  EXPECT_NE(why.find("native FP32 GEMM"), std::string::npos) << why;
  EXPECT_EQ(ozaki::auto_choice<CF>(TestSpace(), 64, 64, 64, Options{}, &why), Algorithm::Native);
  EXPECT_EQ(ozaki::auto_choice<float>(TestSpace(), 64, 64, 0), Algorithm::None);
  Random rng(4111);
  const Host<float> A = random_matrix<float>(64, 64, 1.0, rng),
                    B = random_matrix<float>(64, 64, 1.0, rng);
  const Host<float> C0 = random_matrix<float>(64, 64, 1.0, rng);
  const CallRun<float> run = run_gemm('N', 'N', 1.0f, A, B, 0.0f, C0, Options{});
  EXPECT_EQ(run.report.algorithm, Algorithm::Native);
  EXPECT_FALSE(run.report.fallback);
  EXPECT_NE(run.report.reason.find("native FP32 GEMM"), std::string::npos) << run.report.reason;
  const CallRun<float> with_native = run_gemm('N', 'N', 1.0f, A, B, 0.0f, C0, native());
  expect_bitwise(run.C, with_native.C, "Auto's native against Algorithm::Native");
}

// ---- the same bits -----------------------------------------------------------------------------

template <class T>
void check_staged_bits() {
  // An INT8 path on FP32 data is the FP64 pipeline on the staged data with the FP32 accuracy,
  // rounded once: the same call made on double data by hand gives the same bits.
  Random rng(4104);
  const std::int64_t M = 40, N = 33, K = 200;
  using T64 = std::conditional_t<is_complex_v<T>, CD, double>;
  const Host<T> A = random_matrix<T>(M, K, 1.0, rng), B = random_matrix<T>(K, N, 1.0, rng);
  const Host<T> C0 = random_matrix<T>(M, N, 1.0, rng);
  const T alpha = scalar<T>(0.5, 0.25);
  for (const Options& o : {crt(), slices()}) {
    const CallRun<T> run = run_gemm('N', 'N', alpha, A, B, scalar<T>(0, 0), C0, o);
    Host<T64> A64{A.rows, A.cols, {}}, B64{B.rows, B.cols, {}}, C64{M, N, {}};
    for (const T& x : A.values) A64.values.push_back(static_cast<T64>(x));
    for (const T& x : B.values) B64.values.push_back(static_cast<T64>(x));
    C64.values.assign(static_cast<std::size_t>(M * N), T64(0));
    Options staged = run.report.options;
    staged.accuracy = Accuracy::Fp32;
    // The promise left for the rounding is tighter than FP32 GEMM's own: a count chosen for
    // it is at least the one the float call took, so replay the concrete count.
    const CallRun<T64> by_hand =
        run_gemm('N', 'N', static_cast<T64>(alpha), A64, B64, T64(0), C64, staged);
    Host<T> rounded{M, N, {}};
    for (const T64& x : by_hand.C.values) rounded.values.push_back(static_cast<T>(x));
    expect_bitwise(run.C, rounded, std::string("staged by hand, ") + to_string(o.algorithm));
  }
}

TEST(Single, FloatIsTheStagedFp64CallRoundedOnce) { check_staged_bits<float>(); }
TEST(Single, ComplexFloatIsTheStagedFp64CallRoundedOnce) { check_staged_bits<CF>(); }

template <class T>
void check_host_bits() {
  using Host_ = Kokkos::DefaultHostExecutionSpace;
  Random rng(4105);
  const std::int64_t M = 36, N = 52, K = 150;
  for (double phi : {0.5, 3.0}) {
    const Host<T> A = random_matrix<T>(K, M, phi, rng), B = random_matrix<T>(N, K, phi, rng);
    const Host<T> C0 = random_matrix<T>(M, N, phi, rng);
    const T alpha = scalar<T>(1.5, -0.5), beta = scalar<T>(-0.5, 1);
    for (const Options& o : {crt(), slices()}) {
      const CallRun<T> run =
          run_gemm('T', 'T', alpha, A, Layout::Left, B, Layout::Right, beta, C0, Layout::Stride, o);
      const CallRun<T> replay = run_gemm<Host_>('T', 'T', alpha, A, Layout::Left, B, Layout::Right,
                                                beta, C0, Layout::Stride, run.report.options);
      expect_bitwise(run.C, replay.C, std::string("host replay, ") + to_string(o.algorithm));
    }
  }
}

TEST(Single, FloatGivesTheSameBitsOnTheHost) { check_host_bits<float>(); }
TEST(Single, ComplexFloatGivesTheSameBitsOnTheHost) { check_host_bits<CF>(); }

// ---- BLAS semantics, NaN/Inf, bad arguments ---------------------------------------------------

TEST(Single, ZeroAlphaOrKScalesCAndReadsNeitherOperand) {
  Random rng(4106);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Host<float> A = random_matrix<float>(20, 30, 1.0, rng),
              B = random_matrix<float>(30, 10, 1.0, rng);
  for (float& x : A.values) x = nan;
  const Host<float> C0 = random_matrix<float>(20, 10, 1.0, rng);
  const CallRun<float> scaled = run_gemm('N', 'N', 0.0f, A, B, 2.0f, C0, crt());
  for (std::size_t i = 0; i < C0.values.size(); ++i)
    EXPECT_EQ(scaled.C.values[i], 2 * C0.values[i]);
  EXPECT_EQ(scaled.report.algorithm, Algorithm::None);
  Host<float> C_nan = C0;
  for (float& x : C_nan.values) x = nan;
  const CallRun<float> zeroed = run_gemm('N', 'N', 0.0f, A, B, 0.0f, C_nan, Options{});
  for (float x : zeroed.C.values) EXPECT_EQ(x, 0.0f);
  const Host<float> A0{20, 0, {}}, B0{0, 10, {}};
  const CallRun<float> k0 = run_gemm('N', 'N', 1.0f, A0, B0, -1.0f, C0, Options{});
  for (std::size_t i = 0; i < C0.values.size(); ++i) EXPECT_EQ(k0.C.values[i], -C0.values[i]);
}

TEST(Single, BetaZeroDoesNotReadC) {
  Random rng(4107);
  const Host<float> A = random_matrix<float>(24, 40, 1.0, rng),
                    B = random_matrix<float>(40, 16, 1.0, rng);
  Host<float> C0 = random_matrix<float>(24, 16, 1.0, rng);
  for (float& x : C0.values) x = std::numeric_limits<float>::quiet_NaN();
  for (const Options& o : {crt(), slices(), native()}) {
    const CallRun<float> run = run_gemm('N', 'N', 1.0f, A, B, 0.0f, C0, o);
    for (float x : run.C.values) ASSERT_TRUE(std::isfinite(x)) << to_string(o.algorithm);
  }
}

TEST(Single, NanAndInfGiveTheIeeeResultAndSaySo) {
  Random rng(4108);
  Host<float> A = random_matrix<float>(30, 64, 1.0, rng);
  const Host<float> B = random_matrix<float>(64, 20, 1.0, rng),
                    C0 = random_matrix<float>(30, 20, 1.0, rng);
  A(3, 5) = std::numeric_limits<float>::quiet_NaN();
  A(7, 9) = std::numeric_limits<float>::infinity();
  for (const Options& o : {crt(), slices()}) {
    const CallRun<float> run = run_gemm('N', 'N', 1.0f, A, B, 0.0f, C0, o);
    EXPECT_EQ(run.report.algorithm, Algorithm::Native) << run.report.reason;
    EXPECT_TRUE(run.report.fallback);
    for (std::int64_t n = 0; n < 20; ++n) {
      EXPECT_TRUE(std::isnan(run.C(3, n)));
      EXPECT_FALSE(std::isfinite(run.C(7, n)));
      EXPECT_TRUE(std::isfinite(run.C(0, n)));
    }
  }
}

/// Options::experimental.native_gemm (the cuBLAS interposer's: the caller's own SGEMM, CGEMM or
/// cublasLtMatmul) writes the FP32 C itself: it stands for native FP32 GEMM, and never for the
/// staged FP64 call's fallbacks, whose result is rounded into C afterwards (called there, it
/// would have its C overwritten by the unwritten staged result).
template <class T>
void check_native_callback() {
  Random rng(4112);
  Host<T> A = random_matrix<T>(30, 64, 1.0, rng);
  const Host<T> B = random_matrix<T>(64, 20, 1.0, rng), C0 = random_matrix<T>(30, 20, 1.0, rng);
  const T alpha = scalar<T>(1.5, -0.5), beta = scalar<T>(0.5, 0.25);
  A(3, 5) = scalar<T>(std::numeric_limits<double>::quiet_NaN(), 0);
  int calls = 0;
  for (const Options& o : {crt(), slices()}) {
    const CallRun<T> alone = run_gemm('N', 'N', alpha, A, B, beta, C0, o);
    Options with_callback = o;
    with_callback.experimental.native_gemm = [&] { ++calls; };
    const CallRun<T> run = run_gemm('N', 'N', alpha, A, B, beta, C0, with_callback);
    EXPECT_EQ(calls, 0) << to_string(o.algorithm);
    EXPECT_EQ(run.report.algorithm, Algorithm::Native) << run.report.reason;
    expect_bitwise(run.C, alone.C, std::string("NaN fallback, ") + to_string(o.algorithm));
  }
  Options o = native();
  o.experimental.native_gemm = [&] { ++calls; };  // writes nothing: C must stay C0
  const CallRun<T> run = run_gemm('N', 'N', alpha, A, B, beta, C0, o);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(run.report.backend, "the caller's native GEMM");
  expect_bitwise(run.C, C0, "Algorithm::Native with the caller's GEMM");
}

TEST(Single, FloatTakesTheCallersNativeGemmForNativeFp32Only) { check_native_callback<float>(); }
TEST(Single, ComplexFloatTakesTheCallersNativeGemmForNativeFp32Only) {
  check_native_callback<CF>();
}

TEST(Single, BadArgumentsThrowAndLeaveCUntouched) {
  Random rng(4109);
  const Host<float> A = random_matrix<float>(10, 12, 1.0, rng),
                    B = random_matrix<float>(13, 8, 1.0, rng);
  const Host<float> C0 = random_matrix<float>(10, 8, 1.0, rng);
  const Device<float> dA(A, Layout::Left), dB(B, Layout::Left), dC(C0, Layout::Left);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", 1.0f, dA.left, dB.left, 0.0f, dC.left),
               ozaki::InvalidArgument);  // K of A is 12, of B 13
  EXPECT_THROW(ozaki::gemm(TestSpace(), "X", "N", 1.0f, dA.left, dB.left, 0.0f, dC.left),
               ozaki::InvalidArgument);
  Options bad;
  bad.moduli = 1;
  bad.algorithm = Algorithm::Int8Crt;
  const Host<float> B2 = random_matrix<float>(12, 8, 1.0, rng);
  const Device<float> dB2(B2, Layout::Left);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", 1.0f, dA.left, dB2.left, 0.0f, dC.left, bad),
               ozaki::InvalidArgument);
  expect_bitwise(dC.to_host(), C0, "C after the throws");
}

TEST(Single, InsideAGraphCaptureFloatRunsNativeFp32AndMixedRefuses) {
  // A captured FP32 call records native FP32 GEMM (an explicit algorithm reports the
  // fallback); FP32 operands with an FP64 C, which would need staging scratch, throw before
  // anything is recorded, C untouched.
  Random rng(4112);
  const Host<float> A = random_matrix<float>(48, 64, 1.0, rng),
                    B = random_matrix<float>(64, 40, 1.0, rng);
  const Host<float> C0 = random_matrix<float>(48, 40, 1.0, rng);
  const Host<double> C64 = random_matrix<double>(48, 40, 1.0, rng);
  const Device<float> dA(A, Layout::Left), dB(B, Layout::Left), dC(C0, Layout::Left);
  const Device<double> dC64(C64, Layout::Left);
  const Report captured = captured_call([&](const auto& space) {
    return ozaki::gemm(space, "N", "N", 1.0f, dA.left, dB.left, 0.0f, dC.left, crt());
  });
  bool threw = false;
  try {
    captured_call([&](const auto& space) {
      return ozaki::gemm(space, "N", "N", 1.0, dA.left, dB.left, 0.0, dC64.left);
    });
  } catch (const ozaki::BackendError&) {
    threw = true;
  }
  EXPECT_TRUE(threw);
  expect_bitwise(dC64.to_host(), C64, "the FP64 C after the refusal");
  EXPECT_EQ(captured.algorithm, Algorithm::Native);
  EXPECT_TRUE(captured.fallback);
  EXPECT_NE(captured.reason.find("native FP32 GEMM"), std::string::npos) << captured.reason;
  const CallRun<float> native_run = run_gemm('N', 'N', 1.0f, A, B, 0.0f, C0, native());
  const Reference<float, float> ref('N', 'N', 1.0f, A, B, 0.0f, C0);
  // Inside a graph cuBLAS may pick another kernel: both within native FP32 GEMM's bound.
  EXPECT_LE(ref.worst(dC.to_host()), native_fp32_bound<float>(64));
  EXPECT_LE(ref.worst(native_run.C), native_fp32_bound<float>(64));
}

TEST(Single, ScratchThatCannotBeHadThrowsWithCUntouched) {
  Random rng(4113);
  const Host<float> A = random_matrix<float>(40, 64, 1.0, rng),
                    B = random_matrix<float>(64, 32, 1.0, rng);
  const Host<float> C0 = random_matrix<float>(40, 32, 1.0, rng);
  const Host<double> C64 = random_matrix<double>(40, 32, 1.0, rng);
  const Device<float> dA(A, Layout::Left), dB(B, Layout::Left), dC(C0, Layout::Left);
  const Device<double> dC64(C64, Layout::Left);
  ozaki::Workspace<TestSpace> ws(TestSpace{});  // empty: every call allocates
  {
    const FailScratchAbove fail(1024);
    EXPECT_THROW(
        ozaki::gemm(TestSpace(), "N", "N", 1.0f, dA.left, dB.left, 0.0f, dC.left, crt(), ws),
        ozaki::BackendError);
    EXPECT_THROW(
        ozaki::gemm(TestSpace(), "N", "N", 1.0, dA.left, dB.left, 0.0, dC64.left, slices(), ws),
        ozaki::BackendError);
  }
  expect_bitwise(dC.to_host(), C0, "the FP32 C after the refusal");
  expect_bitwise(dC64.to_host(), C64, "the FP64 C after the refusal");
}

TEST(Single, AWorkspaceReservedForFloatIsReused) {
  Random rng(4110);
  const std::int64_t M = 40, N = 30, K = 100;
  const Host<float> A = random_matrix<float>(M, K, 1.0, rng),
                    B = random_matrix<float>(K, N, 1.0, rng);
  const Host<float> C0 = random_matrix<float>(M, N, 1.0, rng);
  const Device<float> dA(A, Layout::Left), dB(B, Layout::Left), dC(C0, Layout::Left);
  const Options o = crt();
  ozaki::Workspace<TestSpace> ws(TestSpace{});
  ws.reserve_float(M, N, K, o);
  const std::int64_t before = ws.allocations();
  const Report r1 =
      ozaki::gemm(TestSpace(), "N", "N", 1.0f, dA.left, dB.left, 0.0f, dC.left, o, ws);
  const Host<float> first = dC.to_host();
  const Report r2 =
      ozaki::gemm(TestSpace(), "N", "N", 1.0f, dA.left, dB.left, 0.0f, dC.left, o, ws);
  EXPECT_EQ(ws.allocations(), before) << r1.reason;
  expect_bitwise(dC.to_host(), first, "second call with the workspace");
  EXPECT_EQ(r2.moduli, r1.moduli);
}

}  // namespace
