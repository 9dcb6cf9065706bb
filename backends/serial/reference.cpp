// The serial oracle: plain loops, written for obviousness, not speed.  See reference.hpp.
#include <ozaki/serial/reference.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ozaki {
namespace serial {

namespace {

bool is_transposed(char trans) {
  switch (trans) {
    case 'N':
    case 'n': return false;
    case 'T':
    case 't':
    case 'C':
    case 'c': return true;
    default: throw std::invalid_argument(std::string("serial: bad transpose character ") + trans);
  }
}

/// Balanced base-256 digit of an integer: X mod 256 in [-128, 127].
int balanced_low_digit(__int128 X) {
  int low = static_cast<int>(X & 0xff);
  return low >= 128 ? low - 256 : low;
}

}  // namespace

ConstMatrixRef op(const ConstMatrixRef& X, char trans) {
  return is_transposed(trans) ? X.transposed() : X;
}

int scale_exponent(double mu) {
  if (mu == 0) return 0;
  int e = std::ilogb(mu) + 1;  // 2^(e-1) <= mu < 2^e, subnormals included
  // mu <= (127/128) 2^e, compared exactly in long double (127 * 2^(e-7) may be subnormal).
  if (static_cast<long double>(mu) > std::ldexp(127.0L, e - 7)) ++e;
  return e;
}

int row_scale_exponent(const ConstMatrixRef& X, std::int64_t r) {
  double mu = 0;
  for (std::int64_t k = 0; k < X.cols; ++k) mu = std::max(mu, std::fabs(X(r, k)));
  return scale_exponent(mu);
}

bool has_nonfinite(const ConstMatrixRef& X) {
  for (std::int64_t i = 0; i < X.rows; ++i)
    for (std::int64_t j = 0; j < X.cols; ++j)
      if (!std::isfinite(X(i, j))) return true;
  return false;
}

Slices split(const ConstMatrixRef& X, int S, bool reversed) {
  if (S < 1 || S > max_slices) throw std::invalid_argument("serial::split: S out of range");
  Slices out;
  out.slices = S;
  out.rows = X.rows;
  out.k = X.cols;
  out.kpad = (X.cols + 15) / 16 * 16;
  out.reversed = reversed;
  out.digits.assign(static_cast<std::size_t>(out.rows * out.row_length()), 0);
  out.exponents.resize(static_cast<std::size_t>(out.rows));
  for (std::int64_t r = 0; r < X.rows; ++r) {
    const int e = row_scale_exponent(X, r);
    out.exponents[r] = e;
    for (std::int64_t k = 0; k < X.cols; ++k) {
      // X = round(x 2^(8S-1-e)), half away from zero; exact in long double (53-bit x).
      const long double scaled = std::ldexp(static_cast<long double>(X(r, k)), 8 * S - 1 - e);
      __int128 value = static_cast<__int128>(std::round(scaled));
      for (int position = 0; position < S; ++position) {
        const int d = balanced_low_digit(value);
        value = (value - d) / 256;
        const int s = S - 1 - position;
        const int block = reversed ? S - 1 - s : s;
        out.digits[r * out.row_length() + block * out.kpad + k] = static_cast<std::int8_t>(d);
      }
      if (value != 0) throw std::logic_error("serial::split: value exceeds S digits");
    }
  }
  return out;
}

namespace {

struct RowScales {
  std::vector<int> exponent;
  std::vector<double> scaled_l1;  // ||x_r||_1 2^-e_r
};

RowScales row_scales(const ConstMatrixRef& X) {
  RowScales s;
  for (std::int64_t r = 0; r < X.rows; ++r) {
    const int e = row_scale_exponent(X, r);
    double l1 = 0;
    for (std::int64_t k = 0; k < X.cols; ++k) l1 += std::ldexp(std::fabs(X(r, k)), -e);
    s.exponent.push_back(e);
    s.scaled_l1.push_back(l1);
  }
  return s;
}

/// Both ratios for a denominator D(m, n) = (|A||B|)_mn 2^-(e_m+e_n) (or a lower bound).
template <class Denominator>
ErrorRatios max_ratios(const RowScales& a, const RowScales& b, Denominator denominator) {
  const double inf = std::numeric_limits<double>::infinity();
  ErrorRatios worst;
  for (std::size_t n = 0; n < b.exponent.size(); ++n) {
    for (std::size_t m = 0; m < a.exponent.size(); ++m) {
      const double x = a.scaled_l1[m], y = b.scaled_l1[n];
      const double error = (x > 0 ? y : 0.0) + (y > 0 ? x : 0.0);
      if (error == 0) continue;
      const double d = denominator(m, n);
      worst.split = std::max(worst.split, d > 0 ? error / d : inf);
      worst.inverse = std::max(worst.inverse, d > 0 ? 1 / d : inf);
    }
  }
  return worst;
}

}  // namespace

ErrorRatios error_ratios(const ConstMatrixRef& opA, const ConstMatrixRef& opB) {
  const ConstMatrixRef opBt = opB.transposed();
  const RowScales a = row_scales(opA), b = row_scales(opBt);
  return max_ratios(a, b, [&](std::size_t m, std::size_t n) {
    double d = 0;
    for (std::int64_t k = 0; k < opA.cols; ++k)
      d += std::ldexp(std::fabs(opA(m, k)), -a.exponent[m]) *
           std::ldexp(std::fabs(opBt(n, k)), -b.exponent[n]);
    return d;
  });
}

ErrorRatios error_ratios_estimate(const ConstMatrixRef& opA, const ConstMatrixRef& opB) {
  const ConstMatrixRef opBt = opB.transposed();
  const RowScales a = row_scales(opA), b = row_scales(opBt);
  auto magnitude = [](double x, int e, int level) {
    return std::min(127.0, std::floor(std::ldexp(std::fabs(x), 7 + 7 * level - e)));
  };
  // Lower bounds of D_mn from level pairs in rings, as ozaki/impl/slices/estimate.hpp.
  const std::size_t M = a.exponent.size(), N = b.exponent.size();
  std::vector<double> lower(M * N, 0.0);
  ErrorRatios r;
  for (int ring = 0; ring <= 2; ++ring) {
    std::vector<std::pair<int, int>> pairs;
    for (int l = 0; l < ring; ++l) {
      pairs.emplace_back(l, ring);
      pairs.emplace_back(ring, l);
    }
    pairs.emplace_back(ring, ring);
    for (const auto& levels : pairs) {
      for (std::size_t n = 0; n < N; ++n)
        for (std::size_t m = 0; m < M; ++m) {
          double d = 0;  // exact: integers below 2^14 K
          for (std::int64_t k = 0; k < opA.cols; ++k)
            d += magnitude(opA(m, k), a.exponent[m], levels.first) *
                 magnitude(opBt(n, k), b.exponent[n], levels.second);
          lower[m + n * M] =
              std::max(lower[m + n * M], std::ldexp(d, -14 - 7 * (levels.first + levels.second)));
        }
    }
    r = max_ratios(a, b, [&](std::size_t m, std::size_t n) { return lower[m + n * M]; });
    if (r.inverse < std::numeric_limits<double>::infinity()) break;
  }
  return r;
}

void int8_gemm(std::int64_t rows_a, std::int64_t rows_b, std::int64_t length, const std::int8_t* a,
               std::int64_t lda, const std::int8_t* b, std::int64_t ldb, std::int32_t* c,
               std::int64_t ldc) {
  for (std::int64_t n = 0; n < rows_b; ++n) {
    for (std::int64_t m = 0; m < rows_a; ++m) {
      std::int64_t sum = 0;
      for (std::int64_t l = 0; l < length; ++l) {
        sum += std::int64_t(a[m * lda + l]) * std::int64_t(b[n * ldb + l]);
        if (sum > std::numeric_limits<std::int32_t>::max() ||
            sum < std::numeric_limits<std::int32_t>::min()) {
          throw std::overflow_error("serial::int8_gemm: INT32 accumulator overflow");
        }
      }
      c[m + n * ldc] = static_cast<std::int32_t>(sum);
    }
  }
}

std::vector<std::pair<int, int>> selected_pairs(int S, PairPolicy policy, int pair_count) {
  std::vector<std::pair<int, int>> all;
  for (int d = 0; d <= 2 * (S - 1); ++d)
    for (int i = 0; i < S; ++i)
      if (d - i >= 0 && d - i < S) all.emplace_back(i, d - i);
  std::size_t count = all.size();
  if (policy == PairPolicy::Triangular) count = static_cast<std::size_t>(S * (S + 1) / 2);
  if (policy == PairPolicy::Count) count = static_cast<std::size_t>(pair_count);
  if (count > all.size()) throw std::invalid_argument("serial::selected_pairs: too many pairs");
  all.resize(count);
  return all;
}

void gemm(char transA, char transB, double alpha, const ConstMatrixRef& A, const ConstMatrixRef& B,
          double beta, const MatrixRef& C, int S, PairPolicy policy, int pair_count) {
  const ConstMatrixRef opA = op(A, transA);
  const ConstMatrixRef opB = op(B, transB);
  const std::int64_t M = opA.rows, K = opA.cols, N = opB.cols;
  const Slices sa = split(opA, S, false);
  const Slices sb = split(opB.transposed(), S, true);
  const auto pairs = selected_pairs(S, policy, pair_count);
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t m = 0; m < M; ++m) {
      // Exact integer sum per diagonal d = i + j (|sum| < 2^14 * K * S fits easily).
      std::vector<std::int64_t> diagonal(static_cast<std::size_t>(2 * S - 1), 0);
      for (const auto& p : pairs) {
        std::int64_t dot = 0;
        for (std::int64_t k = 0; k < K; ++k)
          dot += std::int64_t(sa.digit(m, p.first, k)) * std::int64_t(sb.digit(n, p.second, k));
        diagonal[p.first + p.second] += dot;
      }
      // FP64 sum from the least significant diagonal up, then the common scale.
      double sum = 0;
      for (int d = 2 * S - 2; d >= 0; --d)
        sum += std::ldexp(static_cast<double>(diagonal[d]), -8 * d);
      const double ab = std::ldexp(sum, sa.exponents[m] + sb.exponents[n] - 14);
      C(m, n) = beta == 0 ? alpha * ab : alpha * ab + beta * C(m, n);
    }
  }
}

