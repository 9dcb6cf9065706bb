// Quantized GEMM (ozaki/quantized.hpp, docs/design.md §14): W8A8 against the serial oracle bit
// for bit (exact INT64 sums, then the epilogue's fixed roundings), quantize_rows followed by
// the GEMM against a double reference by DeepGEMM's calc_diff, the 16-bit output types'
// conversions, long K in chunks, and bad input.
#include "common.hpp"

#include <ozaki/half_precision.hpp>
#include <ozaki/quantized.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace ozaki_test;
using ozaki::bfloat16;
using ozaki::float16;

template <class T>
using Dev1 = Kokkos::View<T*, MemSpace>;

/// A host vector's copy on the test space.
template <class T>
Dev1<T> device_vector(const std::vector<T>& host) {
  Dev1<T> v("vector", host.size());
  Kokkos::deep_copy(v, Kokkos::View<const T*, Kokkos::HostSpace>(host.data(), host.size()));
  return v;
}

/// Uniform int8 in [-128, 127] (the full range: the INT32 sums' worst case included).
std::vector<std::int8_t> random_int8(std::int64_t count, Random& rng) {
  std::vector<std::int8_t> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = rng.int8();
  return v;
}

/// Scales and biases spread over binades, both signs.
std::vector<float> random_floats(std::int64_t count, double phi, Random& rng) {
  std::vector<float> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = static_cast<float>(rng.spread(phi));
  return v;
}

/// The oracle's C, column-major M x N, rounded to T as the library rounds.
template <class T>
std::vector<T> oracle(std::int64_t M, std::int64_t N, std::int64_t K,
                      const std::vector<std::int8_t>& A, const std::vector<std::int8_t>& W,
                      const std::vector<float>& a, const std::vector<float>& w,
                      const std::vector<float>* bias) {
  std::vector<float> c(static_cast<std::size_t>(M * N));
  ozaki::serial::quantized_gemm(M, N, K, A.data(), K, W.data(), K, a.data(), w.data(),
                                bias != nullptr ? bias->data() : nullptr, c.data(), M);
  std::vector<T> out(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) out[i] = ozaki::from_float<T>(c[i]);
  return out;
}

template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

template <class T>
bool is_nan(T x) {
  if constexpr (std::is_same<T, float>::value) {
    return std::isnan(x);
  } else {
    return std::isnan(x.to_float());
  }
}

/// The same bits, except that a NaN matches any NaN: a NaN's sign and payload are the
/// platform's (an x86 host keeps an operand's, CUDA gives its canonical NaN).
template <class T>
::testing::AssertionResult same_values(const std::vector<T>& x, const std::vector<T>& y) {
  if (x.size() != y.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (is_nan(x[i]) && is_nan(y[i])) continue;
    if (std::memcmp(&x[i], &y[i], sizeof(T)) != 0) {
      return ::testing::AssertionFailure() << "entry " << i << " differs";
    }
  }
  return ::testing::AssertionSuccess();
}

/// Changes a call's row scales, column scales and biases before it runs.
using ScalesEdit =
    std::function<void(std::vector<float>& a, std::vector<float>& w, std::vector<float>& bias)>;

template <class T>
std::vector<T> host_of(const DeviceOf<T>& d) {
  std::vector<T> v(d.view.size());
  d.copy(v.data(), false);
  return v;
}

/// quantized_gemm of int8 A and W in the given layouts into C of T: the oracle's bits.  Returns
/// the call's Report.
template <class T>
ozaki::QuantizedReport check_against_oracle(std::int64_t M, std::int64_t N, std::int64_t K,
                                            Layout la, Layout lw, Layout lc, bool with_bias,
                                            std::uint64_t seed, const ScalesEdit& edit = {}) {
  Random rng(seed);
  const auto A = random_int8(M * K, rng), W = random_int8(N * K, rng);
  auto a = random_floats(M, 2.0, rng), w = random_floats(N, 2.0, rng);
  auto bias = random_floats(N, 4.0, rng);
  if (edit) edit(a, w, bias);
  const DeviceOf<std::int8_t> dA = device_rows(A, M, K, la), dW = device_rows(W, N, K, lw);
  DeviceOf<T> dC(M, N, lc);
  const ozaki::QuantizedReport r = dA.visit([&](const auto& x) {
    return dW.visit([&](const auto& y) {
      return dC.visit([&](const auto& c) {
        return with_bias ? ozaki::quantized_gemm(TestSpace(), x, device_vector(a), y,
                                                 device_vector(w), device_vector(bias), c)
                         : ozaki::quantized_gemm(TestSpace(), x, device_vector(a), y,
                                                 device_vector(w), c);
      });
    });
  });
  const std::string what = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) +
                           " layouts " + name(la) + "/" + name(lw) + "/" + name(lc) +
                           (with_bias ? " with bias" : "");
  EXPECT_TRUE(same_values(host_of(dC), oracle<T>(M, N, K, A, W, a, w, with_bias ? &bias : nullptr)))
      << what;
  EXPECT_EQ(r.k_chunks, 1) << what;
  EXPECT_EQ(r.staged_a, !(la == Layout::Right && K % 16 == 0 && M % 16 == 0)) << what;
  return r;
}

