#pragma once
/// \file reference.hpp
/// The serial backend: plain loops, no Kokkos, no parallelism.  It is the oracle every other
/// backend is tested against:
///   - split() and int8_product() must be matched bit for bit;
///   - gemm() is Ozaki scheme I computed the simplest way (pair by pair, exact integer sums
///     per diagonal), which the Kokkos path must match to rounding;
///   - dgemm() is plain FP64 GEMM (what "native" means on a CPU);
///   - dd_gemm() is the higher-precision reference (double-double, about 2^-104 relative);
///   - error_bound() is the documented bound (docs/design.md) of scheme I against it.
///
/// The split here is written independently of the Kokkos kernels: it rounds with long double
/// and extracts digits from a 128-bit integer, where the Kokkos kernels use a 53-bit mantissa
/// and int64 arithmetic.  Both implement the definition in docs/design.md.

#include <ozaki/options.hpp>

#include <cstdint>
#include <vector>

namespace ozaki {
namespace serial {

/// A read-only strided host matrix: element (i, j) is data[i * row_stride + j * col_stride].
struct ConstMatrixRef {
  const double* data = nullptr;
  std::int64_t rows = 0, cols = 0;
  std::int64_t row_stride = 0, col_stride = 0;
  double operator()(std::int64_t i, std::int64_t j) const {
    return data[i * row_stride + j * col_stride];
  }
  ConstMatrixRef transposed() const { return {data, cols, rows, col_stride, row_stride}; }
};

/// A writable strided host matrix.
struct MatrixRef {
  double* data = nullptr;
  std::int64_t rows = 0, cols = 0;
  std::int64_t row_stride = 0, col_stride = 0;
  double& operator()(std::int64_t i, std::int64_t j) const {
    return data[i * row_stride + j * col_stride];
  }
  operator ConstMatrixRef() const { return {data, rows, cols, row_stride, col_stride}; }
};

/// The int8 slices of the rows of a matrix (rows along K), in the storage layout of the
/// Kokkos path: digits[r * slices * kpad + block(s) * kpad + k], block(s) = s, or S-1-s when
/// reversed; columns [K, kpad) of each block are zero.
struct Slices {
  int slices = 0;
  std::int64_t rows = 0, k = 0, kpad = 0;
  bool reversed = false;
  std::vector<std::int8_t> digits;
  std::vector<int> exponents;

