// The split kernels of the test space against the serial oracle: bit for bit.
#include "common.hpp"

#include <ozaki/impl/slices/estimate.hpp>

#include <limits>

namespace {

using namespace ozaki_test;
using V = ozaki::Impl::Views<TestSpace>;

struct SpaceSplit {
  std::vector<std::int8_t> digits;
  std::vector<int> exponents;
  bool nonfinite = false;
};

V::ConstMatrix as_const(const DeviceMatrix& X) {
  return V::ConstMatrix(X.view.data(), X.view.layout());
}

/// Pass 1 and pass 3 of the split on the test space, copied back to the host.
SpaceSplit split_on_space(const DeviceMatrix& X, int S, bool reversed) {
  TestSpace space;
  const V::ConstMatrix x = as_const(X);
  V::Exponents exponents("exponents", x.extent(0));
  SpaceSplit out;
  out.nonfinite = ozaki::Impl::row_scale_exponents(space, x, exponents);
  if (out.nonfinite) return out;
  const std::int64_t kpad = ozaki::Impl::padded_k(x.extent(1));
  const ozaki::Impl::SliceStorage<TestSpace> storage{V::Digits("digits", x.extent(0), S * kpad),
                                                     exponents,
                                                     S,
                                                     std::int64_t(x.extent(1)),
                                                     kpad,
                                                     reversed};
  ozaki::Impl::split_rows(space, x, storage);
  auto digits = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), storage.digits);
  auto exps = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), exponents);
  out.digits.assign(digits.data(), digits.data() + digits.size());
  out.exponents.assign(exps.data(), exps.data() + exps.size());
  return out;
}

void expect_split_matches_oracle(const HostMatrix& host, Layout layout, int S, bool reversed) {
  DeviceMatrix X = make_matrix(host.rows, host.cols, layout);
  from_host(host, X.view);
  const SpaceSplit got = split_on_space(X, S, reversed);
  const ozaki::serial::Slices want = ozaki::serial::split(host.cref(), S, reversed);
  ASSERT_FALSE(got.nonfinite);
  ASSERT_EQ(got.exponents, want.exponents);
  ASSERT_EQ(got.digits.size(), want.digits.size());
  for (std::size_t i = 0; i < want.digits.size(); ++i) {
    ASSERT_EQ(int(got.digits[i]), int(want.digits[i]))
        << "digit " << i << " (row " << i / want.row_length() << ", column "
        << i % want.row_length() << "), S = " << S << ", layout " << name(layout);
  }
}

struct SplitCase {
  std::int64_t rows, cols;
  double phi;
};

class SplitBitwise : public ::testing::TestWithParam<std::tuple<SplitCase, int, Layout>> {};

TEST_P(SplitBitwise, MatchesOracle) {
  const auto [c, S, layout] = GetParam();
  Random rng(1000 + 17 * S + c.rows);
  // Rows of very different magnitude: row i scaled by 2^(37 i mod 201 - 100).
  const HostMatrix host = random_host(c.rows, c.cols, c.phi, rng,
                                      [](std::int64_t i) { return int((37 * i) % 201) - 100; });
  expect_split_matches_oracle(host, layout, S, false);
  expect_split_matches_oracle(host, layout, S, true);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, SplitBitwise,
    ::testing::Combine(::testing::Values(SplitCase{1, 1, 0.5}, SplitCase{3, 17, 0.5},
                                         SplitCase{17, 3, 2.0}, SplitCase{129, 33, 4.0},
                                         SplitCase{5, 129, 0.5}),
                       ::testing::Values(1, 2, 3, 5, 7, 8, 11, 16),
                       ::testing::Values(Layout::Left, Layout::Right, Layout::Stride)));

TEST(Split, ExtremeMagnitudesMatchOracle) {
  // Near the top of the range, subnormals, and rows mixing both ends of a row's scale.
  HostMatrix h;
  h.rows = 4;
  h.cols = 37;
  h.values.resize(h.rows * h.cols);
  Random rng(7);
  for (std::int64_t j = 0; j < h.cols; ++j) {
    h.values[0 + j * 4] = std::ldexp(rng.spread(1.0), 1000);   // ~1e300
    h.values[1 + j * 4] = std::ldexp(rng.spread(1.0), -1060);  // subnormal
    h.values[2 + j * 4] = j % 2 ? std::numeric_limits<double>::max() * (rng.uniform() - 0.5)
                                : std::numeric_limits<double>::denorm_min() * j;  // both ends
    h.values[3 + j * 4] = j == 5 ? -std::numeric_limits<double>::max() : 0.0;     // one huge
  }
  for (int S : {1, 4, 7, 16}) expect_split_matches_oracle(h, Layout::Left, S, false);
}