/// Turns the fused W8A8 kernel (FusedQuantizedGemmBackend) off for one scope: the INT8 GEMM's
/// products and the portable epilogue.
struct WithoutFusedKernel : ScopedHooks {
  WithoutFusedKernel()
      : ScopedHooks([](ozaki::Experimental::TestHooks& h) { h.fused_quantized_off = true; }) {}
};

/// Runs the fused kernel's CTAs one per tile (no clusters sharing B) for one scope.
struct WithoutProductPairs : ScopedHooks {
  WithoutProductPairs()
      : ScopedHooks([](ozaki::Experimental::TestHooks& h) { h.product_pairs_off = true; }) {}
};

/// Whether the fused kernel runs products of at least as many 128 x 256 tiles as the device has
/// multiprocessors: CUDA on compute capability 9.0.
bool fused_kernel_expected() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<TestSpace, Kokkos::Cuda>::value) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, TestSpace().cuda_device()) != cudaSuccess) return false;
    return prop.major == 9 && prop.minor == 0;
  }
#endif
  return false;
}

TEST(HalfPrecision, KnownValuesRoundToNearestEven) {
  const auto bf = [](float x) { return bfloat16::from_float(x).bits; };
  const auto h = [](float x) { return float16::from_float(x).bits; };
  EXPECT_EQ(bf(1.0f), 0x3f80);
  EXPECT_EQ(bf(1.0f + 0x1p-8f), 0x3f80);          // a tie: to the even 1.0
  EXPECT_EQ(bf(1.0f + 3 * 0x1p-8f), 0x3f82);      // a tie: to the even 1 + 2^-6
  EXPECT_EQ(bf(-3.0e38f), 0xff62);                // -3.004e38, the nearest
  EXPECT_EQ(bf(3.4028235e38f), 0x7f80);           // rounds past the largest: infinity
  EXPECT_EQ(bf(std::nanf("")) & 0x7fc0, 0x7fc0);  // NaN, quiet
  EXPECT_EQ(h(1.0f), 0x3c00);
  EXPECT_EQ(h(65504.0f), 0x7bff);    // the largest
  EXPECT_EQ(h(65519.996f), 0x7bff);  // below the tie with 65536
  EXPECT_EQ(h(65520.0f), 0x7c00);    // the tie: to even, which is infinity
  EXPECT_EQ(h(-0x1p-24f), 0x8001);   // the smallest subnormal
  EXPECT_EQ(h(0x1p-25f), 0x0000);    // a tie between 0 and 2^-24: to 0
  EXPECT_EQ(h(1.5f * 0x1p-25f), 0x0001);
  EXPECT_EQ(h(3 * 0x1p-25f), 0x0002);         // a tie between 1 and 2 units: to 2
  EXPECT_EQ(h(0x1p-14f - 0x1p-26f), 0x0400);  // rounds up into the smallest normal
  EXPECT_EQ(h(1.0f + 0x1p-11f), 0x3c00);      // a tie: to even
  EXPECT_EQ(h(std::nanf("")), 0x7e00);
}

TEST(HalfPrecision, EveryPatternSurvivesARoundTripThroughFloat) {
  for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
    bfloat16 b;
    b.bits = static_cast<std::uint16_t>(bits);
    float16 h;
    h.bits = static_cast<std::uint16_t>(bits);
    const bool b_nan = std::isnan(b.to_float()), h_nan = std::isnan(h.to_float());
    // NaNs come back NaN (quieted); every other pattern exactly.
    if (b_nan) {
      ASSERT_TRUE(std::isnan(bfloat16::from_float(b.to_float()).to_float())) << bits;
    } else {
      ASSERT_EQ(bfloat16::from_float(b.to_float()).bits, b.bits) << bits;
    }
    if (h_nan) {
      ASSERT_TRUE(std::isnan(float16::from_float(h.to_float()).to_float())) << bits;
    } else {
      ASSERT_EQ(float16::from_float(h.to_float()).bits, h.bits) << bits;
    }
  }
}

