// ozaki::gemm on the test space, end to end, against the serial oracle (to rounding) and
// against a double-double reference (within the documented error bound).
#include "common.hpp"

#include <ozaki/impl/common/bounds.hpp>

#include <limits>

namespace {

using namespace ozaki_test;
using ozaki::Options;
using ozaki::PairPolicy;
using ozaki::Report;

constexpr double u = 0x1p-53;

/// Options that ask for Ozaki scheme I itself.  (The default, Algorithm::Auto, may take native
/// FP64 GEMM on a GPU where that is faster; Cuda.AutoFollowsTheDeviceThroughput in
/// test_cuda.cpp tests that.)
Options int8() {
  Options o;
  o.algorithm = ozaki::Algorithm::Int8Slices;
  return o;
}

HostMatrix random_operand(std::int64_t op_rows, std::int64_t op_cols, char trans, double phi,
                          Random& rng) {
  return trans == 'N' ? random_host(op_rows, op_cols, phi, rng)
                      : random_host(op_cols, op_rows, phi, rng);
}

/// Asserts, for every element: |C - ref| <= documented bound (ref in double-double), and
/// C equals the serial oracle's scheme-I result to within its recombination rounding.
void expect_scheme_accuracy(char ta, char tb, double alpha, const HostMatrix& A,
                            const HostMatrix& B, double beta, const HostMatrix& C0,
                            const GemmRun& run, const Options& options) {
  const int S = run.report.slices;
  ASSERT_EQ(run.report.algorithm, ozaki::Algorithm::Int8Slices) << run.report.reason;
  ASSERT_GE(S, 1);
  HostMatrix ref = C0, oracle = C0;
  ozaki::serial::dd_gemm(ta, tb, alpha, A.cref(), B.cref(), beta, ref.ref());
  ozaki::serial::gemm(ta, tb, alpha, A.cref(), B.cref(), beta, oracle.ref(), S, options.pairs,
                      options.pair_count.value_or(0));
  const std::vector<double> bound = ozaki::serial::error_bound(
      ta, tb, alpha, A.cref(), B.cref(), beta, C0.cref(), S, options.pairs,
      options.pair_count.value_or(0), run.report.int8_gemms);
  const std::vector<double> abs_ab = abs_product(ta, tb, A, B);
  const double rounding = 4 * (run.report.int8_gemms + 2) * u;
  for (std::int64_t j = 0; j < run.C.cols; ++j) {
    for (std::int64_t i = 0; i < run.C.rows; ++i) {
      const std::size_t idx = i + j * run.C.rows;
      const double got = run.C.values[idx];
      ASSERT_TRUE(std::isfinite(got)) << "C(" << i << "," << j << ") = " << got;
      ASSERT_LE(std::fabs(got - ref.values[idx]), bound[idx] + u * std::fabs(ref.values[idx]))
          << "C(" << i << "," << j << "): got " << got << ", reference " << ref.values[idx]
          << ", S = " << S << ", pairs " << ozaki::to_string(options.pairs);
      const double scale = std::fabs(alpha) * abs_ab[idx] + std::fabs(beta * C0.values[idx]);
      ASSERT_LE(std::fabs(got - oracle.values[idx]),
                rounding * scale + 4 * std::numeric_limits<double>::denorm_min())
          << "C(" << i << "," << j << ") differs from the serial oracle: " << got << " vs "
          << oracle.values[idx];
    }
  }
}

// ---- slice counts and pair policies -------------------------------------------------------

class GemmSlicesAndPairs : public ::testing::TestWithParam<std::tuple<int, PairPolicy>> {};

TEST_P(GemmSlicesAndPairs, WithinBoundOfReference) {
  const auto [S, policy] = GetParam();
  Random rng(100 + S);
  const std::int64_t M = 17, N = 13, K = 29;
  const HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  Options o = int8();
  o.slices = S;
  o.pairs = policy;
  if (policy == PairPolicy::Count) o.pair_count = std::min(S * S, 2 * S - 1);
  const GemmRun run = run_gemm('N', 'N', 1.5, A, B, -0.5, C0, o);
  EXPECT_EQ(run.report.slices, S);
  EXPECT_EQ(run.report.slice_pairs, policy == PairPolicy::Full         ? S * S
                                    : policy == PairPolicy::Triangular ? S * (S + 1) / 2
                                                                       : *o.pair_count);
  // One INT8 GEMM per diagonal (K is far below the INT32 limit).
  const int diagonals =
      policy == PairPolicy::Full ? 2 * S - 1
      : policy == PairPolicy::Triangular
          ? S
          : int(ozaki::serial::selected_pairs(S, policy, *o.pair_count).back().first +
                ozaki::serial::selected_pairs(S, policy, *o.pair_count).back().second + 1);
  EXPECT_EQ(run.report.int8_gemms, diagonals);
  expect_scheme_accuracy('N', 'N', 1.5, A, B, -0.5, C0, run, o);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, GemmSlicesAndPairs,
                         ::testing::Combine(::testing::Range(1, 9),
                                            ::testing::Values(PairPolicy::Triangular,
                                                              PairPolicy::Full,
                                                              PairPolicy::Count)));

TEST(Gemm, MoreSlicesMeanSmallerError) {
  // The error bound shrinks by 2^-8 per slice; the measured error must follow until it
  // reaches FP64 rounding.
  Random rng(4);
  const HostMatrix A = random_host(24, 40, 0.5, rng), B = random_host(40, 24, 0.5, rng);
  const HostMatrix C0 = random_host(24, 24, 0.5, rng);
  HostMatrix ref = C0;
  ozaki::serial::dd_gemm('N', 'N', 1.0, A.cref(), B.cref(), 0.0, ref.ref());
  const auto abs_ab = abs_product('N', 'N', A, B);
  double previous = 1;
  for (int S = 1; S <= 7; ++S) {
    Options o = int8();
    o.slices = S;
    o.pairs = PairPolicy::Full;
    const double err = normwise_error(run_gemm('N', 'N', 1.0, A, B, 0.0, C0, o).C, ref, abs_ab);
    EXPECT_LT(err, std::ldexp(4.0, -8 * S + 6)) << "S = " << S;  // 2^(8-8S): bound with rho ~ 2^6
    if (err > 4 * u) EXPECT_LT(err, previous / 16) << "S = " << S;
    previous = err;
  }
}

// ---- transposes and layouts ----------------------------------------------------------------

class GemmLayouts
    : public ::testing::TestWithParam<std::tuple<char, char, Layout, Layout, Layout>> {};

TEST_P(GemmLayouts, WithinBoundOfReference) {
  const auto [ta, tb, la, lb, lc] = GetParam();
  Random rng(7);
  const std::int64_t M = 7, N = 5, K = 9;
  const HostMatrix A = random_operand(M, K, ta, 2.0, rng);
  const HostMatrix B = random_operand(K, N, tb, 2.0, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  Options o = int8();
  o.slices = 3;
  o.pairs = PairPolicy::Full;
  const GemmRun run = run_gemm(ta, tb, -2.0, A, la, B, lb, 0.25, C0, lc, o);
  expect_scheme_accuracy(ta, tb, -2.0, A, B, 0.25, C0, run, o);
}

INSTANTIATE_TEST_SUITE_P(
    All, GemmLayouts,
    ::testing::Combine(::testing::Values('N', 'T'), ::testing::Values('N', 'T'),
                       ::testing::Values(Layout::Left, Layout::Right, Layout::Stride),
                       ::testing::Values(Layout::Left, Layout::Right, Layout::Stride),
                       ::testing::Values(Layout::Left, Layout::Right, Layout::Stride)));

TEST(Gemm, LowerCaseAndConjugateTransposeAreAccepted) {
  Random rng(8);
  const HostMatrix A = random_host(6, 4, 0.5, rng), B = random_host(5, 6, 0.5, rng);
  const HostMatrix C0 = random_host(4, 5, 0.5, rng);
  Options o = int8();
  o.slices = 7;
  const GemmRun upper = run_gemm('T', 'T', 1.0, A, B, 0.0, C0, o);
  DeviceMatrix dA = make_matrix(6, 4, Layout::Left), dB = make_matrix(5, 6, Layout::Left),
               dC = make_matrix(4, 5, Layout::Left);
  from_host(A, dA.view);
  from_host(B, dB.view);
  ozaki::gemm(TestSpace(), "c", "t", 1.0, dA.left, dB.left, 0.0, dC.left, o);
  EXPECT_EQ(to_host(dC.view).values, upper.C.values);
}

// ---- odd sizes and exponent spread ------------------------------------------------------------

class GemmOddSizes : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(GemmOddSizes, WithinBoundOfReference) {
  const auto [M, N, K] = GetParam();
  Random rng(M * 10000 + N * 100 + K);
  const HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  Options o = int8();
  o.slices = 7;
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 1.0, C0, o);
  expect_scheme_accuracy('N', 'N', 1.0, A, B, 1.0, C0, run, o);
}

INSTANTIATE_TEST_SUITE_P(Sizes, GemmOddSizes,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(1, 129, 3),
                                           std::make_tuple(129, 1, 17), std::make_tuple(3, 17, 129),
                                           std::make_tuple(17, 129, 1),
                                           std::make_tuple(129, 129, 129)));

