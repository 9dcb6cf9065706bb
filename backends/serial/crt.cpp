// The serial oracle of Ozaki scheme II.  See ozaki/serial/crt.hpp.
#include <ozaki/impl/crt/coverage.hpp>
#include <ozaki/impl/crt/rules.hpp>
#include <ozaki/serial/crt.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ozaki {
namespace serial {

namespace {

using Impl::crt_max_bits;

/// Per row of X (rows along K): scale exponent, and the exact row norms n_r and l1_r of
/// rules.hpp ("Row norms"): per norm tile (in each block of up to 1024 columns, c of them, tile
/// j < s = ceil(c / 32) holds the columns j, j + s, j + 2 s, ... of the block) the integer sums
/// of its quanta at the tile's own exponent, shifted to the row's exponent
/// (squares rounded up, magnitudes down), then the same double operations as the Kokkos
/// kernels, so that both choose the same bits.
using RowNorms = CrtRowNorms;

RowNorms row_norms(const ConstMatrixRef& X) {
  constexpr std::int64_t block = 1024;
  RowNorms n;
  for (std::int64_t r = 0; r < X.rows; ++r) {
    const int e = row_scale_exponent(X, r);
    unsigned __int128 squares = 0, l1 = 0;
    for (std::int64_t b0 = 0; b0 < X.cols; b0 += block) {
      const std::int64_t end = std::min(b0 + block, X.cols), stride = (end - b0 + 31) / 32;
      for (std::int64_t j = 0; j < stride; ++j) {
        double mu = 0;
        for (std::int64_t k = b0 + j; k < end; k += stride) mu = std::max(mu, std::fabs(X(r, k)));
        if (mu == 0) continue;
        const int et = scale_exponent(mu);
        unsigned __int128 tile_squares = 0, tile_l1 = 0;
        for (std::int64_t k = b0 + j; k < end; k += stride) {
          const long double x = std::fabs(static_cast<long double>(X(r, k)));
          if (x == 0) continue;
          const long double s2 =
              std::max(1.0L, std::ceil(std::ldexp(x, Impl::crt_l2_quantum_bits - et)));
          tile_squares += static_cast<unsigned __int128>(s2 * s2);
          tile_l1 += static_cast<unsigned __int128>(
              std::floor(std::ldexp(x, Impl::crt_l1_quantum_bits - et)));
        }
        // To the row's exponent: 4^(e - et) and 2^(e - et) divide the sums (e >= et), the
        // squares' quotient rounded up (the norm stays an upper bound), the magnitudes' down.
        const int shift = e - et;
        const unsigned __int128 unit2 = static_cast<unsigned __int128>(1)
                                        << std::min(2 * shift, 127);
        squares += 2 * shift >= 127 ? 1 : (tile_squares + unit2 - 1) / unit2;
        l1 += shift >= 127 ? 0 : tile_l1 >> shift;
      }
    }
    n.exponent.push_back(e);
    n.l2.push_back(std::ldexp(std::sqrt(static_cast<double>(squares)), -Impl::crt_l2_quantum_bits));
    n.l1.push_back(std::ldexp(static_cast<double>(l1), -Impl::crt_l1_quantum_bits));
  }
  return n;
}

std::vector<int> fast_bits(const RowNorms& n, double T) {
  std::vector<int> bits;
  for (const double l2 : n.l2) {
    int e = 0;
    std::frexp(T / l2, &e);  // floor(log2(T / l2)) = e - 1
    bits.push_back(l2 > 0 ? std::min(crt_max_bits, e - 1) : crt_max_bits);
  }
  return bits;
}

/// The accurate rule's 7-bit magnitude: ceil(|x| 2^(7-e)), 0 below 2^-100 (such x round to 0
/// at any bits <= crt_max_bits).
int magnitude7(double x, int e) {
  const long double v = std::ldexp(std::fabs(static_cast<long double>(x)), 7 - e);
  return v < 0x1p-100L ? 0 : static_cast<int>(std::ceil(v));
}

/// The counted rule's window magnitude: min(127, floor(|x| 2^(7+s-e))).
int window_magnitude7(double x, int e, int s) {
  const long double v = std::floor(std::ldexp(std::fabs(static_cast<long double>(x)), 7 + s - e));
  return v > 127 ? 127 : static_cast<int>(v);
}

/// The counted rule's window shift: 2^-s_r is the power of two just above
/// crt_window_mean_factor l1_r / K (the row's mean magnitude times the factor), 0 to 60.
int window_shift(double l1, std::int64_t K) {
  if (l1 == 0) return 0;
  int ex = 0;
  std::frexp(l1 * Impl::crt_window_mean_factor / static_cast<double>(K), &ex);
  return std::min(Impl::crt_max_window_shift, std::max(0, -ex));
}

/// Symmetric residue of x modulo m.
int symmetric_residue(__int128 x, int m) {
  int r = static_cast<int>(x % m);  // in (-m, m), sign of x
  if (r > Impl::crt_high(m)) r -= m;
  if (r < Impl::crt_low(m)) r += m;
  return r;
}

void check_bits(const std::vector<int>& bits, int L, std::int64_t K) {
  const int fewest = bits.empty() ? crt_max_bits : *std::min_element(bits.begin(), bits.end());
  if (fewest < Impl::crt_min_bits) {
    throw std::invalid_argument("serial::crt_scale: " + std::to_string(L) + " moduli leave " +
                                std::to_string(fewest) + " bits at K = " + std::to_string(K));
  }
}

}  // namespace

CrtRowNorms crt_row_norms(const ConstMatrixRef& X) { return row_norms(X); }

namespace {

/// Per row of X (rows along K): the coverage counts of its norm tiles (row_norms' tiles),
/// row-major.
std::vector<std::uint32_t> coverage_counts(const ConstMatrixRef& X) {
  constexpr std::int64_t block = 1024;
  std::vector<std::uint32_t> out;
  for (std::int64_t r = 0; r < X.rows; ++r) {
    const int e = row_scale_exponent(X, r);
    Impl::CoverageCounts c;
    for (std::int64_t b0 = 0; b0 < X.cols; b0 += block) {
      const std::int64_t end = std::min(b0 + block, X.cols), stride = (end - b0 + 31) / 32;
      for (std::int64_t j = 0; j < stride; ++j) {
        double mu = 0;
        int count = 0;
        for (std::int64_t k = b0 + j; k < end; k += stride, ++count)
          mu = std::max(mu, std::fabs(X(r, k)));
        std::uint64_t packed = 0;
        const int et = mu > 0 ? scale_exponent(mu) : 0;
        for (std::int64_t k = b0 + j; k < end && mu > 0; k += stride) {
          if (X(r, k) == 0) continue;
          int exponent = 0;
          std::frexp(X(r, k), &exponent);
          packed += Impl::coverage_bin_unit(Impl::coverage_tile_bin(exponent, et));
        }
        Impl::coverage_merge_tile(c, packed, count, !(mu > 0), mu > 0 ? e - et : 0);
      }
    }
    const std::size_t first = out.size();
    out.resize(first + Impl::coverage_row_counts);
    Impl::coverage_row_values(c, [&](int i, std::uint32_t v) { out[first + i] = v; });
  }
  return out;
}

std::vector<double> coverage_grid(const std::vector<std::uint32_t>& counts, const RowNorms& n) {
  std::vector<double> grid(Impl::coverage_grid, 0.0);
  for (std::size_t r = 0; r < n.l1.size(); ++r) {
    double v[Impl::coverage_grid];
    const std::uint32_t* row = counts.data() + r * Impl::coverage_row_counts;
    Impl::coverage_grid_of_row([&](int j) { return row[Impl::coverage_layers + j]; }, n.l1[r],
                               n.l2[r], v);
    for (int g = 0; g < Impl::coverage_grid; ++g) grid[g] = std::max(grid[g], v[g]);
  }
  return grid;
}

std::vector<double> coverage_lambdas(const std::vector<std::uint32_t>& counts, std::size_t rows,
                                     const std::vector<double>& other_grid) {
  std::vector<double> lambda(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint32_t* row = counts.data() + r * Impl::coverage_row_counts;
    lambda[r] =
        Impl::coverage_lambda([&](int t) { return row[t]; }, [&](int g) { return other_grid[g]; });
  }
  return lambda;
}

/// row_summary's certificate values over the nonzero rows.
void coverage_summary(const RowNorms& n, const std::vector<double>& lambda, std::int64_t K,
                      double& factor, double& split, double& inverse) {
  factor = split = inverse = 0;
  const double k = static_cast<double>(K);
  for (std::size_t r = 0; r < lambda.size(); ++r) {
    if (!(n.l1[r] > 0)) continue;
    const double l = lambda[r];
    factor = std::max(factor, l > 0 ? n.l1[r] / (k * l) : HUGE_VAL);
    split = std::max(split, l > 0 ? n.l2[r] / l : HUGE_VAL);
    inverse = std::max(inverse, l > 0 ? 1 / l : HUGE_VAL);
  }
}

}  // namespace

CrtCoverage crt_coverage(const ConstMatrixRef& opA, const ConstMatrixRef& opB) {
  const ConstMatrixRef opBt = opB.transposed();
  const RowNorms na = row_norms(opA), nb = row_norms(opBt);
  CrtCoverage c;
  c.counts_a = coverage_counts(opA);
  c.counts_b = coverage_counts(opBt);
  c.grid_a = coverage_grid(c.counts_a, na);
  c.grid_b = coverage_grid(c.counts_b, nb);
  c.lambda_a = coverage_lambdas(c.counts_a, na.l1.size(), c.grid_b);
  c.lambda_b = coverage_lambdas(c.counts_b, nb.l1.size(), c.grid_a);
  coverage_summary(na, c.lambda_a, opA.cols, c.factor_a, c.split_a, c.inverse_a);
  coverage_summary(nb, c.lambda_b, opA.cols, c.factor_b, c.split_b, c.inverse_b);
  return c;
}

double crt_peak_ratio(const CrtRowNorms& n) {
  double worst = 0;
  for (std::size_t r = 0; r < n.l2.size(); ++r) {
    if (n.l1[r] > 0) worst = std::max(worst, n.l2[r] / n.l1[r]);
  }
  return worst;
}

double crt_counted_ratio(const ConstMatrixRef& opA, const ConstMatrixRef& opB) {
  const std::int64_t M = opA.rows, K = opA.cols, N = opB.cols;
  const RowNorms na = row_norms(opA), nb = row_norms(opB.transposed());
  // The window magnitudes first, row by row (p_a[m K + k], p_b[n K + k]).
  std::vector<int> shift_a(M), shift_b(N), p_a(M * K), p_b(N * K);
  for (std::int64_t m = 0; m < M; ++m) {
    shift_a[m] = window_shift(na.l1[m], K);
    for (std::int64_t k = 0; k < K; ++k)
      p_a[m * K + k] = window_magnitude7(opA(m, k), na.exponent[m], shift_a[m]);
  }
  for (std::int64_t n = 0; n < N; ++n) {
    shift_b[n] = window_shift(nb.l1[n], K);
    for (std::int64_t k = 0; k < K; ++k)
      p_b[n * K + k] = window_magnitude7(opB(k, n), nb.exponent[n], shift_b[n]);
  }
  double G = 0;
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t m = 0; m < M; ++m) {
      if (na.l2[m] == 0 || nb.l2[n] == 0) continue;  // an exact zero product
      std::int64_t P = 0;
      for (std::int64_t k = 0; k < K; ++k) P += std::int64_t(p_a[m * K + k]) * p_b[n * K + k];
      if (P == 0) return HUGE_VAL;
      G = std::max(
          G, std::ldexp(na.l2[m] * nb.l2[n] / static_cast<double>(P), shift_a[m] + shift_b[n]));
    }
  }
  return G;
}