TEST(Quantized, W8A8IsTheOraclesBitsInEveryLayoutAndOutputType) {
  std::uint64_t seed = 700;
  for (const Layout la : {Layout::Right, Layout::Left, Layout::Stride})
    for (const Layout lc : {Layout::Left, Layout::Right}) {
      // Rows not a multiple of 16 (staged with zero rows), and rows read in place.
      check_against_oracle<float>(37, 29, 256, la, Layout::Right, lc, true, ++seed);
      check_against_oracle<bfloat16>(48, 32, 256, la, Layout::Right, lc, true, ++seed);
      check_against_oracle<float16>(37, 29, 256, la, Layout::Right, lc, false, ++seed);
    }
  // K not a multiple of 16: both operands staged; no bias.
  check_against_oracle<float>(16, 40, 100, Layout::Right, Layout::Right, Layout::Left, false, 720);
  check_against_oracle<bfloat16>(5, 3, 7, Layout::Left, Layout::Stride, Layout::Right, true, 721);
}

TEST(Quantized, ProductsOfManyTilesAreTheOraclesBitsFusedOrNot) {
  // At least 144 tiles of 128 x 256 entries: on compute capability 9.0 the fused kernel runs
  // (scales, bias and rounding in the GEMM's epilogue), elsewhere the passes.  Edges of tiles
  // and of K steps cut anywhere, operands in place and staged, both orientations of C (the
  // kernel's rows are C's rows, or its columns), bias along either.  The same bits with the
  // fused kernel turned off.
  const bool fused = fused_kernel_expected();
  for (const bool off : {false, true}) {
    if (off && !fused) break;  // elsewhere the hook changes nothing
    const auto scope = off ? std::make_unique<WithoutFusedKernel>() : nullptr;
    const std::string path = off ? "fused kernel off" : "default";
    if (!off && fused) {
      // The kernel's CTAs one per tile instead of in pairs sharing B's tiles: the same bits
      // (row tiles 9 and 31, odd: the last has no partner).
      const WithoutProductPairs unpaired;
      check_against_oracle<bfloat16>(1040, 3856, 144, Layout::Right, Layout::Right, Layout::Right,
                                     true, 783);
      check_against_oracle<float16>(1030, 3850, 100, Layout::Left, Layout::Right, Layout::Left,
                                    false, 784);
    }
    auto r = check_against_oracle<float>(1040, 3856, 144, Layout::Right, Layout::Right,
                                         Layout::Right, true, 780);
    EXPECT_EQ(r.fused, fused && !off) << path;
    EXPECT_FALSE(r.staged_w);
    r = check_against_oracle<bfloat16>(1030, 3850, 100, Layout::Left, Layout::Right, Layout::Left,
                                       true, 781);
    EXPECT_EQ(r.fused, fused && !off) << path;
    r = check_against_oracle<float16>(1040, 3856, 272, Layout::Right, Layout::Stride, Layout::Right,
                                      false, 782);
    EXPECT_EQ(r.fused, fused && !off) << path;
    if (fused && !off) EXPECT_EQ(r.int8_gemms, 1) << "one launch";
  }
}

TEST(Quantized, TheFusedKernelKeepsTheOraclesNanInfinityOverflowAndSubnormals) {
  // Scales and biases that make every kind of value: NaN rows, columns and biases, infinite
  // scales (infinite entries, and NaN where P = 0), zero scales, and products of scales so
  // small that the entries are subnormal floats, or so large that they overflow the 16-bit
  // types, in the first and the last tiles.  C in each of the fused kernel's stores: 16-bit C
  // whose rows are 16-byte aligned (bulk stores through shared memory; C's columns 3856 or
  // rows 1040 a multiple of 8), other 16-bit C (entry by entry) and float C.  Every entry the
  // oracle's bits, NaN where it has NaN.
  const ScalesEdit specials = [](std::vector<float>& a, std::vector<float>& w,
                                 std::vector<float>& bias) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::size_t m = a.size(), n = w.size();
    a[0] = nan, a[1] = inf, a[2] = 0.0f, a[3] = 1e-30f, a[4] = 3e30f, a[m - 2] = -inf;
    a[m - 1] = -1e-30f;
    w[0] = nan, w[1] = 1e-15f, w[2] = 1e10f, w[3] = 0.0f, w[4] = -inf, w[300] = 2e-15f;
    w[n - 1] = 1e-15f, w[n - 2] = 5e7f;
    bias[5] = nan, bias[6] = inf, bias[n - 3] = -inf, bias[7] = 1e-44f;
  };
  const bool fused = fused_kernel_expected();
  auto r = check_against_oracle<bfloat16>(1030, 3856, 144, Layout::Right, Layout::Right,
                                          Layout::Right, true, 790, specials);
  EXPECT_EQ(r.fused, fused);
  r = check_against_oracle<float16>(1040, 3850, 208, Layout::Right, Layout::Right, Layout::Left,
                                    true, 791, specials);
  EXPECT_EQ(r.fused, fused);
  r = check_against_oracle<bfloat16>(1030, 3850, 144, Layout::Right, Layout::Right, Layout::Right,
                                     false, 792, specials);
  EXPECT_EQ(r.fused, fused);
  r = check_against_oracle<float>(1040, 3856, 144, Layout::Right, Layout::Right, Layout::Right,
                                  true, 793, specials);
  EXPECT_EQ(r.fused, fused);
}

