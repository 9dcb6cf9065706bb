#pragma once
/// \file backend_traits.hpp
/// Optional backend capabilities beyond the INT8 GEMM, with their defaults.  A backend
/// specialises these for its execution space (backends/cuda does for Kokkos::Cuda).

#include <cstddef>
#include <cstdint>
#include <string>

namespace ozaki {
namespace Impl {

/// A vendor FP64-emulation GEMM (Algorithm::CublasEmulation).  None by default.
template <class ExecSpace>
struct EmulationBackend {
  static constexpr bool available = false;
  static std::size_t workspace_bytes(std::int64_t, std::int64_t, std::int64_t, int) { return 0; }
  static bool run(const ExecSpace&, bool, bool, std::int64_t, std::int64_t, std::int64_t, double,
                  const double*, std::int64_t, const double*, std::int64_t, double, double*,
                  std::int64_t, int, void*, std::size_t, std::string& why_not) {
    why_not = "CublasEmulation needs the CUDA backend (Kokkos::Cuda)";
    return false;
  }
};

}  // namespace Impl
}  // namespace ozaki
