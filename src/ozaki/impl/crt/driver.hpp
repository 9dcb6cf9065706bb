#pragma once
/// \file driver.hpp
/// Ozaki scheme II (Algorithm::Int8Crt) on op(A) (M x K) and op(B)^T (N x K): plan, then
/// execute.  CrtPlanner (planner.hpp) decides the rule, the count and the bits from the data
/// and certifies their componentwise bound; CrtExecution (execution.hpp) computes the
/// residues, the INT8 products and the reconstruction of that plan, and only it writes C.

#include <ozaki/impl/common/pipeline.hpp>
#include <ozaki/impl/crt/execution.hpp>
#include <ozaki/impl/crt/planner.hpp>

namespace ozaki {
namespace Impl {

/// Scheme II for one call; `complex`: Karatsuba on complex rows (plan.complex_karatsuba),
/// written to its target.  Writes C only when it returns Done.
template <class ExecSpace>
Int8Outcome run_crt(PipelineState<ExecSpace>& call, const CrtComplexTarget<ExecSpace>* complex,
                    double alpha, double beta, const typename Views<ExecSpace>::Matrix& C) {
  CrtPlanner<ExecSpace> planner(call, complex != nullptr);
  const CrtPlanned planned = planner.plan();
  if (planned.outcome == Int8Outcome::NeedsEmbedding) *complex->needs_embedding = true;
  if (planned.outcome != Int8Outcome::Done) return planned.outcome;
  CrtExecution<ExecSpace>(call, planned.plan, planner.scale(), complex).run(alpha, beta, C);
  return Int8Outcome::Done;
}

}  // namespace Impl
}  // namespace ozaki