/// The fused kernel's problem (QuantizedGemmProblem, impl/quantized/quantized_problem.hpp)
/// evaluated on the host as its definition reads: float(P) times the two scales' product plus
/// the row's or the column's bias, one fused multiply-add, rounded to T, at its strides.
template <class T>
void evaluate_problem(const ozaki::Impl::QuantizedGemmProblem& p) {
  for (std::int64_t r = 0; r < p.rows; ++r)
    for (std::int64_t c = 0; c < p.columns; ++c) {
      std::int32_t P = 0;
      for (std::int64_t k = 0; k < p.k; ++k)
        P += std::int32_t(p.a[r * p.lda + k]) * p.b[c * p.ldb + k];
      const float bias = p.bias_rows != nullptr      ? p.bias_rows[r]
                         : p.bias_columns != nullptr ? p.bias_columns[c]
                                                     : 0.0f;
      const float v = std::fmaf(static_cast<float>(P), p.row_scales[r] * p.column_scales[c], bias);
      static_cast<T*>(p.c)[r * p.c_row_stride + c * p.c_column_stride] = ozaki::from_float<T>(v);
    }
}

TEST(Quantized, TheFusedKernelsProblemIsTheCallInBothOrientationsOfC) {
  // What the library hands a fused kernel (fused_problem): its rows the layout's slow operand,
  // its columns the fast one, the scales, the bias and C's strides to match.  Evaluated by its
  // definition it must give the oracle's bits for a row-major C (kernel rows are C's rows) and a
  // column-major one (kernel rows are C's columns), with and without bias.  Host memory: this
  // is the library's host-side half of the fused path, checked on every build.
  const std::int64_t M = 48, N = 32, K = 64;
  Random rng(790);
  const auto A = random_int8(M * K, rng), W = random_int8(N * K, rng);
  const auto a = random_floats(M, 2.0, rng), w = random_floats(N, 2.0, rng);
  const auto bias = random_floats(N, 4.0, rng);
  using HostRows = Kokkos::View<const std::int8_t**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using HostVector = Kokkos::View<const float*, Kokkos::HostSpace>;
  const HostRows dA(A.data(), M, K), dW(W.data(), N, K);
  const HostVector da(a.data(), M), dw(w.data(), N), db(bias.data(), N);
  for (const bool row_major : {true, false})
    for (const bool with_bias : {true, false}) {
      std::vector<bfloat16> c(M * N);
      const auto check = [&](const auto& C) {
        const ozaki::Impl::QuantizedLayout l = ozaki::Impl::quantized_layout(dA, dW, C);
        ASSERT_FALSE(l.stage_fast || l.stage_slow);
        ASSERT_EQ(l.transposed, row_major);
        const ozaki::Impl::Int8Rows fast{l.transposed ? dW.data() : dA.data(), K};
        const ozaki::Impl::Int8Rows slow{l.transposed ? dA.data() : dW.data(), K};
        ozaki::Impl::QuantizedGemmProblem p;
        ASSERT_TRUE(ozaki::Impl::fused_problem(l, fast, slow, da, dw, db, with_bias, C, p));
        EXPECT_EQ(p.output, ozaki::Impl::QuantizedOutput::BFloat16);
        evaluate_problem<bfloat16>(p);
      };
      if (row_major) {
        check(Kokkos::View<bfloat16**, Kokkos::LayoutRight, Kokkos::HostSpace>(c.data(), M, N));
      } else {
        check(Kokkos::View<bfloat16**, Kokkos::LayoutLeft, Kokkos::HostSpace>(c.data(), M, N));
      }
      std::vector<bfloat16> expected =
          oracle<bfloat16>(M, N, K, A, W, a, w, with_bias ? &bias : nullptr);
      if (row_major) {  // the oracle's C is column-major
        std::vector<bfloat16> rows(M * N);
        for (std::int64_t m = 0; m < M; ++m)
          for (std::int64_t n = 0; n < N; ++n) rows[m * N + n] = expected[m + n * M];
        expected = rows;
      }
      EXPECT_TRUE(same_bits(c, expected))
          << (row_major ? "row-major C" : "column-major C") << (with_bias ? ", bias" : "");
    }
  // Not one problem: scales that are not contiguous (every other entry), or K in more than one
  // INT32-exact chunk.
  const std::int64_t half = M / 2;
  const Kokkos::View<bfloat16**, Kokkos::LayoutRight, Kokkos::HostSpace> C("C", half, N);
  const auto half_A = Kokkos::subview(dA, Kokkos::make_pair(std::int64_t(0), half), Kokkos::ALL());
  const auto first_scales = Kokkos::subview(da, Kokkos::make_pair(std::int64_t(0), half));
  const Kokkos::View<const float*, Kokkos::LayoutStride, Kokkos::HostSpace> every_other(
      a.data(), Kokkos::LayoutStride(half, 2));
  const ozaki::Impl::QuantizedLayout l = ozaki::Impl::quantized_layout(half_A, dW, C);
  const ozaki::Impl::Int8Rows fast{dW.data(), K}, slow{dA.data(), K};
  ozaki::Impl::QuantizedGemmProblem p;
  EXPECT_TRUE(ozaki::Impl::fused_problem(l, fast, slow, first_scales, dw, db, false, C, p));
  EXPECT_FALSE(ozaki::Impl::fused_problem(l, fast, slow, every_other, dw, db, false, C, p));
  ozaki::Impl::QuantizedLayout chunked = l;
  chunked.chunks = 2;
  EXPECT_FALSE(ozaki::Impl::fused_problem(chunked, fast, slow, first_scales, dw, db, false, C, p));
}

