// ozaki::trsm, trmm, syrk, herk, symm and hemm on the test space (docs/design.md §12): every
// side / uplo / trans / diag, both scalars, three layouts, against long double references on
// data with a controlled exponent spread: trsm's componentwise backward error and trmm's
// forward error within their Reports' bounds and those within the same recursion's with FP64
// GEMMs; syrk's and herk's triangle within the GEMM's componentwise promise and bitwise the
// full GEMM's entries under fixed counts; symm and hemm bitwise the GEMM of the filled-in
// operand; the other triangle and a unit diagonal never read; BLAS semantics (alpha = 0,
// beta = 0, K = 0); bad arguments with the output untouched.

#include "common.hpp"

#include <ozaki/impl/common/bounds.hpp>
#include <ozaki/symm.hpp>
#include <ozaki/syrk.hpp>
#include <ozaki/trmm.hpp>
#include <ozaki/trsm.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace ozaki_test;

using ozaki::Algorithm;
using ozaki::Options;
using KC = Kokkos::complex<double>;
using LC = std::complex<long double>;

constexpr double u = ozaki::Impl::fp64_unit_roundoff;
double gamma(double n) { return ozaki::Impl::gamma_bound(n, u); }

long double wide(double x) { return x; }
LC wide(const KC& x) { return LC(x.real(), x.imag()); }
long double magnitude(long double x) { return std::fabs(x); }
long double magnitude(const LC& x) { return std::abs(x); }
double conj_if(double x, bool) { return x; }
KC conj_if(const KC& x, bool c) { return c ? Kokkos::conj(x) : x; }
bool is_nan(double x) { return std::isnan(x); }
bool is_nan(const KC& x) { return std::isnan(x.real()) || std::isnan(x.imag()); }

/// A column-major host matrix of T.
template <class T>
struct Host {
  std::int64_t rows = 0, cols = 0;
  std::vector<T> values;
  Host(std::int64_t r, std::int64_t c) : rows(r), cols(c), values(r * c, T(0)) {}
  T& operator()(std::int64_t i, std::int64_t j) { return values[i + j * rows]; }
  const T& operator()(std::int64_t i, std::int64_t j) const { return values[i + j * rows]; }
};

template <class T>
Host<T> random_matrix(std::int64_t rows, std::int64_t cols, double phi, Random& rng) {
  Host<T> h(rows, cols);
  for (auto& x : h.values) x = spread_value<T>(rng, phi);
  return h;
}

template <class T>
DeviceOf<T> to_device(const Host<T>& h, Layout layout) {
  return DeviceOf<T>(h.values.data(), h.rows, h.cols, layout);
}

template <class T>
Host<T> to_host(const DeviceOf<T>& d) {
  Host<T> h(d.view.extent(0), d.view.extent(1));
  d.copy(h.values.data(), false);
  return h;
}

template <class T>
bool same_bits(const Host<T>& a, const Host<T>& b) {
  return a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(T)) == 0;
}

const std::vector<Layout> layouts = {Layout::Left, Layout::Right, Layout::Stride};

Options with_algorithm(Algorithm a, std::int64_t leaf) {
  Options o;
  o.algorithm = a;
  o.experimental.level3_leaf = leaf;
  return o;
}

// ---------------------------------------------------------------------------------------------
// trsm

/// A triangular n x n matrix: the `uplo` triangle random (phi), the other NaN (never read);
/// diagonal: NaN for a unit diagonal (never read), else the row's off-diagonal magnitude plus
/// one, so that X stays of B's size.
template <class T>
Host<T> triangular(std::int64_t n, bool upper, bool unit, double phi, Random& rng) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Host<T> a(n, n);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < n; ++i) {
      const bool stored = upper ? i < j : i > j;
      a(i, j) = stored ? spread_value<T>(rng, phi) * (unit ? 1.0 / n : 1.0) : T(nan);
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    double off = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      if (i != j && (upper ? i < j : i > j)) off += std::abs(wide(a(i, j)));
      if (i != j && (upper ? j < i : j > i)) off += std::abs(wide(a(j, i)));
    }
    a(i, i) = unit ? T(nan) : T(1.0 + off);
  }
  return a;
}

struct TrsmCase {
  char side, uplo, trans, diag;
};

/// op(A)(i, j) as the triangle and diagonal define it.
template <class T>
T op_entry(const Host<T>& a, const TrsmCase& c, std::int64_t i, std::int64_t j) {
  const bool transposed = c.trans != 'N';
  const std::int64_t r = transposed ? j : i, s = transposed ? i : j;
  if (r == s) return c.diag == 'U' ? T(1) : conj_if(a(r, s), c.trans == 'C');
  const bool stored = c.uplo == 'U' ? r < s : r > s;
  return stored ? conj_if(a(r, s), c.trans == 'C') : T(0);
}

/// max over entries of |alpha B - op(A) X| / (|op(A)||X| + |alpha B|), in long double.
template <class T>
double backward_error(const Host<T>& a, const TrsmCase& c, T alpha, const Host<T>& b,
                      const Host<T>& x) {
  const std::int64_t m = b.rows, n = b.cols, inner = c.side == 'L' ? m : n;
  double worst = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      auto r = wide(alpha) * wide(b(i, j));
      long double scale = magnitude(r);
      for (std::int64_t s = 0; s < inner; ++s) {
        const auto term = c.side == 'L' ? wide(op_entry(a, c, i, s)) * wide(x(s, j))
                                        : wide(x(i, s)) * wide(op_entry(a, c, s, j));
        r -= term;
        scale += c.side == 'L' ? magnitude(wide(op_entry(a, c, i, s))) * magnitude(wide(x(s, j)))
                               : magnitude(wide(x(i, s))) * magnitude(wide(op_entry(a, c, s, j)));
      }
      if (scale > 0) worst = std::max(worst, static_cast<double>(magnitude(r) / scale));
    }
  }
  return worst;
}

template <class T>
std::vector<TrsmCase> trsm_cases() {
  std::vector<TrsmCase> cases;
  const std::string transposes = std::is_same<T, double>::value ? "NT" : "NTC";
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'})
      for (char trans : transposes)
        for (char diag : {'N', 'U'}) cases.push_back({side, uplo, trans, diag});
  return cases;
}