class GemmExponentSpread : public ::testing::TestWithParam<double> {};

TEST_P(GemmExponentSpread, RowsOfDifferentMagnitudeStayWithinBound) {
  const double phi = GetParam();
  Random rng(31);
  const std::int64_t M = 33, N = 21, K = 65;
  // Rows of A and columns of B differ by up to 2^+-60 from each other.
  const HostMatrix A =
      random_host(M, K, phi, rng, [](std::int64_t i) { return int((29 * i) % 121) - 60; });
  HostMatrix B =
      random_host(N, K, phi, rng, [](std::int64_t i) { return int((13 * i) % 121) - 60; });
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  for (int S : {4, 7, 9}) {
    Options o = int8();
    o.slices = S;
    const GemmRun run = run_gemm('N', 'T', 1.0, A, B, 0.0, C0, o);
    expect_scheme_accuracy('N', 'T', 1.0, A, B, 0.0, C0, run, o);
  }
}

INSTANTIATE_TEST_SUITE_P(Phi, GemmExponentSpread, ::testing::Values(0.5, 2.0, 4.0));

// ---- FP64-equivalent accuracy with the automatic slice count ---------------------------------

class GemmAutoSlices : public ::testing::TestWithParam<std::tuple<double, int>> {};

TEST_P(GemmAutoSlices, NoWorseThanNativeFp64) {
  const auto [phi, K] = GetParam();
  Random rng(1234 + K);
  const std::int64_t M = 48, N = 40;
  const HostMatrix A = random_host(M, K, phi, rng), B = random_host(K, N, phi, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, int8());
  const auto [err, err_native] = errors_against_reference(A, B, run.C);
  RecordProperty("slices", run.report.slices);
  if (K <= 64) {
    // The recombination's G FP64 sums alone may exceed native FP64's gamma_(K+2) at so short
    // a K: no S keeps the componentwise promise, and the call runs native FP64 GEMM.
    EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Native) << run.report.reason;
    EXPECT_TRUE(run.report.fallback);
    EXPECT_NE(run.report.reason.find("componentwise"), std::string::npos) << run.report.reason;
    EXPECT_EQ(run.report.error_bound, ozaki::Impl::native_componentwise_bound(K));
    return;
  }
  // The Report's bound holds the promise: at most native FP64's own.
  EXPECT_GT(run.report.error_bound, 0.0);
  EXPECT_LE(run.report.error_bound, ozaki::Impl::native_componentwise_bound(K));
  EXPECT_LE(err, err_native) << "phi = " << phi << ", K = " << K << ", S = " << run.report.slices
                             << ", ozaki " << err << " vs native " << err_native;
  EXPECT_GT(err_native, 0.0);
  EXPECT_GT(run.report.modeled_error, 0.0);
  EXPECT_LE(run.report.modeled_error, 0x1p-53);
  Options o = int8();
  o.slices = run.report.slices;
  expect_scheme_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run, o);
}

