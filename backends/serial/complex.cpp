#include <ozaki/serial/complex.hpp>

#include <stdexcept>

namespace ozaki {
namespace serial {

ComplexOp zop(const ConstComplexRef& X, char trans) {
  switch (trans) {
    case 'N':
    case 'n': return {X, false};
    case 'T':
    case 't': return {X.transposed(), false};
    case 'C':
    case 'c': return {X.transposed(), true};
    default: throw std::invalid_argument("zop: transpose must be N, T or C");
  }
}

ComplexEmbedding embed(char transA, char transB, const ConstComplexRef& A,
                       const ConstComplexRef& B) {
  const ComplexOp a = zop(A, transA), b = zop(B, transB);
  if (a.cols() != b.rows()) throw std::invalid_argument("embed: inner dimensions differ");
  ComplexEmbedding e;
  e.m = a.rows();
  e.n = b.cols();
  e.k = a.cols();
  e.x.assign(static_cast<std::size_t>(4 * e.m * e.k), 0.0);
  e.y.assign(static_cast<std::size_t>(2 * e.n * e.k), 0.0);
  const std::int64_t w = 2 * e.k;
  for (std::int64_t m = 0; m < e.m; ++m) {
    for (std::int64_t k = 0; k < e.k; ++k) {
      const zdouble x = a(m, k);
      e.x[2 * m * w + 2 * k] = x.real();
      e.x[2 * m * w + 2 * k + 1] = -x.imag();
      e.x[(2 * m + 1) * w + 2 * k] = x.imag();
      e.x[(2 * m + 1) * w + 2 * k + 1] = x.real();
    }
  }
  for (std::int64_t n = 0; n < e.n; ++n) {
    for (std::int64_t k = 0; k < e.k; ++k) {
      const zdouble y = b(k, n);
      e.y[n * w + 2 * k] = y.real();
      e.y[n * w + 2 * k + 1] = y.imag();
    }
  }
  return e;
}

namespace {

/// x y with the formula of Kokkos::complex (no special cases), so that the oracle's update
/// rounds as the library's does.
zdouble times(zdouble x, zdouble y) {
  return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

/// C = alpha P + beta C, P(m, n) = (re(2m, n), re(2m+1, n)) of a 2M x N column-major C_e.
void update(zdouble alpha, const std::vector<double>& ce, zdouble beta, const ComplexRef& C) {
  const bool no_beta = beta == zdouble(0, 0);
  for (std::int64_t n = 0; n < C.cols; ++n) {
    for (std::int64_t m = 0; m < C.rows; ++m) {
      const zdouble p(ce[2 * m + n * 2 * C.rows], ce[2 * m + 1 + n * 2 * C.rows]);
      const zdouble ap = times(alpha, p);
      C(m, n) = no_beta ? ap : ap + times(beta, C(m, n));
    }
  }
}

}  // namespace

void zgemm(char transA, char transB, zdouble alpha, const ConstComplexRef& A,
           const ConstComplexRef& B, zdouble beta, const ComplexRef& C) {
  const ComplexOp a = zop(A, transA), b = zop(B, transB);
  const bool no_beta = beta == zdouble(0, 0);
  for (std::int64_t n = 0; n < C.cols; ++n) {
    for (std::int64_t m = 0; m < C.rows; ++m) {
      zdouble s(0, 0);
      for (std::int64_t k = 0; k < a.cols(); ++k) s += times(a(m, k), b(k, n));
      C(m, n) = no_beta ? times(alpha, s) : times(alpha, s) + times(beta, C(m, n));
    }
  }
}

void zdd_gemm(char transA, char transB, zdouble alpha, const ConstComplexRef& A,
              const ConstComplexRef& B, zdouble beta, const ComplexRef& C) {
  const ComplexEmbedding e = embed(transA, transB, A, B);
  const ConstMatrixRef ye_t = e.ye().transposed();  // 2K x N
  std::vector<double> ce(static_cast<std::size_t>(2 * e.m * e.n));
  for (std::int64_t n = 0; n < e.n; ++n) {
    for (std::int64_t r = 0; r < 2 * e.m; ++r) {
      const DoubleDouble d = dd_dot(e.xe(), ye_t, r, n);
      ce[r + n * 2 * e.m] = d.hi + d.lo;
    }
  }
  update(alpha, ce, beta, C);
}

CrtScale crt_zgemm(char transA, char transB, zdouble alpha, const ConstComplexRef& A,
                   const ConstComplexRef& B, zdouble beta, const ComplexRef& C, int L,
                   CrtScaling scaling) {
  const ComplexEmbedding e = embed(transA, transB, A, B);
  std::vector<double> ce(static_cast<std::size_t>(2 * e.m * e.n), 0.0);
  const MatrixRef ce_ref{ce.data(), 2 * e.m, e.n, 1, 2 * e.m};
  const CrtScale scale = crt_gemm('N', 'T', 1.0, e.xe(), e.ye(), 0.0, ce_ref, L, scaling);
  update(alpha, ce, beta, C);
  return scale;
}

ComplexBound crt_zproduct_bound(char transA, char transB, const ConstComplexRef& A,
                                const ConstComplexRef& B, const CrtScale& scale) {
  const ComplexEmbedding e = embed(transA, transB, A, B);
  const std::vector<double> zero(static_cast<std::size_t>(2 * e.m * e.n), 0.0);
  const ConstMatrixRef c0{zero.data(), 2 * e.m, e.n, 1, 2 * e.m};
  const std::vector<double> both =
      crt_error_bound('N', 'T', 1.0, e.xe(), e.ye(), 0.0, c0, scale, 0);
  ComplexBound b;
  b.re.resize(static_cast<std::size_t>(e.m * e.n));
  b.im.resize(b.re.size());
  for (std::int64_t n = 0; n < e.n; ++n) {
    for (std::int64_t m = 0; m < e.m; ++m) {
      b.re[m + n * e.m] = both[2 * m + n * 2 * e.m];
      b.im[m + n * e.m] = both[2 * m + 1 + n * 2 * e.m];
    }
  }
  return b;
}

}  // namespace serial
}  // namespace ozaki
