// Complex GEMM (Kokkos::complex<double> Views) on the test space against the serial oracle
// (backends/serial/ozaki/serial/complex.hpp): the real embedding bit for bit, the complex
// call bitwise equal to the real call on the embedding, scheme II within the documented
// bound of a double-double reference, native ZGEMM, every transpose (N, T, C) and layout,
// complex alpha and beta, NaN/Inf, bad arguments, workspaces, and the same bits on the host.

#include "complex_common.hpp"

#include <ozaki/serial/complex.hpp>
#include <ozaki/serial/crt.hpp>

#include <complex>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>

namespace {

using namespace ozaki_test;
using ozaki::Algorithm;
using ozaki::CrtScaling;
using ozaki::Options;
using V = ozaki::Impl::Views<TestSpace>;

constexpr double u = 0x1p-53;

Options crt(std::optional<int> L, CrtScaling scaling = CrtScaling::Auto) {
  Options o;
  o.algorithm = Algorithm::Int8Crt;
  o.moduli = L;
  o.crt_scaling = scaling;
  return o;
}

HostZ shaped(std::int64_t rows, std::int64_t cols, char trans, double phi, Random& rng) {
  return trans == 'N' ? random_z(rows, cols, phi, rng) : random_z(cols, rows, phi, rng);
}

void expect_bitwise(const HostZ& got, const HostZ& want, const std::string& what) {
  ASSERT_EQ(got.values.size(), want.values.size());
  for (std::size_t i = 0; i < got.values.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got.values[i], &want.values[i], sizeof(zdouble)), 0)
        << what << ": entry " << i << " is " << got.values[i] << ", expected " << want.values[i];
  }
}

/// |Re| and |Im| of C - (alpha op(A) op(B) + beta C0) within the oracle's bound of scheme II
/// (part by part, through the embedding) plus the rounding of the complex update, against a
/// double-double reference; and C close to the oracle's own scheme II.
void expect_crt_accuracy(char ta, char tb, zdouble alpha, const HostZ& A, const HostZ& B,
                         zdouble beta, const HostZ& C0, const ZRun& run) {
  ASSERT_EQ(run.report.algorithm, Algorithm::Int8Crt) << run.report.reason;
  const int L = run.report.moduli;
  const CrtScaling scaling = run.report.crt_scaling;
  HostZ ref = C0, oracle = C0, product = C0;
  ozaki::serial::zdd_gemm(ta, tb, alpha, A.cref(), B.cref(), beta, ref.ref());
  ozaki::serial::zdd_gemm(ta, tb, 1.0, A.cref(), B.cref(), 0.0, product.ref());
  const ozaki::serial::CrtScale scale =
      ozaki::serial::crt_zgemm(ta, tb, alpha, A.cref(), B.cref(), beta, oracle.ref(), L, scaling);
  const ozaki::serial::ComplexBound bound =
      ozaki::serial::crt_zproduct_bound(ta, tb, A.cref(), B.cref(), scale);
  for (std::size_t i = 0; i < run.C.values.size(); ++i) {
    const zdouble got = run.C.values[i];
    ASSERT_TRUE(std::isfinite(got.real()) && std::isfinite(got.imag())) << i;
    // The update alpha P + beta C0 rounds a few times in each part.
    const double update =
        4 * u *
        (std::abs(alpha) * std::abs(product.values[i]) + std::abs(beta) * std::abs(C0.values[i]));
    const double re_bound =
        std::fabs(alpha.real()) * bound.re[i] + std::fabs(alpha.imag()) * bound.im[i] + update;
    const double im_bound =
        std::fabs(alpha.real()) * bound.im[i] + std::fabs(alpha.imag()) * bound.re[i] + update;
    ASSERT_LE(std::fabs(got.real() - ref.values[i].real()), re_bound)
        << "Re C[" << i << "]: " << got << " vs " << ref.values[i] << ", " << L << " moduli, "
        << ozaki::to_string(scaling);
    ASSERT_LE(std::fabs(got.imag() - ref.values[i].imag()), im_bound)
        << "Im C[" << i << "]: " << got << " vs " << ref.values[i] << ", " << L << " moduli, "
        << ozaki::to_string(scaling);
    ASSERT_LE(std::fabs(got.real() - oracle.values[i].real()), 2 * re_bound) << i;
    ASSERT_LE(std::fabs(got.imag() - oracle.values[i].imag()), 2 * im_bound) << i;
  }
}

/// Normwise error max |c - ref| / (|A||B|)_mn with complex moduli.
double normwise_z(char ta, char tb, const HostZ& A, const HostZ& B, const HostZ& C,
                  const HostZ& ref) {
  const auto a = ozaki::serial::zop(A.cref(), ta), b = ozaki::serial::zop(B.cref(), tb);
  double worst = 0;
  for (std::int64_t n = 0; n < C.cols; ++n) {
    for (std::int64_t m = 0; m < C.rows; ++m) {
      double d = 0;
      for (std::int64_t k = 0; k < a.cols(); ++k) d += std::abs(a(m, k)) * std::abs(b(k, n));
      const double e = std::abs(C(m, n) - ref(m, n));
      worst = std::max(worst, d > 0 ? e / d : e);
    }
  }
  return worst;
}

// ---- the embedding -----------------------------------------------------------------------

