// norm_tiles_rate: scheme II's norm tiles (pass 1 and the row norms' partial sums, scaling.hpp)
// on one operand, the library's kernel against the one-thread-per-tile forms it replaced, checked
// bit for bit against each other and timed in alternating rounds.
//
//   norm_tiles_rate [--rows 16384] [--k 16384] [--rounds 7] [--phi 0.5]
//
// Variants, each on a K-contiguous (LayoutRight) and a strided (LayoutLeft) operand:
//   lanes        ozaki::Impl::lane_norm_tiles, the library's form on GPUs: 4 lanes share a
//                tile held in registers (not on host spaces, where it does not apply)
//   thread-u64   ozaki::Impl::one_thread_norm_tiles, the library's form on hosts (and on GPUs
//                before 2026-12-03, fifth part): one thread per tile reading it twice (the
//                second time from the cache), the quanta through 64-bit integer conversions
//   thread-fp64  the same with the FP64 quanta (square_quantum, l1_quantum), this tool's own
// Per variant and layout: the median milliseconds of --rounds launches (a fence around each),
// and the bytes read per second.  Exit status 1 when a variant's tiles differ from thread-u64's in
// any bit, 2 for a bad argument.
#include <ozaki/impl/crt/scaling.hpp>

#include "tool_args.hpp"

#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using V = ozaki::Impl::Views<Space>;
using namespace ozaki::Impl;

/// one_thread_norm_tiles with the FP64 quanta of lane_norm_tiles.
void one_thread_fp64(bool strided, const V::ConstMatrix& X, const V::Rows& tile_max,
                     const V::Rows& squares, const V::Rows& sums) {
  const Space space;
  const std::int64_t rows = X.extent(0), K = X.extent(1), tiles = norm_tiles(K);
  const auto partials = KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t t) {
    const NormTile tile = norm_tile(t, K);
    const auto for_each_element = [&](const auto& f) {
      int i = 0;
      for (; i + norm_tile_batch <= tile.count; i += norm_tile_batch) {
        double x[norm_tile_batch];
        for (int j = 0; j < norm_tile_batch; ++j) x[j] = X(r, tile.first + tile.stride * (i + j));
        for (int j = 0; j < norm_tile_batch; ++j) f(x[j]);
      }
      for (; i < tile.count; ++i) f(X(r, tile.first + tile.stride * i));
    };
    double mu = 0;
    for_each_element([&](double x) {
      const double v = is_finite(x) ? magnitude(x) : positive_infinity();
      mu = v > mu ? v : mu;
    });
    double sq = 0, sum = 0;
    if (mu > 0 && is_finite(mu)) {
      const NormScales scales = norm_scales(scale_exponent(mu));
      for_each_element([&](double x) {
        sq += square_quantum(x, scales);
        sum += l1_quantum(x, scales);
      });
    }
    tile_max(t, r) = mu;
    squares(t, r) = sq;
    sums(t, r) = sum;
  };
  if (strided) {
    grid_for("norm_tiles_rate::one_thread_fp64_strided", space, rows, tiles, partials);
  } else {
    flat_for(
        "norm_tiles_rate::one_thread_fp64", space, rows * tiles,
        KOKKOS_LAMBDA(const std::int64_t i) { partials(i / tiles, i % tiles); });
  }
}

/// Entries (U - 1/2) exp(phi N), the benchmark's distribution (from a random pool: the
/// variants compare on the same data, not across runs).
template <class Matrix>
void fill(const Matrix& X, double phi) {
  Kokkos::Random_XorShift64_Pool<Space> pool(2026);
  const std::int64_t K = X.extent(1);
  Kokkos::parallel_for(
      "norm_tiles_rate::fill", Kokkos::RangePolicy<Space>(0, X.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t r) {
        auto g = pool.get_state();
        for (std::int64_t k = 0; k < K; ++k) X(r, k) = (g.drand() - 0.5) * ::exp(phi * g.normal());
        pool.free_state(g);
      });
}