INSTANTIATE_TEST_SUITE_P(PhiAndK, GemmAutoSlices,
                         ::testing::Combine(::testing::Values(0.5, 2.0, 4.0),
                                            ::testing::Values(64, 1024, 4096)));

// ---- K blocking for INT32 safety ---------------------------------------------------------------

TEST(Gemm, KBeyond2To17IsChunked) {
  Random rng(17);
  const std::int64_t M = 3, N = 2, K = (1 << 17) + 8869;  // 139941
  const HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  Options o = int8();
  o.slices = 3;
  o.pairs = PairPolicy::Full;
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, o);
  // Diagonals 0..4 with 1,2,3,2,1 pairs stacked (whole padded segments); each is cut into
  // chunks of at most 131056 (max_k_block rounded down to 16).
  int expected_chunks = 0;
  const std::int64_t kpad = (K + 15) / 16 * 16;
  for (int pairs : {1, 2, 3, 2, 1}) {
    const std::int64_t length = pairs * kpad;
    expected_chunks += int((length + 131055) / 131056);
  }
  EXPECT_EQ(run.report.int8_gemms, expected_chunks);
  EXPECT_LE(run.report.k_chunk, ozaki::max_k_block);
  expect_scheme_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run, o);
}

TEST(Gemm, SmallKBlockGivesTheSameAccuracy) {
  Random rng(18);
  const HostMatrix A = random_host(9, 1000, 2.0, rng), B = random_host(1000, 7, 2.0, rng);
  const HostMatrix C0 = random_host(9, 7, 0.5, rng);
  Options o = int8();
  o.slices = 5;
  o.experimental.k_block = 100;  // rounded to 96: chunk boundaries fall inside slices
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 2.0, C0, o);
  EXPECT_EQ(run.report.k_chunk, 96);
  EXPECT_GT(run.report.int8_gemms, 5 * 10);
  expect_scheme_accuracy('N', 'N', 1.0, A, B, 2.0, C0, run, o);
}

// ---- hard numerics
// -------------------------------------------------------------------------------

TEST(Gemm, NaNAndInfGiveTheIeeeResultAndAReportedFallback) {
  Random rng(21);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int which = 0; which < 3; ++which) {
    HostMatrix A = random_host(6, 8, 0.5, rng), B = random_host(8, 5, 0.5, rng);
    const HostMatrix C0 = random_host(6, 5, 0.5, rng);
    if (which == 0) A.values[2 + 6 * 3] = nan;
    if (which == 1) B.values[4 + 8 * 1] = inf;
    if (which == 2) {
      A.values[1] = inf;
      B.values[8 * 2] = 0.0;  // Inf * 0 = NaN in column 2 of row 1
    }
    const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 1.0, C0, int8());
    EXPECT_TRUE(run.report.fallback);
    EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Native);
    EXPECT_FALSE(run.report.reason.empty());
    HostMatrix want = C0;
    ozaki::serial::dgemm('N', 'N', 1.0, A.cref(), B.cref(), 1.0, want.ref());
    for (std::size_t i = 0; i < want.values.size(); ++i) {
      const double w = want.values[i], g = run.C.values[i];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << "element " << i;
      } else if (std::isinf(w)) {
        EXPECT_EQ(g, w) << "element " << i;
      } else {
        EXPECT_NEAR(g, w, 1e-14 * (1 + std::fabs(w))) << "element " << i;
      }
    }
  }
}

TEST(Gemm, ZeroRowsAndColumns) {
  Random rng(22);
  HostMatrix A = random_host(5, 11, 0.5, rng), B = random_host(11, 4, 0.5, rng);
  for (std::int64_t k = 0; k < 11; ++k) A.values[2 + 5 * k] = 0;   // row 2 of A
  for (std::int64_t k = 0; k < 11; ++k) B.values[k + 11 * 3] = 0;  // column 3 of B
  const HostMatrix C0 = random_host(5, 4, 0.5, rng);
  Options o = int8();
  o.slices = 6;
  const GemmRun run = run_gemm('N', 'N', 2.0, A, B, -1.0, C0, o);
  for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(run.C(2, j), -C0(2, j));
  for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(run.C(i, 3), -C0(i, 3));
  expect_scheme_accuracy('N', 'N', 2.0, A, B, -1.0, C0, run, o);
  // All of A zero: C = beta C exactly.
  HostMatrix Z = A;
  for (double& z : Z.values) z = 0;
  const GemmRun zero = run_gemm('N', 'N', 2.0, Z, B, 3.0, C0, o);
  for (std::size_t i = 0; i < C0.values.size(); ++i)
    EXPECT_EQ(zero.C.values[i], 3.0 * C0.values[i]);
}

TEST(Gemm, ExtremeMagnitudesNeitherOverflowNorUnderflowSpuriously) {
  Random rng(23);
  const std::int64_t M = 4, N = 3, K = 20;
  // Rows of A near 2^960, 2^-990 and subnormal, columns of B near 2^-990, 1 and 2^40: products
  // from 2^1000 down to underflow, none overflowing.
  const HostMatrix A = random_host(M, K, 1.0, rng, [](std::int64_t i) {
    return i == 0 ? 960 : i == 1 ? -990 : i == 2 ? -1060 : 0;
  });
  const HostMatrix B = random_host(N, K, 1.0, rng, [](std::int64_t j) {
    return j == 0 ? -990 : j == 1 ? 0 : 40;
  });
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  Options o = int8();
  o.slices = 7;
  const GemmRun run = run_gemm('N', 'T', 1.0, A, B, 0.5, C0, o);
  for (double c : run.C.values) EXPECT_FALSE(std::isnan(c));
  expect_scheme_accuracy('N', 'T', 1.0, A, B, 0.5, C0, run, o);
  // A true overflow is an overflow, as in FP64 GEMM: 2^996 * 2^996 -> +Inf (positive
  // entries, so that no Inf - Inf turns it into NaN).
  HostMatrix Big = random_host(2, 3, 0.5, rng), big_b = random_host(3, 2, 0.5, rng);
  for (double& x : Big.values) x = std::ldexp(0.5 + rng.uniform(), 996);
  for (double& x : big_b.values) x = std::ldexp(0.5 + rng.uniform(), 996);
  const HostMatrix C2 = random_host(2, 2, 0.5, rng);
  const GemmRun over = run_gemm('N', 'N', 1.0, Big, big_b, 0.0, C2, o);
  HostMatrix want = C2;
  ozaki::serial::dgemm('N', 'N', 1.0, Big.cref(), big_b.cref(), 0.0, want.ref());
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    ASSERT_TRUE(std::isinf(want.values[i]));
    EXPECT_EQ(over.C.values[i], want.values[i]);
  }
}