void dgemm(char transA, char transB, double alpha, const ConstMatrixRef& A, const ConstMatrixRef& B,
           double beta, const MatrixRef& C) {
  const ConstMatrixRef opA = op(A, transA);
  const ConstMatrixRef opB = op(B, transB);
  for (std::int64_t n = 0; n < opB.cols; ++n) {
    for (std::int64_t m = 0; m < opA.rows; ++m) {
      double sum = 0;
      for (std::int64_t k = 0; k < opA.cols; ++k) sum += opA(m, k) * opB(k, n);
      C(m, n) = beta == 0 ? alpha * sum : alpha * sum + beta * C(m, n);
    }
  }
}

namespace {

/// Error-free transformations (Knuth's TwoSum, FMA-based TwoProduct).
DoubleDouble two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

DoubleDouble add(const DoubleDouble& x, const DoubleDouble& y) {
  const DoubleDouble s = two_sum(x.hi, y.hi);
  const DoubleDouble t = two_sum(x.lo, y.lo);
  DoubleDouble r = two_sum(s.hi, s.lo + t.hi);
  r = two_sum(r.hi, r.lo + t.lo);
  return r;
}

DoubleDouble product(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

DoubleDouble scale(const DoubleDouble& x, double a) {
  DoubleDouble p = product(x.hi, a);
  return two_sum(p.hi, p.lo + x.lo * a);
}

}  // namespace

DoubleDouble dd_dot(const ConstMatrixRef& opA, const ConstMatrixRef& opB, std::int64_t m,
                    std::int64_t n) {
  DoubleDouble sum;
  for (std::int64_t k = 0; k < opA.cols; ++k) sum = add(sum, product(opA(m, k), opB(k, n)));
  return sum;
}

void dd_gemm(char transA, char transB, double alpha, const ConstMatrixRef& A,
             const ConstMatrixRef& B, double beta, const MatrixRef& C) {
  const ConstMatrixRef opA = op(A, transA);
  const ConstMatrixRef opB = op(B, transB);
  for (std::int64_t n = 0; n < opB.cols; ++n) {
    for (std::int64_t m = 0; m < opA.rows; ++m) {
      DoubleDouble value = scale(dd_dot(opA, opB, m, n), alpha);
      if (beta != 0) value = add(value, product(beta, C(m, n)));
      C(m, n) = value.hi + value.lo;
    }
  }
}

std::vector<double> error_bound(char transA, char transB, double alpha, const ConstMatrixRef& A,
                                const ConstMatrixRef& B, double beta, const ConstMatrixRef& C0,
                                int S, PairPolicy policy, int pair_count, int summands) {
  const ConstMatrixRef opA = op(A, transA);
  const ConstMatrixRef opB = op(B, transB);
  const std::int64_t M = opA.rows, K = opA.cols, N = opB.cols;
  const double u = std::ldexp(1.0, -53);
  const double n_roundings = summands + 2.0;  // the sum, alpha * (...), + beta * C0
  const double gamma = n_roundings * u / (1 - n_roundings * u);
  // W_D: total weight 2^(-8(i+j)) of the pairs the policy drops.
  double dropped_weight = 0;
  {
    std::vector<std::vector<bool>> taken(S, std::vector<bool>(S, false));
    for (const auto& p : selected_pairs(S, policy, pair_count)) taken[p.first][p.second] = true;
    for (int i = 0; i < S; ++i)
      for (int j = 0; j < S; ++j)
        if (!taken[i][j]) dropped_weight += std::ldexp(1.0, -8 * (i + j));
  }
  // Scales and 1-norms.  The norms were summed scaled by 2^-e, which commutes with rounding,
  // so undoing it is exact (terms pushed below the subnormal range are far below the bound's
  // own margin).
  const RowScales rows_a = row_scales(opA), cols_b = row_scales(opB.transposed());
  const std::vector<int>& ea = rows_a.exponent;
  const std::vector<int>& eb = cols_b.exponent;
  std::vector<double> norm_a(M), norm_b(N);
  for (std::int64_t m = 0; m < M; ++m) norm_a[m] = std::ldexp(rows_a.scaled_l1[m], ea[m]);
  for (std::int64_t n = 0; n < N; ++n) norm_b[n] = std::ldexp(cols_b.scaled_l1[n], eb[n]);
  std::vector<double> bound(static_cast<std::size_t>(M * N));
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t m = 0; m < M; ++m) {
      const double sa = std::ldexp(1.0, ea[m]);
      const double sb = std::ldexp(1.0, eb[n]);
      double abs_product = 0;  // (|A||B|)_mn
      for (std::int64_t k = 0; k < K; ++k) abs_product += std::fabs(opA(m, k) * opB(k, n));
      const double Kd = static_cast<double>(K);
      // Split rounding: |da| <= 2^(eA-8S), |db| <= 2^(eB-8S).
      const double e_split =
          std::ldexp(sa * norm_b[n] + sb * norm_a[m], -8 * S) + Kd * std::ldexp(sa * sb, -16 * S);
      // Dropped pairs: every digit product is at most 2^14, its weight 2^(eA+eB-14-8(i+j)).
      const double e_drop = Kd * sa * sb * dropped_weight;
      // Sum of |terms| of the recombination: an element's balanced digits weigh at most 3.02
      // times its rounded value (docs/design.md §3), so the products' terms sum to at most
      // 9.1 sum_k (|a| + 2^(eA-8S)) (|b| + 2^(eB-8S)) = 9.1 ((|A||B|)_mn + e_split).
      const double terms = 9.1 * (abs_product + e_split);
      const double c0 = beta == 0 ? 0.0 : std::fabs(beta * C0(m, n));
      const double subnormal = n_roundings * std::numeric_limits<double>::denorm_min();
      bound[m + n * M] = (std::fabs(alpha) * (e_split + e_drop) +
                          gamma * (std::fabs(alpha) * terms + c0) + subnormal) *
                         (1 + std::ldexp(1.0, -40));  // rounding of this evaluation itself
    }
  }
  return bound;
}