TEST(ComplexEmbedding, KernelMatchesTheOracleBitForBit) {
  Random rng(700);
  const std::int64_t M = 19, N = 7, K = 33;
  for (char ta : {'N', 'T', 'C'}) {
    for (Layout la : {Layout::Left, Layout::Right, Layout::Stride}) {
      const HostZ A = shaped(M, K, ta, 2.0, rng);
      const HostZ B = random_z(K, N, 2.0, rng);
      const ozaki::serial::ComplexEmbedding want =
          ozaki::serial::embed(ta, 'N', A.cref(), B.cref());
      const DeviceZ<TestSpace> dA(A, la);
      const V::ConstComplexMatrix opA = ozaki::Impl::transposed_if(
          V::ConstComplexMatrix(dA.view.data(), dA.view.layout()), ta != 'N');
      V::Rows doubled("doubled", 2 * M, 2 * K), single("single", M, 2 * K);
      ozaki::Impl::embed_complex_rows(TestSpace(), opA, ta == 'C', true, doubled);
      ozaki::Impl::embed_complex_rows(TestSpace(), opA, ta == 'C', false, single);
      const auto hd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), doubled);
      const auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), single);
      for (std::int64_t r = 0; r < 2 * M; ++r)
        for (std::int64_t j = 0; j < 2 * K; ++j)
          ASSERT_EQ(hd(r, j), want.x[r * 2 * K + j])
              << ta << " " << name(la) << " " << r << "," << j;
      // The undoubled rows of op(A) are Y_e's form: (Re, Im) pairs.
      for (std::int64_t r = 0; r < M; ++r)
        for (std::int64_t k = 0; k < K; ++k) {
          ASSERT_EQ(hs(r, 2 * k), want.x[2 * r * 2 * K + 2 * k]);
          ASSERT_EQ(hs(r, 2 * k + 1), want.x[(2 * r + 1) * 2 * K + 2 * k]);
        }
    }
  }
}

/// Karatsuba's residues: those of the real parts and of the imaginary parts are the oracle's
/// residues of each part's matrix with the same bits, and the third block is their sum's; of
/// the conjugates (herk's conjugated side) with the imaginary parts negated.
TEST(ComplexKaratsuba, ResiduesMatchTheOracleBitForBit) {
  Random rng(705);
  const std::int64_t M = 21, K = 45;
  for (const int L : {8, 14, 20}) {
    for (const bool conjugate : {false, true}) {
      const HostZ A = random_z(M, K, 2.0, rng);
      // The undoubled embedding X_u (M x 2K) of the test space's kernel.
      const DeviceZ<TestSpace> dA(A, Layout::Right);
      const V::ConstComplexMatrix X(dA.view.data(), dA.view.layout());
      V::Rows xu("xu", M, 2 * K);
      ozaki::Impl::embed_complex_rows(TestSpace(), X, false, false, xu);
      // Bits: any valid choice serves; take the oracle's fast rule on the real parts.
      HostMatrix re, im;
      re.rows = im.rows = M;
      re.cols = im.cols = K;
      for (const zdouble& z : A.values) {
        re.values.push_back(z.real());
        im.values.push_back(z.imag());
      }
      std::vector<int> bits(M), exponents(M);
      for (std::int64_t m = 0; m < M; ++m) {
        double mu = 0;
        for (std::int64_t k = 0; k < K; ++k)
          mu = std::max({mu, std::fabs(re(m, k)), std::fabs(im(m, k))});
        exponents[m] = ozaki::serial::scale_exponent(mu);
        bits[m] = 40 + static_cast<int>(m % 9);
      }
      V::Exponents dexp("exponents", M), dbits("bits", M);
      Kokkos::deep_copy(dexp, Kokkos::View<const int*, Kokkos::HostSpace>(exponents.data(), M));
      Kokkos::deep_copy(dbits, Kokkos::View<const int*, Kokkos::HostSpace>(bits.data(), M));
      const ozaki::Impl::CrtConstants constants = ozaki::Impl::make_crt_constants(L);
      const std::int64_t kpad = ozaki::Impl::padded_k(K, 16);
      V::Digits residues("residues", ozaki::Impl::padded_rows(M, 16), 3 * L * kpad);
      ozaki::Impl::crt_complex_residues(TestSpace(), ozaki::Impl::k_contiguous_rows<TestSpace>(xu),
                                        ozaki::Impl::CrtRowScaling<TestSpace>{dexp, dbits},
                                        constants, residues, conjugate);
      const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), residues);
      // The oracle's scaled integers (__int128) with the complex row's exponent, reduced here.
      auto symmetric = [](__int128 x, int modulus) {
        int r = static_cast<int>(x % modulus);
        if (r < 0) r += modulus;
        if (r > modulus / 2) r -= modulus;
        return static_cast<std::int8_t>(r);  // 128 (modulus 256) is stored as -128
      };
      for (std::int64_t m = 0; m < M; ++m) {
        for (int l = 0; l < L; ++l) {
          const int modulus = ozaki::crt_moduli[l];
          for (std::int64_t k = 0; k < kpad; ++k) {
            const std::int8_t r_re = got(m, (3 * l) * kpad + k),
                              r_im = got(m, (3 * l + 1) * kpad + k);
            const std::int8_t r_sum = got(m, (3 * l + 2) * kpad + k);
            if (k >= K) {
              ASSERT_EQ(r_re | r_im | r_sum, 0);
              continue;
            }
            const __int128 x_re =
                ozaki::serial::crt_scaled_integer(re(m, k), exponents[m], bits[m]);
            const __int128 x_im = ozaki::serial::crt_scaled_integer(
                conjugate ? -im(m, k) : im(m, k), exponents[m], bits[m]);
            ASSERT_EQ(r_re, symmetric(x_re, modulus)) << "Re, row " << m << ", modulus " << l;
            ASSERT_EQ(r_im, symmetric(x_im, modulus)) << "Im, row " << m << ", modulus " << l;
            ASSERT_EQ(r_sum, symmetric(x_re + x_im, modulus))
                << "sum, row " << m << ", modulus " << l;
          }
        }
      }
    }
  }
}