CrtScale crt_scale(const ConstMatrixRef& opA, const ConstMatrixRef& opB, int L,
                   CrtScaling scaling) {
  const std::int64_t M = opA.rows, K = opA.cols, N = opB.cols;
  const RowNorms na = row_norms(opA), nb = row_norms(opB.transposed());
  CrtScale out;
  out.scaling = scaling;
  if (scaling == CrtScaling::Auto) {
    // A fixed count: every class beyond the fast one takes the accurate rule (driver.hpp).
    out.scaling =
        Impl::crt_peak_class(K, crt_peak_ratio(na), crt_peak_ratio(nb)) != Impl::CrtPeakClass::Fast
            ? CrtScaling::Accurate
            : CrtScaling::Fast;
  }
  if (out.scaling == CrtScaling::Fast) {
    const double T = Impl::crt_fast_target(L, K);
    out.a = fast_bits(na, T);
    out.b = fast_bits(nb, T);
  } else {
    // P = q(A) q(B) exactly; lambda = floor(log2(range / P)) + 14, "unbounded" where P = 0.
    constexpr int unbounded = 4096;
    const double range = Impl::crt_accurate_range(L);
    std::vector<int> lambda(static_cast<std::size_t>(M * N));
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t m = 0; m < M; ++m) {
        std::int64_t P = 0;
        for (std::int64_t k = 0; k < K; ++k) {
          P += std::int64_t(magnitude7(opA(m, k), na.exponent[m])) *
               magnitude7(opB(k, n), nb.exponent[n]);
        }
        lambda[m + n * M] = P == 0 ? unbounded : std::ilogb(range / static_cast<double>(P)) + 14;
      }
    }
    std::vector<int> rho(M, unbounded);
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t m = 0; m < M; ++m) rho[m] = std::min(rho[m], lambda[m + n * M]);
    out.b.assign(N, crt_max_bits);
    for (std::int64_t n = 0; n < N; ++n) {
      double low = unbounded;
      for (std::int64_t m = 0; m < M; ++m) low = std::min(low, lambda[m + n * M] - 0.5 * rho[m]);
      out.b[n] = std::min<int>(crt_max_bits, static_cast<int>(std::floor(low)));
    }
    out.a.assign(M, crt_max_bits);
    for (std::int64_t m = 0; m < M; ++m) {
      int low = unbounded;
      for (std::int64_t n = 0; n < N; ++n) low = std::min(low, lambda[m + n * M] - out.b[n]);
      out.a[m] = std::min(crt_max_bits, low);
    }
  }
  check_bits(out.a, L, K);
  check_bits(out.b, L, K);
  return out;
}

