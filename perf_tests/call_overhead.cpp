// The host time of one ozaki::gemm call around its device work: what an Auto call that ends in
// native FP64 GEMM costs beyond Algorithm::Native (issue 9: "Auto never loses"), and where it
// goes.  Host clocks only; the device work is the same native GEMM on both sides.
//
//   call_overhead [--shapes 2048x2048x1024,64x64x64] [--reps 201] [--steps 2000]
//
// Per shape, in alternating order (each call after a fence, as ozaki_bench times them):
//   native     ozaki::gemm with Algorithm::Native and a Workspace (ozaki_bench's native)
//   plain      the plain call, ozaki::gemm(space, "N", "N", 1, A, B, 0, C)
//   plain-ws   Options{} with a Workspace (no library scratch lease)
// each with the medians of: the host time until the call returned ("enqueue"), until the
// device finished ("total"), and the Report's seconds_decision.  Then the steps of the plain
// call's path, each timed alone in a loop (hot caches): the library scratch lease, the
// instance's turn, the argument checks, the stream capture query (asked by an Auto call
// that does not decline from the shape, never by an Algorithm::Native one), the backend's torn-down
// check, the device's rates, Auto's plan and choice, a profiling region, and a Report with its
// replay options.
#include <ozaki/ozaki.hpp>

#include "../unit_tests/hooks_from_environment.hpp"
#include "tool_args.hpp"

#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Space>;
using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

/// Median microseconds per iteration of `body`, over 7 rounds of `n` iterations.
template <class Body>
double step_us(int n, Body&& body) {
  std::vector<double> rounds;
  for (int r = 0; r < 7; ++r) {
    const auto t = Clock::now();
    for (int i = 0; i < n; ++i) body();
    rounds.push_back(us_since(t) / n);
  }
  return perf_tool::median(rounds);
}

struct Timings {
  std::vector<double> enqueue, total, decision;
};