struct Tiles {
  V::Rows max, squares, sums;
  Tiles(std::int64_t tiles, std::int64_t rows)
      : max("max", tiles, rows), squares("squares", tiles, rows), sums("sums", tiles, rows) {}
};

bool same_bits(const V::Rows& a, const V::Rows& b) {
  const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  return std::memcmp(ha.data(), hb.data(), ha.span() * sizeof(double)) == 0;
}

int run(int argc, char** argv) {
  std::int64_t rows = 16384, K = 16384, rounds = 7;
  double phi = 0.5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + a);
    const std::string v = argv[++i];
    if (a == "--rows") {
      rows = perf_tool::positive(v, "--rows");
    } else if (a == "--k") {
      K = perf_tool::positive(v, "--k");
    } else if (a == "--rounds") {
      rounds = perf_tool::positive(v, "--rounds");
    } else if (a == "--phi") {
      phi = std::stod(v);
      if (!(phi >= 0) || !std::isfinite(phi)) throw std::invalid_argument("--phi " + v);
    } else {
      throw std::invalid_argument("unknown argument " + a);
    }
  }
  const std::int64_t tiles = norm_tiles(K);
  std::printf("norm_tiles_rate: %lld x %lld operand, phi %.2f, %lld rounds, %s\n", (long long)rows,
              (long long)K, phi, (long long)rounds, Space::name());
  int status = 0;
  for (const bool strided : {false, true}) {
    Kokkos::View<double**, Kokkos::LayoutRight, Space> right;
    Kokkos::View<double**, Kokkos::LayoutLeft, Space> left;
    V::ConstMatrix X;
    if (strided) {
      left = decltype(left)("X", rows, K);
      fill(left, phi);
      X = V::ConstMatrix(left);
    } else {
      right = decltype(right)("X", rows, K);
      fill(right, phi);
      X = V::ConstMatrix(right);
    }
    Kokkos::fence();
    struct Variant {
      const char* name;
      std::function<void(const Tiles&)> launch;
    };
    std::vector<Variant> variants = {
        {"thread-u64",
         [&](const Tiles& t) {
           one_thread_norm_tiles(Space(), strided, X, t.max, t.squares, t.sums);
         }},
        {"thread-fp64",
         [&](const Tiles& t) { one_thread_fp64(strided, X, t.max, t.squares, t.sums); }},
    };
    if (!is_host_space<Space>()) {
      variants.push_back({"lanes", [&](const Tiles& t) {
                            lane_norm_tiles(Space(), strided, X, t.max, t.squares, t.sums);
                          }});
    }
    std::vector<Tiles> out;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      out.emplace_back(tiles, rows);
      variants[v].launch(out[v]);  // warm-up, and the tiles compared below
    }
    Kokkos::fence();
    std::vector<std::vector<double>> ms(variants.size());
    for (std::int64_t round = 0; round < rounds; ++round) {
      for (std::size_t v = 0; v < variants.size(); ++v) {
        Kokkos::fence();
        const auto t0 = std::chrono::steady_clock::now();
        variants[v].launch(out[v]);
        Kokkos::fence();
        ms[v].push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
      }
    }
    const double bytes = 8.0 * rows * K;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const bool same = same_bits(out[v].max, out[0].max) &&
                        same_bits(out[v].squares, out[0].squares) &&
                        same_bits(out[v].sums, out[0].sums);
      if (!same) status = 1;
      const double median = perf_tool::median(ms[v]);
      std::printf("%-9s %-12s %8.3f ms  %5.2f TB/s  %s\n", strided ? "strided" : "K-contig",
                  variants[v].name, median, bytes / median * 1e-9,
                  same ? "same bits" : "DIFFERENT BITS");
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "norm_tiles_rate: bad argument: %s\n", e.what());
    return 2;
  }
}