TEST(Quantized, PassesOfTheOtherOperandKeepTheOraclesBits) {
  // 65536 rows of A against a column-major C: the products of a pass hold 24 MiB, so W's 200
  // rows run in passes of 96 (the fused kernel, which has no passes, turned off).
  const WithoutFusedKernel passes;
  const std::int64_t M = 65536, N = 200, K = 16;
  Random rng(750);
  const auto A = random_int8(M * K, rng), W = random_int8(N * K, rng);
  const auto a = random_floats(M, 1.0, rng), w = random_floats(N, 1.0, rng);
  const DeviceOf<std::int8_t> dA = device_rows(A, M, K, Layout::Right);
  const DeviceOf<std::int8_t> dW = device_rows(W, N, K, Layout::Right);
  DeviceOf<float> dC(M, N, Layout::Left);
  const ozaki::QuantizedReport r = ozaki::quantized_gemm(TestSpace(), dA.right, device_vector(a),
                                                         dW.right, device_vector(w), dC.left);
  EXPECT_EQ(r.int8_gemms, 3);
  EXPECT_FALSE(r.staged_a);
  EXPECT_TRUE(same_bits(host_of(dC), oracle<float>(M, N, K, A, W, a, w, nullptr)));
}

TEST(Quantized, LongKRunsInExactChunks) {
  // Every product term 2^14: one INT32 sum of all K would overflow; chunks of 2^17 - 16 do not,
  // and their INT64 sum is exact.
  const std::int64_t M = 2, N = 3, K = 300000;
  const std::vector<std::int8_t> A(M * K, std::int8_t(-128)), W(N * K, std::int8_t(-128));
  const std::vector<float> a{1.0f, 0.5f}, w{1.0f, -1.0f, 0.25f};
  const DeviceOf<std::int8_t> dA = device_rows(A, M, K, Layout::Right);
  const DeviceOf<std::int8_t> dW = device_rows(W, N, K, Layout::Right);
  DeviceOf<float> dC(M, N, Layout::Left);
  const ozaki::QuantizedReport r = ozaki::quantized_gemm(TestSpace(), dA.right, device_vector(a),
                                                         dW.right, device_vector(w), dC.left);
  EXPECT_EQ(r.k_chunks, 3);
  EXPECT_EQ(r.int8_gemms, 3);
  const std::vector<float> c = host_of(dC);
  const std::vector<float> expected = oracle<float>(M, N, K, A, W, a, w, nullptr);
  EXPECT_TRUE(same_bits(c, expected));
  EXPECT_EQ(c[0], static_cast<float>(16384.0 * K));  // 4.9e9, exact in float
}