void quantized_gemm(std::int64_t M, std::int64_t N, std::int64_t K, const std::int8_t* A,
                    std::int64_t lda, const std::int8_t* W, std::int64_t ldw, const float* a,
                    const float* w, const float* bias, float* C, std::int64_t ldc) {
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t m = 0; m < M; ++m) {
      std::int64_t sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += std::int64_t(A[m * lda + k]) * W[n * ldw + k];
      const float scale = a[m] * w[n];
      C[m + n * ldc] = std::fmaf(static_cast<float>(sum), scale, bias != nullptr ? bias[n] : 0.0f);
    }
  }
}

double e4m3_value(std::uint8_t code) {
  const int e = (code >> 3) & 15, f = code & 7;
  if (e == 15 && f == 7) return std::numeric_limits<double>::quiet_NaN();
  const double magnitude = e == 0 ? std::ldexp(f / 8.0, -6) : std::ldexp(1 + f / 8.0, e - 7);
  return (code & 0x80) != 0 ? -magnitude : magnitude;
}

std::uint8_t e4m3_nearest(float x) {
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x)) return sign | 0x7f;
  const double target = std::fabs(static_cast<double>(x));
  if (std::isinf(target)) return sign | 0x7e;
  int best = 0;
  for (int code = 1; code <= 0x7e; ++code) {
    const double d = std::fabs(e4m3_value(static_cast<std::uint8_t>(code)) - target);
    const double d_best = std::fabs(e4m3_value(static_cast<std::uint8_t>(best)) - target);
    if (d < d_best || (d == d_best && code % 2 == 0)) best = code;
  }
  return static_cast<std::uint8_t>(sign | best);
}

