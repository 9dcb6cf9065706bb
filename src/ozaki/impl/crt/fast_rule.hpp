#pragma once
/// \file fast_rule.hpp
/// Scheme II's fast scaling rule (Cauchy-Schwarz, rules.hpp): per-row bits from the scaled
/// 2-norms alone.

#include <ozaki/impl/crt/norms.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

/// The fast rule's bits of a row with scaled norm l2 > 0 (rules.hpp): min(crt_max_bits,
/// floor(log2(T / l2))).  They fall as l2 grows (IEEE division and frexp are monotonic), so
/// the fewest bits of an operand are those of its largest l2.
KOKKOS_INLINE_FUNCTION int fast_row_bits(double l2, double T) {
  if (!(l2 > 0)) return crt_max_bits;
  int e = 0;
  compat::frexp(T / l2, &e);  // T / l2 = g 2^e, g in [1/2, 1): floor(log2) = e - 1
  return e - 1 < crt_max_bits ? e - 1 : crt_max_bits;
}

/// Fast rule: bits(r) = fast_row_bits(l2(r), T).  Nothing waits for the kernel.
template <class ExecSpace>
void set_fast_bits(const ExecSpace& space, const typename Views<ExecSpace>::Norms& l2, double T,
                   const CrtBits<ExecSpace>& bits) {
  flat_for(
      "ozaki::crt::fast_bits", space, l2.extent(0),
      KOKKOS_LAMBDA(const std::int64_t r) { bits(r) = fast_row_bits(l2(r), T); });
}

/// The same, and returns the fewest (a wait for the kernel; the tests' entry).
template <class ExecSpace>
int fast_bits(const ExecSpace& space, const typename Views<ExecSpace>::Norms& l2, double T,
              const CrtBits<ExecSpace>& bits) {
  set_fast_bits(space, l2, T, bits);
  int fewest = crt_max_bits;
  flat_reduce<Kokkos::Min>(
      "ozaki::crt::fewest_bits", space, bits.extent(0),
      KOKKOS_LAMBDA(const std::int64_t r, int& f) {
        if (bits(r) < f) f = bits(r);
      },
      fewest);
  return fewest;
}

}  // namespace Impl
}  // namespace ozaki
