#pragma once
/// \file grouped.hpp
/// The masked layout of quantized GEMM (W8A8 and FP8) as runs of rows (ozaki/quantized.hpp,
/// ozaki/fp8.hpp, docs/design.md §14; the contiguous layout's runs are contiguous_runs,
/// batched/layouts.hpp): each run one group's rows against its own weights, every count
/// checked here, before any C is written.

#include <ozaki/errors.hpp>
#include <ozaki/impl/batched/layouts.hpp>
#include <ozaki/impl/library_scratch.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ozaki {
namespace Impl {

/// The masked grouping's runs: group g's first masked_m[g] rows (of `rows`).  `call` names the
/// call in the errors.
inline std::vector<GroupRun> masked_runs(const std::vector<std::int64_t>& masked_m,
                                         std::int64_t groups, std::int64_t rows, const char* call) {
  if (static_cast<std::int64_t>(masked_m.size()) != groups) {
    throw InvalidArgument(std::string(call) + ": masked_m holds " +
                          std::to_string(masked_m.size()) + " counts for " +
                          std::to_string(groups) + " groups: expected one per group");
  }
  std::vector<GroupRun> runs;
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t m = masked_m[g];
    if (m < 0 || m > rows) {
      throw InvalidArgument(std::string(call) + ": masked_m(" + std::to_string(g) +
                            ") = " + std::to_string(m) + ": expected 0.." + std::to_string(rows));
    }
    if (m > 0) runs.push_back({g, 0, m});
  }
  return runs;
}

/// A grouped call's runs: every run's operands checked (`run_views(run, check)` calls check with
/// them) before any is computed, so that a bad run leaves every C untouched; then each run
/// computed, `compute(buffer, operands...)`, on the library's scratch of `space`, so that a
/// group's rows get the bits the same rows alone would.
template <class ExecSpace, class RunViews, class Check, class Compute>
void check_then_compute(const ExecSpace& space, const std::vector<GroupRun>& runs,
                        const RunViews& run_views, const Check& check, const Compute& compute) {
  for (const GroupRun& run : runs) run_views(run, check);
  auto lease = LibraryScratch<ExecSpace>::lease(space);
  for (const GroupRun& run : runs) {
    run_views(run, [&](const auto&... operands) { compute(lease.buffer(), operands...); });
  }
}

}  // namespace Impl
}  // namespace ozaki