/// max over entries of |B - alpha op(A) B0| / (|alpha| |op(A)||B0|), in long double.
template <class T>
double trmm_error(const Host<T>& a, const TrsmCase& c, T alpha, const Host<T>& b0,
                  const Host<T>& b) {
  const std::int64_t m = b0.rows, n = b0.cols, inner = c.side == 'L' ? m : n;
  double worst = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      decltype(wide(T(0))) exact = 0;
      long double scale = 0;
      for (std::int64_t s = 0; s < inner; ++s) {
        const auto x = c.side == 'L' ? wide(op_entry(a, c, i, s)) : wide(b0(i, s));
        const auto y = c.side == 'L' ? wide(b0(s, j)) : wide(op_entry(a, c, s, j));
        exact += x * y;
        scale += magnitude(x) * magnitude(y);
      }
      exact *= wide(alpha);
      scale *= magnitude(wide(alpha));
      if (scale > 0) {
        worst = std::max(worst, static_cast<double>(magnitude(wide(b(i, j)) - exact) / scale));
      }
    }
  }
  return worst;
}

/// Every case of trsm (multiply false) or trmm on random data: the backward error (trsm) or the
/// forward error (trmm) within the Report's bound, that bound within the same recursion's with
/// FP64 GEMMs (Algorithm::Native), and that within an FP64 routine's gamma_n plus a few units
/// per level (the splits round to 16).
template <class T>
void check_triangular_bounds(bool multiply, Algorithm algorithm, double phi) {
  Random rng(multiply ? 111 : 101);
  const std::int64_t m = multiply ? 43 : 45, n = multiply ? 36 : 38, leaf = 8;
  const T alpha = T(multiply ? -1.5 : 0.75);
  for (const TrsmCase& c : trsm_cases<T>()) {
    const std::int64_t na = c.side == 'L' ? m : n;
    const Host<T> a = triangular<T>(na, c.uplo == 'U', c.diag == 'U', phi, rng);
    const Host<T> b = random_matrix<T>(m, n, phi, rng);
    for (Layout layout : layouts) {
      SCOPED_TRACE(std::string(multiply ? "trmm" : "trsm") + " side " + c.side + " uplo " + c.uplo +
                   " trans " + c.trans + " diag " + c.diag + " layout " + name(layout));
      const std::string side(1, c.side), uplo(1, c.uplo), trans(1, c.trans), diag(1, c.diag);
      auto run = [&](Algorithm used, Host<T>& out) {
        DeviceOf<T> A = to_device(a, layout), B = to_device(b, layout);
        const Options o = with_algorithm(used, leaf);
        const ozaki::Report r =
            multiply ? ozaki::trmm(TestSpace(), side.c_str(), uplo.c_str(), trans.c_str(),
                                   diag.c_str(), alpha, A.view, B.view, o)
                     : ozaki::trsm(TestSpace(), side.c_str(), uplo.c_str(), trans.c_str(),
                                   diag.c_str(), alpha, A.view, B.view, o);
        out = to_host(B);
        return r;
      };
      auto error = [&](const Host<T>& out) {
        return multiply ? trmm_error(a, c, alpha, b, out) : backward_error(a, c, alpha, b, out);
      };
      Host<T> x(0, 0), native_x(0, 0);
      const ozaki::Report r = run(algorithm, x);
      const ozaki::Report native = run(Algorithm::Native, native_x);
      EXPECT_GT(r.error_bound, 0);
      EXPECT_LE(error(x), r.error_bound);
      EXPECT_LE(error(native_x), native.error_bound);
      EXPECT_LE(r.error_bound, native.error_bound * (1 + 1e-12));
      EXPECT_LE(native.error_bound, 1.4142135623730951 * gamma(3 * na));
      if (algorithm != Algorithm::Auto) {
        EXPECT_TRUE(r.algorithm == algorithm || r.fallback) << r.reason;
      }
    }
  }
}

TEST(Trsm, EveryCaseWithinAnFp64TrsmsBackwardErrorInt8Crt) {
  check_triangular_bounds<double>(false, Algorithm::Int8Crt, 1.0);
  check_triangular_bounds<KC>(false, Algorithm::Int8Crt, 1.0);
}

TEST(Trsm, EveryCaseWithinAnFp64TrsmsBackwardErrorWideSpread) {
  check_triangular_bounds<double>(false, Algorithm::Int8Crt, 3.0);
  check_triangular_bounds<KC>(false, Algorithm::Int8Crt, 3.0);
}

TEST(Trsm, EveryCaseWithinAnFp64TrsmsBackwardErrorOtherAlgorithms) {
  for (Algorithm a : {Algorithm::Int8Slices, Algorithm::Auto}) {
    check_triangular_bounds<double>(false, a, 1.0);
    check_triangular_bounds<KC>(false, a, 1.0);
  }
}

TEST(Trmm, EveryCaseWithinItsBoundInt8Crt) {
  check_triangular_bounds<double>(true, Algorithm::Int8Crt, 1.0);
  check_triangular_bounds<KC>(true, Algorithm::Int8Crt, 1.0);
}

TEST(Trmm, EveryCaseWithinItsBoundWideSpreadAndOtherAlgorithms) {
  check_triangular_bounds<double>(true, Algorithm::Int8Crt, 3.0);
  for (Algorithm a : {Algorithm::Int8Slices, Algorithm::Auto}) {
    check_triangular_bounds<double>(true, a, 1.0);
    check_triangular_bounds<KC>(true, a, 1.0);
  }
}

TEST(Trmm, BadArgumentsThrowAndLeaveBUntouched) {
  Random rng(12);
  const Host<double> a = triangular<double>(16, true, false, 1.0, rng);
  const Host<double> b = random_matrix<double>(16, 4, 1.0, rng);
  DeviceOf<double> A = to_device(a, Layout::Left), B = to_device(b, Layout::Left);
  EXPECT_THROW(ozaki::trmm(TestSpace(), "R", "U", "N", "N", 1.0, A.view, B.view),
               ozaki::InvalidArgument);  // A must be 4 x 4
  EXPECT_THROW(ozaki::trmm(TestSpace(), "L", "U", "N", "Q", 1.0, A.view, B.view),
               ozaki::InvalidArgument);
  EXPECT_TRUE(same_bits(to_host(B), b));
}

