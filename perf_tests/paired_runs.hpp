#pragma once
// What the paired benchmarks of ozaki's routines against cuBLAS's (level3_bench,
// batched_bench) share: their result and the alternated, fenced timing.
#include "tool_args.hpp"

#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <ostream>
#include <vector>

namespace perf_tool {

/// One pairing: medians of the timed runs, the errors of one more run of each, and the Report
/// of ozaki's last run.
struct PairedResult {
  double native_ms = 0, ozaki_ms = 0, native_error = 0, ozaki_error = 0;
  ozaki::Report report;
};

/// Median milliseconds of `reps` runs of each, alternating, each fenced on both sides;
/// `prepare` (untimed: fresh inputs, or a reset of an operand the call overwrites) before
/// every run.
template <class Native, class Ozaki, class Prepare>
void time_pair(int reps, PairedResult& r, const Native& native, const Ozaki& ozaki,
               const Prepare& prepare) {
  std::vector<double> tn, to;
  for (int rep = -1; rep < reps; ++rep) {  // rep -1: the warm-up, not kept
    for (int which = 0; which < 2; ++which) {
      prepare();
      Kokkos::fence();
      // A profiling region per run (fences included), so that a Kokkos tool such as
      // libozaki_gpu_timeline shows where a routine's time goes (cmake/dev.sh's profile step).
      Kokkos::Profiling::pushRegion(which == 0 ? "paired_run[native]" : "paired_run[ozaki]");
      const auto t0 = std::chrono::steady_clock::now();
      if (which == 0) {
        native();
      } else {
        r.report = ozaki();
      }
      Kokkos::fence();
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      Kokkos::Profiling::popRegion();
      if (rep >= 0) (which == 0 ? tn : to).push_back(ms);
    }
  }
  r.native_ms = median(tn);
  r.ozaki_ms = median(to);
}

/// The columns every pairing writes after the ones that name it (CSV).
constexpr const char* paired_columns =
    "native_ms,ozaki_ms,speedup,native_error,ozaki_error,algorithm,moduli,bound";

/// Those columns of one pairing, after a comma.
inline void write_paired_columns(std::ostream& out, const PairedResult& r) {
  out << ',' << r.native_ms << ',' << r.ozaki_ms << ',' << r.native_ms / r.ozaki_ms << ','
      << r.native_error << ',' << r.ozaki_error << ',' << ozaki::to_string(r.report.algorithm)
      << ',' << r.report.moduli << ',' << r.report.error_bound << '\n';
}

}  // namespace perf_tool
