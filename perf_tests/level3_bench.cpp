// level3_bench: ozaki's level-3 routines against cuBLAS's on the same inputs in the same run
// (docs/design.md §12): the plain call (default Options) and the native routine alternate,
// each timed with a fence; sampled entries give each one's error against a long double
// reference.
//
//   level3_bench [--routines dsyrk,zherk,dtrsm,dsymm] [--sizes 8192,16384] [--reps 5] [--phi 0.5]
//                (routines also ztrsm, dtrmm, ztrmm, zhemm)
//                [--algorithm auto|native|crt] [--leaf ROWS] [--csv FILE]
//
// --algorithm and --leaf set Options::algorithm for every GEMM of the routine and
// Options::experimental.level3_leaf (default: the plain call's); native GEMMs through the same
// recursion tell what the recursion and its FP64 diagonal blocks cost.
//
// dsyrk: C = A A^T on the lower triangle, A n x n; zherk: C = A A^H, complex; dtrsm: left,
// lower, no transpose, non-unit, n x n A (diagonally dominant) and an n-column B.  Errors:
// syrk/herk |C - AA^T| / (|A||A^T|) at 256 sampled entries of the triangle; trsm the
// componentwise backward error |B - AX| / (|A||X| + |B|) at 256 sampled entries (ztrsm, and
// dtrmm / ztrmm B := A B with |C - AB| / (|A||B|), on the same operands); dsymm / zhemm:
// left, C = S B with S symmetric / Hermitian (its lower triangle stored), n x n, |C - SB| /
// (|S||B|) at 256 sampled entries.  Output: one line per routine and size, and CSV rows
// routine,n,native_ms,ozaki_ms,speedup,native_error, ozaki_error,algorithm,moduli,bound.
#include "paired_runs.hpp"
#include "tool_args.hpp"

#include <ozaki/symm.hpp>
#include <ozaki/syrk.hpp>
#include <ozaki/trmm.hpp>
#include <ozaki/trsm.hpp>

#include <cublas_v2.h>
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::Cuda;
using KC = Kokkos::complex<double>;
template <class T>
using Matrix = Kokkos::View<T**, Kokkos::LayoutLeft, Space::memory_space>;

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

/// Entries (U - 1/2) exp(phi N), complex parts independently.
template <class T>
void fill(const Matrix<T>& x, double phi, std::uint64_t seed) {
  Kokkos::Random_XorShift64_Pool<Space> pool(seed);
  Kokkos::parallel_for(
      "level3_bench::fill", Kokkos::RangePolicy<Space>(0, x.extent(1)), KOKKOS_LAMBDA(const int j) {
        auto g = pool.get_state();
        for (std::size_t i = 0; i < x.extent(0); ++i) {
          const double re = (g.drand() - 0.5) * ::exp(phi * g.normal());
          if constexpr (std::is_same<T, double>::value) {
            x(i, j) = re;
          } else {
            x(i, j) = T(re, (g.drand() - 0.5) * ::exp(phi * g.normal()));
          }
        }
        pool.free_state(g);
      });
}

KOKKOS_INLINE_FUNCTION double magnitude(double x) { return ::fabs(x); }
KOKKOS_INLINE_FUNCTION double magnitude(const KC& x) { return ::hypot(x.real(), x.imag()); }

/// A lower triangular, diagonally dominant: the diagonal is 1 plus the row's magnitudes.
template <class T>
void make_lower(const Matrix<T>& a) {
  Kokkos::parallel_for(
      "level3_bench::lower", Kokkos::RangePolicy<Space>(0, a.extent(0)),
      KOKKOS_LAMBDA(const int i) {
        double sum = 0;
        for (int j = 0; j < i; ++j) sum += magnitude(a(i, j));
        a(i, i) = T(1 + sum);
      });
}

template <class T>
std::vector<T> to_host(const Matrix<T>& x) {
  std::vector<T> h(x.size());
  Kokkos::deep_copy(
      Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>(h.data(), x.extent(0), x.extent(1)),
      x);
  return h;
}

long double mag(double x) { return std::fabs(static_cast<long double>(x)); }
long double mag(const std::complex<long double>& x) { return std::abs(x); }
std::complex<long double> wide(const KC& x) { return {x.real(), x.imag()}; }
long double wide(double x) { return x; }

struct Sample {
  std::int64_t i, j;
};

std::vector<Sample> lower_samples(std::int64_t n) {
  std::mt19937_64 rng(7);
  std::vector<Sample> s;
  while (s.size() < 256) {
    const std::int64_t i = rng() % n, j = rng() % n;
    if (i >= j) s.push_back({i, j});
  }
  return s;
}