__int128 crt_scaled_integer(double x, int e, int bits) {
  // 53-bit x times a power of two: exact in long double (64-bit significand, 15-bit
  // exponent); std::nearbyint rounds to nearest, ties to even, in the default rounding mode.
  const long double scaled = std::ldexp(static_cast<long double>(x), bits - e);
  return static_cast<__int128>(std::nearbyint(scaled));
}

CrtResidues crt_residues(const ConstMatrixRef& X, int L, const std::vector<int>& bits) {
  if (L < min_moduli || L > max_moduli) throw std::invalid_argument("serial: moduli out of range");
  CrtResidues out;
  out.moduli = L;
  out.rows = X.rows;
  out.k = X.cols;
  out.kpad = (X.cols + 15) / 16 * 16;
  out.values.assign(static_cast<std::size_t>(out.rows * L * out.kpad), 0);
  for (std::int64_t r = 0; r < X.rows; ++r) {
    const int e = row_scale_exponent(X, r);
    out.exponents.push_back(e);
    for (std::int64_t k = 0; k < X.cols; ++k) {
      const __int128 x = crt_scaled_integer(X(r, k), e, bits[r]);
      for (int l = 0; l < L; ++l) {
        out.values[(r * L + l) * out.kpad + k] =
            static_cast<std::int8_t>(symmetric_residue(x, crt_moduli[l]));
      }
    }
  }
  return out;
}