// ---- BLAS conventions
// -----------------------------------------------------------------------------

TEST(Gemm, BetaZeroIgnoresNaNInC) {
  Random rng(24);
  const HostMatrix A = random_host(7, 9, 0.5, rng), B = random_host(9, 6, 0.5, rng);
  HostMatrix C0 = random_host(7, 6, 0.5, rng);
  for (double& c : C0.values) c = std::numeric_limits<double>::quiet_NaN();
  Options o = int8();
  o.slices = 7;
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, o);
  HostMatrix zero = C0;
  for (double& c : zero.values) c = 0;
  expect_scheme_accuracy('N', 'N', 1.0, A, B, 0.0, zero, run, o);
}

TEST(Gemm, AlphaZeroDoesNotReadAOrB) {
  Random rng(25);
  HostMatrix A = random_host(4, 5, 0.5, rng), B = random_host(5, 3, 0.5, rng);
  A.values[3] = std::numeric_limits<double>::quiet_NaN();  // would poison C if read
  B.values[2] = std::numeric_limits<double>::infinity();
  const HostMatrix C0 = random_host(4, 3, 0.5, rng);
  const GemmRun run = run_gemm('N', 'N', 0.0, A, B, -3.0, C0, int8());
  EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::None);
  for (std::size_t i = 0; i < C0.values.size(); ++i)
    EXPECT_EQ(run.C.values[i], -3.0 * C0.values[i]);
  const GemmRun zero = run_gemm('N', 'N', 0.0, A, B, 0.0, C0, int8());
  for (double c : zero.C.values) EXPECT_EQ(c, 0.0);
}

TEST(Gemm, EmptyShapes) {
  Random rng(26);
  const HostMatrix C0 = random_host(3, 4, 0.5, rng);
  // K = 0: C = beta C.
  HostMatrix A0;
  A0.rows = 3;
  HostMatrix B0;
  B0.cols = 4;
  const GemmRun k0 = run_gemm('N', 'N', 1.0, A0, B0, 2.0, C0, int8());
  for (std::size_t i = 0; i < C0.values.size(); ++i) EXPECT_EQ(k0.C.values[i], 2.0 * C0.values[i]);
  EXPECT_EQ(k0.report.algorithm, ozaki::Algorithm::None);
  // M = 0 and N = 0: nothing to do, nothing thrown.
  const HostMatrix A = random_host(0, 5, 0.5, rng), B = random_host(5, 4, 0.5, rng);
  HostMatrix C_empty;
  C_empty.cols = 4;
  EXPECT_EQ(run_gemm('N', 'N', 1.0, A, B, 1.0, C_empty, int8()).C.values.size(), 0u);
  const HostMatrix A2 = random_host(3, 5, 0.5, rng), B2 = random_host(5, 0, 0.5, rng);
  HostMatrix C_empty2;
  C_empty2.rows = 3;
  EXPECT_EQ(run_gemm('N', 'N', 1.0, A2, B2, 1.0, C_empty2, int8()).report.algorithm,
            ozaki::Algorithm::None);
}

TEST(Gemm, NativeAlgorithmMatchesFp64) {
  Random rng(27);
  for (const auto& [ta, tb, lc] :
       {std::make_tuple('N', 'N', Layout::Left), std::make_tuple('T', 'N', Layout::Right),
        std::make_tuple('N', 'T', Layout::Stride)}) {
    const HostMatrix A = random_operand(13, 31, ta, 2.0, rng);
    const HostMatrix B = random_operand(31, 11, tb, 2.0, rng);
    const HostMatrix C0 = random_host(13, 11, 0.5, rng);
    Options o = int8();
    o.algorithm = ozaki::Algorithm::Native;
    const GemmRun run = run_gemm(ta, tb, 1.25, A, Layout::Right, B, Layout::Left, 0.5, C0, lc, o);
    EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Native);
    HostMatrix ref = C0;
    ozaki::serial::dd_gemm(ta, tb, 1.25, A.cref(), B.cref(), 0.5, ref.ref());
    const auto abs_ab = abs_product(ta, tb, A, B);
    for (std::size_t i = 0; i < ref.values.size(); ++i) {
      // FP64 GEMM: |error| <= gamma_(K+2) (|alpha| |A||B| + |beta C0|).
      const double gamma = 33 * u / (1 - 33 * u);
      EXPECT_LE(std::fabs(run.C.values[i] - ref.values[i]),
                gamma * (1.25 * abs_ab[i] + 0.5 * std::fabs(C0.values[i])) +
                    u * std::fabs(ref.values[i]));
    }
  }
}

TEST(Gemm, AutoWithASliceCountTakesInt8Slices) {
  // A slice count means scheme I; with neither a slice nor a moduli count, Auto takes the
  // cheaper scheme (test_crt.cpp).
  Random rng(31);
  const HostMatrix A = random_host(20, 30, 0.5, rng), B = random_host(30, 10, 0.5, rng);
  const HostMatrix C0 = random_host(20, 10, 0.5, rng);
  Options o;
  o.slices = 6;
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, o);
  if (ozaki::Impl::Int8Gemm<TestSpace>::int8_over_fp64_throughput(TestSpace()) == 0) {
    // Host spaces: the same algorithm as on the GPU, so results can be compared.
    EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Int8Slices);
    expect_scheme_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run, o);
  } else {
    EXPECT_TRUE(run.report.algorithm == ozaki::Algorithm::Int8Slices ||
                run.report.algorithm == ozaki::Algorithm::Native)
        << run.report.reason;
  }
}

