#pragma once
/// \file pipeline.hpp
/// What the scheme I and scheme II pipelines share besides kernels: profiling regions, phase
/// timing and how a pipeline run ended.

#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstddef>
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

/// How a pipeline (slices/driver.hpp, crt/driver.hpp) ended.
enum class Int8Outcome {
  Done,            // C holds the result
  NonFinite,       // A or B holds NaN or Inf; C untouched
  NativeFaster,    // Algorithm::Auto, and the count the data needs makes native FP64 faster; C
                   // untouched
  NeedsEmbedding,  // complex Karatsuba, and the data needs the accurate rule; C untouched
  Uncertified,     // an automatic count, and no count up to the largest keeps the componentwise
                   // bound within native FP64's on this data (Report::reason); C untouched
};

/// What a scheme's planning ended with: its plan (outcome Done) or the outcome that ends the
/// call (crt/planner.hpp, slices/driver.hpp).
template <class Plan>
struct Planned {
  Int8Outcome outcome = Int8Outcome::Done;
  Plan plan;
};

/// The state both schemes' pipelines keep: the call (space, plan, operands as rows along K),
/// the scratch they carve, the Report they fill, and the regions every call carves first.
template <class ExecSpace>
struct PipelineState {
  using V = Views<ExecSpace>;

  PipelineState(const ExecSpace& space_, const CallPlan& plan_, const typename V::ConstMatrix& opA_,
                const typename V::ConstMatrix& opBt_, const OperandPlan& ops_,
                ScratchBuffer<ExecSpace>& scratch_, Report& report_,
                std::chrono::steady_clock::time_point call_start_)
      : call_start(call_start_),
        space(space_),
        plan(plan_),
        opA(opA_),
        opBt(opBt_),
        ops(ops_),
        scratch(scratch_),
        report(report_),
        clock(space_, plan_.time_phases) {}

  /// Carves the exponents and row copies at the start of the scratch; the phases start after
  /// whatever the scheme carves next.
  Carver carve_row_regions() {
    Carver carver(base);
    exponents = ExponentRegion<ExecSpace>::carve(carver, plan.shape);
    copies = RowCopyRegion<ExecSpace>::carve(carver, plan.shape, ops);
    return carver;
  }

  /// The call's algorithm and count are fixed: Report::seconds_decision.
  void decided() {
    report.seconds_decision =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count();
  }

  std::chrono::steady_clock::time_point call_start;
  ExecSpace space;
  const CallPlan& plan;
  typename V::ConstMatrix opA, opBt;  // op(A) and op(B)^T: rows along K
  OperandPlan ops;
  ScratchBuffer<ExecSpace>& scratch;
  Report& report;
  PhaseClock<ExecSpace> clock;
  unsigned char* base = nullptr;  // the scratch as last reserved
  std::size_t phase_offset = 0;   // where the phase scratch starts
  ExponentRegion<ExecSpace> exponents;
  RowCopyRegion<ExecSpace> copies;
};

}  // namespace Impl
}  // namespace ozaki