TEST(Trsm, OneDiagonalBlockIsSubstitutionAlone) {
  Random rng(5);
  const Host<double> a = triangular<double>(20, false, false, 1.0, rng);
  const Host<double> b = random_matrix<double>(20, 7, 1.0, rng);
  DeviceOf<double> A = to_device(a, Layout::Left), B = to_device(b, Layout::Left);
  const ozaki::Report r = ozaki::trsm(TestSpace(), "L", "L", "N", "N", 1.0, A.view, B.view,
                                      with_algorithm(Algorithm::Int8Crt, 64));
  EXPECT_EQ(r.algorithm, Algorithm::Native);
  EXPECT_EQ(r.int8_gemms, 0);
  EXPECT_LE(backward_error(a, {'L', 'L', 'N', 'N'}, 1.0, b, to_host(B)), r.error_bound);
}

/// One diagonal block of 29 or 61 rows (the kernel that takes a right-hand side per thread, in
/// registers on GPUs: up to 64 rows of doubles, 32 of complex), of 200 (on GPUs the kernel that
/// keeps 8 rows per thread of a warp in registers) and of 300 (the kernel that keeps them in B),
/// every case, trsm and trmm: the substitution's error within gamma_b (the Report's bound, no
/// GEMM).
template <class T>
void check_large_diagonal_blocks() {
  Random rng(17);
  const T alpha = T(0.5);
  for (const std::int64_t rows : {29, 61, 200, 300}) {
    for (const bool multiply : {false, true}) {
      for (const TrsmCase& c : trsm_cases<T>()) {
        SCOPED_TRACE(std::string(multiply ? "trmm" : "trsm") + " rows " + std::to_string(rows) +
                     " side " + c.side + " uplo " + c.uplo + " trans " + c.trans + " diag " +
                     c.diag);
        const Host<T> a = triangular<T>(rows, c.uplo == 'U', c.diag == 'U', 1.0, rng);
        const bool left = c.side == 'L';
        // More right-hand sides than one team of the per-thread kernel takes, where it runs.
        const std::int64_t vectors = rows <= 64 ? 70 : 9;
        const Host<T> b = random_matrix<T>(left ? rows : vectors, left ? vectors : rows, 1.0, rng);
        DeviceOf<T> A = to_device(a, Layout::Left), B = to_device(b, Layout::Left);
        const std::string side(1, c.side), uplo(1, c.uplo), trans(1, c.trans), diag(1, c.diag);
        const Options o = with_algorithm(Algorithm::Int8Crt, 512);
        const ozaki::Report r =
            multiply ? ozaki::trmm(TestSpace(), side.c_str(), uplo.c_str(), trans.c_str(),
                                   diag.c_str(), alpha, A.view, B.view, o)
                     : ozaki::trsm(TestSpace(), side.c_str(), uplo.c_str(), trans.c_str(),
                                   diag.c_str(), alpha, A.view, B.view, o);
        EXPECT_EQ(r.int8_gemms, 0);
        const Host<T> out = to_host(B);
        const double error =
            multiply ? trmm_error(a, c, alpha, b, out) : backward_error(a, c, alpha, b, out);
        EXPECT_GT(error, 0.0);
        EXPECT_LE(error, r.error_bound);
      }
    }
  }
}

TEST(Trsm, DiagonalBlocksOfEveryKernelWithinTheSubstitutionsBound) {
  check_large_diagonal_blocks<double>();
  check_large_diagonal_blocks<KC>();
}

TEST(Trsm, AlphaZeroWritesZerosWithoutReadingBTrmmToo) {
  Random rng(6);
  const Host<double> a = triangular<double>(30, true, false, 1.0, rng);
  Host<double> b(30, 9);
  for (auto& x : b.values) x = std::numeric_limits<double>::quiet_NaN();
  for (bool multiply : {false, true}) {
    DeviceOf<double> A = to_device(a, Layout::Left), B = to_device(b, Layout::Left);
    if (multiply) {
      ozaki::trmm(TestSpace(), "L", "U", "N", "N", 0.0, A.view, B.view);
    } else {
      ozaki::trsm(TestSpace(), "L", "U", "N", "N", 0.0, A.view, B.view);
    }
    for (double x : to_host(B).values) EXPECT_EQ(x, 0.0);
  }
}

TEST(Trsm, EmptyBIsANoOp) {
  DeviceOf<double> A(0, 0, Layout::Left), B(0, 5, Layout::Left);
  const ozaki::Report r = ozaki::trsm(TestSpace(), "L", "U", "N", "N", 1.0, A.view, B.view);
  EXPECT_EQ(r.algorithm, Algorithm::None);
}

TEST(Trsm, NanInBPropagates) {
  Random rng(7);
  const Host<double> a = triangular<double>(40, false, false, 1.0, rng);
  Host<double> b = random_matrix<double>(40, 6, 1.0, rng);
  b(3, 2) = std::numeric_limits<double>::quiet_NaN();
  DeviceOf<double> A = to_device(a, Layout::Left), B = to_device(b, Layout::Left);
  ozaki::trsm(TestSpace(), "L", "L", "N", "N", 1.0, A.view, B.view,
              with_algorithm(Algorithm::Int8Crt, 8));
  const Host<double> x = to_host(B);
  // Forward substitution: rows from 3 on of column 2 depend on b(3, 2); column 0 does not.
  EXPECT_TRUE(std::isnan(x(39, 2)));
  for (std::int64_t i = 0; i < 40; ++i) EXPECT_FALSE(std::isnan(x(i, 0)));
}