TEST(Gemm, AutoChoiceFromTheShapeIsWhatTheCallStartsWith) {
  // ozaki::auto_choice reads no data: where it says Native, the call runs native FP64 GEMM
  // with the same reason and no fallback; where it names a scheme, the call runs that scheme
  // or hands back to native with a reason (what the data needs).
  Random rng(53);
  for (const auto& [M, N, K] : {std::make_tuple(64, 48, 40), std::make_tuple(200, 150, 300),
                                std::make_tuple(33, 17, 1000), std::make_tuple(2, 300, 520)}) {
    const HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
    const HostMatrix C0 = random_host(M, N, 0.5, rng);
    std::string why = "unset";
    const ozaki::Algorithm predicted = ozaki::auto_choice(TestSpace(), M, N, K, Options{}, &why);
    const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, Options{});
    const std::string shape = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    if (predicted == ozaki::Algorithm::Native) {
      EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Native) << shape;
      EXPECT_FALSE(run.report.fallback) << shape;
      EXPECT_EQ(run.report.reason, why) << shape;
      EXPECT_FALSE(why.empty()) << shape;
    } else {
      EXPECT_TRUE(predicted == ozaki::Algorithm::Int8Crt ||
                  predicted == ozaki::Algorithm::Int8Slices)
          << shape << ": " << ozaki::to_string(predicted);
      EXPECT_TRUE(run.report.algorithm == predicted ||
                  (run.report.algorithm == ozaki::Algorithm::Native && !run.report.reason.empty()))
          << shape << ": " << ozaki::to_string(run.report.algorithm) << " " << run.report.reason;
      EXPECT_TRUE(why.empty()) << shape;
    }
  }
  Options crt;
  crt.algorithm = ozaki::Algorithm::Int8Crt;
  EXPECT_EQ(ozaki::auto_choice(TestSpace(), 100, 100, 100, crt), ozaki::Algorithm::Int8Crt);
  EXPECT_EQ(ozaki::auto_choice(TestSpace(), 0, 100, 100), ozaki::Algorithm::None);
  EXPECT_EQ(ozaki::auto_choice(TestSpace(), 100, 100, 0), ozaki::Algorithm::None);
}

TEST(Gemm, OverloadWithoutSpaceUsesTheViewsSpace) {
  Random rng(28);
  const HostMatrix A = random_host(5, 6, 0.5, rng), B = random_host(6, 4, 0.5, rng);
  const HostMatrix C0 = random_host(5, 4, 0.5, rng);
  Options o = int8();
  o.slices = 7;
  const GemmRun with_space = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, o);
  DeviceMatrix dA = make_matrix(5, 6, Layout::Left), dB = make_matrix(6, 4, Layout::Left),
               dC = make_matrix(5, 4, Layout::Left);
  from_host(A, dA.view);
  from_host(B, dB.view);
  const Report r = ozaki::gemm("N", "N", 1.0, dA.left, dB.left, 0.0, dC.left, o);
  EXPECT_EQ(r.slices, 7);
  EXPECT_EQ(to_host(dC.view).values, with_space.C.values);
}

TEST(Gemm, CublasEmulationRunsWhereAvailableElseFallsBackWithAReason) {
  Random rng(30);
  const HostMatrix A = random_host(24, 40, 0.5, rng), B = random_host(40, 16, 0.5, rng);
  const HostMatrix C0 = random_host(24, 16, 0.5, rng);
  Options o = int8();
  o.algorithm = ozaki::Algorithm::CublasEmulation;
  o.slices = 7;
  o.workspace_limit = std::int64_t(4) << 30;
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, o);
  if (ozaki::Impl::EmulationBackend<TestSpace>::available) {
    EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::CublasEmulation) << run.report.reason;
  } else {
    EXPECT_TRUE(run.report.fallback);
    EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Int8Slices);
    EXPECT_NE(run.report.reason.find("CUDA"), std::string::npos) << run.report.reason;
    expect_scheme_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run, o);
  }
}

// ---- workspace ----------------------------------------------------------------------------------

TEST(Workspace, RepeatedCallsAllocateNothingAndSeeNewContents) {
  Random rng(40);
  const std::int64_t M = 33, N = 17, K = 70;
  HostMatrix A = random_host(M, K, 0.5, rng);
  const HostMatrix B = random_host(K, N, 0.5, rng), C0 = random_host(M, N, 0.5, rng);
  DeviceMatrix dA = make_matrix(M, K, Layout::Left), dB = make_matrix(K, N, Layout::Left),
               dC = make_matrix(M, N, Layout::Left);
  from_host(A, dA.view);
  from_host(B, dB.view);
  Options o = int8();
  o.slices = 6;
  ozaki::Workspace<TestSpace> ws(TestSpace(), M, N, K, o);
  const std::int64_t allocations = ws.allocations();
  EXPECT_EQ(allocations, 1);
  EXPECT_EQ(ws.bytes(), ozaki::Workspace<TestSpace>::required_bytes(M, N, K, o));
  for (int call = 0; call < 3; ++call) {
    // Same pointer, new contents: the result must follow the contents (no cache).
    for (double& a : A.values) a = rng.spread(0.5);
    from_host(A, dA.view);
    from_host(C0, dC.view);
    GemmRun run;
    run.report = ozaki::gemm(TestSpace(), "N", "N", 1.0, dA.left, dB.left, 0.0, dC.left, o, ws);
    run.C = to_host(dC.view);
    EXPECT_EQ(ws.allocations(), allocations) << "call " << call << " allocated";
    EXPECT_LE(run.report.workspace_bytes, ws.bytes());
    expect_scheme_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run, o);
  }
}

