#pragma once
/// \file driver_common.hpp
/// What the scheme I and scheme II drivers share: profiling regions, phase timing and how a
/// driver run ended.

#include <ozaki/impl/split.hpp>
#include <ozaki/impl/workspace_layout.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <string>

namespace ozaki {
namespace Impl {

/// RAII profiling region named after the path taken, e.g. "ozaki::gemm[Int8Slices,cuBLAS]".
class ProfilingRegion {
 public:
  explicit ProfilingRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

/// Phase times for Options::time_phases: fences the space at each lap.
template <class ExecSpace>
class PhaseClock {
 public:
  PhaseClock(const ExecSpace& space, bool enabled) : space_(space), enabled_(enabled) {
    if (enabled_) {
      space_.fence();
      last_ = std::chrono::steady_clock::now();
    }
  }
  /// Adds the time since the previous lap to `seconds`.
  void lap(double& seconds) {
    if (!enabled_) return;
    space_.fence();
    const auto now = std::chrono::steady_clock::now();
    seconds += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  ExecSpace space_;
  bool enabled_;
  std::chrono::steady_clock::time_point last_;
};

/// A K-contiguous copy seen as a matrix of rows.
template <class ExecSpace>
typename Views<ExecSpace>::ConstMatrix k_contiguous_rows(
    const typename RowCopyRegion<ExecSpace>::Rows& copy_rows) {
  const std::int64_t rows = copy_rows.extent(0), K = copy_rows.extent(1);
  return
      typename Views<ExecSpace>::ConstMatrix(copy_rows.data(), Kokkos::LayoutStride(rows, K, K, 1));
}

/// Pass 1 for one operand read in place: its scale exponents, from 32-column tiles of its
/// strided rows or row by row.  True on NaN/Inf.
template <class ExecSpace>
bool operand_pass1_in_place(const ExecSpace& space, bool strided,
                            const typename Views<ExecSpace>::ConstMatrix& op,
                            const typename RowCopyRegion<ExecSpace>::Rows& tile_max,
                            const typename Views<ExecSpace>::Exponents& exps) {
  if (strided) {
    strided_tile_max(space, op, tile_max);
    return exponents_from_tile_max(space, tile_max, exps);
  }
  return row_scale_exponents(space, op, exps);
}

/// Pass 1 for one operand: its scale exponents, read through a K-contiguous copy (made here,
/// `rows` then views it) or in place (`rows` stays op).  True on NaN/Inf.
template <class ExecSpace>
bool operand_pass1(const ExecSpace& space, bool copy, bool strided,
                   const typename Views<ExecSpace>::ConstMatrix& op,
                   const typename RowCopyRegion<ExecSpace>::Rows& copy_rows,
                   const typename RowCopyRegion<ExecSpace>::Rows& tile_max,
                   const typename Views<ExecSpace>::Exponents& exps,
                   typename Views<ExecSpace>::ConstMatrix& rows) {
  rows = op;
  if (copy) {
    copy_to_k_contiguous(space, op, copy_rows, tile_max);
    rows = k_contiguous_rows<ExecSpace>(copy_rows);
    return exponents_from_tile_max(space, tile_max, exps);
  }
  return operand_pass1_in_place(space, strided, op, tile_max, exps);
}

/// How a driver (Int8SlicesGemm::run, Int8CrtGemm::run) ended.
enum class Int8Outcome {
  Done,          // C holds the result
  NonFinite,     // A or B holds NaN or Inf; C untouched
  NativeFaster,  // Algorithm::Auto, and the chosen S (moduli) makes native FP64 faster; C untouched
};

}  // namespace Impl
}  // namespace ozaki