CrtScale crt_gemm(char transA, char transB, double alpha, const ConstMatrixRef& A,
                  const ConstMatrixRef& B, double beta, const MatrixRef& C, int L,
                  CrtScaling scaling) {
  const ConstMatrixRef opA = op(A, transA), opB = op(B, transB);
  const std::int64_t M = opA.rows, K = opA.cols, N = opB.cols;
  const CrtScale scale = crt_scale(opA, opB, L, scaling);
  const CrtResidues ra = crt_residues(opA, L, scale.a);
  const CrtResidues rb = crt_residues(opB.transposed(), L, scale.b);
  long double M_range = 1;
  for (int l = 0; l < L; ++l) M_range *= crt_moduli[l];
  std::vector<int> residue(L);
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t m = 0; m < M; ++m) {
      // The rule's promise, checked: sum_k |a'||b'| < M/2 (so the CRT recovers C' exactly).
      long double magnitude = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        magnitude += std::fabs(static_cast<long double>(
                         crt_scaled_integer(opA(m, k), ra.exponents[m], scale.a[m]))) *
                     std::fabs(static_cast<long double>(
                         crt_scaled_integer(opB(k, n), rb.exponents[n], scale.b[n])));
      }
      if (!(magnitude < M_range / 2)) {
        throw std::logic_error("serial::crt_gemm: the scaling rule let |C'| reach M/2");
      }
      for (int l = 0; l < L; ++l) {
        std::int64_t y = 0;  // exact: |residue products| <= 2^14
        for (std::int64_t k = 0; k < K; ++k) {
          y += std::int64_t(ra.residue(m, l, k)) * rb.residue(n, l, k);
        }
        residue[l] = symmetric_residue(y, crt_moduli[l]);
      }
      // Garner: C' = v_0 + v_1 m_0 + v_2 m_0 m_1 + ..., balanced digits v_l (symmetric
      // residues), so that the mixed-radix value is C' itself in (-M/2, M/2].
      std::vector<int> v(L);
      for (int l = 0; l < L; ++l) {
        const int ml = crt_moduli[l];
        // value of v_0 .. v_{l-1} modulo m_l, and the product m_0 .. m_{l-1} modulo m_l
        std::int64_t value = 0, weight = 1;
        for (int j = 0; j < l; ++j) {
          value = ((value + v[j] * weight) % ml + ml) % ml;
          weight = weight * crt_moduli[j] % ml;
        }
        const std::int64_t inv = Impl::detail::inverse_mod(static_cast<int>(weight), ml);
        const std::int64_t digit = (((residue[l] - value) % ml + ml) % ml) * inv % ml;
        v[l] = symmetric_residue(digit, ml);
      }
      long double c_int = 0;
      for (int l = L - 1; l >= 0; --l) c_int = c_int * crt_moduli[l] + v[l];
      const int exponent = ra.exponents[m] - scale.a[m] + rb.exponents[n] - scale.b[n];
      const double ab = static_cast<double>(std::ldexp(c_int, exponent));
      C(m, n) = beta == 0 ? alpha * ab : alpha * ab + beta * C(m, n);
    }
  }
  return scale;
}

