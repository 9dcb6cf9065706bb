// Using ozaki from a Kokkos application: C = A B with ozaki::gemm (real, complex), a triangular
// solve and a batch of products, each checked against KokkosBlas or its residual.  Exits with 1 if
// the two disagree beyond FP64 rounding.
#include <ozaki/ozaki.hpp>

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const int m = 300, n = 200, k = 500;
  Kokkos::View<double**> A("A", m, k), B("B", k, n), C("C", m, n), C_native("C_native", m, n);
  Kokkos::Random_XorShift64_Pool<> pool(42);
  Kokkos::fill_random(A, pool, -1.0, 1.0);
  Kokkos::fill_random(B, pool, -1.0, 1.0);

  // Same arguments as KokkosBlas::gemm, plus options; the report says what was done.  The
  // default (Algorithm::Auto, FP64-equivalent accuracy) may take native FP64 GEMM on GPUs
  // where that is faster; asking for Int8Slices runs the Ozaki scheme itself.
  KokkosBlas::gemm("N", "N", 1.0, A, B, 0.0, C_native);
  ozaki::Options int8;
  int8.algorithm = ozaki::Algorithm::Int8Slices;
  int failures = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const ozaki::Options options = pass == 0 ? ozaki::Options{} : int8;
    const ozaki::Report report = ozaki::gemm("N", "N", 1.0, A, B, 0.0, C, options);
    // Both are FP64-accurate: |C - C_native| <= 2 gamma_k |A||B| <= 2 k u * k, so compare
    // against k^2 * 2^-52 (entries of A and B are at most 1).
    double worst = 0;
    Kokkos::parallel_reduce(
        "compare", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, n}),
        KOKKOS_LAMBDA(const int i, const int j, double& w) {
          const double d = C(i, j) - C_native(i, j);
          w = w > (d < 0 ? -d : d) ? w : (d < 0 ? -d : d);
        },
        Kokkos::Max<double>(worst));
    const double bound = double(k) * k * 0x1p-52;
    std::printf(
        "ozaki::gemm: %s on %s, S = %d, %d INT8 GEMMs; max |C - C_native| = %.3e (bound "
        "%.3e)%s%s\n",
        ozaki::to_string(report.algorithm), report.backend.c_str(), report.slices,
        report.int8_gemms, worst, bound, report.reason.empty() ? "" : "; ", report.reason.c_str());
    if (!(worst <= bound)) ++failures;
    if (pass == 1 && report.algorithm != ozaki::Algorithm::Int8Slices) ++failures;
  }

  // Complex data: Views of Kokkos::complex<double>, complex alpha and beta, "C" = conjugate
  // transpose; checked against KokkosBlas::gemm on the same Views.
  using Z = Kokkos::complex<double>;
  Kokkos::View<Z**> Az("Az", m, k), Bz("Bz", n, k), Cz("Cz", m, n), Cz_native("Cz_native", m, n);
  Kokkos::View<double**> Bi("Bi", n, k), Ai("Ai", m, k), Br("Br", n, k);
  Kokkos::fill_random(Ai, pool, -1.0, 1.0);
  Kokkos::fill_random(Br, pool, -1.0, 1.0);
  Kokkos::fill_random(Bi, pool, -1.0, 1.0);
  Kokkos::parallel_for(
      "complex inputs", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, k}),
      KOKKOS_LAMBDA(const int i, const int p) {
        Az(i, p) = Z(A(i, p), Ai(i, p));
        if (i < n) Bz(i, p) = Z(Br(i, p), Bi(i, p));
      });
  const Z alpha(0.5, -1.0), beta(0.0, 0.0);
  KokkosBlas::gemm("N", "C", alpha, Az, Bz, beta, Cz_native);
  ozaki::Options crt;
  crt.algorithm = ozaki::Algorithm::Int8Crt;
  const ozaki::Report zreport = ozaki::gemm("N", "C", alpha, Az, Bz, beta, Cz, crt);
  double zworst = 0;
  Kokkos::parallel_reduce(
      "compare complex", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, n}),
      KOKKOS_LAMBDA(const int i, const int j, double& w) {
        const double d = Kokkos::abs(Cz(i, j) - Cz_native(i, j));
        w = w > d ? w : d;
      },
      Kokkos::Max<double>(zworst));
  // Each term |alpha| |x| |y| <= 2.24 (parts in [-1, 1]); both results are within gamma_2k of
  // the exact product, so 4 k^2 2^-52 bounds their difference.
  const double zbound = 4.0 * k * k * 0x1p-52;
  std::printf(
      "ozaki::gemm (complex, N/C): %s with %d moduli, %d INT8 products each; max |C - "
      "C_native| = %.3e (bound %.3e)\n",
      ozaki::to_string(zreport.algorithm), zreport.moduli, zreport.complex_products, zworst,
      zbound);
  if (!(zworst <= zbound) || zreport.algorithm != ozaki::Algorithm::Int8Crt) ++failures;

  // A triangular solve, X = L^-1 B, L the lower triangle of a diagonally dominant matrix (its
  // upper triangle is not read), with the updates as INT8 GEMMs.  The Report bounds the
  // backward error, |B - L X| <= error_bound (|L||X| + |B|); the residual computed here in
  // FP64 adds its own gamma_(t+2).
  const int t = m;
  Kokkos::View<double**> L("L", t, t), Bt("Bt", t, n), X("X", t, n);
  Kokkos::fill_random(L, pool, -1.0, 1.0);
  Kokkos::fill_random(Bt, pool, -1.0, 1.0);
  Kokkos::parallel_for(
      "diagonally dominant", t, KOKKOS_LAMBDA(const int i) {
        double off = 1;
        for (int s = 0; s < i; ++s) off += L(i, s) < 0 ? -L(i, s) : L(i, s);
        L(i, i) = off;
      });
  Kokkos::deep_copy(X, Bt);
  const ozaki::Report treport = ozaki::trsm("L", "L", "N", "N", 1.0, L, X, crt);
  double tworst = 0;
  Kokkos::parallel_reduce(
      "residual", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {t, n}),
      KOKKOS_LAMBDA(const int i, const int j, double& w) {
        double r = Bt(i, j), scale = Bt(i, j) < 0 ? -Bt(i, j) : Bt(i, j);
        for (int s = 0; s <= i; ++s) {
          const double term = L(i, s) * X(s, j);
          r -= term;
          scale += term < 0 ? -term : term;
        }
        const double ratio = (r < 0 ? -r : r) / scale;
        w = w > ratio ? w : ratio;
      },
      Kokkos::Max<double>(tworst));
  const double tbound = treport.error_bound + (t + 2) * 0x1p-53 / (1 - (t + 2) * 0x1p-53);
  std::printf("ozaki::trsm: updates by %s, %d INT8 GEMMs; backward error %.3e (bound %.3e)\n",
              ozaki::to_string(treport.algorithm), treport.int8_gemms, tworst, tbound);
  if (!(tworst <= tbound) || treport.int8_gemms == 0) ++failures;

  // A batch in one call: C3(i,:,:) = A3(i,:,:) W for four inputs and one shared W (batch
  // extent 1), each product checked against KokkosBlas::gemm on the same item.
  const int items = 4;
  Kokkos::View<double***> A3("A3", items, m, k), W("W", 1, k, n), C3("C3", items, m, n);
  Kokkos::fill_random(A3, pool, -1.0, 1.0);
  Kokkos::fill_random(W, pool, -1.0, 1.0);
  const ozaki::Report breport = ozaki::gemm_batched("N", "N", 1.0, A3, W, 0.0, C3, crt);
  double bworst = 0;
  for (int i = 0; i < items; ++i) {
    const auto a = Kokkos::subview(A3, i, Kokkos::ALL(), Kokkos::ALL());
    const auto w = Kokkos::subview(W, 0, Kokkos::ALL(), Kokkos::ALL());
    const auto c = Kokkos::subview(C3, i, Kokkos::ALL(), Kokkos::ALL());
    KokkosBlas::gemm("N", "N", 1.0, a, w, 0.0, C_native);
    double worst = 0;
    Kokkos::parallel_reduce(
        "compare batch item", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, n}),
        KOKKOS_LAMBDA(const int r, const int j, double& w_) {
          const double d = c(r, j) - C_native(r, j);
          w_ = w_ > (d < 0 ? -d : d) ? w_ : (d < 0 ? -d : d);
        },
        Kokkos::Max<double>(worst));
    bworst = bworst > worst ? bworst : worst;
  }
  const double bbound = double(k) * k * 0x1p-52;  // as for the single product above
  std::printf(
      "ozaki::gemm_batched: %d products by %s, %d INT8 GEMMs; max |C - C_native| = %.3e "
      "(bound %.3e)\n",
      items, ozaki::to_string(breport.algorithm), breport.int8_gemms, bworst, bbound);
  if (!(bworst <= bbound) || breport.algorithm != ozaki::Algorithm::Int8Crt) ++failures;
  return failures == 0 ? 0 : 1;
}
