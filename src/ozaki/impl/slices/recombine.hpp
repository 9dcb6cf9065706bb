#pragma once
/// \file recombine.hpp
/// Portable Kokkos kernel that turns a batch of INT32 products into FP64 and updates C.
///
/// For product g of weight 2^(-8 d_g) (d_g its diagonal i+j) the exact value of the batch is
///
///     sum_g 2^(eA_m + eB_n - 14 - 8 d_g) P_g(m, n).
///
/// Each 2^(-8 d_g) P_g is exact in FP64 (an integer of at most 31 bits times a power of two),
/// so the only rounding is in the FP64 sum: it runs from the least significant product to the
/// most significant one, so the error is at most about (G-1) u |sum| and in practice u |sum|.
/// The common factor 2^(eA_m + eB_n - 14) is applied last with ldexp, which is exact unless
/// the result leaves the normal range, where it rounds as FP64 arithmetic would.

#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/slices/format.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

/// How a recombination pass treats the C it finds.
enum class CUpdate {
  Overwrite,   // C = alpha * AB            (beta == 0: C is never read, NaN in C is ignored)
  Scale,       // C = alpha * AB + beta * C (first pass)
  Accumulate,  // C = C + alpha * AB        (later passes of a multi-pass recombination)
};

/// Applies products [0, count) of P, weights[g] = 2^(-8 d_g), to C.
template <class ExecSpace>
void recombine(const ExecSpace& space, const typename Views<ExecSpace>::Products& P,
               std::int64_t count, const typename Views<ExecSpace>::Weights& weights,
               const typename Views<ExecSpace>::Exponents& exponents_a,
               const typename Views<ExecSpace>::Exponents& exponents_b, double alpha, double beta,
               CUpdate update, const typename Views<ExecSpace>::Matrix& C) {
  const std::int64_t M = C.extent(0);
  const std::int64_t N = C.extent(1);
  flat_for(
      "ozaki::recombine", space, M * N, KOKKOS_LAMBDA(const std::int64_t idx) {
        const std::int64_t m = idx % M;
        const std::int64_t n = idx / M;
        double sum = 0;
        for (std::int64_t g = count - 1; g >= 0; --g) sum += weights(g) * P(g, n, m);
        const double ab =
            compat::ldexp(sum, exponents_a(m) + exponents_b(n) - product_weight_offset);
        switch (update) {
          case CUpdate::Overwrite: C(m, n) = alpha * ab; break;
          case CUpdate::Scale: C(m, n) = alpha * ab + beta * C(m, n); break;
          case CUpdate::Accumulate: C(m, n) = C(m, n) + alpha * ab; break;
        }
      });
}

}  // namespace Impl
}  // namespace ozaki