TEST(Trsm, BadArgumentsThrowAndLeaveBUntouched) {
  Random rng(8);
  const Host<double> a = triangular<double>(12, false, false, 1.0, rng);
  const Host<double> b = random_matrix<double>(12, 5, 1.0, rng);
  DeviceOf<double> A = to_device(a, Layout::Left), B = to_device(b, Layout::Left);
  DeviceOf<double> wrong(11, 11, Layout::Left);
  auto call = [&](const char* side, const char* uplo, const char* trans, const char* diag,
                  const decltype(A.view)& a_view) {
    return ozaki::trsm(TestSpace(), side, uplo, trans, diag, 1.0, a_view, B.view);
  };
  EXPECT_THROW(call("X", "L", "N", "N", A.view), ozaki::InvalidArgument);
  EXPECT_THROW(call("L", "X", "N", "N", A.view), ozaki::InvalidArgument);
  EXPECT_THROW(call("L", "L", "X", "N", A.view), ozaki::InvalidArgument);
  EXPECT_THROW(call("L", "L", "N", "X", A.view), ozaki::InvalidArgument);
  EXPECT_THROW(call("", "L", "N", "N", A.view), ozaki::InvalidArgument);
  EXPECT_THROW(call("L", "L", "N", "N", wrong.view), ozaki::InvalidArgument);
  EXPECT_THROW(call("R", "L", "N", "N", A.view), ozaki::InvalidArgument);  // A must be 5 x 5
  Options bad;
  bad.experimental.level3_leaf = 0;
  EXPECT_THROW(ozaki::trsm(TestSpace(), "L", "L", "N", "N", 1.0, A.view, B.view, bad),
               ozaki::InvalidArgument);
  bad = Options{};
  bad.slices = 0;
  EXPECT_THROW(ozaki::trsm(TestSpace(), "L", "L", "N", "N", 2.0, A.view, B.view, bad),
               ozaki::InvalidArgument);
  // B aliasing A.
  DeviceOf<double> square = to_device(a, Layout::Left);
  EXPECT_THROW(ozaki::trsm(TestSpace(), "L", "L", "N", "N", 1.0, square.view, square.view),
               ozaki::InvalidArgument);
  EXPECT_TRUE(same_bits(to_host(B), b));
  EXPECT_TRUE(same_bits(to_host(square), a));
}

TEST(Trsm, WorkspaceServesRepeatedCallsWithoutGrowing) {
  Random rng(9);
  const Host<double> a = triangular<double>(50, false, false, 1.0, rng);
  const Host<double> b = random_matrix<double>(50, 20, 1.0, rng);
  ozaki::Workspace<TestSpace> ws;
  const Options o = with_algorithm(Algorithm::Int8Crt, 8);
  Host<double> first(0, 0);
  for (int call = 0; call < 3; ++call) {
    DeviceOf<double> A = to_device(a, Layout::Left), B = to_device(b, Layout::Left);
    const std::int64_t before = ws.allocations();
    ozaki::trsm(TestSpace(), "L", "L", "N", "N", 1.0, A.view, B.view, o, ws);
    if (call > 0) {
      EXPECT_EQ(ws.allocations(), before);
      EXPECT_TRUE(same_bits(to_host(B), first));
    } else {
      first = to_host(B);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// syrk and herk

struct RankKCase {
  bool hermitian;
  char uplo, trans;
};

/// op(A)(i, l).
template <class T>
T op_a(const Host<T>& a, char trans, std::int64_t i, std::int64_t l) {
  return trans == 'N' ? a(i, l) : conj_if(a(l, i), trans == 'C');
}

/// The entries (i, j) of the triangle: |C - (alpha op(A) op(A)^T|H + beta C0)| within
/// bound |alpha| (|op(A)||op(A)^T|) + gamma_4 |beta C0| (herk's diagonal: real parts); the
/// other triangle bitwise C0's.  `nan_index` >= 0: op(A)'s row nan_index held a NaN that `a`
/// does not, and the triangle's entries in that row and column must be NaN.
template <class T>
void expect_rank_k_within(const RankKCase& c, T alpha, const Host<T>& a, T beta, const Host<T>& c0,
                          const Host<T>& result, double bound, std::int64_t nan_index = -1) {
  const std::int64_t n = c0.rows, k = c.trans == 'N' ? a.cols : a.rows;
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < n; ++i) {
      const bool in_triangle = c.uplo == 'U' ? i <= j : i >= j;
      if (!in_triangle) {
        EXPECT_EQ(std::memcmp(&result(i, j), &c0(i, j), sizeof(T)), 0) << i << "," << j;
        continue;
      }
      if (i == nan_index || j == nan_index) {
        EXPECT_TRUE(std::isnan(std::real(wide(result(i, j))))) << i << "," << j;
        continue;
      }
      decltype(wide(T(0))) exact = 0;
      long double scale = 0;
      for (std::int64_t l = 0; l < k; ++l) {
        const T x = op_a(a, c.trans, i, l);
        const T y = c.hermitian ? conj_if(op_a(a, c.trans, j, l), true) : op_a(a, c.trans, j, l);
        exact += wide(x) * wide(y);
        scale += magnitude(wide(x)) * magnitude(wide(y));
      }
      T old = beta == T(0) ? T(0) : c0(i, j);
      if (c.hermitian && i == j) old = T(static_cast<double>(std::real(wide(old))));
      exact = wide(alpha) * exact + wide(beta) * wide(old);
      const long double allowed =
          bound * magnitude(wide(alpha)) * scale + gamma(4) * magnitude(wide(beta) * wide(old));
      EXPECT_LE(magnitude(wide(result(i, j)) - exact), allowed) << i << "," << j;
      if (c.hermitian && i == j) EXPECT_EQ(std::imag(wide(result(i, i))), 0.0L);
    }
  }
}

template <class T>
std::vector<RankKCase> rank_k_cases() {
  std::vector<RankKCase> cases;
  for (char uplo : {'U', 'L'}) {
    for (char trans : std::string(std::is_same<T, double>::value ? "NTC" : "NT"))
      cases.push_back({false, uplo, trans});
    if (!std::is_same<T, double>::value) {
      for (char trans : {'N', 'C'}) cases.push_back({true, uplo, trans});
    }
  }
  return cases;
}

template <class T>
ozaki::Report call_rank_k(const RankKCase& c, T alpha, const DeviceOf<T>& A, T beta,
                          const DeviceOf<T>& C, const Options& o) {
  const std::string uplo(1, c.uplo), trans(1, c.trans);
  if constexpr (std::is_same<T, KC>::value) {
    if (c.hermitian) {
      return ozaki::herk(TestSpace(), uplo.c_str(), trans.c_str(), alpha.real(), A.view,
                         beta.real(), C.view, o);
    }
  }
  return ozaki::syrk(TestSpace(), uplo.c_str(), trans.c_str(), alpha, A.view, beta, C.view, o);
}

/// C0: random, NaN where a call must not read it (the other triangle; beta = 0: all of it;
/// herk: the diagonal's imaginary parts).
template <class T>
Host<T> rank_k_c0(std::int64_t n, const RankKCase& c, bool beta_zero, Random& rng) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Host<T> c0 = random_matrix<T>(n, n, 1.0, rng);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < n; ++i) {
      const bool in_triangle = c.uplo == 'U' ? i <= j : i >= j;
      if (!in_triangle || beta_zero) c0(i, j) = T(nan);
    }
  }
  if constexpr (std::is_same<T, KC>::value) {
    if (c.hermitian && !beta_zero) {
      for (std::int64_t i = 0; i < n; ++i) c0(i, i) = KC(c0(i, i).real(), nan);
    }
  }
  return c0;
}