TEST(Quantized, EmptyShapesAndZeroK) {
  const std::vector<float> a{2.0f, 3.0f}, w{1.0f, 5.0f, 7.0f}, bias{0.5f, -1.0f, 4.0f};
  Kokkos::View<std::int8_t**, Kokkos::LayoutRight, MemSpace> A("A", 2, 0), W("W", 3, 0);
  DeviceOf<float> dC(2, 3, Layout::Left);
  ozaki::quantized_gemm(TestSpace(), A, device_vector(a), W, device_vector(w), device_vector(bias),
                        dC.left);
  const std::vector<float> c = host_of(dC);
  for (std::int64_t n = 0; n < 3; ++n)
    for (std::int64_t m = 0; m < 2; ++m) EXPECT_EQ(c[m + 2 * n], bias[n]);  // an empty sum
  Kokkos::View<std::int8_t**, Kokkos::LayoutRight, MemSpace> none("none", 0, 16);
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> empty("empty", 0, 3);
  const ozaki::QuantizedReport r =
      ozaki::quantized_gemm(TestSpace(), none, Dev1<float>("a", 0),
                            Kokkos::View<std::int8_t**, Kokkos::LayoutRight, MemSpace>("W", 3, 16),
                            device_vector(w), empty);
  EXPECT_EQ(r.int8_gemms, 0);
}

/// DeepGEMM's criterion: 1 - 2 sum(x y) / sum(x^2 + y^2).
double calc_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double xy = 0, xx_yy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    xy += x[i] * y[i];
    xx_yy += x[i] * x[i] + y[i] * y[i];
  }
  return 1 - 2 * xy / xx_yy;
}

/// Row-major X (M x K) and W (N x K) quantized per row on the test space.
struct QuantizedOperands {
  DeviceOf<std::int8_t> x, w;
  Dev1<float> sx, sw;
};
QuantizedOperands quantized_operands(const std::vector<float>& X, const std::vector<float>& W,
                                     std::int64_t M, std::int64_t N, std::int64_t K) {
  const DeviceOf<float> dX = device_rows(X, M, K, Layout::Right);
  const DeviceOf<float> dW = device_rows(W, N, K, Layout::Right);
  QuantizedOperands q{DeviceOf<std::int8_t>(M, K, Layout::Right),
                      DeviceOf<std::int8_t>(N, K, Layout::Right), Dev1<float>("sx", M),
                      Dev1<float>("sw", N)};
  ozaki::quantize_rows(TestSpace(), dX.right, q.x.right, q.sx);
  ozaki::quantize_rows(TestSpace(), dW.right, q.w.right, q.sw);
  return q;
}

template <class T>
void quantize_then_multiply(std::int64_t M, std::int64_t N, std::int64_t K, std::uint64_t seed) {
  Random rng(seed);
  std::vector<float> X(M * K), Wf(N * K), bias(N);
  for (auto& x : X) x = static_cast<float>(rng.normal());
  for (auto& x : Wf) x = static_cast<float>(0.05 * rng.normal());
  for (auto& x : bias) x = static_cast<float>(0.1 * rng.normal());
  const QuantizedOperands qo = quantized_operands(X, Wf, M, N, K);
  DeviceOf<T> dC(M, N, Layout::Right);
  ozaki::quantized_gemm(TestSpace(), qo.x.right, qo.sx, qo.w.right, qo.sw, device_vector(bias),
                        dC.right);
  // Each quantized entry within half its row's step of the original.
  const std::vector<std::int8_t> q = host_of(qo.x);
  std::vector<float> scales(M);
  Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace>(scales.data(), M), qo.sx);
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t k = 0; k < K; ++k) {
      const double x = X[m * K + k], back = double(q[m + k * M]) * scales[m];
      ASSERT_LE(std::fabs(back - x), 0.5 * scales[m] * (1 + 1e-6)) << m << ", " << k;
    }
  const std::vector<T> c = host_of(dC);
  std::vector<double> got(M * N), reference(M * N);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t m = 0; m < M; ++m) {
      double sum = bias[n];
      for (std::int64_t k = 0; k < K; ++k) sum += double(X[m * K + k]) * Wf[n * K + k];
      reference[m + n * M] = sum;
      got[m + n * M] = ozaki::to_float(c[m + n * M]);
    }
  EXPECT_LT(calc_diff(got, reference), 0.001);
}

TEST(Quantized, QuantizedRowsThenGemmMeetDeepGemmsCalcDiff) {
  quantize_then_multiply<float>(64, 48, 512, 730);
  quantize_then_multiply<bfloat16>(64, 48, 512, 731);
  quantize_then_multiply<float16>(33, 17, 200, 732);
}

