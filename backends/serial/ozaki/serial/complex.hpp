#pragma once
/// \file complex.hpp
/// The serial oracle of complex GEMM (docs/design.md §8), the plainest way:
///   - embed(): the real embedding X_e, Y_e of op(A) and op(B), to be matched bit for bit;
///   - zgemm(): plain complex FP64 GEMM (what "native" means on a CPU);
///   - zdd_gemm(): the higher-precision reference: each of Re and Im of op(A) op(B) is a real
///     dot product of length 2K of the embedding, summed in double-double (dd_dot);
///   - crt_zgemm(), crt_zerror_bound(): scheme II on the embedding (crt.hpp) and its
///     documented bound, part by part.
/// std::complex<double> has the layout of Kokkos::complex<double> (real, then imaginary).

#include <ozaki/options.hpp>
#include <ozaki/serial/crt.hpp>
#include <ozaki/serial/reference.hpp>

#include <complex>
#include <cstdint>
#include <vector>

namespace ozaki {
namespace serial {

using zdouble = std::complex<double>;

/// A read-only strided host matrix of complex numbers.
struct ConstComplexRef {
  const zdouble* data = nullptr;
  std::int64_t rows = 0, cols = 0;
  std::int64_t row_stride = 0, col_stride = 0;
  zdouble operator()(std::int64_t i, std::int64_t j) const {
    return data[i * row_stride + j * col_stride];
  }
  ConstComplexRef transposed() const { return {data, cols, rows, col_stride, row_stride}; }
};

/// A writable strided host matrix of complex numbers.
struct ComplexRef {
  zdouble* data = nullptr;
  std::int64_t rows = 0, cols = 0;
  std::int64_t row_stride = 0, col_stride = 0;
  zdouble& operator()(std::int64_t i, std::int64_t j) const {
    return data[i * row_stride + j * col_stride];
  }
  operator ConstComplexRef() const { return {data, rows, cols, row_stride, col_stride}; }
};

/// op(X) for 'N', 'T' or 'C' as element access with the conjugation applied.
struct ComplexOp {
  ConstComplexRef X;
  bool conjugate = false;
  std::int64_t rows() const { return X.rows; }
  std::int64_t cols() const { return X.cols; }
  zdouble operator()(std::int64_t i, std::int64_t j) const {
    const zdouble x = X(i, j);
    return conjugate ? std::conj(x) : x;
  }
};
ComplexOp zop(const ConstComplexRef& X, char trans);

/// X_e (2M x 2K) and Y_e (N x 2K) of op(A) and op(B), row-major (K contiguous):
/// X_e row 2m = (Re x, -Im x, ...), row 2m+1 = (Im x, Re x, ...), Y_e row n = (Re y, Im y, ...).
struct ComplexEmbedding {
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<double> x, y;
  ConstMatrixRef xe() const { return {x.data(), 2 * m, 2 * k, 2 * k, 1}; }
  ConstMatrixRef ye() const { return {y.data(), n, 2 * k, 2 * k, 1}; }
};
ComplexEmbedding embed(char transA, char transB, const ConstComplexRef& A,
                       const ConstComplexRef& B);

/// C = alpha op(A) op(B) + beta C in complex FP64, k innermost; beta == 0 does not read C.
void zgemm(char transA, char transB, zdouble alpha, const ConstComplexRef& A,
           const ConstComplexRef& B, zdouble beta, const ComplexRef& C);

/// C = alpha op(A) op(B) + beta C with op(A) op(B) in double-double (part by part, through the
/// embedding), then the update in complex FP64.
void zdd_gemm(char transA, char transB, zdouble alpha, const ConstComplexRef& A,
              const ConstComplexRef& B, zdouble beta, const ComplexRef& C);

/// Scheme II with L moduli on the embedding: C_e = X_e Y_e^T by crt_gemm, then
/// C = alpha (C_e(2m, n) + i C_e(2m+1, n)) + beta C.  Returns the scaling of the embedding's
/// rows (2M bits for X_e, N for Y_e).
CrtScale crt_zgemm(char transA, char transB, zdouble alpha, const ConstComplexRef& A,
                   const ConstComplexRef& B, zdouble beta, const ComplexRef& C, int L,
                   CrtScaling scaling);

/// Per-entry bounds on |Re| and |Im| of op(A) op(B) computed by scheme II with `scale` minus
/// the exact product (crt_error_bound of the embedding, alpha = 1, beta = 0), M x N
/// column-major each.
struct ComplexBound {
  std::vector<double> re, im;
};
ComplexBound crt_zproduct_bound(char transA, char transB, const ConstComplexRef& A,
                                const ConstComplexRef& B, const CrtScale& scale);

}  // namespace serial
}  // namespace ozaki
