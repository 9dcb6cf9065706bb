// How many moduli scheme II's fast scaling rule needs on wide exponent ranges, against native
// FP64 GEMM's error on the same inputs: the host analysis behind the automatic count's peak
// classes (ozaki/impl/crt/rules.hpp, docs/design.md §5.5).  No timing.
//
// For each shape, phi and seed: A (M x K) and B (K x N) with entries (U - 1/2) exp(phi N),
// native FP64 GEMM (KokkosBlas on the host space: the BLAS of this build) and Int8Crt with the
// fast rule at the counted rule's count L_c (rules.hpp, crt_counted_moduli, from the oracle's
// G = serial::crt_counted_ratio; 24 where G is +Inf), at the count L_x of the same model with
// the exact (|A||B|)_mn in place of the window product's lower bound (G_x: what a sharper lower
// bound could give at most), and at the fast model's own count L_f and
// L_f + 1 .. L_f + 5 moduli, each error max |c - ref| / (|A||B|)_mn over sampled entries
// against a double-double reference.  One line per case: the shape, phi, seed, the peak
// ratios' statistics, G and L_c, G_x and L_x, and the errors' ratios to native's.
//
//   crt_counts --shapes 16x16x4096,1024 --phi 2,4 --seeds 1,2,3 [--samples N] [--family iid|anti]
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/crt/rules.hpp>
#include <ozaki/ozaki.hpp>
#include <ozaki/serial/crt.hpp>
#include <ozaki/serial/reference.hpp>

#include "../unit_tests/hooks_from_environment.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultHostExecutionSpace;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