void quantize_fp8_blocks(std::int64_t R, std::int64_t K, const float* X, std::int64_t ldx,
                         std::int64_t block_rows, std::uint8_t* Q, float* scales) {
  const std::int64_t blocks_k = (K + 127) / 128, blocks_r = (R + block_rows - 1) / block_rows;
  for (std::int64_t br = 0; br < blocks_r; ++br) {
    for (std::int64_t bk = 0; bk < blocks_k; ++bk) {
      const std::int64_t r1 = std::min(R, (br + 1) * block_rows), k1 = std::min(K, (bk + 1) * 128);
      float amax = 0;
      bool finite = true;
      for (std::int64_t r = br * block_rows; r < r1; ++r)
        for (std::int64_t k = bk * 128; k < k1; ++k) {
          finite = finite && std::isfinite(X[r * ldx + k]);
          amax = std::max(amax, std::fabs(X[r * ldx + k]));
        }
      const float inverse = finite && amax > 0 ? 448.0f / amax : 0.0f;
      for (std::int64_t r = br * block_rows; r < r1; ++r)
        for (std::int64_t k = bk * 128; k < k1; ++k)
          Q[r * K + k] = e4m3_nearest(finite ? X[r * ldx + k] * inverse : 0.0f);
      scales[br * blocks_k + bk] = finite ? amax / 448.0f : std::numeric_limits<float>::quiet_NaN();
    }
  }
}

void fp8_gemm(std::int64_t M, std::int64_t N, std::int64_t K, const std::uint8_t* A,
              std::int64_t lda, const std::uint8_t* W, std::int64_t ldw, const float* a_scales,
              const float* w_scales, float* C, std::int64_t ldc) {
  const std::int64_t blocks_k = (K + 127) / 128;
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t m = 0; m < M; ++m) {
      double acc = 0;
      for (std::int64_t bk = 0; bk < blocks_k; ++bk) {
        long double p = 0;
        for (std::int64_t k = bk * 128; k < std::min(K, (bk + 1) * 128); ++k)
          p += static_cast<long double>(e4m3_value(A[m * lda + k])) * e4m3_value(W[n * ldw + k]);
        const float s = a_scales[m * blocks_k + bk] * w_scales[(n / 128) * blocks_k + bk];
        acc += static_cast<double>(s) * static_cast<double>(p);
      }
      C[m + n * ldc] = static_cast<float>(acc);
    }
  }
}

}  // namespace serial
}  // namespace ozaki