/// The complex call is the real call on the embedding: bitwise the same C, for every
/// algorithm that the real path runs (the direct path with real alpha and beta writes C as
/// doubles; complex alpha goes through scratch and the complex update).
TEST(Complex, IsTheRealCallOnTheEmbeddingBitForBit) {
  Random rng(701);
  const std::int64_t M = 23, N = 17, K = 45;
  std::vector<Options> options = {crt(13, CrtScaling::Fast), crt(15, CrtScaling::Accurate),
                                  crt(ozaki::auto_moduli)};
  for (Options four : {crt(13, CrtScaling::Fast), crt(ozaki::auto_moduli)}) {
    four.experimental.complex_products = ozaki::Experimental::ComplexProducts::Embedding;
    options.push_back(four);
  }
  Options slices;
  slices.algorithm = Algorithm::Int8Slices;
  slices.slices = 7;
  options.push_back(slices);
  for (const Options& o : options) {
    // (A purely imaginary alpha, and beta, have real part 0: no shortcut may take that for 0.)
    for (const zdouble alpha : {zdouble(1.5, 0), zdouble(0.75, -2.0), zdouble(0.0, -1.25)}) {
      for (const char ta : {'N', 'C'}) {
        for (const char tb : {'N', 'T', 'C'}) {
          const HostZ A = shaped(M, K, ta, 1.0, rng), B = shaped(K, N, tb, 1.0, rng);
          const HostZ C0 = random_z(M, N, 0.5, rng);
          const zdouble beta = alpha.imag() == 0   ? zdouble(-0.5, 0)
                               : alpha.real() == 0 ? zdouble(0.0, 0.5)
                                                   : zdouble(0.25, 0.5);
          const ZRun run = run_z(ta, tb, alpha, A, B, beta, C0, o);
          ASSERT_NE(run.report.algorithm, Algorithm::Native) << run.report.reason;
          if (run.report.algorithm == Algorithm::Int8Crt) {
            // Karatsuba runs only the fast rule, and always where a fixed count asks for the
            // fast rule and 3 products; an automatic count on data whose rows the coverage
            // certificate cannot bound takes the embedding (the counted fast rule there).
            const bool fast = run.report.crt_scaling == CrtScaling::Fast;
            if (run.report.complex_products == 3) EXPECT_TRUE(fast);
            if (o.moduli != ozaki::auto_moduli && o.crt_scaling == CrtScaling::Fast)
              EXPECT_EQ(run.report.complex_products,
                        static_cast<int>(o.experimental.complex_products));
          }
          // The same computation as a real call on the host-made embedding.
          const ozaki::serial::ComplexEmbedding e =
              ozaki::serial::embed(ta, tb, A.cref(), B.cref());
          HostMatrix Xe, Ye, Ce;
          Xe.rows = 2 * M, Xe.cols = 2 * K, Ye.rows = N, Ye.cols = 2 * K;
          Xe.values.resize(e.x.size());
          Ye.values.resize(e.y.size());
          for (std::int64_t r = 0; r < 2 * M; ++r)
            for (std::int64_t j = 0; j < 2 * K; ++j) Xe.values[r + j * 2 * M] = e.x[r * 2 * K + j];
          for (std::int64_t r = 0; r < N; ++r)
            for (std::int64_t j = 0; j < 2 * K; ++j) Ye.values[r + j * N] = e.y[r * 2 * K + j];
          Ce.rows = 2 * M, Ce.cols = N;
          Ce.values.resize(static_cast<std::size_t>(2 * M * N));
          const bool direct = alpha.imag() == 0 && beta.imag() == 0;
          for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t m = 0; m < M; ++m) {
              Ce.values[2 * m + n * 2 * M] = direct ? C0(m, n).real() : 0.0;
              Ce.values[2 * m + 1 + n * 2 * M] = direct ? C0(m, n).imag() : 0.0;
            }
          const GemmRun real =
              run_gemm('N', 'T', direct ? alpha.real() : 1.0, Xe, Layout::Right, Ye, Layout::Right,
                       direct ? beta.real() : 0.0, Ce, Layout::Left, run.report.options);
          EXPECT_EQ(real.report.algorithm, run.report.algorithm);
          HostZ want = C0;
          for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t m = 0; m < M; ++m) {
              const zdouble p(real.C(2 * m, n), real.C(2 * m + 1, n));
              if (direct) {
                want.values[m + n * M] = p;
              } else {
                const auto times = [](zdouble x, zdouble y) {
                  return zdouble(x.real() * y.real() - x.imag() * y.imag(),
                                 x.real() * y.imag() + x.imag() * y.real());
                };
                want.values[m + n * M] = times(alpha, p) + times(beta, C0(m, n));
              }
            }
          expect_bitwise(run.C, want,
                         std::string(1, ta) + std::string(1, tb) + " " +
                             ozaki::to_string(run.report.algorithm));
        }
      }
    }
  }
}

TEST(Complex, KContiguousRowsAreReadInPlace) {
  // op(B)^T of a column-major B has K-contiguous rows: unconjugated, they are the embedding's
  // undoubled rows themselves (complex_rows_in_place), so the call needs no copy of them, 16 N
  // K bytes less than with op(B) conjugated (whose rows are copied); op(A) of a row-major A
  // likewise, under Karatsuba.  (The bits of both forms are checked by
  // IsTheRealCallOnTheEmbeddingBitForBit.)
  Random rng(707);
  const std::int64_t M = 40, N = 36, K = 300;
  const HostZ A = random_z(M, K, 0.5, rng), C0 = random_z(M, N, 0.5, rng);
  const HostZ B = random_z(K, N, 0.5, rng), Bc = random_z(N, K, 0.5, rng);  // op(B) = Bc^H
  const Options o = crt(14, CrtScaling::Fast);
  const auto bytes = [&](char tb, Layout la) {
    const ZRun run = run_z('N', tb, zdouble(1, 0), A, la, tb == 'N' ? B : Bc, Layout::Left,
                           zdouble(0, 0), C0, Layout::Left, o);
    EXPECT_EQ(run.report.complex_products, 3) << run.report.reason;
    return static_cast<std::int64_t>(run.report.workspace_bytes);
  };
  const std::int64_t align = ozaki::Impl::Carver::alignment;
  const std::int64_t in_place = bytes('N', Layout::Left), copied = bytes('C', Layout::Left);
  EXPECT_GE(copied - in_place, 16 * N * K - align);
  EXPECT_LE(copied - in_place, 16 * N * K + align);
  const std::int64_t both = bytes('N', Layout::Right);
  EXPECT_GE(in_place - both, 16 * M * K - align);
  EXPECT_LE(in_place - both, 16 * M * K + align);
}