/// Auto's first guesses are kept per thread for the last plan asked about (auto.hpp): every
/// input of the guesses is part of the question, so plans asked in turn get their own answers,
/// the same as computed afresh.
TEST(Gemm, AutoFirstGuessesAnswerEachPlanAskedInTurn) {
  using ozaki::Impl::make_plan;
  using ozaki::Impl::Shape;
  Options fp32;
  fp32.accuracy = ozaki::Accuracy::Fp32;
  Options slices5;
  slices5.slices = 5;
  Options moduli16;
  moduli16.moduli = 16;
  Options full_pairs;
  full_pairs.pairs = ozaki::PairPolicy::Full;
  std::vector<ozaki::Impl::CallPlan> plans;
  for (const std::int64_t K : {64, 1000, 8192, 65536}) {
    for (const Options& o : {Options{}, fp32, slices5, moduli16, full_pairs}) {
      plans.push_back(make_plan(Shape{256, 256, K}, o));
    }
  }
  for (int round = 0; round < 2; ++round) {
    for (const auto& plan : plans) {
      const ozaki::Impl::AutoProducts kept = ozaki::Impl::auto_products(plan);
      const ozaki::Impl::AutoProducts fresh = ozaki::Impl::guessed_products(plan);
      EXPECT_EQ(kept.scheme1, fresh.scheme1) << "K = " << plan.shape.k;
      EXPECT_EQ(kept.crt, fresh.crt) << "K = " << plan.shape.k;
    }
  }
}

TEST(Workspace, AutomaticSliceCountGrowsItOnce) {
  Random rng(41);
  const HostMatrix A = random_host(20, 300, 4.0, rng), B = random_host(300, 10, 4.0, rng);
  const HostMatrix C0 = random_host(20, 10, 0.5, rng);
  DeviceMatrix dA = make_matrix(20, 300, Layout::Left), dB = make_matrix(300, 10, Layout::Left),
               dC = make_matrix(20, 10, Layout::Left);
  from_host(A, dA.view);
  from_host(B, dB.view);
  ozaki::Workspace<TestSpace> ws{TestSpace()};
  const Report first =
      ozaki::gemm(TestSpace(), "N", "N", 1.0, dA.left, dB.left, 0.0, dC.left, int8(), ws);
  EXPECT_GT(first.slices, ozaki::Impl::assumed_auto_slices);  // wide range: more than reserved
  const std::int64_t after_first = ws.allocations();
  EXPECT_LE(after_first, 2);
  const Report second =
      ozaki::gemm(TestSpace(), "N", "N", 1.0, dA.left, dB.left, 0.0, dC.left, int8(), ws);
  EXPECT_EQ(ws.allocations(), after_first);
  EXPECT_EQ(second.slices, first.slices);
  GemmRun run{to_host(dC.view), second};
  Options o = int8();
  o.slices = second.slices;
  expect_scheme_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run, o);
}

TEST(Workspace, LimitBatchesTheProductsIntoSeveralPasses) {
  Random rng(42);
  const std::int64_t M = 40, N = 30, K = 50;
  const HostMatrix A = random_host(M, K, 2.0, rng), B = random_host(K, N, 2.0, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  Options o = int8();
  o.slices = 5;
  o.pairs = PairPolicy::Full;  // 9 diagonals
  const GemmRun one = run_gemm('N', 'N', 1.0, A, B, 0.5, C0, o);
  EXPECT_EQ(one.report.recombine_passes, 1);
  o.workspace_limit = 1;  // room for the slices and one product only
  const GemmRun many = run_gemm('N', 'N', 1.0, A, B, 0.5, C0, o);
  EXPECT_EQ(many.report.recombine_passes, 9);
  expect_scheme_accuracy('N', 'N', 1.0, A, B, 0.5, C0, many, o);
  // The minimum footprint: exponents, slices, weights and one INT32 product, with M = 40 and
  // N = 30 padded to 48 and 32 rows, K = 50 to 64 columns.
  // The column-major A is read in place: per 32-column tile (K = 50: 2 tiles) its row maxima.
  const std::size_t tiles = 2 * 8 * M;
  const std::size_t minimum = 4 * (M + N) + tiles + (48 + 32) * 5 * 64 + 8 * 9 + 4 * 48 * 32;
  EXPECT_GE(many.report.workspace_bytes, minimum);
  EXPECT_LE(many.report.workspace_bytes, minimum + 9 * ozaki::Impl::Carver::alignment);
}

TEST(Workspace, FormulaAt8192CubedFitsTenGiB) {
  // Issue requirement: 8192^3 with S = 8 fits a 10 GiB budget (computed, not allocated).
  for (PairPolicy policy : {PairPolicy::Triangular, PairPolicy::Full}) {
    Options o = int8();
    o.slices = 8;
    o.pairs = policy;
    const std::size_t bytes = ozaki::Workspace<TestSpace>::required_bytes(8192, 8192, 8192, o);
    EXPECT_LE(bytes, std::size_t(10) << 30) << ozaki::to_string(policy);
    // Slices alone: 2 * 8192 * 8 * 8192 bytes.
    EXPECT_GE(bytes, std::size_t(2) * 8192 * 8 * 8192);
  }
  Options automatic;  // S assumed 8, plus the estimate's scratch, which overlaps
  EXPECT_LE(ozaki::Workspace<TestSpace>::required_bytes(8192, 8192, 8192, automatic),
            std::size_t(10) << 30);
}

// ---- prepared operands ----------------------------------------------------------------------

TEST(Prepared, SameResultAsSplittingEveryCallAndReusable) {
  Random rng(50);
  const std::int64_t M = 37, N = 29, K = 83;
  const HostMatrix A = random_host(K, M, 2.0, rng);  // stored K x M: used as op(A) = A^T
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  DeviceMatrix dA = make_matrix(K, M, Layout::Right), dC = make_matrix(M, N, Layout::Left);
  from_host(A, dA.view);
  Options o = int8();
  o.slices = 6;
  const auto pa = ozaki::prepare(TestSpace(), ozaki::Side::A, "T", dA.right, 6);
  EXPECT_EQ(pa.rows(), M);
  EXPECT_EQ(pa.k(), K);
  EXPECT_EQ(pa.slices(), 6);
  ozaki::Workspace<TestSpace> ws{TestSpace()};
  for (int call = 0; call < 3; ++call) {
    // A new B every call against the same prepared A: equal, bit for bit, to splitting A
    // again (same digits, same schedule, same sums).
    const HostMatrix B = random_host(K, N, 2.0, rng);
    DeviceMatrix dB = make_matrix(K, N, call == 1 ? Layout::Stride : Layout::Left);
    from_host(B, dB.view);
    const GemmRun plain =
        run_gemm('T', 'N', 1.5, A, Layout::Right, B, Layout::Left, 0.5, C0, Layout::Left, o);
    from_host(C0, dC.view);
    GemmRun prepared;
    prepared.report = dB.visit([&](const auto& b) {
      return ozaki::gemm(TestSpace(), "N", "N", 1.5, pa, b, 0.5, dC.left, o, ws);
    });
    prepared.C = to_host(dC.view);
    EXPECT_EQ(prepared.report.slices, 6);
    EXPECT_EQ(prepared.C.values, plain.C.values) << "call " << call;
    expect_scheme_accuracy('T', 'N', 1.5, A, B, 0.5, C0, prepared, o);
  }
}

TEST(Prepared, BothSidesPreparedAndTheirSlicesFixS) {
  Random rng(51);
  const HostMatrix A = random_host(20, 40, 0.5, rng), B = random_host(40, 12, 0.5, rng);
  const HostMatrix C0 = random_host(20, 12, 0.5, rng);
  const DeviceMatrix dA = device_copy(A, Layout::Left), dB = device_copy(B, Layout::Left),
                     dC = device_copy(C0, Layout::Left);
  const auto pa = ozaki::prepare(TestSpace(), ozaki::Side::A, "N", dA.left, 7);
  const auto pb = ozaki::prepare(TestSpace(), ozaki::Side::B, "N", dB.left, 7);
  GemmRun run;
  run.report = ozaki::gemm(TestSpace(), "N", "N", 1.0, pa, pb, 0.0, dC.left);  // Auto, auto S
  run.C = to_host(dC.view);
  EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Int8Slices);
  EXPECT_EQ(run.report.slices, 7);
  EXPECT_EQ(run.report.estimate_int8_gemms, 0);
  Options o = int8();
  o.slices = 7;
  expect_scheme_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run, o);
}

