// One line per call: C's bits (an FNV-1a hash) and the Report, for a fixed set of Auto and
// Int8Crt calls on the host (real and complex; 8 option sets; data with a spread exponent,
// operands scaled against each other along k, one large entry per column; 4 shapes).  Run by
// two builds, `diff` of the outputs shows whether a change kept every bit and every decision
// (docs/CONTRIBUTING.md: a refactor must).
//
//     report_digest > before.txt   (one build)    report_digest > after.txt   (the other)
#include <ozaki/ozaki.hpp>

#include <Kokkos_Core.hpp>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using Space = Kokkos::DefaultHostExecutionSpace;
using M = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
using Z = Kokkos::View<Kokkos::complex<double>**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

static std::uint64_t fnv(const void* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  const unsigned char* c = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= c[i];
    h *= 1099511628211ull;
  }
  return h;
}
struct Rng {
  std::mt19937_64 e;
  explicit Rng(std::uint64_t s) : e(s) {}
  double u() { return static_cast<double>(e() >> 11) * 0x1p-53; }
  double n() {
    double a = 1 - u(), b = u();
    return std::sqrt(-2 * std::log(a)) * std::cos(6.283185307179586 * b);
  }
  double spread(double phi) { return (u() - 0.5) * std::exp(phi * n()); }
};

// family: 0 spread phi, 1 anti-aligned D along k (exponent +-e), 2 one large per column
static void fill(M A, M B, int family, double phi, std::uint64_t seed) {
  Rng r(seed);
  const int m = A.extent(0), k = A.extent(1), n = B.extent(1);
  std::vector<double> d(k);
  for (int l = 0; l < k; ++l)
    d[l] = std::ldexp(1.0, static_cast<int>(std::lround((r.u() * 2 - 1) * phi)));
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < m; ++i) {
      double x = family == 0 ? r.spread(phi) : r.n();
      if (family == 1) x *= d[j];
      A(i, j) = x;
    }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < k; ++i) {
      double y = family == 0 ? r.spread(phi) : r.n();
      if (family == 1) y /= d[i];
      if (family == 2 && i == (j * 7) % k) y *= 1e6;
      B(i, j) = y;
    }
}