TEST(Quantized, RowsWithNanOrInfGiveNanResultsNeverFiniteOnes) {
  const std::int64_t M = 4, N = 3, K = 32;
  Random rng(740);
  std::vector<float> X(M * K), Wf(N * K);
  for (auto& x : X) x = static_cast<float>(rng.normal());
  for (auto& x : Wf) x = static_cast<float>(rng.normal());
  X[1 * K + 5] = std::numeric_limits<float>::infinity();
  X[2 * K + 7] = std::numeric_limits<float>::quiet_NaN();
  for (std::int64_t k = 0; k < K; ++k) X[3 * K + k] = 0;  // a zero row: scale 0, results 0
  const QuantizedOperands qo = quantized_operands(X, Wf, M, N, K);
  DeviceOf<bfloat16> dC(M, N, Layout::Left);
  ozaki::quantized_gemm(TestSpace(), qo.x.right, qo.sx, qo.w.right, qo.sw, dC.left);
  const std::vector<bfloat16> c = host_of(dC);
  for (std::int64_t n = 0; n < N; ++n) {
    EXPECT_TRUE(std::isfinite(c[0 + n * M].to_float()));
    EXPECT_TRUE(std::isnan(c[1 + n * M].to_float()));
    EXPECT_TRUE(std::isnan(c[2 + n * M].to_float()));
    EXPECT_EQ(c[3 + n * M].to_float(), 0.0f);
  }
}

/// The rank-3 View (groups x rows x cols, LayoutRight) of row-major host values.
template <class T>
Kokkos::View<T***, Kokkos::LayoutRight, MemSpace> device_3d(const std::vector<T>& v,
                                                            std::int64_t groups, std::int64_t rows,
                                                            std::int64_t cols) {
  Kokkos::View<T***, Kokkos::LayoutRight, MemSpace> d("3d", groups, rows, cols);
  Kokkos::deep_copy(d, Kokkos::View<const T***, Kokkos::LayoutRight, Kokkos::HostSpace>(
                           v.data(), groups, rows, cols));
  return d;
}
template <class T>
Kokkos::View<T**, Kokkos::LayoutRight, MemSpace> device_2d(const std::vector<T>& v,
                                                           std::int64_t rows, std::int64_t cols) {
  Kokkos::View<T**, Kokkos::LayoutRight, MemSpace> d("2d", rows, cols);
  Kokkos::deep_copy(
      d, Kokkos::View<const T**, Kokkos::LayoutRight, Kokkos::HostSpace>(v.data(), rows, cols));
  return d;
}
template <class View>
std::vector<typename View::non_const_value_type> values_of(const View& v) {
  std::vector<typename View::non_const_value_type> h(v.size());
  Kokkos::deep_copy(
      Kokkos::View<typename View::non_const_value_type*, Kokkos::HostSpace>(h.data(), h.size()),
      Kokkos::View<typename View::non_const_value_type*, MemSpace>(v.data(), v.size()));
  return h;
}

/// Group g's rows [r0, r1) of row-major A (rows_per_group apart) against its W, as the oracle
/// computes them, rounded to bfloat16 into row-major `out` (N columns).
void oracle_rows(std::int64_t r0, std::int64_t r1, std::int64_t g, std::int64_t N, std::int64_t K,
                 const std::vector<std::int8_t>& A, const std::vector<float>& a,
                 const std::vector<std::int8_t>& W, const std::vector<float>& w,
                 const std::vector<float>& bias, std::vector<bfloat16>& out) {
  const std::int64_t M = r1 - r0;
  std::vector<float> c(M * N);
  ozaki::serial::quantized_gemm(M, N, K, &A[r0 * K], K, &W[g * N * K], K, &a[r0], &w[g * N],
                                &bias[g * N], c.data(), M);
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) out[(r0 + m) * N + n] = bfloat16::from_float(c[m + n * M]);
}

TEST(Quantized, MaskedGroupsAreTheOraclesBitsAndOtherRowsStayUntouched) {
  const std::int64_t G = 3, max_m = 40, N = 32, K = 48;
  Random rng(760);
  const auto A = random_int8(G * max_m * K, rng), W = random_int8(G * N * K, rng);
  const auto a = random_floats(G * max_m, 1.0, rng), w = random_floats(G * N, 1.0, rng);
  const auto bias = random_floats(G * N, 1.0, rng);
  std::vector<bfloat16> expected(G * max_m * N, bfloat16::from_float(7.0f));
  Kokkos::View<int*, Kokkos::HostSpace> masked_m("masked_m", G);
  const int counts[] = {40, 0, 17};
  for (std::int64_t g = 0; g < G; ++g) {
    masked_m(g) = counts[g];
    oracle_rows(g * max_m, g * max_m + counts[g], g, N, K, A, a, W, w, bias, expected);
  }
  auto C = device_3d(std::vector<bfloat16>(G * max_m * N, bfloat16::from_float(7.0f)), G, max_m, N);
  const ozaki::QuantizedReport r = ozaki::quantized_gemm_masked(
      TestSpace(), device_3d(A, G, max_m, K), device_2d(a, G, max_m), device_3d(W, G, N, K),
      device_2d(w, G, N), masked_m, device_2d(bias, G, N), C);
  EXPECT_TRUE(same_bits(values_of(C), expected));
  EXPECT_EQ(r.int8_gemms, 2);  // the empty group makes no product
}