struct Shape {
  std::int64_t m, n, k;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

Shape parse_shape(const std::string& s) {
  long long m = 0, n = 0, k = 0;
  if (std::sscanf(s.c_str(), "%lldx%lldx%lld", &m, &n, &k) == 3) return {m, n, k};
  m = std::atoll(s.c_str());
  return {m, m, m};
}

ozaki::serial::ConstMatrixRef ref_of(const Matrix& X) {
  return {X.data(), static_cast<std::int64_t>(X.extent(0)), static_cast<std::int64_t>(X.extent(1)),
          1, static_cast<std::int64_t>(X.extent(0))};
}

/// max |c - ref| / (|A||B|)_mn over the sampled entries.
double error_of(const Matrix& C, const Matrix& A, const Matrix& B,
                const std::vector<std::pair<std::int64_t, std::int64_t>>& samples) {
  double worst = 0;
  const auto a = ref_of(A), b = ref_of(B);
  for (const auto& [m, n] : samples) {
    const ozaki::serial::DoubleDouble ref = ozaki::serial::dd_dot(a, b, m, n);
    double abs_ab = 0;
    for (std::int64_t k = 0; k < a.cols; ++k) abs_ab += std::fabs(a(m, k) * b(k, n));
    if (abs_ab == 0) continue;
    const double err = std::fabs((C(m, n) - ref.hi) - ref.lo) / abs_ab;
    worst = err > worst ? err : worst;
  }
  return worst;
}

/// Candidate statistics of an operand's exponent spread (rows of X along K): the largest, over
/// rows, of the row's scale exponent minus the mean exponent of its nonzero norm tiles'
/// maxima (tiles as the norm tiles cut them, kernels.hpp), and minus the mean exponent of its
/// nonzero elements.
struct Spread {
  double tiles = 0, elements = 0;
};

Spread spread_of(const ozaki::serial::ConstMatrixRef& X) {
  Spread s;
  const std::int64_t tiles = ozaki::Impl::norm_tiles(X.cols);
  for (std::int64_t r = 0; r < X.rows; ++r) {
    const int e = ozaki::serial::row_scale_exponent(X, r);
    double tile_sum = 0, element_sum = 0;
    std::int64_t nonzero_tiles = 0, elements = 0;
    for (std::int64_t t = 0; t < tiles; ++t) {
      const ozaki::Impl::NormTile tile = ozaki::Impl::norm_tile(t, X.cols);
      double mu = 0;
      for (int i = 0; i < tile.count; ++i) {
        const double x = std::fabs(X(r, tile.first + tile.stride * i));
        mu = std::max(mu, x);
        if (x > 0) {
          int ex = 0;
          std::frexp(x, &ex);
          element_sum += ex;
          ++elements;
        }
      }
      if (mu > 0) {
        tile_sum += ozaki::serial::scale_exponent(mu);
        ++nonzero_tiles;
      }
    }
    if (nonzero_tiles > 0) s.tiles = std::max(s.tiles, e - tile_sum / nonzero_tiles);
    if (elements > 0) s.elements = std::max(s.elements, e - element_sum / elements);
  }
  return s;
}

/// The counted rule's G (serial::crt_counted_ratio) with the exact (|A||B|)_mn (long double
/// sums of exact products) in place of the window product's lower bound: the most any sharper
/// lower bound could give.
double exact_counted_ratio(const Matrix& A, const Matrix& B,
                           const ozaki::serial::CrtRowNorms& norms_a,
                           const ozaki::serial::CrtRowNorms& norms_b) {
  const auto a = ref_of(A), b = ref_of(B);
  double G = 0;
  for (std::int64_t n = 0; n < b.cols; ++n)
    for (std::int64_t m = 0; m < a.rows; ++m) {
      if (norms_a.l2[m] == 0 || norms_b.l2[n] == 0) continue;
      long double d = 0;
      for (std::int64_t k = 0; k < a.cols; ++k)
        d += std::fabs(static_cast<long double>(a(m, k)) * b(k, n));
      const double D =
          std::ldexp(static_cast<double>(d), -norms_a.exponent[m] - norms_b.exponent[n]);
      G = std::max(G, D > 0 ? norms_a.l2[m] * norms_b.l2[n] * 0x1p-14 / D : HUGE_VAL);
    }
  return G;
}

/// Data families: `iid`, every entry (U - 1/2) exp(phi N); `anti`, the same with one N per k,
/// shared by column k of A and row k of B with opposite signs (A_mk = (U - 1/2) exp(phi z_k),
/// B_kn = (U - 1/2) exp(-phi z_k)): the products a_mk b_kn lose the spread that each operand's
/// rows have, the hard case for per-row scaling.
bool anti_aligned = false;

void run_case(const Shape& s, double phi, std::uint64_t seed, std::int64_t sample_count) {
  std::mt19937_64 engine(seed);
  auto uniform = [&] { return static_cast<double>(engine() >> 11) * 0x1p-53; };
  auto normal = [&] {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  };
  Matrix A("A", s.m, s.k), B("B", s.k, s.n), C("C", s.m, s.n);
  std::vector<double> z(static_cast<std::size_t>(s.k));
  if (anti_aligned) {
    for (double& v : z) v = normal();  // (only here: iid data keep their random stream)
  }
  for (std::int64_t j = 0; j < s.k; ++j)
    for (std::int64_t i = 0; i < s.m; ++i)
      A(i, j) = (uniform() - 0.5) * std::exp(phi * (anti_aligned ? z[j] : normal()));
  for (std::int64_t j = 0; j < s.n; ++j)
    for (std::int64_t i = 0; i < s.k; ++i)
      B(i, j) = (uniform() - 0.5) * std::exp(phi * (anti_aligned ? -z[i] : normal()));
  std::vector<std::pair<std::int64_t, std::int64_t>> samples;
  if (s.m * s.n <= sample_count) {
    for (std::int64_t n = 0; n < s.n; ++n)
      for (std::int64_t m = 0; m < s.m; ++m) samples.emplace_back(m, n);
  } else {
    for (std::int64_t i = 0; i < sample_count; ++i)
      samples.emplace_back(static_cast<std::int64_t>(engine() % s.m),
                           static_cast<std::int64_t>(engine() % s.n));
  }
  const auto norms_a = ozaki::serial::crt_row_norms(ref_of(A));
  const auto norms_b = ozaki::serial::crt_row_norms(ref_of(B).transposed());
  const double q_a = ozaki::serial::crt_peak_ratio(norms_a);
  const double q_b = ozaki::serial::crt_peak_ratio(norms_b);
  const int L_f = ozaki::Impl::crt_fast_moduli(s.k, q_a, q_b, ozaki::Impl::fp64_unit_roundoff);
  const Spread spread_a = spread_of(ref_of(A)), spread_b = spread_of(ref_of(B).transposed());
  const Space space;
  ozaki::Options native;
  native.algorithm = ozaki::Algorithm::Native;
  ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C, native);
  const double err_native = error_of(C, A, B, samples);
  std::printf("%6lld %6lld %6lld %4.1f %4llu  Kqq %9.1f  dt %5.2f de %5.2f  L_f %2d  native %.2e ",
              static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
              phi, static_cast<unsigned long long>(seed),
              ozaki::Impl::crt_peak_product(s.k, q_a, q_b), spread_a.tiles + spread_b.tiles,
              spread_a.elements + spread_b.elements, L_f, err_native);
  // The error of the fast rule at L moduli, relative to native's.
  const auto fast_error_ratio = [&](int L) {
    ozaki::Options o;
    o.algorithm = ozaki::Algorithm::Int8Crt;
    o.crt_scaling = ozaki::CrtScaling::Fast;
    o.moduli = L;
    ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C, o);
    const double err = error_of(C, A, B, samples);
    return err_native > 0 ? err / err_native : HUGE_VAL;
  };
  // The counted fast rule's count (rules.hpp, crt_counted_moduli) and its error; the same model
  // with the exact (|A||B|)_mn in place of the window product's lower bound.
  const double G = ozaki::serial::crt_counted_ratio(ref_of(A), ref_of(B));
  const int L_c = ozaki::Impl::crt_counted_moduli(s.k, G, ozaki::Impl::fp64_unit_roundoff);
  std::printf(" G %.2e L_c %2d %6.3f ", G, L_c, fast_error_ratio(L_c));
  const double G_x = exact_counted_ratio(A, B, norms_a, norms_b);
  const int L_x = ozaki::Impl::crt_counted_moduli(s.k, G_x, ozaki::Impl::fp64_unit_roundoff);
  std::printf(" Gx %.2e L_x %2d %6.3f ", G_x, L_x, fast_error_ratio(L_x));
  for (int extra = 0; extra <= 5 && L_f + extra <= ozaki::max_moduli; ++extra) {
    try {
      std::printf(" +%d %6.3f", extra, fast_error_ratio(L_f + extra));
    } catch (const std::exception& e) {
      std::printf(" +%d  (%s)", extra, e.what());
    }
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  ozaki_test::set_test_hooks_from_environment();  // OZAKI_ONEDNN=off ... (docs/building.md)
  Kokkos::ScopeGuard guard(argc, argv);
  std::vector<Shape> shapes = {{1024, 1024, 1024}};
  std::vector<double> phis = {2};
  std::vector<std::uint64_t> seeds = {1};
  std::int64_t samples = 1024;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i], value = argv[i + 1];
    if (arg == "--shapes") {
      shapes.clear();
      for (const auto& s : split_list(value)) shapes.push_back(parse_shape(s));
    } else if (arg == "--phi") {
      phis.clear();
      for (const auto& p : split_list(value)) phis.push_back(std::atof(p.c_str()));
    } else if (arg == "--seeds") {
      seeds.clear();
      for (const auto& p : split_list(value))
        seeds.push_back(std::strtoull(p.c_str(), nullptr, 10));
    } else if (arg == "--family") {
      anti_aligned = value == "anti";
    } else if (arg == "--samples") {
      samples = std::atoll(value.c_str());
    }
  }
  std::printf(
      "     M      N      K  phi seed  K q_A q_B      spreads dt, de      L_f  native err  "
      "counted G, L_c: err / native err  exact G_x, L_x: err / native err  fast rule at L_f + j: "
      "err / native err\n");
  for (const Shape& s : shapes)
    for (const double phi : phis)
      for (const std::uint64_t seed : seeds) run_case(s, phi, seed, samples);
  return 0;
}
