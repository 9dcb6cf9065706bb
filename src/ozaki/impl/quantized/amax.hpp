#pragma once
/// \file amax.hpp
/// The largest magnitude of a row or block, as the quantizers take it (W8A8's quantize_rows,
/// FP8's quantize_fp8_blocks): NaN and Inf count as Inf, so that the quantizer sees them and
/// gives the row or block a NaN scale instead of a finite one.

#include <ozaki/half_precision.hpp>
#include <ozaki/impl/common/float_bits.hpp>

#include <Kokkos_Core.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>

namespace ozaki {
namespace Impl {

/// max over i < count of |to_float(value_of(i))|, taken by the threads of `team` (every thread
/// gets it), NaN and Inf as Inf: a join of maxima would drop a NaN, and keeps an Inf.
template <class Member, class ValueOf>
KOKKOS_INLINE_FUNCTION float team_amax(const Member& team, std::int64_t count,
                                       const ValueOf& value_of) {
  // Constants a device function may use (numeric_limits' functions are host-only there).
  const float max_float = FLT_MAX;
  const float infinity = bits_float(0x7f800000u);
  float amax = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, count),
      [&](const std::int64_t i, float& m) {
        const float a = ::fabsf(to_float(value_of(i)));
        const float x = a <= max_float ? a : infinity;
        m = x > m ? x : m;
      },
      Kokkos::Max<float>(amax));
  return amax;
}

}  // namespace Impl
}  // namespace ozaki
