// The serial oracle and the host-side planning code, on their own (no execution space).
#include <ozaki/impl/cost_model.hpp>
#include <ozaki/impl/slices/accuracy.hpp>
#include <ozaki/impl/slices/schedule.hpp>
#include <ozaki/serial/reference.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

namespace {

using ozaki::PairPolicy;

std::vector<double> spread_values(std::size_t n, double phi, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  auto uniform = [&] { return static_cast<double>(engine() >> 11) * 0x1p-53; };
  std::vector<double> v(n);
  for (auto& x : v) {
    const double normal =
        std::sqrt(-2 * std::log(1 - uniform())) * std::cos(6.283185307179586 * uniform());
    x = (uniform() - 0.5) * std::exp(phi * normal);
  }
  return v;
}

TEST(Oracle, ScaleExponentIsTheSmallestWithHeadroom) {
  for (double mu : spread_values(2000, 4.0, 1)) {
    mu = std::fabs(mu);
    if (mu == 0) continue;
    const int e = ozaki::serial::scale_exponent(mu);
    EXPECT_LE(mu, std::ldexp(127.0, e - 7));  // mu <= (127/128) 2^e
    EXPECT_GT(mu, std::ldexp(127.0, e - 8));  // and not for e - 1
  }
  EXPECT_EQ(ozaki::serial::scale_exponent(0.0), 0);
  EXPECT_EQ(ozaki::serial::scale_exponent(1.0), 1);                    // 1 <= 127/128 * 2
  EXPECT_EQ(ozaki::serial::scale_exponent(std::ldexp(255.0, -8)), 1);  // 0.996 > 127/128
  EXPECT_EQ(ozaki::serial::scale_exponent(std::ldexp(253.0, -8)), 0);  // 0.988 <= 127/128
}

TEST(Oracle, SplitReconstructsWithinHalfAnUlpOfTheLastSlice) {
  for (int S : {1, 2, 5, 7, 8, 12, 16}) {
    const std::vector<double> row = spread_values(300, 2.0, 10 + S);
    const ozaki::serial::ConstMatrixRef X{row.data(), 1, 300, 300, 1};
    const auto sl = ozaki::serial::split(X, S, false);
    const int e = sl.exponents[0];
    for (std::int64_t k = 0; k < 300; ++k) {
      long double value = 0;  // sum_s d_s 2^(e - 7 - 8s), exact in long double for S <= 8
      __int128 integer = 0;
      for (int s = 0; s < S; ++s) {
        const int d = sl.digit(0, s, k);
        EXPECT_GE(d, s == 0 ? -127 : -128);
        EXPECT_LE(d, 127);
        integer = integer * 256 + d;
        value += std::ldexp(static_cast<long double>(d), e - 7 - 8 * s);
      }
      // |x - X 2^(e-8S+1)| <= 2^(e-8S); compare via the exact integer when S is large.
      const long double x_scaled = std::ldexp(static_cast<long double>(row[k]), 8 * S - 1 - e);
      EXPECT_LE(std::fabs(x_scaled - static_cast<long double>(integer)), 0.5L)
          << "S=" << S << " k=" << k;
      if (S <= 7)
        EXPECT_LE(std::fabs(static_cast<long double>(row[k]) - value), std::ldexp(1.0L, e - 8 * S));
    }
    for (std::int64_t k = 300; k < sl.kpad; ++k)
      for (int s = 0; s < S; ++s) EXPECT_EQ(sl.digit(0, s, k), 0);
  }
}

TEST(Oracle, ReversedStorageHoldsTheSameDigits) {
  const std::vector<double> v = spread_values(3 * 20, 0.5, 3);
  const ozaki::serial::ConstMatrixRef X{v.data(), 3, 20, 20, 1};
  const auto fwd = ozaki::serial::split(X, 4, false), rev = ozaki::serial::split(X, 4, true);
  for (std::int64_t r = 0; r < 3; ++r)
    for (int s = 0; s < 4; ++s)
      for (std::int64_t k = 0; k < 20; ++k) {
        EXPECT_EQ(fwd.digit(r, s, k), rev.digit(r, s, k));
        EXPECT_EQ(rev.digits[r * rev.row_length() + (3 - s) * rev.kpad + k], fwd.digit(r, s, k));
      }
}

TEST(Oracle, DoubleDoubleDotIsExactOnCancellation) {
  // (1 + 2^-60) * 1 + (-1) * 1 + 2^-70 * 2^-10 = 2^-60 + 2^-80, exact in double-double.
  const double a[3] = {1 + 0x1p-52, -1, 0x1p-70};
  const double b[3] = {1 + 0x1p-8, 1 + 0x1p-52, 0x1p-10};
  const ozaki::serial::ConstMatrixRef A{a, 1, 3, 3, 1}, B{b, 3, 1, 1, 3};
  const auto dd = ozaki::serial::dd_dot(A, B, 0, 0);
  // Exact: (1+2^-52)(1+2^-8) - (1+2^-52) + 2^-80 = 2^-8 + 2^-60 + 2^-80.
  EXPECT_EQ(dd.hi, 0x1p-8 + 0x1p-60);
  EXPECT_EQ(dd.lo, 0x1p-80);
}

TEST(Oracle, SelectedPairsFollowThePolicy) {
  for (int S = 1; S <= 8; ++S) {
    const auto tri = ozaki::serial::selected_pairs(S, PairPolicy::Triangular, 0);
    ASSERT_EQ(tri.size(), std::size_t(S * (S + 1) / 2));
    for (const auto& p : tri) EXPECT_LT(p.first + p.second, S);
    const auto full = ozaki::serial::selected_pairs(S, PairPolicy::Full, 0);
    ASSERT_EQ(full.size(), std::size_t(S * S));
    for (std::size_t i = 1; i < full.size(); ++i)
      EXPECT_LE(full[i - 1].first + full[i - 1].second, full[i].first + full[i].second);
    const auto some = ozaki::serial::selected_pairs(S, PairPolicy::Count, S);
    EXPECT_TRUE(std::equal(some.begin(), some.end(), full.begin()));
  }
}

// The stacked-diagonal schedule covers exactly the oracle's pairs, each once, with aligned
// A and B columns, and no GEMM longer than the INT32-safe block.
TEST(Schedule, CoversExactlyTheSelectedPairs) {
  for (int S = 1; S <= 9; ++S) {
    for (PairPolicy policy : {PairPolicy::Triangular, PairPolicy::Full, PairPolicy::Count}) {
      for (std::int64_t K : {1, 16, 37, 1000}) {
        for (std::int64_t block : {ozaki::max_k_block, std::int64_t(50), std::int64_t(999)}) {
          // Every chunk starts on a 16-byte boundary of both operands.
          const std::int64_t resolved = ozaki::Impl::resolved_k_block(block);
          EXPECT_EQ(resolved % 16, 0);
          const int count = policy == PairPolicy::Count ? std::max(1, S * S / 2) : 0;
          const auto schedule = ozaki::Impl::make_schedule(S, policy, count, K, block);
          const std::int64_t kpad = ozaki::Impl::padded_k(K);
          std::multiset<std::pair<int, int>> got;
          std::map<std::pair<int, int>, std::int64_t> columns_seen;
          for (const auto& p : schedule.products) {
            EXPECT_LE(p.length, resolved);
            EXPECT_GE(p.length, 1);
            EXPECT_EQ(p.a_column % 16, 0);
            EXPECT_EQ(p.b_column % 16, 0);
            for (std::int64_t l = 0; l < p.length; ++l) {
              const std::int64_t ca = p.a_column + l, cb = p.b_column + l;
              EXPECT_EQ(ca % kpad, cb % kpad);
              if (ca % kpad >= K) continue;  // padding column
              const int i = int(ca / kpad), j = S - 1 - int(cb / kpad);
              EXPECT_EQ(i + j, p.diagonal);
              if (ca % kpad == 0) got.insert({i, j});
              ++columns_seen[{i, j}];
            }
          }
          const auto want = ozaki::serial::selected_pairs(S, policy, count);
          const std::multiset<std::pair<int, int>> want_set(want.begin(), want.end());
          EXPECT_EQ(got, want_set) << "S=" << S << " K=" << K << " block=" << block;
          for (const auto& kv : columns_seen) EXPECT_EQ(kv.second, K);
          EXPECT_EQ(schedule.slice_pairs, int(want.size()));
        }
      }
    }
  }
}

TEST(Accuracy, SliceCountIsTheSmallestMeetingTheModel) {
  using ozaki::Impl::equivalent_slices;
  using ozaki::Impl::ErrorRatios;
  using ozaki::Impl::modeled_error;
  const double u64 = ozaki::Impl::fp64_unit_roundoff, u32 = ozaki::Impl::fp32_unit_roundoff;
  EXPECT_EQ(equivalent_slices(ErrorRatios{0, 0}, 100, PairPolicy::Full, 0, u64),
            1);  // zero operand
  EXPECT_EQ(equivalent_slices(ErrorRatios{3, HUGE_VAL}, 100, PairPolicy::Full, 0, u64),
            ozaki::max_slices);
  for (double u : {u64, u32})
    for (double split : {1.0, 30.0, 1e4, 1e9})
      for (double inverse : {0.01, 1.0, 1e6})
        for (std::int64_t K : {1, 64, 8192, 1 << 20})
          for (PairPolicy policy : {PairPolicy::Triangular, PairPolicy::Full}) {
            const ErrorRatios r{split, inverse};
            const int S = equivalent_slices(r, K, policy, 0, u);
            if (S < ozaki::max_slices) EXPECT_LE(modeled_error(r, K, S, policy, 0), u);
            if (S > 1) EXPECT_GT(modeled_error(r, K, S - 1, policy, 0), u);
          }
  // FP32's target takes about half of FP64's slices: 4 where FP64 takes 7 (K = 8192).
  const ErrorRatios uniform{16.0, 16.0 / 8192};
  EXPECT_EQ(equivalent_slices(uniform, 8192, PairPolicy::Triangular, 0, u64), 7);
  EXPECT_LE(equivalent_slices(uniform, 8192, PairPolicy::Triangular, 0, u32), 4);
}

TEST(Accuracy, DroppedPairsAreModelledPerDiagonal) {
  using ozaki::Impl::modeled_error;
  const ozaki::Impl::ErrorRatios r{0, 1.0};  // only the dropped-pair term
  const std::int64_t K = 4096;
  // Full: nothing dropped.  Triangular: diagonals S..2S-2, led by S-1 pairs on diagonal S.
  EXPECT_EQ(modeled_error(r, K, 4, PairPolicy::Full, 0), 0.0);
  const double leading = std::ldexp(1.0, -32) * std::sqrt(K * 3.0) / 3;
  const double tri = modeled_error(r, K, 4, PairPolicy::Triangular, 0);
  EXPECT_GT(tri, leading);
  EXPECT_LT(tri, leading * 1.01);
  // Count 8 of S^2 = 16: diagonals 0..2 hold 6 pairs, diagonal 3 keeps 2 of its 4.
  const double count = modeled_error(r, K, 4, PairPolicy::Count, 8);
  const double leading_count = std::ldexp(1.0, -24) * std::sqrt(K * 2.0) / 3;
  EXPECT_GT(count, leading_count);
  EXPECT_LT(count, leading_count * 1.01);
}

TEST(Accuracy, AutoPrefersNativeWhereItsCostModelSaysSo) {
  // H200: INT8 TN 1500 TOP/s over DGEMM 56.6 TFLOP/s (backends/cuda/int8_gemm_cublas.cpp).
  const ozaki::Impl::DeviceRates h200{1500.0 / 56.6, 56.6 / 4.0}, unknown{};
  const double u64 = ozaki::Impl::fp64_unit_roundoff;
  auto native_is_faster = [](const ozaki::Impl::DeviceRates& rates, int S, PairPolicy policy,
                             int estimate_products) {
    const int products = ozaki::Impl::slices_products(S, policy, 0) + estimate_products;
    return ozaki::Impl::native_is_faster(ozaki::Impl::slices_relative_cost(rates, products));
  };
  EXPECT_TRUE(native_is_faster(h200, 7, PairPolicy::Triangular, 1));   // 28 + 1 products
  EXPECT_TRUE(native_is_faster(h200, 8, PairPolicy::Triangular, 1));   // the S auto chose at 8192^3
  EXPECT_FALSE(native_is_faster(h200, 3, PairPolicy::Triangular, 0));  // 6 products
  EXPECT_FALSE(native_is_faster(h200, 5, PairPolicy::Triangular, 0));  // 15 products
  EXPECT_FALSE(native_is_faster(unknown, 16, PairPolicy::Full, 1));    // unknown device
  // The first guess is never above what the model chooses for wider data (phi = 0.5: split
  // about 30), and at K = 8192 it already rules Int8Slices out on the H200 (7 slices).
  for (std::int64_t K : {64, 1024, 8192, 65536})
    EXPECT_LE(ozaki::Impl::best_case_slices(K, PairPolicy::Triangular, 0, u64),
              ozaki::Impl::equivalent_slices({30.0, 1.0 / (0.004 * K)}, K, PairPolicy::Triangular,
                                             0, u64));
  EXPECT_EQ(ozaki::Impl::best_case_slices(8192, PairPolicy::Triangular, 0, u64), 7);
}

/// sm_90 parts share the H200's measured fractions of peak, so the balance follows the memory
/// peak: the H200 keeps its measured 14.15 flops a byte, an H100 SXM (HBM3 at 2619 MHz on 5120
/// bits) gets 4.92 / 3.35 times more, and a device that reports no peaks keeps the H200's.  On
/// both parts scheme II's modelled cost of an 8192^3 call with 14 moduli stays at or above the
/// measured one (docs/benchmarks.md: 13.52 / 19.4 ms on the H200, 14.45 / 18.71 on an H100) and
/// within a tenth of it: the model errs towards native by little.
TEST(Accuracy, Sm90BalanceFollowsTheMemoryPeak) {
  using ozaki::Impl::GpuPeaks;
  using ozaki::Impl::sm90_fp64_flops_per_byte;
  const GpuPeaks h200 = ozaki::Impl::h200_peaks();
  const GpuPeaks h100_sxm{132, 1.98e6, 2.619e6, 5120};
  EXPECT_DOUBLE_EQ(sm90_fp64_flops_per_byte(h200), 56.6 / 4.0);
  EXPECT_NEAR(sm90_fp64_flops_per_byte(h100_sxm), 14.15 * 4.917 / 3.352, 0.01);
  EXPECT_DOUBLE_EQ(sm90_fp64_flops_per_byte(GpuPeaks{}), 56.6 / 4.0);
  const ozaki::Impl::Shape s{8192, 8192, 8192};
  const double on_h200 =
      ozaki::Impl::crt_relative_cost({26.5, sm90_fp64_flops_per_byte(h200), 0.9}, 14, 14, s);
  const double on_h100 =
      ozaki::Impl::crt_relative_cost({26.5, sm90_fp64_flops_per_byte(h100_sxm), 0.9}, 14, 14, s);
  EXPECT_GE(on_h200, 13.52 / 19.4);
  EXPECT_LE(on_h200, 1.1 * 13.52 / 19.4);
  EXPECT_GE(on_h100, 14.45 / 18.71);
  EXPECT_LE(on_h100, 1.1 * 14.45 / 18.71);
}

TEST(Accuracy, NativeReasonGivesTheModelledCostWithTwoDecimals) {
  // Formatted from integers (cost_model.hpp): rounded to the nearest hundredth, a fraction
  // below 0.10 keeps its leading zero; Inf keeps printf's text.
  using ozaki::Impl::two_decimals;
  EXPECT_EQ(two_decimals(3.135764), "3.14");
  EXPECT_EQ(two_decimals(1.0), "1.00");
  EXPECT_EQ(two_decimals(1.049), "1.05");
  EXPECT_EQ(two_decimals(0.004), "0.00");
  EXPECT_EQ(two_decimals(12.996), "13.00");
  EXPECT_EQ(two_decimals(1686.4999), "1686.50");
  EXPECT_EQ(two_decimals(HUGE_VAL), std::to_string(HUGE_VAL));
  EXPECT_EQ(two_decimals(0.05), "0.05");
  const std::string reason =
      ozaki::Impl::native_faster_reason("Int8Crt with at least 14 moduli", 3.135764);
  EXPECT_EQ(reason,
            "Auto: native FP64 GEMM is faster here (Int8Crt with at least 14 moduli: modelled at "
            "3.14 native GEMMs)");
  // The count formatted in place gives the same text; negative counts keep their sign.
  EXPECT_EQ(ozaki::Impl::native_faster_reason("Int8Crt with at least ", 14, " moduli", 3.135764),
            reason);
  std::string text;
  EXPECT_EQ(ozaki::Impl::append_integer(text, -1234567890123LL), "-1234567890123");
  text.clear();
  EXPECT_EQ(ozaki::Impl::append_integer(text, 0), "0");
  EXPECT_EQ(ozaki::Impl::native_faster_reason("x", 2, "y", 1.5, "FP32"),
            "Auto: native FP32 GEMM is faster here (x2y: modelled at 1.50 native GEMMs)");
}

TEST(Oracle, ErrorRatiosOfFlatDataAreModest) {
  // One magnitude (phi = 0): every row's scale is within 2x of its mean, so the ratios stay
  // small, and the int8 estimate bounds them from above.
  const std::vector<double> a = spread_values(40 * 300, 0.0, 8),
                            b = spread_values(300 * 30, 0.0, 9);
  const ozaki::serial::ConstMatrixRef A{a.data(), 40, 300, 300, 1}, B{b.data(), 300, 30, 30, 1};
  const auto exact = ozaki::serial::error_ratios(A, B);
  const auto estimate = ozaki::serial::error_ratios_estimate(A, B);
  EXPECT_GT(exact.split, 2.0);
  EXPECT_LT(exact.split, 16.0);
  EXPECT_GE(estimate.split, exact.split);
  EXPECT_GE(estimate.inverse, exact.inverse);
  EXPECT_LT(estimate.inverse, 4 * exact.inverse);
}

}  // namespace