static void report(const char* tag, const ozaki::Report& rep, std::uint64_t h) {
  std::printf(
      "%s alg=%s slices=%d moduli=%d scal=%s bits=%d bound=%.17g gemms=%d est=%d ws=%zu passes=%d "
      "ov=%d "
      "rp=%d cp=%d model=%.6g ops=%.17g hash=%016llx reason=[%s]\n",
      tag, ozaki::to_string(rep.algorithm), rep.slices, rep.moduli,
      ozaki::to_string(rep.crt_scaling), rep.crt_bits, rep.error_bound, rep.int8_gemms,
      rep.estimate_int8_gemms, (size_t)rep.workspace_bytes, rep.recombine_passes,
      (int)rep.overlapped, (int)rep.residue_products, rep.complex_products, rep.modeled_error,
      rep.int8_operations, (unsigned long long)h, rep.reason.c_str());
}

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const int shapes[][3] = {{37, 29, 53}, {96, 80, 300}, {128, 200, 1000}, {64, 700, 130}};
    const double phis[] = {0.0, 1.0, 2.0, 4.0};
    for (auto& s : shapes)
      for (int family = 0; family < 3; ++family)
        for (double phi : phis) {
          if (family == 1) phi = phi * 8;  // exponents +-0, 8, 16, 32
          M A("A", s[0], s[2]), B("B", s[2], s[1]), C("C", s[0], s[1]), C0("C0", s[0], s[1]);
          fill(A, B, family, phi, 1234 + s[0] + 7 * family + static_cast<int>(phi * 10));
          Rng r(99);
          for (int j = 0; j < s[1]; ++j)
            for (int i = 0; i < s[0]; ++i) C0(i, j) = r.n();
          struct Cfg {
            const char* name;
            ozaki::Algorithm a;
            int moduli;
            ozaki::CrtScaling sc;
            std::int64_t ws;
            bool ov;
          };
          const Cfg cfgs[] = {
              {"auto", ozaki::Algorithm::Auto, -1, ozaki::CrtScaling::Auto, 0, false},
              {"crt", ozaki::Algorithm::Int8Crt, -1, ozaki::CrtScaling::Auto, 0, false},
              {"crt-fast", ozaki::Algorithm::Int8Crt, -1, ozaki::CrtScaling::Fast, 0, false},
              {"crt-acc", ozaki::Algorithm::Int8Crt, -1, ozaki::CrtScaling::Accurate, 0, false},
              {"crt12", ozaki::Algorithm::Int8Crt, 12, ozaki::CrtScaling::Auto, 0, false},
              {"crt20f", ozaki::Algorithm::Int8Crt, 20, ozaki::CrtScaling::Fast, 0, false},
              {"crt16a", ozaki::Algorithm::Int8Crt, 16, ozaki::CrtScaling::Accurate, 0, false},
              {"crt-ws", ozaki::Algorithm::Int8Crt, -1, ozaki::CrtScaling::Auto, 600000, true},
              {"int8", ozaki::Algorithm::Int8Slices, -1, ozaki::CrtScaling::Auto, 0, false},
              {"int8-3", ozaki::Algorithm::Int8Slices, 3, ozaki::CrtScaling::Auto, 0, false},
              {"int8-7", ozaki::Algorithm::Int8Slices, 7, ozaki::CrtScaling::Auto, 0, false},
          };
          for (const Cfg& c : cfgs) {
            ozaki::Options o;
            o.algorithm = c.a;
            // `moduli` is the count: moduli for Int8Crt, slices for Int8Slices.
            if (c.moduli > 0 && c.a == ozaki::Algorithm::Int8Slices) o.slices = c.moduli;
            if (c.moduli > 0 && c.a != ozaki::Algorithm::Int8Slices) o.moduli = c.moduli;
            o.crt_scaling = c.sc;
            if (c.ws > 0) o.workspace_limit = c.ws;
            o.experimental.overlap = c.ov;
            Kokkos::deep_copy(C, C0);
            char tag[128];
            std::snprintf(tag, sizeof tag, "%dx%dx%d f%d phi%g %s", s[0], s[1], s[2], family, phi,
                          c.name);
            try {
              const ozaki::Report rep = ozaki::gemm(Space(), "N", "N", 1.5, A, B, 0.5, C, o);
              report(tag, rep, fnv(C.data(), C.span() * 8));
            } catch (const std::exception& e) {
              std::printf("%s threw %s\n", tag, e.what());
            }
          }
          // complex
          Z ZA("ZA", s[0], s[2]), ZB("ZB", s[1], s[2]), ZC("ZC", s[0], s[1]);
          for (int j = 0; j < s[2]; ++j)
            for (int i = 0; i < s[0]; ++i)
              ZA(i, j) = Kokkos::complex<double>(A(i, j), A((i + 1) % s[0], j));
          for (int j = 0; j < s[1]; ++j)
            for (int i = 0; i < s[2]; ++i)
              ZB(j, i) = Kokkos::complex<double>(B(i, j), -B(i, (j + 1) % s[1]));
          for (int mode = 0; mode < 2; ++mode) {
            ozaki::Options o;
            o.algorithm = mode ? ozaki::Algorithm::Int8Crt : ozaki::Algorithm::Auto;
            Kokkos::deep_copy(ZC, Kokkos::complex<double>(0.25, -1));
            char tag[128];
            std::snprintf(tag, sizeof tag, "%dx%dx%d f%d phi%g z%s", s[0], s[1], s[2], family, phi,
                          mode ? "crt" : "auto");
            try {
              const ozaki::Report rep =
                  ozaki::gemm(Space(), "N", "C", Kokkos::complex<double>(1, 0.5), ZA, ZB,
                              Kokkos::complex<double>(0.5, 0), ZC, o);
              report(tag, rep, fnv(ZC.data(), ZC.span() * 16));
            } catch (const std::exception& e) {
              std::printf("%s threw %s\n", tag, e.what());
            }
          }
          if (family == 1) phi = phi / 8;
        }
  }
  Kokkos::finalize();
}
