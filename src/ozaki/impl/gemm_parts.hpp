#pragma once
/// \file gemm_parts.hpp
/// What a call made of several GEMMs shares (the level-3 routines of level3/, the batched and
/// grouped calls of batched/): its scratch, each GEMM with its fallback when scratch runs out,
/// and the one Report that sums them.

#include <ozaki/errors.hpp>
#include <ozaki/gemm.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/library_scratch.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>
#include <ozaki/workspace.hpp>

#include <algorithm>
#include <string>

namespace ozaki {
namespace Impl {

/// The scratch of one call made of several GEMMs: the GEMM calls' three buffers, used by one
/// GEMM at a time, and the call's own (syrk and herk's diagonal blocks, symm and hemm's
/// filled-in operand).
template <class ExecSpace>
struct PartsScratch {
  ScratchBuffer<ExecSpace>& buffer;
  ScratchBuffer<ExecSpace>& operands;
  ScratchBuffer<ExecSpace>& staged;
  ScratchBuffer<ExecSpace>& blocks;
};

/// f(scratch) with a Workspace's buffers.
template <class ExecSpace, class F>
Report with_workspace(Workspace<ExecSpace>& workspace, F&& f) {
  using Access = WorkspaceAccess<ExecSpace>;
  PartsScratch<ExecSpace> scratch{Access::buffer(workspace), Access::operands(workspace),
                                  Access::staged(workspace), Access::blocks(workspace)};
  return f(scratch);
}

/// f(scratch) with the library's buffers of `space`'s instance, held for the whole call.
template <class ExecSpace, class F>
Report with_library_scratch(const ExecSpace& space, F&& f) {
  auto lease = LibraryScratch<ExecSpace>::lease(space);
  PartsScratch<ExecSpace> scratch{lease.buffer(), lease.operands(), lease.staged(), lease.blocks()};
  return f(scratch);
}

/// The checks every call made of several GEMMs makes before it writes anything, beside its
/// own arguments': the options, and whether the execution space can run here.
template <class ExecSpace>
void check_call(const ExecSpace& space, const Options& options) {
  check_options(options);
  check_tuning(options.experimental);
  if (const char* why = compat::unusable_here(space)) throw BackendError(why);
}
/// The Report of a call made of several GEMMs: the algorithm, options and counts of the
/// largest (by 2MNK), the largest error bound, any fallback with the first reason, operations
/// and scratch summed or maximized.
class ReportSum {
 public:
  void add(const Report& part, double flops) {
    if (flops > largest_) {
      const Report kept = total_;
      total_ = part;
      total_.fallback = kept.fallback;
      total_.reason = kept.reason;
      total_.error_bound = kept.error_bound;
      total_.int8_operations = kept.int8_operations;
      total_.int8_gemms = kept.int8_gemms;
      total_.workspace_bytes = kept.workspace_bytes;
      total_.scratch_allocated = kept.scratch_allocated;
      total_.seconds_decision = kept.seconds_decision;
      largest_ = flops;
    }
    if (part.fallback && !total_.fallback) {
      total_.fallback = true;
      total_.reason = part.reason;
    }
    total_.error_bound = std::max(total_.error_bound, part.error_bound);
    // A product without a bound (an explicit slice count) leaves the sum without one.
    if (part.algorithm != Algorithm::None && part.error_bound == 0) bounded_ = false;
    total_.int8_operations += part.int8_operations;
    total_.int8_gemms += part.int8_gemms;
    total_.workspace_bytes = std::max(total_.workspace_bytes, part.workspace_bytes);
    total_.scratch_allocated = total_.scratch_allocated || part.scratch_allocated;
    total_.seconds_decision += part.seconds_decision;
  }
  Report& report() { return total_; }
  /// Whether every GEMM with a product stated its bound.
  bool bounded() const { return bounded_; }

 private:
  bool bounded_ = true;
  Report total_;
  double largest_ = -1;
};

/// C = alpha op(A) op(B) + beta C (transposes as gemm's letters) as one of the call's GEMMs,
/// added to `sum`; returns its Report.  Where the GEMM's scratch cannot be had it runs native
/// GEMM, which needs none: the GEMM threw before writing C, but the call's earlier GEMMs may
/// have written their part of the output already, and a half-done call is worse than a slower
/// one.
template <class ExecSpace, class AType, class BType, class CType, class T>
Report gemm_part(const ExecSpace& space, const char* trans_a, const char* trans_b, const T& alpha,
                 const AType& A, const BType& B, const T& beta, const CType& C,
                 const Options& options, PartsScratch<ExecSpace>& scratch, ReportSum& sum) {
  Report part;
  try {
    part = gemm_with_scratch(space, trans_a, trans_b, alpha, A, B, beta, C, options, scratch.buffer,
                             scratch.operands, scratch.staged);
  } catch (const ScratchUnavailable& e) {
    Options native = options;
    native.algorithm = Algorithm::Native;
    part = gemm_with_scratch(space, trans_a, trans_b, alpha, A, B, beta, C, native, scratch.buffer,
                             scratch.operands, scratch.staged);
    part.fallback = true;
    part.reason = std::string(e.what()) + ": this product ran native GEMM";
  }
  const bool a_transposed = trans_a[0] != 'N' && trans_a[0] != 'n';
  const double k = static_cast<double>(a_transposed ? A.extent(0) : A.extent(1));
  sum.add(part, 2.0 * static_cast<double>(C.extent(0)) * static_cast<double>(C.extent(1)) * k);
  return part;
}

}  // namespace Impl
}  // namespace ozaki
