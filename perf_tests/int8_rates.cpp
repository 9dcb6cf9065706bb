// int8_rates: the INT8 backend's rate for the shapes and paddings ozaki's schemes hand it, the
// measurements behind the pass-width and padding choices (docs/design.md §6).
//
//   int8_rates --shapes 10000x2000x10000,8192x2048x8192 --pads 16,128,256 [--reps 10]
//
// For each shape M x N x K (C is M x N, the INT8 GEMM is TN with both operands K-contiguous)
// and each padding P, the operands are stored with rows, K and leading dimensions rounded up to
// P, filled with random int8, and the backend's Int8Gemm::run is timed (median of --reps after
// a warm-up).  TOP/s counts 2 M N K operations of the unpadded shape, so that a padding's cost
// shows as a lower rate.
#include <ozaki/impl/backend.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../unit_tests/hooks_from_environment.hpp"
#include "tool_args.hpp"

namespace {

using perf_tool::median;
using perf_tool::positive;
using perf_tool::Shape;

using Space = Kokkos::DefaultExecutionSpace;

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

/// x(i) = pseudo-random int8 (a multiplicative hash of i and the seed): random data, since
/// constant data runs faster than real data on these units.
void fill_int8(const Space& space, const Kokkos::View<std::int8_t*, Space::memory_space>& x,
               std::uint64_t seed) {
  Kokkos::parallel_for(
      "int8_rates::fill",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, x.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        std::uint64_t h = (static_cast<std::uint64_t>(i) + seed) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        x(i) = static_cast<std::int8_t>(static_cast<int>(h >> 56) - 128);
      });
}

/// Median seconds of one INT8 GEMM of `s` with every extent and leading dimension padded to `pad`.
double time_gemm(const Space& space, const Shape& s, std::int64_t pad, int reps) {
  const std::int64_t mp = round_up(s.m, pad), np = round_up(s.n, pad), kp = round_up(s.k, pad);
  Kokkos::View<std::int8_t*, Space::memory_space> a("a", mp * kp), b("b", np * kp);
  Kokkos::View<std::int32_t*, Space::memory_space> c("c", mp * np);
  fill_int8(space, a, 1);
  fill_int8(space, b, 2);
  const ozaki::Impl::Int8GemmProblem p =
      ozaki::Impl::packed_int8_problem(mp, np, kp, a.data(), b.data(), c.data());
  ozaki::Impl::Int8Gemm<Space>::run(space, p);
  space.fence();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    ozaki::Impl::Int8Gemm<Space>::run(space, p);
    space.fence();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(times);
}

}  // namespace

int main(int argc, char* argv[]) {
  ozaki_test::set_test_hooks_from_environment();  // OZAKI_ONEDNN=off, OZAKI_CUBLAS_INT8=lt ...
  std::vector<Shape> shapes;
  std::vector<std::int64_t> pads{16};
  int reps = 10;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg.rfind("--kokkos", 0) == 0) continue;
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--shapes") {
        for (const Shape& s : perf_tool::parse_shapes(value)) shapes.push_back(s);
      } else if (arg == "--pads") {
        pads.clear();
        for (const auto& item : perf_tool::split(value, ',')) {
          const std::int64_t p = positive(item, "padding");
          if (p % 16 != 0) throw std::invalid_argument("padding " + item + " (a multiple of 16)");
          pads.push_back(p);
        }
      } else if (arg == "--reps") {
        reps = static_cast<int>(positive(value, "--reps"));
      } else {
        throw std::invalid_argument("unknown option " + arg);
      }
    }
    if (shapes.empty() || pads.empty()) throw std::invalid_argument("--shapes and --pads needed");
  } catch (const std::exception& e) {
    std::cerr << "int8_rates: " << e.what() << "\n";
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  const Space space;
  std::printf("int8_rates on %s (%s), median of %d\n%-22s %6s %12s %10s\n", Space::name(),
              ozaki::Impl::Int8Gemm<Space>::name(), reps, "M x N x K", "pad", "time[ms]", "TOP/s");
  for (const Shape& s : shapes) {
    for (const std::int64_t pad : pads) {
      const double t = time_gemm(space, s, pad, reps);
      const std::string name =
          std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
      std::printf("%-22s %6lld %12.4f %10.1f\n", name.c_str(), static_cast<long long>(pad), t * 1e3,
                  2.0 * s.m * s.n * s.k / t / 1e12);
      std::fflush(stdout);
    }
  }
  return 0;
}