TEST(Split, KContiguousCopyIsExactAndFindsTheRowScales) {
  // The GPU path reads strided rows through this copy, which also does pass 1: it must be an
  // exact transposition and give the oracle's exponents, and see NaN and Inf.
  Random rng(9);
  for (const auto& shape :
       {std::make_pair(1, 1), std::make_pair(33, 70), std::make_pair(100, 31)}) {
    HostMatrix h = random_host(shape.first, shape.second, 2.0, rng,
                               [](std::int64_t i) { return int((37 * i) % 201) - 100; });
    DeviceMatrix X = make_matrix(h.rows, h.cols, Layout::Left);  // rows strided, K not contiguous
    from_host(h, X.view);
    Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> Y("Y", h.rows, h.cols);
    Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> tile_max("tile_max", (h.cols + 31) / 32,
                                                                   h.rows);
    V::Exponents exponents("exponents", h.rows);
    ozaki::Impl::copy_to_k_contiguous(TestSpace(), as_const(X), Y, tile_max);
    EXPECT_FALSE(ozaki::Impl::exponents_from_tile_max(TestSpace(), tile_max, exponents));
    auto y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
    for (std::int64_t i = 0; i < h.rows; ++i)
      for (std::int64_t k = 0; k < h.cols; ++k) ASSERT_EQ(y(i, k), h(i, k)) << i << "," << k;
    auto e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), exponents);
    const auto want = ozaki::serial::split(h.cref(), 1, false);
    for (std::int64_t i = 0; i < h.rows; ++i) EXPECT_EQ(e(i), want.exponents[i]) << "row " << i;
    // A NaN anywhere is reported.
    h.values[h.values.size() / 2] = std::numeric_limits<double>::quiet_NaN();
    from_host(h, X.view);
    ozaki::Impl::copy_to_k_contiguous(TestSpace(), as_const(X), Y, tile_max);
    EXPECT_TRUE(ozaki::Impl::exponents_from_tile_max(TestSpace(), tile_max, exponents));
  }
}

TEST(Split, ZeroRowsGiveZeroDigitsAndExponent) {
  HostMatrix h;
  h.rows = 3;
  h.cols = 20;
  h.values.assign(60, 0.0);
  Random rng(3);
  for (std::int64_t j = 0; j < h.cols; ++j) h.values[1 + 3 * j] = rng.spread(0.5);
  DeviceMatrix X = make_matrix(h.rows, h.cols, Layout::Right);
  from_host(h, X.view);
  const SpaceSplit got = split_on_space(X, 4, false);
  const std::int64_t row_length = 4 * 32;
  EXPECT_EQ(got.exponents[0], 0);
  EXPECT_EQ(got.exponents[2], 0);
  for (std::int64_t c = 0; c < row_length; ++c) {
    EXPECT_EQ(got.digits[0 * row_length + c], 0);
    EXPECT_EQ(got.digits[2 * row_length + c], 0);
  }
  expect_split_matches_oracle(h, Layout::Right, 4, false);
}

TEST(Split, DetectsNaNAndInf) {
  Random rng(11);
  for (const double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    HostMatrix h = random_host(9, 13, 0.5, rng);
    DeviceMatrix X = make_matrix(h.rows, h.cols, Layout::Left);
    from_host(h, X.view);
    EXPECT_FALSE(split_on_space(X, 3, false).nonfinite);
    h.values[4 + 9 * 7] = bad;
    from_host(h, X.view);
    EXPECT_TRUE(split_on_space(X, 3, false).nonfinite) << "value " << bad;
    EXPECT_TRUE(ozaki::serial::has_nonfinite(h.cref()));
  }
}

TEST(Split, SliceCountEstimateMatchesOracleAndBoundsTheTrueRatio) {
  Random rng(5);
  for (const double phi : {0.5, 2.0, 4.0}) {
    const std::int64_t M = 31, N = 23, K = 257;
    HostMatrix A = random_host(M, K, phi, rng), B = random_host(K, N, phi, rng);
    for (std::int64_t k = 0; k < K; k += 3) A.values[2 + M * k] = 0;  // a sparse row
    for (std::int64_t k = 0; k < K; ++k) B.values[k + K * 4] = 0;     // a zero column
    DeviceMatrix dA = make_matrix(M, K, Layout::Stride), dB = make_matrix(K, N, Layout::Left);
    from_host(A, dA.view);
    from_host(B, dB.view);
    TestSpace space;
    const V::ConstMatrix opA = as_const(dA);
    const V::ConstMatrix opBt(dB.view.data(),
                              Kokkos::LayoutStride(N, dB.view.stride(1), K, dB.view.stride(0)));
    V::Exponents ea("ea", M), eb("eb", N);
    ozaki::Impl::row_scale_exponents(space, opA, ea);
    ozaki::Impl::row_scale_exponents(space, opBt, eb);
    for (std::int64_t k_block : {ozaki::max_k_block, std::int64_t(100)}) {
      SCOPED_TRACE("k_block " + std::to_string(k_block));
      const ozaki::Impl::Shape shape{M, N, K};
      const std::int64_t chunks = ozaki::Impl::k_chunks(K, k_block);
      ozaki::Impl::Carver count(nullptr);
      ozaki::Impl::EstimateRegion<TestSpace>::carve(count, shape, chunks);
      Kokkos::View<unsigned char*, MemSpace> buffer("scratch", count.used());
      ozaki::Impl::Carver carver(buffer.data());
      const auto region = ozaki::Impl::EstimateRegion<TestSpace>::carve(carver, shape, chunks);
      const auto choice =
          ozaki::Impl::choose_slice_count(space, opA, opBt, ea, eb, k_block, region);
      const auto want = ozaki::serial::error_ratios_estimate(A.cref(), B.cref());
      const auto exact = ozaki::serial::error_ratios(A.cref(), B.cref());
      // Same integers, norms summed in another order: equal to a few roundings.
      EXPECT_NEAR(choice.ratios.split, want.split, 1e-12 * want.split) << "phi = " << phi;
      EXPECT_NEAR(choice.ratios.inverse, want.inverse, 1e-12 * want.inverse) << "phi = " << phi;
      EXPECT_GE(want.split, exact.split) << "the estimate must bound the ratio from above";
      EXPECT_GE(want.inverse, exact.inverse) << "the estimate must bound the ratio from above";
      EXPECT_GE(exact.split, 1.0);
      EXPECT_LT(choice.ratios.inverse, HUGE_VAL);
      EXPECT_EQ(choice.int8_gemms % ozaki::Impl::k_chunks(K, k_block), 0);
    }
  }
}

}  // namespace