  std::int64_t row_length() const { return slices * kpad; }
  std::int8_t digit(std::int64_t row, int s, std::int64_t col) const {
    const int block = reversed ? slices - 1 - s : s;
    return digits[row * row_length() + block * kpad + col];
  }
};

/// Smallest e with mu <= (127/128) 2^e, 0 for mu == 0.
int scale_exponent(double mu);

/// The scale exponent of row r of X: scale_exponent(max_k |X(r, k)|).
int row_scale_exponent(const ConstMatrixRef& X, std::int64_t r);

/// True when some element is NaN or Inf.
bool has_nonfinite(const ConstMatrixRef& X);

/// Splits every row of X (rows x K) into S slices.  Requires finite X.
Slices split(const ConstMatrixRef& X, int S, bool reversed);

/// The worst-entry ratios of ozaki/impl/slices/accuracy.hpp, with D_mn = (|A||B|)_mn 2^-(e_m+e_n):
/// split = max_mn (l1a_m [b_n != 0] + l1b_n [a_m != 0]) / D_mn, inverse = max_mn 1 / D_mn
/// (over the entries with a nonzero row and column).
struct ErrorRatios {
  double split = 0;
  double inverse = 0;
};

/// The ratios computed exactly (D_mn from |A||B| itself).
ErrorRatios error_ratios(const ConstMatrixRef& opA, const ConstMatrixRef& opB);

/// The upper bounds of the ratios that ozaki computes from int8 magnitudes
/// (ozaki/impl/slices/estimate.hpp).
ErrorRatios error_ratios_estimate(const ConstMatrixRef& opA, const ConstMatrixRef& opB);

/// c[m + n*ldc] = sum_{l<length} a[m*lda + l] * b[n*ldb + l] with INT32 accumulation;
/// throws std::overflow_error if any partial sum leaves the INT32 range.
void int8_gemm(std::int64_t rows_a, std::int64_t rows_b, std::int64_t length, const std::int8_t* a,
               std::int64_t lda, const std::int8_t* b, std::int64_t ldb, std::int32_t* c,
               std::int64_t ldc);

/// The slice pairs (i, j) a policy selects, in order of weight (i+j, then i).
std::vector<std::pair<int, int>> selected_pairs(int S, PairPolicy policy, int pair_count);

/// C = alpha op(A) op(B) + beta C by Ozaki scheme I, the simplest way.  S must be given
/// (not auto); A and B must be finite.  transA/transB as in BLAS.
void gemm(char transA, char transB, double alpha, const ConstMatrixRef& A, const ConstMatrixRef& B,
          double beta, const MatrixRef& C, int S, PairPolicy policy, int pair_count = 0);

/// Plain FP64 GEMM, loops in the natural order (k innermost).
void dgemm(char transA, char transB, double alpha, const ConstMatrixRef& A, const ConstMatrixRef& B,
           double beta, const MatrixRef& C);

/// A double-double number: value = hi + lo, |lo| <= ulp(hi)/2.
struct DoubleDouble {
  double hi = 0, lo = 0;
};

/// sum_k opA(m,k) opB(k,n) in double-double: each product exact (fma), sums error-free.
DoubleDouble dd_dot(const ConstMatrixRef& opA, const ConstMatrixRef& opB, std::int64_t m,
                    std::int64_t n);

/// C = alpha op(A) op(B) + beta C computed in double-double, rounded once to double.
void dd_gemm(char transA, char transB, double alpha, const ConstMatrixRef& A,
             const ConstMatrixRef& B, double beta, const MatrixRef& C);

/// Per-element bound on |C_scheme_I - (alpha op(A) op(B) + beta C0)| for S slices, a pair
/// policy and `summands` FP64 terms in the recombination sum (the INT8 GEMM count reported by
/// ozaki::gemm; K chunks count separately).  docs/design.md, "Error bound", derives it.
/// Returns M x N values, column-major.
std::vector<double> error_bound(char transA, char transB, double alpha, const ConstMatrixRef& A,
                                const ConstMatrixRef& B, double beta, const ConstMatrixRef& C0,
                                int S, PairPolicy policy, int pair_count, int summands);

/// op(X) for a BLAS transpose character.
ConstMatrixRef op(const ConstMatrixRef& X, char trans);

/// W8A8 quantized GEMM as ozaki/quantized.hpp defines it, before C's own rounding:
/// C(m, n) = fmaf(float(P), a[m] * w[n], bias[n] or 0) with P = sum_k A(m, k) W(n, k) exact in
/// INT64; A is M x K and W is N x K, rows K-contiguous (leading dimensions lda, ldw); C is
/// column-major (ldc).  bias may be null.
void quantized_gemm(std::int64_t M, std::int64_t N, std::int64_t K, const std::int8_t* A,
                    std::int64_t lda, const std::int8_t* W, std::int64_t ldw, const float* a,
                    const float* w, const float* bias, float* C, std::int64_t ldc);

/// FP8 e4m3 (ozaki/half_precision.hpp, float8_e4m3) decoded by its definition: (-1)^s 2^(e-7)
/// (1 + f/8), or 2^-6 f/8 where e = 0; NaN for S.1111.111.
double e4m3_value(std::uint8_t code);
/// The e4m3 code nearest x by search over every finite code (ties to the even code), +-448
/// beyond the largest, NaN's code for NaN: an implementation independent of float8_e4m3's bit
/// arithmetic.
std::uint8_t e4m3_nearest(float x);

/// FP8 block quantization as ozaki/fp8.hpp defines it: X (R x K, row-major, ldx) in blocks of
/// block_rows x 128, Q (R x K row-major, K per row) and scales (ceil(R / block_rows) x
/// ceil(K / 128), row-major).
void quantize_fp8_blocks(std::int64_t R, std::int64_t K, const float* X, std::int64_t ldx,
                         std::int64_t block_rows, std::uint8_t* Q, float* scales);

/// FP8 block-scaled GEMM as ozaki/impl/quantized/fp8.hpp defines its result, before C's own
/// rounding: A (M x K) and W (N x K) e4m3 codes, rows K-contiguous (lda, ldw); a_scales
/// (M x ceil(K / 128)) and w_scales (ceil(N / 128) x ceil(K / 128)) row-major; C column-major
/// (ldc).  Block sums in long double (exact), the scaled sum in double, one rounding to float.
void fp8_gemm(std::int64_t M, std::int64_t N, std::int64_t K, const std::uint8_t* A,
              std::int64_t lda, const std::uint8_t* W, std::int64_t ldw, const float* a_scales,
              const float* w_scales, float* C, std::int64_t ldc);

}  // namespace serial
}  // namespace ozaki
