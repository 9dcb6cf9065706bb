// norm_tiles_rate: scheme II's norm tiles (pass 1 and the row norms' partial sums, scaling.hpp)
// on one operand, the library's kernel against the one-thread-per-tile forms it replaced, checked
// bit for bit against each other and timed in alternating rounds.
//
//   norm_tiles_rate [--rows 16384] [--k 16384] [--rounds 7] [--phi 0.5]
//
// Variants, each on a K-contiguous (LayoutRight) and a strided (LayoutLeft) operand:
//   library      ozaki::Impl::norm_tile_partials: one thread per tile reading it twice (the
//                second time from the cache), the quanta through 64-bit integer conversions
//   thread-fp64  the same with the quanta in FP64 arithmetic (no 64-bit conversions)
//   lanes        4 vector lanes per tile holding it in registers (one read per element), FP64
//                quanta, joined by Kokkos' vector reductions (GPUs only: on host spaces one
//                thread runs every lane's iteration)
// The last two are this tool's own, tried for the library and measured slower or no faster on
// the H200 (docs/benchmarks.md, 2026-12-03, fifth part): kept as the baselines a new norm-tile
// kernel must beat.
// Per variant and layout: the median milliseconds of --rounds launches (a fence around each),
// and the bytes read per second.  Exit status 1 when a variant's tiles differ from the library's
// in any bit, 2 for a bad argument.
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

/// The quanta as doubles, from the definition's x 2^(16 - e_t) and x 2^(31 - e_t)
/// (scaled, as ldexp rounds them): s2(x)^2 = max(1, ceil(v2))^2 <= 2^32 for x != 0 (|x| <
/// 2^e_t, so v2 < 2^16) and s1(x) = floor(v1) < 2^31.  Integers below 2^53, and a tile's sums
/// of 32 of them below 2^38: every operation on them is exact, so these are the integers of
/// rules.hpp (norm_quanta's), without the 64-bit conversions that cost a GPU three slow
/// instructions per element.  The nearest integer n of v < 2^51 is (v + 1.5 2^52) - 1.5 2^52;
/// ceil and floor step from it.
KOKKOS_INLINE_FUNCTION double square_quantum(double x, const NormScales& scales) {
  if (x == 0) return 0;
  const double v = scaled(magnitude(x), scales.l2);
  double s = (v + 0x1.8p52) - 0x1.8p52;
  if (s < v) s += 1;
  if (s < 1) s = 1;
  return s * s;
}
KOKKOS_INLINE_FUNCTION double l1_quantum(double x, const NormScales& scales) {
  const double v = scaled(magnitude(x), scales.l1);
  const double s = (v + 0x1.8p52) - 0x1.8p52;
  return s > v ? s - 1 : s;
}

/// Vector lanes per norm tile in lane_norm_tiles (each holds 32 / lanes elements).
constexpr int norm_tile_lanes = 4;

/// The norm tiles with norm_tile_lanes vector lanes per tile (GPUs only): every element read
/// from memory once and kept in registers between the maximum and the sums.  Lane v holds the
/// tile's elements v, v + lanes, ...: in Kokkos' vector loops of exactly `lanes` iterations
/// each lane of a GPU team thread runs its own iteration v, so each lane's array holds its own
/// elements (on host spaces, where one thread runs all iterations, this form would be wrong).
/// On the H200 at 16384^2 it took 1.55-1.56 ms per operand against the library's 0.89-0.91, with
/// 56 registers and no stack (as a Kokkos-3.4 form with 64-bit quanta had in 2026-12-02's
/// sixth part); why is not measured.  The maximum and the
/// two sums are vector reductions (shuffles), exact in any order, the sums in FP64
/// (square_quantum, l1_quantum: no 64-bit conversions).  Consecutive team threads take
/// consecutive tiles of a K-contiguous row or consecutive rows of strided ones, so that a
/// warp's load reads four 64-byte runs.
void lane_norm_tiles(bool strided, const V::ConstMatrix& X, const V::Rows& tile_max,
                     const V::Rows& squares, const V::Rows& sums) {
  const Space space;
  using policy_type = TeamLaunch<Space>;
  using member_type = typename policy_type::member_type;
  constexpr int lanes = norm_tile_lanes, per_lane = norm_tile_elements / lanes;
  constexpr int team = 256 / lanes;
  const std::int64_t rows = X.extent(0), K = X.extent(1), tiles = norm_tiles(K);
  const std::int64_t count = rows * tiles;
  Kokkos::parallel_for(
      strided ? "norm_tiles_rate::lanes_strided" : "norm_tiles_rate::lanes",
      policy_type(space, static_cast<int>((count + team - 1) / team), team, lanes),
      KOKKOS_LAMBDA(const member_type& m) {
        const std::int64_t i = std::int64_t(m.league_rank()) * team + m.team_rank();
        if (i >= count) return;  // the whole team thread: its lanes share i
        const std::int64_t r = strided ? i % rows : i / tiles;
        const std::int64_t t = strided ? i / rows : i % tiles;
        const NormTile tile = norm_tile(t, K);
        double x[per_lane];
        double mu = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(m, lanes),
            [&](const int lane, double& lane_max) {
              for (int j = 0; j < per_lane; ++j) {
                const int e = lane + lanes * j;
                x[j] = e < tile.count ? X(r, tile.first + tile.stride * e) : 0.0;
              }
              for (int j = 0; j < per_lane; ++j) {
                const double v = is_finite(x[j]) ? magnitude(x[j]) : positive_infinity();
                lane_max = v > lane_max ? v : lane_max;
              }
            },
            Kokkos::Max<double>(mu));
        double sq = 0, sum = 0;
        if (mu > 0 && is_finite(mu)) {
          const NormScales scales = norm_scales(scale_exponent(mu));
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(m, lanes),
              [&](const int, double& s) {
                for (int j = 0; j < per_lane; ++j) s += square_quantum(x[j], scales);
              },
              sq);
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(m, lanes),
              [&](const int, double& s) {
                for (int j = 0; j < per_lane; ++j) s += l1_quantum(x[j], scales);
              },
              sum);
        }
        Kokkos::single(Kokkos::PerThread(m), [&]() {
          tile_max(t, r) = mu;
          squares(t, r) = sq;
          sums(t, r) = sum;
        });
      });
}

/// The library's norm_tile_partials with the FP64 quanta.
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
  for_each_norm_tile("norm_tiles_rate::one_thread_fp64", "norm_tiles_rate::one_thread_fp64_strided",
                     space, strided, rows, tiles, partials);
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
  V::TileCounts layers;  // the library's layer bins (the other variants leave them)
  Tiles(std::int64_t tiles, std::int64_t rows)
      : max("max", tiles, rows),
        squares("squares", tiles, rows),
        sums("sums", tiles, rows),
        layers("layers", tiles, rows) {}
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
        {"library",
         [&](const Tiles& t) {
           norm_tile_partials(Space(), strided, X, t.max, t.squares, t.sums, t.layers);
         }},
        {"thread-fp64",
         [&](const Tiles& t) { one_thread_fp64(strided, X, t.max, t.squares, t.sums); }},
    };
    if (!is_host_space<Space>()) {
      variants.push_back({"lanes", [&](const Tiles& t) {
                            lane_norm_tiles(strided, X, t.max, t.squares, t.sums);
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