// ---- scheme II end to end ------------------------------------------------------------------

class ComplexCrt : public ::testing::TestWithParam<std::tuple<int, double, CrtScaling>> {};

TEST_P(ComplexCrt, WithinBoundOfReference) {
  const auto [L, phi, scaling] = GetParam();
  Random rng(710 + L + static_cast<int>(phi));
  const std::int64_t M = 13, N = 11, K = 37;
  const HostZ A = random_z(M, K, phi, rng), B = random_z(K, N, phi, rng);
  const HostZ C0 = random_z(M, N, 0.5, rng);
  const zdouble alpha(1.25, -0.5), beta(-0.5, 0.75);
  const ZRun run = run_z('N', 'N', alpha, A, B, beta, C0, crt(L, scaling));
  EXPECT_EQ(run.report.moduli, L);
  EXPECT_EQ(run.report.crt_scaling, scaling);
  expect_crt_accuracy('N', 'N', alpha, A, B, beta, C0, run);
}

INSTANTIATE_TEST_SUITE_P(
    ModuliAndSpread, ComplexCrt,
    ::testing::Combine(::testing::Values(10, 14, 18), ::testing::Values(0.5, 4.0),
                       ::testing::Values(CrtScaling::Fast, CrtScaling::Accurate)));

TEST(Complex, EveryTransposeAndLayoutWithinBound) {
  Random rng(720);
  const std::int64_t M = 14, N = 9, K = 26;
  for (const char ta : {'N', 'T', 'C'}) {
    for (const char tb : {'N', 'T', 'C'}) {
      for (const Layout la : {Layout::Left, Layout::Right, Layout::Stride}) {
        for (const Layout lc : {Layout::Left, Layout::Right, Layout::Stride}) {
          const HostZ A = shaped(M, K, ta, 1.0, rng), B = shaped(K, N, tb, 1.0, rng);
          const HostZ C0 = random_z(M, N, 0.5, rng);
          const Layout lb = la == Layout::Left ? Layout::Right : Layout::Left;
          const zdouble alpha(-1.0, 0.0), beta(2.0, 0.0);
          const ZRun run =
              run_z(ta, tb, alpha, A, la, B, lb, beta, C0, lc, crt(14, CrtScaling::Accurate));
          SCOPED_TRACE(std::string(1, ta) + std::string(1, tb) + " A " + name(la) + " C " +
                       name(lc));
          expect_crt_accuracy(ta, tb, alpha, A, B, beta, C0, run);
        }
      }
    }
  }
}

/// Data that needs the accurate rule (wide exponent ranges with an automatic count) leaves
/// Karatsuba before anything is written and runs on the embedding, which the Report says.
TEST(Complex, WideRangesTakeTheEmbeddingUnderTheAccurateRule) {
  Random rng(725);
  const std::int64_t M = 24, N = 20, K = 300;
  const HostZ A = random_z(M, K, 4.0, rng), B = random_z(K, N, 4.0, rng);
  const HostZ C0 = random_z(M, N, 0.5, rng);
  for (const CrtScaling scaling : {CrtScaling::Fast, CrtScaling::Auto}) {
    const zdouble alpha(2.0, 0.0), beta(0.5, 0.0);
    const ZRun run = run_z('N', 'N', alpha, A, B, beta, C0, crt(ozaki::auto_moduli, scaling));
    EXPECT_EQ(run.report.crt_scaling, CrtScaling::Accurate);
    EXPECT_EQ(run.report.complex_products, 4);
    EXPECT_NE(run.report.reason.find("Karatsuba"), std::string::npos) << run.report.reason;
    expect_crt_accuracy('N', 'N', alpha, A, B, beta, C0, run);
    // The same with 3 products fixed and the fast rule: Karatsuba.
    const ZRun fast = run_z('N', 'N', alpha, A, B, beta, C0, crt(20, CrtScaling::Fast));
    EXPECT_EQ(fast.report.complex_products, 3);
    expect_crt_accuracy('N', 'N', alpha, A, B, beta, C0, fast);
  }
}

/// Rows near overflow and in the subnormal range, and zero rows and columns: within the
/// bound under both forms (the fast rule runs Karatsuba, the accurate rule the embedding).
TEST(Complex, ExtremeMagnitudesAndZeroRowsWithinBound) {
  Random rng(727);
  const std::int64_t M = 6, N = 4, K = 20;
  HostZ A = random_z(M, K, 1.0, rng), B = random_z(K, N, 1.0, rng);
  const int row_shift[M] = {960, -990, -1060, 900, 0, 0};
  const int col_shift[N] = {-990, 0, 40, 0};
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t m = 0; m < M; ++m) {
      zdouble& a = A.values[m + k * M];
      a = m == 5 ? zdouble(0, 0)
                 : zdouble(std::ldexp(a.real(), row_shift[m]), std::ldexp(a.imag(), row_shift[m]));
    }
    for (std::int64_t n = 0; n < N; ++n) {
      zdouble& b = B.values[k + n * K];
      b = n == 3 ? zdouble(0, 0)
                 : zdouble(std::ldexp(b.real(), col_shift[n]), std::ldexp(b.imag(), col_shift[n]));
    }
  }
  const HostZ C0 = random_z(M, N, 0.5, rng);
  for (const CrtScaling scaling : {CrtScaling::Fast, CrtScaling::Accurate}) {
    const zdouble alpha(1.0, -0.5), beta(0.5, 0.0);
    const ZRun run = run_z('N', 'N', alpha, A, B, beta, C0, crt(16, scaling));
    EXPECT_EQ(run.report.complex_products, scaling == CrtScaling::Fast ? 3 : 4);
    expect_crt_accuracy('N', 'N', alpha, A, B, beta, C0, run);
    // The zero row and column give beta C0 exactly.
    for (std::int64_t n = 0; n < N; ++n) {
      const zdouble want(0.5 * C0(5, n).real(), 0.5 * C0(5, n).imag());
      EXPECT_EQ(run.C(5, n), want) << n;
    }
    for (std::int64_t m = 0; m < M; ++m) {
      const zdouble want(0.5 * C0(m, 3).real(), 0.5 * C0(m, 3).imag());
      EXPECT_EQ(run.C(m, 3), want) << m;
    }
  }
}