template <class T>
void check_rank_k_bounds(Algorithm algorithm, double phi) {
  Random rng(202);
  const std::int64_t n = 41, k = 57, leaf = 8;
  for (const RankKCase& c : rank_k_cases<T>()) {
    const Host<T> a =
        c.trans == 'N' ? random_matrix<T>(n, k, phi, rng) : random_matrix<T>(k, n, phi, rng);
    for (double beta_value : {0.0, -0.5}) {
      const Host<T> c0 = rank_k_c0<T>(n, c, beta_value == 0.0, rng);
      for (Layout layout : layouts) {
        SCOPED_TRACE(std::string(c.hermitian ? "herk" : "syrk") + " uplo " + c.uplo + " trans " +
                     c.trans + " beta " + std::to_string(beta_value) + " layout " + name(layout));
        DeviceOf<T> A = to_device(a, layout), C = to_device(c0, layout);
        const ozaki::Report r =
            call_rank_k(c, T(1.25), A, T(beta_value), C, with_algorithm(algorithm, leaf));
        EXPECT_GT(r.error_bound, 0);
        // Within native's promise for K (complex: the complex GEMM's), plus one rounding.
        EXPECT_LE(r.error_bound, 1.4142135623730951 * gamma(k + 4) + 2 * u);
        expect_rank_k_within(c, T(1.25), a, T(beta_value), c0, to_host(C), r.error_bound);
      }
    }
  }
}

TEST(Syrk, EveryCaseWithinTheGemmPromiseInt8Crt) {
  check_rank_k_bounds<double>(Algorithm::Int8Crt, 1.0);
  check_rank_k_bounds<KC>(Algorithm::Int8Crt, 1.0);
}

TEST(Syrk, EveryCaseWithinTheGemmPromiseWideSpread) {
  check_rank_k_bounds<double>(Algorithm::Int8Crt, 3.0);
  check_rank_k_bounds<KC>(Algorithm::Int8Crt, 3.0);
}

TEST(Syrk, EveryCaseWithinTheGemmPromiseOtherAlgorithms) {
  for (Algorithm a : {Algorithm::Int8Slices, Algorithm::Auto, Algorithm::Native}) {
    check_rank_k_bounds<double>(a, 1.0);
    check_rank_k_bounds<KC>(a, 1.0);
  }
}

/// With a fixed count and scaling, each entry of the triangle is bitwise the full GEMM's
/// (the same rows, the same K, one reconstruction per entry).
template <class T>
void check_rank_k_bitwise_gemm() {
  Random rng(303);
  const std::int64_t n = 50, k = 33;
  Options o = with_algorithm(Algorithm::Int8Crt, 16);
  o.moduli = 14;
  o.crt_scaling = ozaki::CrtScaling::Fast;
  for (const RankKCase& c : rank_k_cases<T>()) {
    SCOPED_TRACE(std::string(c.hermitian ? "herk" : "syrk") + " uplo " + c.uplo + " trans " +
                 c.trans);
    const Host<T> a =
        c.trans == 'N' ? random_matrix<T>(n, k, 1.0, rng) : random_matrix<T>(k, n, 1.0, rng);
    const Host<T> c0 = rank_k_c0<T>(n, c, true, rng);
    DeviceOf<T> A = to_device(a, Layout::Left), C = to_device(c0, Layout::Left);
    call_rank_k(c, T(1), A, T(0), C, o);
    DeviceOf<T> full(n, n, Layout::Left);
    const std::string first(1, c.trans),
        second(1, c.trans == 'N' ? (c.hermitian ? 'C' : 'T') : 'N');
    ozaki::gemm(TestSpace(), first.c_str(), second.c_str(), T(1), A.view, A.view, T(0), full.view,
                o);
    const Host<T> got = to_host(C), want = to_host(full);
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < n; ++i) {
        if (c.uplo == 'U' ? i > j : i < j) continue;
        if (c.hermitian && i == j) {
          EXPECT_EQ(std::real(wide(got(i, i))), std::real(wide(want(i, i))));
        } else {
          EXPECT_EQ(std::memcmp(&got(i, j), &want(i, j), sizeof(T)), 0) << i << "," << j;
        }
      }
    }
  }
}

TEST(Syrk, TriangleBitwiseTheFullGemmsUnderFixedCounts) {
  check_rank_k_bitwise_gemm<double>();
  check_rank_k_bitwise_gemm<KC>();
}