TEST(Prepared, MisuseIsRejectedAndCUntouched) {
  Random rng(52);
  const HostMatrix A = random_host(6, 8, 0.5, rng), B = random_host(8, 5, 0.5, rng);
  const HostMatrix C0 = random_host(6, 5, 0.5, rng);
  const DeviceMatrix dA = device_copy(A, Layout::Left), dB = device_copy(B, Layout::Left),
                     dC = device_copy(C0, Layout::Left);
  const auto pa = ozaki::prepare(TestSpace(), ozaki::Side::A, "N", dA.left, 4);
  const auto pb5 = ozaki::prepare(TestSpace(), ozaki::Side::B, "N", dB.left, 5);
  auto call = [&](const char* ta, const auto& a, const auto& b, const Options& o) {
    return ozaki::gemm(TestSpace(), ta, "N", 1.0, a, b, 0.0, dC.left, o);
  };
  EXPECT_THROW(call("T", pa, dB.left, int8()), ozaki::InvalidArgument);  // op already applied
  EXPECT_THROW(call("N", pa, pb5, int8()), ozaki::InvalidArgument);      // S 4 vs 5
  Options wrong_s = int8();
  wrong_s.slices = 6;
  EXPECT_THROW(call("N", pa, dB.left, wrong_s), ozaki::InvalidArgument);
  Options native;
  native.algorithm = ozaki::Algorithm::Native;
  EXPECT_THROW(call("N", pa, dB.left, native), ozaki::InvalidArgument);
  // A raw B with NaN cannot fall back to FP64 with a prepared A.
  HostMatrix bad = B;
  bad.values[3] = std::numeric_limits<double>::quiet_NaN();
  const DeviceMatrix dBad = device_copy(bad, Layout::Left);
  EXPECT_THROW(call("N", pa, dBad.left, int8()), ozaki::InvalidArgument);
  EXPECT_EQ(to_host(dC.view).values, C0.values);
  // Preparing NaN, or a bad slice count, is refused.
  EXPECT_THROW(ozaki::prepare(TestSpace(), ozaki::Side::B, "N", dBad.left, 4),
               ozaki::InvalidArgument);
  EXPECT_THROW(ozaki::prepare(TestSpace(), ozaki::Side::A, "N", dA.left, 0),
               ozaki::InvalidArgument);
  // A prepared for A passed as B.
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", 1.0, dA.left, pa, 0.0, dC.left),
               ozaki::InvalidArgument);
}

// ---- bad input: a clear exception, C untouched --------------------------------------------------

class GemmRejects : public ::testing::Test {
 protected:
  void SetUp() override {
    Random rng(29);
    A = make_matrix(6, 5, Layout::Left);
    B = make_matrix(5, 4, Layout::Left);
    C = make_matrix(6, 4, Layout::Left);
    from_host(random_host(6, 5, 0.5, rng), A.view);
    from_host(random_host(5, 4, 0.5, rng), B.view);
    C0 = random_host(6, 4, 0.5, rng);
    from_host(C0, C.view);
  }
  void expect_c_untouched() { EXPECT_EQ(to_host(C.view).values, C0.values); }

  DeviceMatrix A, B, C;
  HostMatrix C0;
};

TEST_F(GemmRejects, MismatchedShapes) {
  EXPECT_THROW(ozaki::gemm(TestSpace(), "T", "N", 1.0, A.left, B.left, 0.0, C.left),
               ozaki::InvalidArgument);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "T", 1.0, A.left, B.left, 0.0, C.left),
               ozaki::InvalidArgument);
  DeviceMatrix wrong_c = make_matrix(4, 6, Layout::Left);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", 1.0, A.left, B.left, 0.0, wrong_c.left),
               ozaki::InvalidArgument);
  expect_c_untouched();
}

