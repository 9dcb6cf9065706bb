// Clean exit (issue 10): a program that finalizes Kokkos from std::atexit, and that calls
// ozaki::gemm after static destruction has begun, ends with status 0 and gets the same bits
// (on CUDA, where cuBLAS has torn its state down by then, a clear BackendError instead).
//
// The order of events at exit is what C++ guarantees: atexit functions and static destructors
// run in the reverse order of their registration or construction.  `finalize_kokkos` is
// registered first, then `late` is constructed, then the library's own statics (cuBLAS
// handles, the library's scratch, side streams) come into being during the first calls.  At
// exit the library's statics go first (where they are destructible at all), then `late`'s
// destructor calls gemm again, then Kokkos is finalized and the library's finalize hooks run.
// Not a GoogleTest binary: the checks run after main returns, so they report through the exit
// status (std::_Exit(1) with a message on stderr).
#include "common.hpp"
#include "crash_report.hpp"
#include "hooks_from_environment.hpp"

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace {

using namespace ozaki_test;

void fail(const char* what) {
  std::fprintf(stderr, "exit test failed: %s\n", what);
  std::_Exit(1);
}

struct Case {
  const char* name;
  ozaki::Options options;
  bool plain;  // the call without a Workspace (the library's scratch)
};

std::vector<Case> cases() {
  std::vector<Case> out;
  ozaki::Options crt;
  crt.algorithm = ozaki::Algorithm::Int8Crt;
  crt.moduli = 16;
  out.push_back({"Int8Crt, library scratch", crt, true});
  ozaki::Options passes = crt;  // several passes, overlapped where the space has a side stream
  passes.experimental.crt_pass_columns = 16;
  passes.experimental.overlap = true;
  out.push_back({"Int8Crt, overlapped passes", passes, true});
  ozaki::Options slices;
  slices.algorithm = ozaki::Algorithm::Int8Slices;  // automatic S: the estimate runs too
  out.push_back({"Int8Slices, Workspace", slices, false});
  out.push_back({"Auto, library scratch", ozaki::Options{}, true});
  return out;
}

/// Operands and the results of the first calls; recomputed and compared at exit.
struct LateUser {
  HostMatrix A, B, C0;
  std::vector<std::vector<double>> expected;

  std::vector<double> run(const Case& c) const {
    const DeviceMatrix dA = device_copy(A, Layout::Left), dB = device_copy(B, Layout::Right);
    const DeviceMatrix dC = device_copy(C0, Layout::Left);
    const TestSpace space;
    ozaki::Report r;
    if (c.plain) {
      r = ozaki::gemm(space, "N", "T", 1.5, dA.left, dB.right, -0.5, dC.left, c.options);
    } else {
      ozaki::Workspace<TestSpace> ws(space);
      r = ozaki::gemm(space, "N", "T", 1.5, dA.left, dB.right, -0.5, dC.left, c.options, ws);
    }
    if (r.algorithm == ozaki::Algorithm::None) fail("no product ran");
    return to_host(dC.view).values;
  }

  ~LateUser() {
    if (expected.empty()) fail("main did not run the first calls");
    const std::vector<Case> all = cases();
    std::size_t same = 0, refused = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
      std::printf("exit test: at exit, %s\n", all[i].name);
      try {
        if (run(all[i]) != expected[i]) {
          std::fprintf(stderr, "%s: ", all[i].name);
          fail("a call after static destruction began gave other bits");
        }
        ++same;
      } catch (const ozaki::BackendError& e) {
        // CUDA: cuBLAS tears its state down at exit; the call must say so, not crash in it.
        // A host space has no such library: there every call must run.
        if (ozaki::Impl::is_host_space<TestSpace>() ||
            std::string(e.what()).find("exit") == std::string::npos) {
          std::fprintf(stderr, "%s: %s\n", all[i].name, e.what());
          fail("unexpected BackendError at exit");
        }
        std::printf("exit test: refused cleanly: %s\n", e.what());
        ++refused;
      }
    }
    std::printf(
        "exit test: after static destruction began, %zu calls gave the same bits, %zu "
        "were refused with a BackendError\n",
        same, refused);
    std::fflush(stdout);
  }
};

}  // namespace

int main(int argc, char* argv[]) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // lines survive a failing std::_Exit
  ozaki_test::set_test_hooks_from_environment();
  Kokkos::initialize(argc, argv);
  ozaki_test::install_crash_report();
  std::atexit([] {  // what Python bindings and some C drivers do
    std::printf("exit test: Kokkos::finalize from std::atexit\n");
    Kokkos::finalize();
    std::printf("exit test: finalized\n");
  });
  static LateUser late;  // destroyed before the atexit function runs
  Random rng(2024);
  late.A = random_host(37, 300, 2.0, rng);
  late.B = random_host(53, 300, 2.0, rng);  // op(B) = B^T: 300 x 53
  late.C0 = random_host(37, 53, 0.5, rng);
  for (const Case& c : cases()) {
    late.expected.push_back(late.run(c));
    for (double v : late.expected.back())
      if (!std::isfinite(v)) fail("a first call gave a non-finite result");
  }
  std::printf("exit test: %zu first calls done; the rest runs at exit\n", late.expected.size());
  return 0;
}