std::vector<double> crt_error_bound(char transA, char transB, double alpha, const ConstMatrixRef& A,
                                    const ConstMatrixRef& B, double beta, const ConstMatrixRef& C0,
                                    const CrtScale& scale, int slack_bits) {
  const ConstMatrixRef opA = op(A, transA), opB = op(B, transB);
  const std::int64_t M = opA.rows, K = opA.cols, N = opB.cols;
  const RowNorms na = row_norms(opA), nb = row_norms(opB.transposed());
  const double u = std::ldexp(1.0, -53);
  // Roundings after the exact C': the reconstruction's sum of parts (2u), alpha * ab, + beta C0.
  const double gamma = 4 * u / (1 - 4 * u);
  std::vector<double> bound(static_cast<std::size_t>(M * N));
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t m = 0; m < M; ++m) {
      // Rounding to integers: |da| <= 2^(e - b - 1) per element.
      const long double ha = std::ldexp(1.0L, na.exponent[m] - scale.a[m] + slack_bits - 1);
      const long double hb = std::ldexp(1.0L, nb.exponent[n] - scale.b[n] + slack_bits - 1);
      long double abs_product = 0, l1a = 0, l1b = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        abs_product += std::fabs(static_cast<long double>(opA(m, k)) * opB(k, n));
        l1a += std::fabs(static_cast<long double>(opA(m, k)));
        l1b += std::fabs(static_cast<long double>(opB(k, n)));
      }
      const long double split = ha * l1b + hb * l1a + K * ha * hb;
      const long double c0 =
          beta == 0 ? 0.0L : std::fabs(beta * static_cast<long double>(C0(m, n)));
      const long double total =
          std::fabs(alpha) * split + gamma * (std::fabs(alpha) * (abs_product + split) + c0) +
          4 * static_cast<long double>(std::numeric_limits<double>::denorm_min());
      bound[m + n * M] = static_cast<double>(total * (1 + 0x1p-40L));
    }
  }
  return bound;
}

}  // namespace serial
}  // namespace ozaki