TEST_F(GemmRejects, CAliasingAOrB) {
  DeviceMatrix square = make_matrix(5, 5, Layout::Left);
  DeviceMatrix other = make_matrix(5, 5, Layout::Left);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", 1.0, square.left, other.left, 0.0, square.left),
               ozaki::InvalidArgument);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", 1.0, other.left, square.left, 1.0, square.left),
               ozaki::InvalidArgument);
  // A C that is a subview overlapping B's storage.
  auto c_in_b = Kokkos::subview(square.left, Kokkos::make_pair(0, 5), Kokkos::make_pair(1, 3));
  auto b_part = Kokkos::subview(square.left, Kokkos::make_pair(0, 2), Kokkos::make_pair(2, 4));
  DeviceMatrix a52 = make_matrix(5, 2, Layout::Left);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", 1.0, a52.left, b_part, 0.0, c_in_b),
               ozaki::InvalidArgument);
}

// Blocks of one matrix that share no element are not aliases (a blocked factorization's
// A22 -= A21 A12): the call runs, bitwise equal to the same call on separate copies, in both
// layouts and with a transposed block; blocks that share an element are still refused.
TEST_F(GemmRejects, DisjointBlocksOfOneMatrixAreNotAliases) {
  Random rng(41);
  const HostMatrix h = random_host(40, 40, 1.0, rng);
  Options crt;
  crt.algorithm = ozaki::Algorithm::Int8Crt;
  for (Layout layout : {Layout::Left, Layout::Right}) {
    for (const char* ta : {"N", "T"}) {
      SCOPED_TRACE(std::string(name(layout)) + " " + ta);
      DeviceMatrix whole = device_copy(h, layout);
      using P = std::pair<int, int>;
      auto block = [&](P rows, P cols) { return Kokkos::subview(whole.view, rows, cols); };
      const auto a = ta[0] == 'N' ? block(P(20, 40), P(0, 20)) : block(P(0, 20), P(20, 40));
      const auto b = block(P(0, 20), P(20, 40));
      const auto c = block(P(20, 40), P(20, 40));
      DeviceMatrix a_copy = device_copy(to_host(a), Layout::Left);
      DeviceMatrix b_copy = device_copy(to_host(b), Layout::Left);
      DeviceMatrix c_copy = device_copy(to_host(c), Layout::Left);
      ozaki::gemm(TestSpace(), ta, "N", -1.0, a_copy.view, b_copy.view, 1.0, c_copy.view, crt);
      ozaki::gemm(TestSpace(), ta, "N", -1.0, a, b, 1.0, c, crt);
      EXPECT_EQ(to_host(c).values, to_host(c_copy.view).values);
      // Rows 20..29 and columns 15..19 of the matrix lie in both.
      const HostMatrix before = to_host(whole.view);
      EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", -1.0, block(P(10, 30), P(0, 20)),
                               block(P(0, 20), P(20, 40)), 1.0, block(P(20, 40), P(15, 35)), crt),
                   ozaki::InvalidArgument);
      EXPECT_EQ(to_host(whole.view).values, before.values);
    }
  }
}

// Overlap is decided from the last element's address, not View::span(): a strided C whose
// extent-times-stride box reaches past its last element into an operand is not an alias.
TEST_F(GemmRejects, OperandPastTheLastElementOfAStridedCIsNotAnAlias) {
  using Strided = Kokkos::View<double**, Kokkos::LayoutStride, MemSpace>;
  Kokkos::View<double*, MemSpace> memory("memory", 64);
  // C: 2 x 3 with column stride 10 from offset 5 (elements 5, 6, 15, 16, 25, 26; span() 30);
  // A: 2 x 2 column-major at offset 27, inside C's box, outside its elements.
  const Strided c(memory.data() + 5, Kokkos::LayoutStride(2, 1, 3, 10));
  const Strided a(memory.data() + 27, Kokkos::LayoutStride(2, 1, 2, 2));
  Random rng(43);
  const HostMatrix ha = random_host(2, 2, 1.0, rng), hb = random_host(2, 3, 1.0, rng);
  from_host(ha, a);
  DeviceMatrix b = device_copy(hb, Layout::Left);
  ozaki::gemm(TestSpace(), "N", "N", 1.0, a, b.view, 0.0, c);
  const HostMatrix got = to_host(c);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(got(i, j), ha(i, 0) * hb(0, j) + ha(i, 1) * hb(1, j),
                  1e-15 * (std::fabs(ha(i, 0) * hb(0, j)) + std::fabs(ha(i, 1) * hb(1, j))));
}

TEST_F(GemmRejects, InvalidOptions) {
  auto call = [&](const Options& o) {
    return ozaki::gemm(TestSpace(), "N", "N", 1.0, A.left, B.left, 1.0, C.left, o);
  };
  Options o = int8();
  o.slices = 17;
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o.slices = -1;
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o.slices = 0;  // no longer "automatic": that is an empty count
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o = int8();
  o.experimental.k_block = ozaki::max_k_block + 1;
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o.experimental.k_block = 15;  // below one 16-byte aligned block
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o = int8();
  o.slices = 3;
  o.pairs = PairPolicy::Count;
  o.pair_count = 10;  // > S^2
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o.pair_count = 0;
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o.pair_count.reset();  // PairPolicy::Count needs a count
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o = int8();
  o.workspace_limit = 0;  // no longer "the library's choice": that is an empty limit
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o = int8();
  o.experimental.crt_pass_columns = 0;
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o = int8();
  o.experimental.complex_products = static_cast<ozaki::Experimental::ComplexProducts>(5);
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o = int8();
  o.algorithm = static_cast<ozaki::Algorithm>(99);
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  o = int8();
  o.pairs = static_cast<PairPolicy>(42);
  EXPECT_THROW(call(o), ozaki::InvalidArgument);
  expect_c_untouched();
}

TEST_F(GemmRejects, UnknownTranspose) {
  EXPECT_THROW(ozaki::gemm(TestSpace(), "X", "N", 1.0, A.left, B.left, 1.0, C.left),
               ozaki::InvalidArgument);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "", 1.0, A.left, B.left, 1.0, C.left),
               ozaki::InvalidArgument);
  expect_c_untouched();
}

}  // namespace