TEST(Complex, AutomaticCountNoWorseThanNativeZgemm) {
  for (const double phi : {0.5, 2.0}) {
    Random rng(730 + static_cast<int>(phi));
    const std::int64_t M = 40, N = 32, K = 700;
    const HostZ A = random_z(M, K, phi, rng), B = shaped(K, N, 'C', phi, rng);
    const HostZ C0 = random_z(M, N, 0.5, rng);
    const ZRun run = run_z('N', 'C', 1.0, A, B, 0.0, C0, crt(ozaki::auto_moduli));
    HostZ ref = C0, native = C0;
    ozaki::serial::zdd_gemm('N', 'C', 1.0, A.cref(), B.cref(), 0.0, ref.ref());
    ozaki::serial::zgemm('N', 'C', 1.0, A.cref(), B.cref(), 0.0, native.ref());
    const double err = normwise_z('N', 'C', A, B, run.C, ref);
    const double err_native = normwise_z('N', 'C', A, B, native, ref);
    EXPECT_GT(err_native, 0.0);
    EXPECT_LE(err, err_native) << "phi " << phi << ": " << run.report.moduli << " moduli";
    expect_crt_accuracy('N', 'C', 1.0, A, B, 0.0, C0, run);
  }
}

TEST(Complex, AutoChoiceFromTheShapeIsWhatTheCallStartsWith) {
  // The complex shape's decision (Karatsuba's plan, or the embedding's under the accurate
  // rule) is the one the complex call makes before it reads any data.
  Random rng(741);
  for (const auto& [M, N, K] : {std::make_tuple(40, 32, 700), std::make_tuple(3, 90, 64)}) {
    for (const ozaki::CrtScaling rule : {ozaki::CrtScaling::Auto, ozaki::CrtScaling::Accurate}) {
      Options o;
      o.crt_scaling = rule;
      const HostZ A = random_z(M, K, 0.5, rng), B = random_z(K, N, 0.5, rng);
      const HostZ C0 = random_z(M, N, 0.5, rng);
      std::string why;
      const ozaki::Algorithm predicted = ozaki::auto_choice<KC>(TestSpace(), M, N, K, o, &why);
      const ZRun run = run_z('N', 'N', 1.0, A, B, 0.0, C0, o);
      if (predicted == ozaki::Algorithm::Native) {
        EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Native);
        EXPECT_FALSE(run.report.fallback);
        EXPECT_EQ(run.report.reason, why);
      } else {
        // (A scheme other than Karatsuba's scheme II runs on the embedding, whose real call
        // chooses again between the INT8 schemes.)
        EXPECT_TRUE(
            run.report.algorithm == ozaki::Algorithm::Int8Crt ||
            run.report.algorithm == ozaki::Algorithm::Int8Slices ||
            (run.report.algorithm == ozaki::Algorithm::Native && !run.report.reason.empty()))
            << ozaki::to_string(run.report.algorithm) << " " << run.report.reason;
      }
    }
  }
}

TEST(Complex, Int8SlicesAndAutoNoWorseThanNativeZgemm) {
  Random rng(735);
  const std::int64_t M = 30, N = 26, K = 300;
  const HostZ A = random_z(K, M, 0.5, rng), B = random_z(K, N, 0.5, rng);  // op(A) = A^T
  const HostZ C0 = random_z(M, N, 0.5, rng);
  HostZ ref = C0, native = C0;
  ozaki::serial::zdd_gemm('T', 'N', 1.0, A.cref(), B.cref(), 0.0, ref.ref());
  ozaki::serial::zgemm('T', 'N', 1.0, A.cref(), B.cref(), 0.0, native.ref());
  const double err_native = normwise_z('T', 'N', A, B, native, ref);
  EXPECT_GT(err_native, 0.0);
  Options slices;
  slices.algorithm = Algorithm::Int8Slices;
  Options native_options;
  native_options.algorithm = Algorithm::Native;
  const ZRun zgemm = run_z('T', 'N', 1.0, A, B, 0.0, C0, native_options);
  for (const Options& o : {slices, Options{}}) {
    const ZRun run = run_z('T', 'N', 1.0, A, B, 0.0, C0, o);
    if (run.report.algorithm == Algorithm::Native) {
      // Auto found native ZGEMM fastest here (host spaces): exactly what Native gives.
      expect_bitwise(run.C, zgemm.C, "Auto's native choice against Algorithm::Native");
    } else {
      const double err = normwise_z('T', 'N', A, B, run.C, ref);
      EXPECT_LE(err, err_native) << ozaki::to_string(run.report.algorithm) << ": " << err
                                 << " vs native " << err_native;
    }
  }
}

// ---- native ZGEMM --------------------------------------------------------------------------

TEST(Complex, NativeIsZgemmForEveryTransposeAndLayout) {
  Random rng(740);
  const std::int64_t M = 12, N = 10, K = 31;
  Options native;
  native.algorithm = Algorithm::Native;
  for (const char ta : {'N', 'T', 'C'}) {
    for (const char tb : {'N', 'T', 'C'}) {
      for (const Layout la : {Layout::Left, Layout::Right, Layout::Stride}) {
        for (const Layout lc : {Layout::Left, Layout::Right}) {
          const HostZ A = shaped(M, K, ta, 0.5, rng), B = shaped(K, N, tb, 0.5, rng);
          const HostZ C0 = random_z(M, N, 0.5, rng);
          const zdouble alpha(0.5, 1.5), beta(-1.0, 0.25);
          const ZRun run = run_z(ta, tb, alpha, A, la, B, Layout::Right, beta, C0, lc, native);
          EXPECT_EQ(run.report.algorithm, Algorithm::Native);
          HostZ want = C0;
          ozaki::serial::zgemm(ta, tb, alpha, A.cref(), B.cref(), beta, want.ref());
          const auto a = ozaki::serial::zop(A.cref(), ta), b = ozaki::serial::zop(B.cref(), tb);
          for (std::int64_t n = 0; n < N; ++n) {
            for (std::int64_t m = 0; m < M; ++m) {
              double d = 0;
              for (std::int64_t k = 0; k < K; ++k) d += std::abs(a(m, k)) * std::abs(b(k, n));
              const double tol =
                  4 * (K + 2) * u * (std::abs(alpha) * d + std::abs(beta) * std::abs(C0(m, n)));
              ASSERT_LE(std::abs(run.C(m, n) - want(m, n)), tol)
                  << ta << tb << " A " << name(la) << " C " << name(lc) << " (" << m << "," << n
                  << "): " << run.C(m, n) << " vs " << want(m, n);
            }
          }
        }
      }
    }
  }
}