/// max |C - A op(A)| / (|A||op(A)|) over the samples; herk conjugates.
template <class T>
double rank_k_error(const std::vector<T>& a, const std::vector<T>& c, std::int64_t n,
                    bool hermitian) {
  double worst = 0;
  for (const Sample& s : lower_samples(n)) {
    decltype(wide(T(0))) sum = 0;
    long double scale = 0;
    for (std::int64_t l = 0; l < n; ++l) {
      const auto x = wide(a[s.i + l * n]);
      auto y = wide(a[s.j + l * n]);
      if constexpr (!std::is_same<T, double>::value) {
        if (hermitian) y = std::conj(y);
      }
      sum += x * y;
      scale += mag(x) * mag(y);
    }
    worst = std::max(worst, static_cast<double>(mag(wide(c[s.i + s.j * n]) - sum) / scale));
  }
  return worst;
}

/// max over the samples of |T - L X| / (|L||X| (+ |T| where `target_scaled`)), L lower
/// triangular: trsm's backward error (T = B, X the solution) or trmm's error (T = C, X = B).
template <class T>
double lower_residual(const std::vector<T>& l, const std::vector<T>& x, const std::vector<T>& t,
                      std::int64_t n, bool target_scaled) {
  double worst = 0;
  for (const Sample& s : lower_samples(n)) {
    auto r = wide(t[s.i + s.j * n]);
    long double scale = target_scaled ? mag(r) : 0;
    for (std::int64_t k = 0; k <= s.i; ++k) {
      r -= wide(l[s.i + k * n]) * wide(x[k + s.j * n]);
      scale += mag(wide(l[s.i + k * n])) * mag(wide(x[k + s.j * n]));
    }
    worst = std::max(worst, static_cast<double>(mag(r) / scale));
  }
  return worst;
}

using Result = perf_tool::PairedResult;
using perf_tool::time_pair;

template <class T>
Result rank_k(cublasHandle_t handle, std::int64_t n, double phi, int reps,
              const ozaki::Options& options) {
  const bool hermitian = !std::is_same<T, double>::value;
  Matrix<T> a("A", n, n), c("C", n, n);
  fill(a, phi, 11);
  Result r;
  const int ni = static_cast<int>(n);
  auto native = [&] {
    if constexpr (std::is_same<T, double>::value) {
      const double one = 1, zero = 0;
      check(cublasDsyrk(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, ni, ni, &one, a.data(), ni,
                        &zero, c.data(), ni),
            "cublasDsyrk");
    } else {
      const double one = 1, zero = 0;
      check(cublasZherk(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, ni, ni, &one,
                        reinterpret_cast<const cuDoubleComplex*>(a.data()), ni, &zero,
                        reinterpret_cast<cuDoubleComplex*>(c.data()), ni),
            "cublasZherk");
    }
  };
  auto ozaki_call = [&] {
    if constexpr (std::is_same<T, double>::value) {
      return ozaki::syrk(Space(), "L", "N", 1.0, a, 0.0, c, options);
    } else {
      return ozaki::herk(Space(), "L", "N", 1.0, a, 0.0, c, options);
    }
  };
  time_pair(reps, r, native, ozaki_call, [] {});
  const std::vector<T> ha = to_host(a);
  native();
  r.native_error = rank_k_error(ha, to_host(c), n, hermitian);
  ozaki_call();
  r.ozaki_error = rank_k_error(ha, to_host(c), n, hermitian);
  return r;
}

/// cuBLAS's trsm (multiply false) or trmm, left, lower, no transpose, non-unit, alpha = 1, in
/// place on b.
void native_triangular(cublasHandle_t handle, bool multiply, const Matrix<double>& a,
                       const Matrix<double>& b) {
  const int n = static_cast<int>(b.extent(0)), cols = static_cast<int>(b.extent(1));
  const double one = 1;
  const auto side = CUBLAS_SIDE_LEFT;
  const auto lower = CUBLAS_FILL_MODE_LOWER;
  if (multiply) {
    check(cublasDtrmm(handle, side, lower, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, cols, &one,
                      a.data(), n, b.data(), n, b.data(), n),
          "cublasDtrmm");
  } else {
    check(cublasDtrsm(handle, side, lower, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, cols, &one,
                      a.data(), n, b.data(), n),
          "cublasDtrsm");
  }
}
void native_triangular(cublasHandle_t handle, bool multiply, const Matrix<KC>& a,
                       const Matrix<KC>& b) {
  const int n = static_cast<int>(b.extent(0)), cols = static_cast<int>(b.extent(1));
  const cuDoubleComplex one{1, 0};
  const auto* ad = reinterpret_cast<const cuDoubleComplex*>(a.data());
  auto* bd = reinterpret_cast<cuDoubleComplex*>(b.data());
  const auto side = CUBLAS_SIDE_LEFT;
  const auto lower = CUBLAS_FILL_MODE_LOWER;
  if (multiply) {
    check(cublasZtrmm(handle, side, lower, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, cols, &one, ad, n,
                      bd, n, bd, n),
          "cublasZtrmm");
  } else {
    check(cublasZtrsm(handle, side, lower, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, cols, &one, ad, n,
                      bd, n),
          "cublasZtrsm");
  }
}