TEST(Quantized, ContiguousGroupsAreTheOraclesBitsAndBadIndicesLeaveCUntouched) {
  const std::int64_t G = 2, rows = 50, N = 16, K = 32;
  Random rng(761);
  const auto A = random_int8(rows * K, rng), W = random_int8(G * N * K, rng);
  const auto a = random_floats(rows, 1.0, rng), w = random_floats(G * N, 1.0, rng);
  const auto bias = random_floats(G * N, 1.0, rng);
  Kokkos::View<int*, Kokkos::HostSpace> m_indices("m_indices", rows);
  std::vector<bfloat16> expected(rows * N, bfloat16::from_float(7.0f));
  const std::int64_t starts[] = {0, 20, 22, 40, rows};
  const int groups[] = {1, -1, 0, 1};
  for (int run = 0; run < 4; ++run) {
    for (std::int64_t r = starts[run]; r < starts[run + 1]; ++r) m_indices(r) = groups[run];
    if (groups[run] >= 0)
      oracle_rows(starts[run], starts[run + 1], groups[run], N, K, A, a, W, w, bias, expected);
  }
  const auto dA = device_2d(A, rows, K);
  const auto dW3 = device_3d(W, G, N, K);
  const auto da = device_vector(a);
  const auto dw = device_2d(w, G, N), db = device_2d(bias, G, N);
  auto C = device_2d(std::vector<bfloat16>(rows * N, bfloat16::from_float(7.0f)), rows, N);
  const ozaki::QuantizedReport r =
      ozaki::quantized_gemm_contiguous(TestSpace(), dA, da, dW3, dw, m_indices, db, C);
  EXPECT_TRUE(same_bits(values_of(C), expected));
  EXPECT_EQ(r.int8_gemms, 3);
  // An index out of range in the last run: nothing written, not even the runs before it.
  auto untouched = device_2d(std::vector<bfloat16>(rows * N, bfloat16::from_float(7.0f)), rows, N);
  m_indices(rows - 1) = G;
  EXPECT_THROW(
      ozaki::quantized_gemm_contiguous(TestSpace(), dA, da, dW3, dw, m_indices, db, untouched),
      ozaki::InvalidArgument);
  EXPECT_TRUE(
      same_bits(values_of(untouched), std::vector<bfloat16>(rows * N, bfloat16::from_float(7.0f))));
}

TEST(Quantized, BadArgumentsThrowAndLeaveCUntouched) {
  const std::int64_t M = 8, N = 6, K = 32;
  Kokkos::View<std::int8_t**, Kokkos::LayoutRight, MemSpace> A("A", M, K), W("W", N, K),
      W_short("W", N, K - 16);
  const Dev1<float> a("a", M), w("w", N), a_short("a", M - 1), bias_long("b", N + 1);
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> C("C", M, N), C_wide("C", M, N + 1);
  Kokkos::deep_copy(C, 3.0f);
  using ozaki::InvalidArgument;
  EXPECT_THROW(ozaki::quantized_gemm(TestSpace(), A, a, W_short, w, C), InvalidArgument);
  EXPECT_THROW(ozaki::quantized_gemm(TestSpace(), A, a_short, W, w, C), InvalidArgument);
  EXPECT_THROW(ozaki::quantized_gemm(TestSpace(), A, a, W, w, bias_long, C), InvalidArgument);
  EXPECT_THROW(ozaki::quantized_gemm(TestSpace(), A, a, W, w, C_wide), InvalidArgument);
  // C over A's bytes.
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> over_a(reinterpret_cast<float*>(A.data()), 2,
                                                              4);
  EXPECT_THROW(
      ozaki::quantized_gemm(TestSpace(), Kokkos::subview(A, std::make_pair(0, 2), Kokkos::ALL()),
                            Kokkos::subview(a, std::make_pair(0, 2)),
                            Kokkos::subview(W, std::make_pair(0, 4), Kokkos::ALL()),
                            Kokkos::subview(w, std::make_pair(0, 4)), over_a),
      InvalidArgument);
  Kokkos::View<std::int8_t**, Kokkos::LayoutRight, MemSpace> X_q("Xq", M, K);
  EXPECT_THROW(
      ozaki::quantize_rows(
          TestSpace(), Kokkos::View<float**, Kokkos::LayoutRight, MemSpace>("X", M, K + 1), X_q, a),
      InvalidArgument);
  std::vector<float> c(M * N);
  Kokkos::deep_copy(Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>(c.data(), M, N),
                    C);
  for (float x : c) EXPECT_EQ(x, 3.0f);
}

}  // namespace