TEST(Complex, NaNAndInfGiveNativeZgemmsResultAndAReportedFallback) {
  Random rng(750);
  HostZ A = random_z(6, 8, 0.5, rng), B = random_z(8, 5, 0.5, rng);
  const HostZ C0 = random_z(6, 5, 0.5, rng);
  A.values[7] = zdouble(0.5, std::numeric_limits<double>::quiet_NaN());
  B.values[9] = zdouble(std::numeric_limits<double>::infinity(), 0.0);
  const ZRun run = run_z('N', 'N', 1.0, A, B, 1.0, C0, crt(16));
  EXPECT_TRUE(run.report.fallback);
  EXPECT_EQ(run.report.algorithm, Algorithm::Native);
  int nonfinite = 0;
  for (std::int64_t n = 0; n < 5; ++n) {
    for (std::int64_t m = 0; m < 6; ++m) {
      const zdouble c = run.C(m, n);
      const bool touched = m == 1 || n == 1;  // A(1, 1) is NaN, B(1, 1) is Inf
      if (touched) {
        nonfinite += !(std::isfinite(c.real()) && std::isfinite(c.imag()));
      } else {
        EXPECT_TRUE(std::isfinite(c.real()) && std::isfinite(c.imag())) << m << "," << n;
      }
    }
  }
  EXPECT_GE(nonfinite, 6 + 5 - 1);
}

TEST(Complex, ZeroScalarsEmptyShapesAndBetaZeroNeverReadsC) {
  Random rng(760);
  const HostZ A = random_z(5, 7, 0.5, rng), B = random_z(7, 4, 0.5, rng);
  HostZ C0 = random_z(5, 4, 0.5, rng);
  // beta == 0: C is written, not read (NaN in C does not propagate).
  HostZ nan_c = C0;
  for (zdouble& z : nan_c.values) z = zdouble(std::numeric_limits<double>::quiet_NaN(), 0);
  for (const zdouble alpha : {zdouble(1, 0), zdouble(0.5, 0.5)}) {
    const ZRun run = run_z('N', 'N', alpha, A, B, 0.0, nan_c, crt(14));
    for (const zdouble& z : run.C.values)
      EXPECT_TRUE(std::isfinite(z.real()) && std::isfinite(z.imag()));
  }
  // alpha == 0: C = beta C, A and B not read.
  HostZ nan_a = A;
  nan_a.values[0] = zdouble(std::numeric_limits<double>::quiet_NaN(), 0);
  const zdouble beta(0.5, -2.0);
  const ZRun a0 = run_z('N', 'N', 0.0, nan_a, B, beta, C0, crt(14));
  EXPECT_EQ(a0.report.algorithm, Algorithm::None);
  for (std::size_t i = 0; i < C0.values.size(); ++i) {
    const zdouble want(beta.real() * C0.values[i].real() - beta.imag() * C0.values[i].imag(),
                       beta.real() * C0.values[i].imag() + beta.imag() * C0.values[i].real());
    EXPECT_EQ(a0.C.values[i], want);
  }
  // K == 0.
  HostZ A0, B0;
  A0.rows = 5;
  B0.cols = 4;
  const ZRun k0 = run_z('N', 'N', 1.0, A0, B0, 0.0, C0, crt(14));
  for (const zdouble& z : k0.C.values) EXPECT_EQ(z, zdouble(0, 0));
}

TEST(Complex, BadArgumentsThrowWithCUntouched) {
  Random rng(770);
  const HostZ A = random_z(6, 5, 0.5, rng), B = random_z(5, 4, 0.5, rng);
  const HostZ C0 = random_z(6, 4, 0.5, rng);
  const DeviceZ<TestSpace> dA(A, Layout::Left), dB(B, Layout::Left), dC(C0, Layout::Left);
  const KC one(1, 0);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "X", "N", one, dA.left, dB.left, one, dC.left),
               ozaki::InvalidArgument);
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "T", one, dA.left, dB.left, one, dC.left),
               ozaki::InvalidArgument);
  Options bad;
  bad.moduli = 1;
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", one, dA.left, dB.left, one, dC.left, bad),
               ozaki::InvalidArgument);
  // C aliasing A.
  const auto alias = Kokkos::subview(dA.left, Kokkos::make_pair(0, 6), Kokkos::make_pair(0, 4));
  EXPECT_THROW(ozaki::gemm(TestSpace(), "N", "N", one, dA.left, dB.left, one, alias),
               ozaki::InvalidArgument);
  expect_bitwise(dC.to_host(), C0, "C after the throws");
  expect_bitwise(dA.to_host(), A, "A after the throws");
}

// ---- fuzzing ------------------------------------------------------------------------------

