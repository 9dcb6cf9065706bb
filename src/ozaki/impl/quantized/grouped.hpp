#pragma once
/// \file grouped.hpp
/// DeepGEMM's grouped layouts as runs of rows (ozaki/quantized.hpp, docs/design.md §14): each
/// run one group's rows against its own weights, every count and index checked here, before
/// any C is written.

#include <ozaki/errors.hpp>
#include <ozaki/impl/batched/layouts.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ozaki {
namespace Impl {

/// Rows [r0, r1) of one group's product.
struct QuantizedRun {
  std::int64_t group, r0, r1;
};

/// The masked grouping's runs: group g's first masked_m[g] rows (of `rows`).
inline std::vector<QuantizedRun> masked_runs(const std::vector<std::int64_t>& masked_m,
                                             std::int64_t groups, std::int64_t rows) {
  if (static_cast<std::int64_t>(masked_m.size()) != groups) {
    throw InvalidArgument("ozaki::quantized_gemm_masked: masked_m holds " +
                          std::to_string(masked_m.size()) + " counts for " +
                          std::to_string(groups) + " groups: expected one per group");
  }
  std::vector<QuantizedRun> runs;
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t m = masked_m[g];
    if (m < 0 || m > rows) {
      throw InvalidArgument("ozaki::quantized_gemm_masked: masked_m(" + std::to_string(g) +
                            ") = " + std::to_string(m) + ": expected 0.." + std::to_string(rows));
    }
    if (m > 0) runs.push_back({g, 0, m});
  }
  return runs;
}

/// The contiguous grouping's runs: maximal runs of rows with one index >= 0.
inline std::vector<QuantizedRun> contiguous_runs(const std::vector<std::int64_t>& m_indices,
                                                 std::int64_t groups, std::int64_t rows) {
  if (static_cast<std::int64_t>(m_indices.size()) != rows) {
    throw InvalidArgument("ozaki::quantized_gemm_contiguous: m_indices holds " +
                          std::to_string(m_indices.size()) + " indices for " +
                          std::to_string(rows) + " rows: expected one per row");
  }
  std::vector<QuantizedRun> runs;
  for (std::int64_t r0 = 0; r0 < rows;) {
    const std::int64_t g = m_indices[r0];
    if (g < -1 || g >= groups) {
      throw InvalidArgument("ozaki::quantized_gemm_contiguous: m_indices(" + std::to_string(r0) +
                            ") = " + std::to_string(g) + ": expected -1 (no group) or 0.." +
                            std::to_string(groups - 1));
    }
    std::int64_t r1 = r0 + 1;
    while (r1 < rows && m_indices[r1] == g) ++r1;
    if (g >= 0) runs.push_back({g, r0, r1});
    r0 = r1;
  }
  return runs;
}

}  // namespace Impl
}  // namespace ozaki
