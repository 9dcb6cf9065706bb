// A Kokkos application that knows nothing of ozaki: KokkosBlas::gemm on FP64 Views, which
// Kokkos Kernels' cuBLAS TPL turns into cublasDgemm.  The interposer's second client (issue
// 12): run it with and without LD_PRELOAD=libozaki_cublas.so.
//
//   kokkos_blas_client [N ...]   (default 16384); one CSV line per size on stdout:
//   label,n,ms,tflops,error  with error = max |c - ref| / (|A||B|)_ij against long double on
//   64 sampled entries, ms the median of 5 calls after a warm-up.
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes.push_back(16384);
  const char* label = std::getenv("CLIENT_LABEL") ? std::getenv("CLIENT_LABEL") : "kokkos";
  using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft>;
  for (const int n : sizes) {
    Matrix A("A", n, n), B("B", n, n), C("C", n, n);
    Kokkos::Random_XorShift64_Pool<> pool(5);
    // (U(-1/2,1/2)) exp(phi N(0,1)), phi = 0.5.
    for (Matrix* X : {&A, &B}) {
      Matrix u("u", n, n), z("z", n, n);
      Kokkos::fill_random(u, pool, -0.5, 0.5);
      Kokkos::fill_random(z, pool, -1.0, 1.0);
      Matrix x = *X;
      Kokkos::parallel_for(
          "inputs", Kokkos::RangePolicy<>(0, std::int64_t(n) * n), KOKKOS_LAMBDA(std::int64_t i) {
            const std::int64_t r = i % n, c = i / n;
            // exp(phi s), s = sqrt(3) z uniform with unit variance: the spread of phi N(0,1)
            // without a normal generator.
            x(r, c) = u(r, c) * ::exp(0.5 * 1.7320508075688772 * z(r, c));
          });
    }
    Kokkos::fence();
    KokkosBlas::gemm("N", "N", 1.0, A, B, 0.0, C);  // warm-up
    Kokkos::fence();
    std::vector<double> ms;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      KokkosBlas::gemm("N", "N", 1.0, A, B, 0.0, C);
      Kokkos::fence();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    auto hA = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
    auto hB = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
    auto hC = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
    double worst = 0;
    for (int s = 0; s < 64; ++s) {
      const int i = int((s * 7919LL) % n), j = int((s * 104729LL) % n);
      long double sum = 0, scale = 0;
      for (int p = 0; p < n; ++p) {
        const long double prod = (long double)hA(i, p) * hB(p, j);
        sum += prod;
        scale += std::fabs(prod);
      }
      if (scale > 0) worst = std::max(worst, double(std::fabs(hC(i, j) - sum) / scale));
    }
    const double median = ms[ms.size() / 2];
    std::printf("%s,%d,%.3f,%.2f,%.3e\n", label, n, median,
                2.0 * n * n * double(n) / (median * 1e9), worst);
    std::fflush(stdout);
  }
  return 0;
}