/// dtrsm / ztrsm (multiply false) or dtrmm / ztrmm: left, lower, no transpose, non-unit, an
/// n x n A (diagonally dominant) and n columns, in place.
template <class T>
Result triangular(cublasHandle_t handle, bool multiply, std::int64_t n, double phi, int reps,
                  const ozaki::Options& options) {
  Matrix<T> a("A", n, n), b0("B0", n, n), b("B", n, n);
  fill(a, phi, 12);
  make_lower(a);
  fill(b0, phi, 13);
  Result r;
  auto native = [&] { native_triangular(handle, multiply, a, b); };
  auto ozaki_call = [&] {
    return multiply ? ozaki::trmm(Space(), "L", "L", "N", "N", T(1), a, b, options)
                    : ozaki::trsm(Space(), "L", "L", "N", "N", T(1), a, b, options);
  };
  auto reset = [&] { Kokkos::deep_copy(b, b0); };
  time_pair(reps, r, native, ozaki_call, reset);
  const std::vector<T> ha = to_host(a), hb = to_host(b0);
  auto error = [&] {
    return multiply ? lower_residual(ha, hb, to_host(b), n, false)
                    : lower_residual(ha, to_host(b), hb, n, true);
  };
  reset();
  native();
  r.native_error = error();
  reset();
  ozaki_call();
  r.ozaki_error = error();
  return r;
}

/// max |C - S B| / (|S||B|) over sampled entries, S symmetric (hermitian: Hermitian) with its
/// lower triangle stored.
template <class T>
double symm_error(const std::vector<T>& s, const std::vector<T>& b, const std::vector<T>& c,
                  std::int64_t n, bool hermitian) {
  double worst = 0;
  for (const Sample& e : lower_samples(n)) {
    decltype(wide(T(0))) sum = 0;
    long double scale = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      auto skl = wide(e.i >= k ? s[e.i + k * n] : s[k + e.i * n]);
      if constexpr (!std::is_same<T, double>::value) {
        if (hermitian && e.i < k) skl = std::conj(skl);
        if (hermitian && e.i == k) skl = skl.real();
      }
      sum += skl * wide(b[k + e.j * n]);
      scale += mag(skl) * mag(wide(b[k + e.j * n]));
    }
    worst = std::max(worst, static_cast<double>(mag(wide(c[e.i + e.j * n]) - sum) / scale));
  }
  return worst;
}

/// cuBLAS's dsymm or zhemm: left, lower, C = S B, alpha = 1, beta = 0.
void native_symmetric(cublasHandle_t handle, const Matrix<double>& s, const Matrix<double>& b,
                      const Matrix<double>& c) {
  const int n = static_cast<int>(c.extent(0)), cols = static_cast<int>(c.extent(1));
  const double one = 1, zero = 0;
  check(cublasDsymm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, n, cols, &one, s.data(), n,
                    b.data(), n, &zero, c.data(), n),
        "cublasDsymm");
}
void native_symmetric(cublasHandle_t handle, const Matrix<KC>& s, const Matrix<KC>& b,
                      const Matrix<KC>& c) {
  const int n = static_cast<int>(c.extent(0)), cols = static_cast<int>(c.extent(1));
  const cuDoubleComplex one{1, 0}, zero{0, 0};
  check(cublasZhemm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, n, cols, &one,
                    reinterpret_cast<const cuDoubleComplex*>(s.data()), n,
                    reinterpret_cast<const cuDoubleComplex*>(b.data()), n, &zero,
                    reinterpret_cast<cuDoubleComplex*>(c.data()), n),
        "cublasZhemm");
}