/// Scheme I on the embedding: each part within serial::error_bound of the embedding's real
/// GEMM (alpha = 1, beta = 0), plus the complex update's roundings, against double-double.
void expect_slices_accuracy(char ta, char tb, zdouble alpha, const HostZ& A, const HostZ& B,
                            zdouble beta, const HostZ& C0, const ZRun& run) {
  const ozaki::Report& r = run.report;
  ASSERT_EQ(r.algorithm, Algorithm::Int8Slices);
  const ozaki::serial::ComplexEmbedding e = ozaki::serial::embed(ta, tb, A.cref(), B.cref());
  const std::vector<double> zero(static_cast<std::size_t>(2 * e.m * e.n), 0.0);
  const std::vector<double> bound = ozaki::serial::error_bound(
      'N', 'T', 1.0, e.xe(), e.ye(), 0.0, {zero.data(), 2 * e.m, e.n, 1, 2 * e.m}, r.slices,
      r.options.pairs, r.options.pair_count.value_or(0), r.int8_gemms);
  HostZ ref = C0, product = C0;
  ozaki::serial::zdd_gemm(ta, tb, alpha, A.cref(), B.cref(), beta, ref.ref());
  ozaki::serial::zdd_gemm(ta, tb, 1.0, A.cref(), B.cref(), 0.0, product.ref());
  for (std::int64_t n = 0; n < e.n; ++n) {
    for (std::int64_t m = 0; m < e.m; ++m) {
      const std::size_t i = m + n * e.m;
      const double b_re = bound[2 * m + n * 2 * e.m], b_im = bound[2 * m + 1 + n * 2 * e.m];
      const double update =
          4 * u *
          (std::abs(alpha) * std::abs(product.values[i]) + std::abs(beta) * std::abs(C0.values[i]));
      const zdouble got = run.C.values[i], want = ref.values[i];
      ASSERT_LE(std::fabs(got.real() - want.real()),
                std::fabs(alpha.real()) * b_re + std::fabs(alpha.imag()) * b_im + update)
          << "Re C(" << m << "," << n << ")";
      ASSERT_LE(std::fabs(got.imag() - want.imag()),
                std::fabs(alpha.real()) * b_im + std::fabs(alpha.imag()) * b_re + update)
          << "Im C(" << m << "," << n << ")";
    }
  }
}

/// Native ZGEMM: within gamma_(2K+2) (|alpha| (|A||B|) + |beta C0|) of double-double.
void expect_native_accuracy(char ta, char tb, zdouble alpha, const HostZ& A, const HostZ& B,
                            zdouble beta, const HostZ& C0, const ZRun& run) {
  HostZ ref = C0;
  ozaki::serial::zdd_gemm(ta, tb, alpha, A.cref(), B.cref(), beta, ref.ref());
  const auto a = ozaki::serial::zop(A.cref(), ta), b = ozaki::serial::zop(B.cref(), tb);
  const double n2 = 2.0 * static_cast<double>(a.cols()) + 2, gamma = n2 * u / (1 - n2 * u);
  for (std::int64_t n = 0; n < b.cols(); ++n) {
    for (std::int64_t m = 0; m < a.rows(); ++m) {
      double d = 0;
      for (std::int64_t k = 0; k < a.cols(); ++k) d += std::abs(a(m, k)) * std::abs(b(k, n));
      const double c0 = beta == zdouble(0, 0) ? 0.0 : std::abs(beta) * std::abs(C0(m, n));
      const double bound = 2 * gamma * (std::abs(alpha) * d + c0) + u * std::abs(ref(m, n)) +
                           n2 * std::numeric_limits<double>::denorm_min();
      ASSERT_LE(std::abs(run.C(m, n) - ref(m, n)), bound) << "C(" << m << "," << n << ")";
    }
  }
}

/// A deterministic stream of random complex calls (the real fuzz test's idea on fewer cases):
/// shapes 0..96, transposes N/T/C, layouts, alpha and beta complex, real or 0, exponent
/// spreads, zero rows, the algorithm and its options.  Each within its documented bound; each
/// INT8 case replayed bitwise on Serial from Report::options.
TEST(Complex, FuzzedCallsWithinTheirBoundsAndReplayedBitwise) {
  Random rng(2026);
  const char ops[] = {'N', 'T', 'C'};
  const Layout layouts[] = {Layout::Left, Layout::Right, Layout::Stride};
  const zdouble scalars[] = {zdouble(1, 0), zdouble(0, 0), zdouble(-0.5, 0), zdouble(0.75, 1.25),
                             zdouble(0, -2)};
  const double phis[] = {0.0, 0.5, 1.0, 2.0, 4.0};
  int int8_cases = 0;
  constexpr int cases = 150;
  for (int index = 0; index < cases; ++index) {
    auto below = [&](int n) { return static_cast<int>(rng.uniform() * n); };
    const std::int64_t M = below(97), N = below(97), K = below(4) == 0 ? below(5) : below(97);
    const char ta = ops[below(3)], tb = ops[below(3)];
    const Layout la = layouts[below(3)], lb = layouts[below(3)], lc = layouts[below(3)];
    const zdouble alpha = scalars[below(5)], beta = scalars[below(5)];
    const double phi = phis[below(5)];
    HostZ A = shaped(M, K, ta, phi, rng), B = shaped(K, N, tb, phi, rng);
    if (below(4) == 0 && !A.values.empty()) {  // a zero row of op(A)
      const std::int64_t r = below(static_cast<int>(M));
      for (std::int64_t k = 0; k < K; ++k) {
        (ta == 'N' ? A.values[r + k * M] : A.values[k + r * K]) = zdouble(0, 0);
      }
    }
    const HostZ C0 = random_z(M, N, 0.5, rng);
    Options o;
    switch (below(5)) {
      case 0: o = crt(ozaki::auto_moduli, CrtScaling::Auto); break;
      case 1: o = crt(12 + below(9), CrtScaling::Fast); break;
      case 2: o = crt(14 + below(7), CrtScaling::Accurate); break;
      case 3:
        o.algorithm = Algorithm::Int8Slices;
        if (below(2) != 0) o.slices = 5 + below(4);  // else automatic
        break;
      default: break;  // Auto
    }
    if (below(3) == 0)
      o.experimental.complex_products = ozaki::Experimental::ComplexProducts::Embedding;
    SCOPED_TRACE("case " + std::to_string(index) + ": " + std::to_string(M) + "x" +
                 std::to_string(N) + "x" + std::to_string(K) + " " + ta + tb + " phi " +
                 std::to_string(phi) + " " + ozaki::to_string(o.algorithm));
    ZRun run;
    try {
      run = run_z(ta, tb, alpha, A, la, B, lb, beta, C0, lc, o);
    } catch (const ozaki::InvalidArgument& e) {
      // Only a fixed count too small for this K, where the oracle refuses too.
      ASSERT_EQ(o.algorithm, Algorithm::Int8Crt) << e.what();
      ASSERT_TRUE(o.moduli.has_value()) << e.what();
      bool oracle_refuses = false;
      for (const CrtScaling rule : {CrtScaling::Fast, CrtScaling::Accurate}) {
        if (o.crt_scaling != CrtScaling::Auto && o.crt_scaling != rule) continue;
        HostZ scratch = C0;
        try {
          ozaki::serial::crt_zgemm(ta, tb, alpha, A.cref(), B.cref(), beta, scratch.ref(),
                                   *o.moduli, rule);
        } catch (const std::invalid_argument&) {
          oracle_refuses = true;
        }
      }
      ASSERT_TRUE(oracle_refuses) << "ozaki refused where the oracle does not: " << e.what();
      continue;
    }
    const ozaki::Report& r = run.report;
    if (M == 0 || N == 0 || K == 0 || alpha == zdouble(0, 0)) {
      ASSERT_EQ(r.algorithm, Algorithm::None);
      continue;
    }
    switch (r.algorithm) {
      case Algorithm::Int8Crt: expect_crt_accuracy(ta, tb, alpha, A, B, beta, C0, run); break;
      case Algorithm::Int8Slices: expect_slices_accuracy(ta, tb, alpha, A, B, beta, C0, run); break;
      case Algorithm::Native: expect_native_accuracy(ta, tb, alpha, A, B, beta, C0, run); break;
      default: FAIL() << "unexpected algorithm " << ozaki::to_string(r.algorithm);
    }
    if (HasFatalFailure()) return;
    if (r.algorithm == Algorithm::Int8Crt || r.algorithm == Algorithm::Int8Slices) {
      ++int8_cases;
      const ZRun replay =
          run_z<Kokkos::Serial>(ta, tb, alpha, A, la, B, lb, beta, C0, lc, r.options);
      expect_bitwise(replay.C, run.C, "Serial replay");
      if (HasFatalFailure()) return;
    }
  }
  std::printf("complex fuzz: %d cases, %d through INT8 products, each replayed bitwise on Serial\n",
              cases, int8_cases);
  EXPECT_GE(int8_cases, cases / 3);
}