void run_shape(const perf_tool::Shape& s, int reps, int steps) {
  Space space;
  Matrix A("A", s.m, s.k), B("B", s.k, s.n), C("C", s.m, s.n);
  Kokkos::Random_XorShift64_Pool<Space> pool(12345);
  Kokkos::fill_random(A, pool, -1.0, 1.0);
  Kokkos::fill_random(B, pool, -1.0, 1.0);
  ozaki::Options native_options;
  native_options.algorithm = ozaki::Algorithm::Native;
  ozaki::Workspace<Space> ws(space);
  const char* names[] = {"native", "plain", "plain-ws"};
  auto call = [&](int which) {
    switch (which) {
      case 0: return ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C, native_options, ws);
      case 1: return ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C);
      default: return ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C, ozaki::Options{}, ws);
    }
  };
  for (int w = 0; w < 3; ++w) call(w);  // warm-up: handles, scratch, first-use statics
  space.fence();
  Timings t[3];
  std::string algorithm[3];
  for (int rep = 0; rep < reps; ++rep) {
    for (int i = 0; i < 3; ++i) {
      const int which = (i + rep) % 3;
      space.fence();
      const auto t0 = Clock::now();
      const ozaki::Report r = call(which);
      t[which].enqueue.push_back(us_since(t0));
      space.fence();
      t[which].total.push_back(us_since(t0));
      t[which].decision.push_back(r.seconds_decision * 1e6);
      algorithm[which] = ozaki::to_string(r.algorithm);
    }
  }
  std::printf("%lldx%lldx%lld, %d reps each, alternating (median microseconds):\n",
              static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
              reps);
  std::printf("  %-9s %-8s %10s %10s %10s\n", "call", "ran", "enqueue", "total", "decision");
  for (int i = 0; i < 3; ++i) {
    std::printf("  %-9s %-8s %10.2f %10.2f %10.2f\n", names[i], algorithm[i].c_str(),
                perf_tool::median(t[i].enqueue), perf_tool::median(t[i].total),
                perf_tool::median(t[i].decision));
  }

  // The plain call's steps, each alone (hot).
  using namespace ozaki::Impl;
  const auto a = as_const_strided<Space>(A);
  const auto b = as_const_strided<Space>(B);
  const auto c = as_strided<Space>(C);
  const ozaki::Options options{};
  std::printf("  steps of the plain call, each alone (%d iterations, median of 7 rounds):\n",
              steps);
  std::printf("    %-34s %8.3f us\n", "library scratch lease",
              step_us(steps, [&] { auto lease = LibraryScratch<Space>::lease(space); }));
  std::printf("    %-34s %8.3f us\n", "instance turn",
              step_us(steps, [&] { auto turn = instance_turn(space); }));
  std::printf("    %-34s %8.3f us\n", "argument checks (checked_call)", step_us(steps, [&] {
                auto call = checked_call<Space>("N", "N", a, b, c, options, nullptr, nullptr);
                (void)call;
              }));
  const GemmCall<Space> checked = checked_call<Space>("N", "N", a, b, c, options, nullptr, nullptr);
  std::printf("    %-34s %8.3f us\n", "stream capture query", step_us(steps, [&] {
                volatile bool capturing = captured(space);
                (void)capturing;
              }));
  std::printf("    %-34s %8.3f us\n", "backend torn down?", step_us(steps, [&] {
                std::string why;
                volatile bool gone = Int8Gemm<Space>::torn_down(why);
                (void)gone;
              }));
  std::printf("    %-34s %8.3f us\n", "device rates", step_us(steps, [&] {
                volatile double r = device_rates(space).int8_over_fp64;
                (void)r;
              }));
  std::printf("    %-34s %8.3f us\n", "Auto: plan and choice", step_us(steps, [&] {
                std::string why;
                const CallPlan plan = make_plan(checked.shape, options);
                volatile int pick = static_cast<int>(choose_auto(space, plan, false, why));
                (void)pick;
              }));
  const CallPlan plan = make_plan(checked.shape, options);
  std::printf("    %-34s %8.3f us\n", "  of which the plan", step_us(steps, [&] {
                const CallPlan p = make_plan(checked.shape, options);
                volatile std::int64_t k = p.shape.k;
                (void)k;
              }));
  std::printf("    %-34s %8.3f us\n", "  of which the first guesses", step_us(steps, [&] {
                volatile int crt = auto_products(plan).crt;
                (void)crt;
              }));
  std::printf("    %-34s %8.3f us\n", "  of which the reason", step_us(steps, [&] {
                const std::string why =
                    native_faster_reason("Int8Crt with at least ", 14, " moduli", 3.48);
                volatile std::size_t n = why.size();
                (void)n;
              }));
  std::printf("    %-34s %8.3f us\n", "profiling region",
              step_us(steps, [&] { ProfilingRegion region("ozaki::gemm[Native]"); }));
  std::printf("    %-34s %8.3f us\n", "Report, replay options", step_us(steps, [&] {
                ozaki::Report r;
                r.algorithm = ozaki::Algorithm::Native;  // as run_native reports it
                r.reason = "Auto: native FP64 GEMM is faster here";
                r.options = replay_options(options, r);
                volatile bool f = r.fallback;
                (void)f;
              }));
}

}  // namespace

int main(int argc, char* argv[]) {
  ozaki_test::set_test_hooks_from_environment();  // OZAKI_CUBLAS_INT8 ... (docs/building.md)
  Kokkos::initialize(argc, argv);
  int status = 0;
  try {
    std::string shapes = "2048x2048x1024,64x64x64";
    int reps = 201, steps = 2000;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument("missing value after " + arg);
      if (arg == "--shapes") {
        shapes = argv[++i];
      } else if (arg == "--reps") {
        reps = static_cast<int>(perf_tool::positive(argv[++i], "--reps"));
      } else if (arg == "--steps") {
        steps = static_cast<int>(perf_tool::positive(argv[++i], "--steps"));
      } else {
        throw std::invalid_argument("unknown argument " + arg);
      }
    }
    for (const perf_tool::Shape& s : perf_tool::parse_shapes(shapes)) run_shape(s, reps, steps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "call_overhead: %s\n", e.what());
    status = 1;
  }
  Kokkos::finalize();
  return status;
}