/// syrk and herk under Int8Crt with an automatic count are one scheme II call on the triangle
/// (syrk.hpp, whole_triangle; complex data in Karatsuba's form): under each scaling rule and
/// layout every entry of the triangle is bitwise the full GEMM's with the same options (herk's
/// diagonal: its real part, the imaginary part zero), from fewer INT8 operations (passes of 16
/// columns on the host, 128 on CUDA: the later passes skip the rows above their columns), and
/// the other triangle is untouched.
template <class T>
void check_one_triangular_call(const std::vector<ozaki::CrtScaling>& scalings, double phi) {
  Random rng(606);
  const std::int64_t n = 300, k = 70;
  const T alpha = T(-0.75), beta = T(0.5);
  for (ozaki::CrtScaling scaling : scalings) {
    for (const RankKCase& c : rank_k_cases<T>()) {
      const Host<T> a =
          c.trans == 'N' ? random_matrix<T>(n, k, phi, rng) : random_matrix<T>(k, n, phi, rng);
      const Host<T> c0 = rank_k_c0<T>(n, c, false, rng);
      for (Layout layout : layouts) {
        SCOPED_TRACE(std::string(c.hermitian ? "herk" : "syrk") + " scaling " +
                     ozaki::to_string(scaling) + " uplo " + c.uplo + " trans " + c.trans +
                     " layout " + name(layout));
        Options o = with_algorithm(Algorithm::Int8Crt, 16);
        o.crt_scaling = scaling;
        o.experimental.crt_pass_columns = 16;
        DeviceOf<T> A = to_device(a, layout), C = to_device(c0, layout);
        const ozaki::Report r = call_rank_k(c, alpha, A, beta, C, o);
        // The full GEMM on C0 with herk's diagonal made real, as herk reads it.
        Host<T> c0_read = c0;
        if constexpr (std::is_same<T, KC>::value) {
          if (c.hermitian) {
            for (std::int64_t i = 0; i < n; ++i) c0_read(i, i) = KC(c0(i, i).real(), 0.0);
          }
        }
        DeviceOf<T> full = to_device(c0_read, layout);
        const std::string first(1, c.trans),
            second(1, c.trans == 'N' ? (c.hermitian ? 'C' : 'T') : 'N');
        const ozaki::Report g = ozaki::gemm(TestSpace(), first.c_str(), second.c_str(), alpha,
                                            A.view, A.view, beta, full.view, o);
        EXPECT_EQ(r.algorithm, Algorithm::Int8Crt);
        EXPECT_EQ(r.moduli, g.moduli) << r.reason << " / " << g.reason;
        EXPECT_EQ(r.complex_products, g.complex_products);
        EXPECT_FALSE(r.fallback);
        EXPECT_GT(r.int8_operations, 0);
        EXPECT_LT(r.int8_operations, g.int8_operations);
        const Host<T> got = to_host(C), want = to_host(full);
        for (std::int64_t j = 0; j < n; ++j) {
          for (std::int64_t i = 0; i < n; ++i) {
            const bool in_triangle = c.uplo == 'U' ? i <= j : i >= j;
            T expected = in_triangle ? want(i, j) : c0(i, j);
            if constexpr (std::is_same<T, KC>::value) {
              if (c.hermitian && i == j) expected = KC(want(i, i).real(), 0.0);
            }
            EXPECT_EQ(std::memcmp(&got(i, j), &expected, sizeof(T)), 0) << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(Syrk, OneTriangularCallGivesTheFullGemmsBits) {
  check_one_triangular_call<double>(
      {ozaki::CrtScaling::Auto, ozaki::CrtScaling::Fast, ozaki::CrtScaling::Accurate}, 2.0);
  // Karatsuba's form: the fast rule.
  check_one_triangular_call<KC>({ozaki::CrtScaling::Fast}, 0.1);
}

/// One View as both operands of a GEMM, A A^T (as syrk's call is): op(B)^T is op(A) itself,
/// so the call scales its rows once and, where the bits are a function of the row alone (the
/// fast rules), splits them once.  C is bitwise that of the same product with B a separate
/// copy of A, with the same count and bound, and within that bound of the exact product, under
/// every rule and count (phi = 2: the counted fast rule's window product of one operand), in
/// passes of 16 columns and in one, every layout; for complex data (Karatsuba) A A^T and A A^H
/// alike (rows read in place, or one copy for both; the conjugated side's residues made from
/// the same rows).
template <class T>
void check_one_operand_for_both(const std::vector<Options>& options, double phi, bool hermitian) {
  Random rng(909);
  const std::int64_t n = 200, k = 90;
  for (const Options& o : options) {
    for (Layout layout : layouts) {
      for (bool transposed : {false, true}) {
        // A op(A)^T or op(A)^T A; the hermitian form conjugates the transposed side.
        const char t = hermitian ? 'C' : 'T';
        const char first = transposed ? t : 'N', second = transposed ? 'N' : t;
        SCOPED_TRACE(std::string("scaling ") + ozaki::to_string(o.crt_scaling) + " moduli " +
                     std::to_string(o.moduli.value_or(0)) + " phi " + std::to_string(phi) +
                     " layout " + name(layout) + " " + first + second);
        const Host<T> a =
            !transposed ? random_matrix<T>(n, k, phi, rng) : random_matrix<T>(k, n, phi, rng);
        const Host<T> c0 = random_matrix<T>(n, n, 0.5, rng);
        DeviceOf<T> A = to_device(a, layout), B = to_device(a, layout);
        DeviceOf<T> one = to_device(c0, layout), two = to_device(c0, layout);
        const std::string op_a(1, first), op_b(1, second);
        const T alpha = T(0.75), beta = T(-0.5);
        const ozaki::Report r1 = ozaki::gemm(TestSpace(), op_a.c_str(), op_b.c_str(), alpha, A.view,
                                             A.view, beta, one.view, o);
        const ozaki::Report r2 = ozaki::gemm(TestSpace(), op_a.c_str(), op_b.c_str(), alpha, A.view,
                                             B.view, beta, two.view, o);
        EXPECT_EQ(r1.algorithm, Algorithm::Int8Crt) << r1.reason;
        EXPECT_TRUE(r1.shared_operand);
        EXPECT_FALSE(r2.shared_operand);
        EXPECT_EQ(r1.moduli, r2.moduli);
        EXPECT_EQ(r1.crt_scaling, r2.crt_scaling);
        EXPECT_EQ(r1.error_bound, r2.error_bound);
        EXPECT_EQ(r1.recombine_passes, r2.recombine_passes);
        const Host<T> got = to_host(one);
        EXPECT_TRUE(same_bits(got, to_host(two)));
        // Within the call's stated bound of the exact product (long double), entry by entry.
        for (std::int64_t j = 0; j < n; ++j) {
          for (std::int64_t i = 0; i < n; ++i) {
            decltype(wide(T(0))) exact = 0;
            long double scale = 0;
            for (std::int64_t l = 0; l < k; ++l) {
              const T x = transposed ? conj_if(a(l, i), hermitian) : a(i, l);
              const T y = transposed ? a(l, j) : conj_if(a(j, l), hermitian);
              exact += wide(x) * wide(y);
              scale += magnitude(wide(x)) * magnitude(wide(y));
            }
            exact = wide(alpha) * exact + wide(beta) * wide(c0(i, j));
            const long double allowed = r1.error_bound * magnitude(wide(alpha)) * scale +
                                        gamma(4) * magnitude(wide(beta) * wide(c0(i, j)));
            EXPECT_LE(magnitude(wide(got(i, j)) - exact), allowed) << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(Syrk, OneOperandForBothSidesGivesTheBitsOfTwo) {
  std::vector<Options> real;
  for (ozaki::CrtScaling scaling :
       {ozaki::CrtScaling::Auto, ozaki::CrtScaling::Fast, ozaki::CrtScaling::Accurate}) {
    for (std::int64_t pass_columns : {0, 16}) {
      Options o;
      o.algorithm = Algorithm::Int8Crt;
      o.crt_scaling = scaling;
      if (pass_columns > 0) o.experimental.crt_pass_columns = pass_columns;
      real.push_back(o);
    }
  }
  Options fixed = real[2];
  fixed.moduli = 15;
  real.push_back(fixed);
  check_one_operand_for_both<double>(real, 0.5, false);
  check_one_operand_for_both<double>(real, 2.0, false);
  Options complex;
  complex.algorithm = Algorithm::Int8Crt;
  complex.crt_scaling = ozaki::CrtScaling::Fast;
  complex.experimental.crt_pass_columns = 16;
  check_one_operand_for_both<KC>({complex}, 0.5, false);
  check_one_operand_for_both<KC>({complex}, 0.5, true);
}

/// NaN in A: the triangular call declines, and the recursion's GEMMs give the IEEE result:
/// NaN in the row and column of the NaN, every other entry within the promise, the other
/// triangle untouched, the fallback reported.
TEST(Syrk, NaNInATakesTheRecursionsNativeProducts) {
  Random rng(707);
  const std::int64_t n = 60, k = 24, row = 37;
  for (const RankKCase& c : rank_k_cases<double>()) {
    SCOPED_TRACE(std::string("uplo ") + c.uplo + " trans " + c.trans);
    Host<double> a = c.trans == 'N' ? random_matrix<double>(n, k, 1.0, rng)
                                    : random_matrix<double>(k, n, 1.0, rng);
    (c.trans == 'N' ? a(row, 5) : a(5, row)) = std::numeric_limits<double>::quiet_NaN();
    const Host<double> c0 = rank_k_c0<double>(n, c, false, rng);
    DeviceOf<double> A = to_device(a, Layout::Left), C = to_device(c0, Layout::Left);
    const ozaki::Report r = call_rank_k(c, 1.0, A, 0.5, C, with_algorithm(Algorithm::Int8Crt, 16));
    EXPECT_TRUE(r.fallback);
    EXPECT_NE(r.reason.find("NaN"), std::string::npos) << r.reason;
    Host<double> clean = a;
    (c.trans == 'N' ? clean(row, 5) : clean(5, row)) = 0;
    expect_rank_k_within(c, 1.0, clean, 0.5, c0, to_host(C), gamma(k + 4), row);
  }
}

/// An explicit Int8Crt whose triangular call cannot have its scratch: the call throws before
/// writing, and the recursion runs instead, each GEMM natively where its scratch fails too
/// (gemm_part): no exception, the result within native's promise, the fallback reported.
TEST(Syrk, ScratchThatCannotBeHadTakesTheRecursion) {
  Random rng(808);
  const std::int64_t n = 60, k = 24;
  const RankKCase c{false, 'L', 'N'};
  const Host<double> a = random_matrix<double>(n, k, 1.0, rng);
  const Host<double> c0 = rank_k_c0<double>(n, c, false, rng);
  DeviceOf<double> A = to_device(a, Layout::Left), C = to_device(c0, Layout::Left);
  ozaki::Workspace<TestSpace> workspace;
  ozaki::Report r;
  {
    // Room for the recursion's diagonal blocks of 16 rows (2 KiB), none for a GEMM's scheme II.
    FailScratchAbove fail(4096);
    r = ozaki::syrk(TestSpace(), "L", "N", 1.0, A.view, 0.5, C.view,
                    with_algorithm(Algorithm::Int8Crt, 16), workspace);
  }
  EXPECT_TRUE(r.fallback);
  EXPECT_NE(r.reason.find("scratch"), std::string::npos) << r.reason;
  expect_rank_k_within(c, 1.0, a, 0.5, c0, to_host(C), gamma(k + 4));
}

TEST(Syrk, KZeroOrAlphaZeroScalesTheTriangleOnly) {
  Random rng(404);
  const RankKCase c{false, 'L', 'N'};
  const Host<double> c0 = rank_k_c0<double>(9, c, false, rng);
  for (std::int64_t k : {0, 4}) {
    const Host<double> a = random_matrix<double>(9, k, 1.0, rng);
    DeviceOf<double> A = to_device(a, Layout::Left), C = to_device(c0, Layout::Left);
    const double alpha = k == 0 ? 1.0 : 0.0;
    ozaki::syrk(TestSpace(), "L", "N", alpha, A.view, 2.0, C.view);
    const Host<double> got = to_host(C);
    for (std::int64_t j = 0; j < 9; ++j)
      for (std::int64_t i = 0; i < 9; ++i) {
        if (i >= j) {
          EXPECT_EQ(got(i, j), 2.0 * c0(i, j));
        } else {
          EXPECT_TRUE(std::isnan(got(i, j)));
        }
      }
  }
}

TEST(Syrk, BadArgumentsThrowAndLeaveCUntouched) {
  Random rng(505);
  const Host<double> a = random_matrix<double>(10, 6, 1.0, rng);
  const Host<double> c0 = random_matrix<double>(10, 10, 1.0, rng);
  DeviceOf<double> A = to_device(a, Layout::Left), C = to_device(c0, Layout::Left);
  DeviceOf<double> rect(10, 9, Layout::Left);
  EXPECT_THROW(ozaki::syrk(TestSpace(), "X", "N", 1.0, A.view, 0.0, C.view),
               ozaki::InvalidArgument);
  EXPECT_THROW(ozaki::syrk(TestSpace(), "L", "X", 1.0, A.view, 0.0, C.view),
               ozaki::InvalidArgument);
  EXPECT_THROW(ozaki::syrk(TestSpace(), "L", "T", 1.0, A.view, 0.0, C.view),
               ozaki::InvalidArgument);  // op(A) = A^T has 6 rows, C has 10
  EXPECT_THROW(ozaki::syrk(TestSpace(), "L", "N", 1.0, A.view, 0.0, rect.view),
               ozaki::InvalidArgument);
  EXPECT_THROW(ozaki::syrk(TestSpace(), "L", "N", 1.0, C.view, 0.0, C.view),
               ozaki::InvalidArgument);  // C aliasing A
  const Host<KC> z = random_matrix<KC>(10, 6, 1.0, rng);
  const Host<KC> h0 = random_matrix<KC>(10, 10, 1.0, rng);
  DeviceOf<KC> Z = to_device(z, Layout::Left), H = to_device(h0, Layout::Left);
  EXPECT_THROW(ozaki::herk(TestSpace(), "L", "T", 1.0, Z.view, 0.0, H.view),
               ozaki::InvalidArgument);  // herk takes N or C
  EXPECT_THROW(ozaki::syrk(TestSpace(), "L", "C", KC(1), Z.view, KC(0), H.view),
               ozaki::InvalidArgument);  // complex syrk takes N or T
  EXPECT_TRUE(same_bits(to_host(C), c0));
  EXPECT_TRUE(same_bits(to_host(H), h0));
}

// ---------------------------------------------------------------------------------------------
// symm and hemm

/// A with NaN in the triangle not stored (never read); hemm: NaN imaginary parts on the
/// diagonal (not read).
template <class T>
Host<T> one_triangle(const Host<T>& full, bool upper, bool hermitian) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Host<T> a = full;
  for (std::int64_t j = 0; j < a.cols; ++j)
    for (std::int64_t i = 0; i < a.rows; ++i)
      if (upper ? i > j : i < j) a(i, j) = T(nan);
  if constexpr (std::is_same<T, KC>::value) {
    if (hermitian) {
      for (std::int64_t i = 0; i < a.rows; ++i) a(i, i) = KC(a(i, i).real(), nan);
    }
  }
  return a;
}

/// The symmetric (Hermitian) matrix the stored triangle of `a` means.
template <class T>
Host<T> filled(const Host<T>& a, bool upper, bool hermitian) {
  Host<T> f = a;
  for (std::int64_t j = 0; j < a.cols; ++j) {
    for (std::int64_t i = 0; i < a.rows; ++i) {
      if (upper ? i > j : i < j) f(i, j) = conj_if(a(j, i), hermitian);
      if (hermitian && i == j) f(i, i) = T(std::real(wide(a(i, i))));
    }
  }
  return f;
}

template <class T>
void check_symmetric(bool hermitian) {
  Random rng(606);
  const std::int64_t m = 37, n = 29;
  const Options crt = with_algorithm(Algorithm::Int8Crt, 8);
  for (char side : {'L', 'R'}) {
    for (char uplo : {'U', 'L'}) {
      for (Layout layout : layouts) {
        SCOPED_TRACE(std::string(hermitian ? "hemm" : "symm") + " side " + side + " uplo " + uplo +
                     " layout " + name(layout));
        const std::int64_t na = side == 'L' ? m : n;
        const Host<T> a = one_triangle(random_matrix<T>(na, na, 1.0, rng), uplo == 'U', hermitian);
        const Host<T> b = random_matrix<T>(m, n, 1.0, rng), c0 = random_matrix<T>(m, n, 1.0, rng);
        DeviceOf<T> A = to_device(a, layout), B = to_device(b, layout), C = to_device(c0, layout);
        const T alpha = T(0.5), beta = T(-2);
        const std::string s(1, side), u(1, uplo);
        ozaki::Report r;
        if constexpr (std::is_same<T, KC>::value) {
          r = hermitian ? ozaki::hemm(TestSpace(), s.c_str(), u.c_str(), alpha, A.view, B.view,
                                      beta, C.view, crt)
                        : ozaki::symm(TestSpace(), s.c_str(), u.c_str(), alpha, A.view, B.view,
                                      beta, C.view, crt);
        } else {
          r = ozaki::symm(TestSpace(), s.c_str(), u.c_str(), alpha, A.view, B.view, beta, C.view,
                          crt);
        }
        EXPECT_EQ(r.algorithm, Algorithm::Int8Crt);
        // The GEMM of the filled-in A with the Report's options, bitwise.
        DeviceOf<T> F = to_device(filled(a, uplo == 'U', hermitian), layout);
        DeviceOf<T> G = to_device(c0, layout);
        if (side == 'L') {
          ozaki::gemm(TestSpace(), "N", "N", alpha, F.view, B.view, beta, G.view, r.options);
        } else {
          ozaki::gemm(TestSpace(), "N", "N", alpha, B.view, F.view, beta, G.view, r.options);
        }
        EXPECT_TRUE(same_bits(to_host(C), to_host(G)));
        for (const T& x : to_host(C).values) EXPECT_FALSE(is_nan(x));
      }
    }
  }
}

TEST(Symm, BitwiseTheGemmOfTheFilledInOperand) {
  check_symmetric<double>(false);
  check_symmetric<KC>(false);
  check_symmetric<KC>(true);
}

TEST(Symm, BadArgumentsThrowAndLeaveCUntouched) {
  Random rng(707);
  const Host<double> a = random_matrix<double>(6, 6, 1.0, rng);
  const Host<double> b = random_matrix<double>(6, 4, 1.0, rng),
                     c0 = random_matrix<double>(6, 4, 1.0, rng);
  DeviceOf<double> A = to_device(a, Layout::Left), B = to_device(b, Layout::Left);
  DeviceOf<double> C = to_device(c0, Layout::Left);
  EXPECT_THROW(ozaki::symm(TestSpace(), "R", "U", 1.0, A.view, B.view, 0.0, C.view),
               ozaki::InvalidArgument);  // side R: A must be 4 x 4
  EXPECT_THROW(ozaki::symm(TestSpace(), "L", "X", 1.0, A.view, B.view, 0.0, C.view),
               ozaki::InvalidArgument);
  EXPECT_THROW(ozaki::symm(TestSpace(), "X", "U", 1.0, A.view, B.view, 0.0, C.view),
               ozaki::InvalidArgument);
  DeviceOf<double> square = to_device(a, Layout::Left);
  EXPECT_THROW(ozaki::symm(TestSpace(), "L", "U", 1.0, square.view, square.view, 0.0, square.view),
               ozaki::InvalidArgument);  // C aliasing A
  EXPECT_TRUE(same_bits(to_host(C), c0));
  EXPECT_TRUE(same_bits(to_host(square), a));
}

}  // namespace