// ---- workspaces and the same bits elsewhere -------------------------------------------------

TEST(Complex, WorkspaceOfRequiredBytesServesEveryCall) {
  // Sized for an automatic count of assumed_auto_moduli (as for real calls): data that needs
  // more grows the workspace once, and later calls find it large enough.
  Random rng(780);
  const std::int64_t M = 33, N = 21, K = 70;
  for (const double phi : {0.5, 2.0}) {
    for (const Options& o : {crt(ozaki::auto_moduli), crt(16, CrtScaling::Accurate), Options{}}) {
      ozaki::Workspace<TestSpace> ws(TestSpace{});
      ws.reserve_complex(M, N, K, o);
      EXPECT_EQ(ws.bytes(), ozaki::Workspace<TestSpace>::required_bytes_complex(M, N, K, o));
      std::int64_t expected = ws.allocations();
      bool grown = false;
      for (const Layout lc : {Layout::Left, Layout::Right, Layout::Stride}) {
        for (const zdouble alpha : {zdouble(1, 0), zdouble(1, 1)}) {
          const HostZ A = random_z(M, K, phi, rng), B = random_z(K, N, phi, rng);
          const HostZ C0 = random_z(M, N, 0.5, rng);
          const DeviceZ<TestSpace> dA(A, Layout::Left), dB(B, Layout::Left), dC(C0, lc);
          const KC a(alpha.real(), alpha.imag());
          const ozaki::Report r = dC.visit([&](const auto& c) {
            return ozaki::gemm(TestSpace(), "N", "N", a, dA.left, dB.left, KC(0.5, 0), c, o, ws);
          });
          const bool beyond_sizing =
              o.moduli == ozaki::auto_moduli && r.moduli > ozaki::Impl::assumed_auto_moduli;
          if (beyond_sizing && !grown) {
            EXPECT_LE(ws.allocations(), expected + 1);
            expected = ws.allocations();
            grown = true;
          }
          EXPECT_EQ(ws.allocations(), expected)
              << "phi " << phi << ", C " << name(lc) << ", " << ozaki::to_string(r.algorithm)
              << ", moduli " << r.moduli;
          EXPECT_LE(r.workspace_bytes, ws.bytes());
        }
      }
    }
  }
}

TEST(Complex, ReplayedOptionsGiveTheSameBitsOnTheHost) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  Random rng(790);
  const std::int64_t M = 29, N = 24, K = 150;
  for (const double phi : {0.5, 4.0}) {
    for (const Options& o : {crt(ozaki::auto_moduli, CrtScaling::Fast), Options{}}) {
      const HostZ A = random_z(K, M, phi, rng), B = random_z(N, K, phi, rng);
      const HostZ C0 = random_z(M, N, 0.5, rng);
      const zdouble alpha(0.5, -1.0), beta(1.0, 0.0);
      const ZRun run =
          run_z('C', 'T', alpha, A, Layout::Left, B, Layout::Right, beta, C0, Layout::Left, o);
      const ZRun replay = run_z<Host>('C', 'T', alpha, A, Layout::Left, B, Layout::Right, beta, C0,
                                      Layout::Left, run.report.options);
      EXPECT_EQ(replay.report.algorithm, run.report.algorithm);
      // Native ZGEMM is each backend's own (its bits are not ozaki's to fix).
      if (run.report.algorithm != Algorithm::Native) {
        expect_bitwise(run.C, replay.C, "test space against the host, phi " + std::to_string(phi));
      }
    }
  }
}

}  // namespace