/// dsymm (double) or zhemm (complex): C = S B, S n x n symmetric or Hermitian (lower triangle
/// stored; zhemm reads the diagonal's real parts only), B n x n.
template <class T>
Result symmetric_multiply(cublasHandle_t handle, std::int64_t n, double phi, int reps,
                          const ozaki::Options& options) {
  constexpr bool hermitian = !std::is_same<T, double>::value;
  Matrix<T> s("S", n, n), b("B", n, n), c("C", n, n);
  fill(s, phi, 14);
  fill(b, phi, 15);
  Result r;
  auto native = [&] { native_symmetric(handle, s, b, c); };
  auto ozaki_call = [&] {
    if constexpr (hermitian) {
      return ozaki::hemm(Space(), "L", "L", T(1), s, b, T(0), c, options);
    } else {
      return ozaki::symm(Space(), "L", "L", 1.0, s, b, 0.0, c, options);
    }
  };
  time_pair(reps, r, native, ozaki_call, [] {});
  const std::vector<T> hs = to_host(s), hb = to_host(b);
  native();
  r.native_error = symm_error(hs, hb, to_host(c), n, hermitian);
  ozaki_call();
  r.ozaki_error = symm_error(hs, hb, to_host(c), n, hermitian);
  return r;
}

int run(int argc, char** argv) {
  std::string routines = "dsyrk,zherk,dtrsm,dsymm", sizes = "8192,16384", csv;
  int reps = 5;
  double phi = 0.5;
  ozaki::Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--routines")
      routines = value;
    else if (key == "--sizes")
      sizes = value;
    else if (key == "--reps")
      reps = static_cast<int>(perf_tool::positive(value, "--reps"));
    else if (key == "--phi")
      phi = std::stod(value);
    else if (key == "--csv")
      csv = value;
    else if (key == "--leaf")
      options.experimental.level3_leaf = perf_tool::positive(value, "--leaf");
    else if (key == "--algorithm" && value == "native")
      options.algorithm = ozaki::Algorithm::Native;
    else if (key == "--algorithm" && value == "crt")
      options.algorithm = ozaki::Algorithm::Int8Crt;
    else if (key == "--algorithm" && value != "auto")
      throw std::invalid_argument("--algorithm " + value + " (expected auto, native or crt)");
    else if (key != "--algorithm")
      throw std::invalid_argument("unknown argument " + key);
  }
  cublasHandle_t handle;
  check(cublasCreate(&handle), "cublasCreate");
  check(cublasSetStream(handle, Space().cuda_stream()), "cublasSetStream");
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    out << "routine,n," << perf_tool::paired_columns << '\n';
  }
  for (const std::string& routine : perf_tool::split(routines, ',')) {
    for (const std::string& size : perf_tool::split(sizes, ',')) {
      const std::int64_t n = perf_tool::positive(size, "size");
      Result r;
      if (routine == "dsyrk")
        r = rank_k<double>(handle, n, phi, reps, options);
      else if (routine == "zherk")
        r = rank_k<KC>(handle, n, phi, reps, options);
      else if (routine == "dtrsm" || routine == "dtrmm")
        r = triangular<double>(handle, routine == "dtrmm", n, phi, reps, options);
      else if (routine == "ztrsm" || routine == "ztrmm")
        r = triangular<KC>(handle, routine == "ztrmm", n, phi, reps, options);
      else if (routine == "dsymm")
        r = symmetric_multiply<double>(handle, n, phi, reps, options);
      else if (routine == "zhemm")
        r = symmetric_multiply<KC>(handle, n, phi, reps, options);
      else
        throw std::invalid_argument(
            "routine " + routine +
            " (expected dsyrk, zherk, dtrsm, ztrsm, dtrmm, ztrmm, dsymm, zhemm)");
      std::printf(
          "%-6s n=%-6lld native %9.2f ms  ozaki %9.2f ms  %5.2fx  errors %.2e / %.2e  %s L=%d "
          "bound %.2e int8 GEMMs %d decisions %.1f ms%s%s\n",
          routine.c_str(), static_cast<long long>(n), r.native_ms, r.ozaki_ms,
          r.native_ms / r.ozaki_ms, r.native_error, r.ozaki_error,
          ozaki::to_string(r.report.algorithm), r.report.moduli, r.report.error_bound,
          r.report.int8_gemms, 1e3 * r.report.seconds_decision,
          r.report.fallback ? " fallback: " : "", r.report.reason.c_str());
      if (out) {
        out << routine << ',' << n;
        perf_tool::write_paired_columns(out, r);
      }
    }
  }
  cublasDestroy(handle);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "level3_bench: %s\n", e.what());
    return 2;
  }
}
