#pragma once
/// \file narrow_bits.hpp
/// A float's bit pattern rounded to bfloat16's and binary16's (ozaki/half_precision.hpp): round
/// to nearest, ties to even, by integer arithmetic, so that every backend (the portable Kokkos
/// kernels and the CUDA backend's own kernels, which are built without Kokkos) gives the same
/// bits.  Plain C++ callable on hosts and CUDA devices.

#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define OZAKI_NARROW_BITS_FUNCTION __host__ __device__ inline
#else
#define OZAKI_NARROW_BITS_FUNCTION inline
#endif

namespace ozaki {
namespace Impl {

/// significand / 2^shift rounded to nearest, ties to even (0 < shift < 32).
OZAKI_NARROW_BITS_FUNCTION std::uint32_t shift_right_to_even(std::uint32_t significand,
                                                             std::uint32_t shift) {
  std::uint32_t q = significand >> shift;
  const std::uint32_t dropped = significand & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (dropped > half || (dropped == half && (q & 1u))) ++q;
  return q;
}

/// bfloat16's pattern of the float whose pattern is f: NaN stays NaN (quiet); otherwise the 16
/// dropped bits rounded to even, a carry into the exponent being right (up to infinity).
OZAKI_NARROW_BITS_FUNCTION std::uint16_t bfloat16_bits(std::uint32_t f) {
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);
  return static_cast<std::uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}

/// A float magnitude below 2^-14 in units of 2^-24 (binary16's subnormal step), rounded to
/// even: the float's significand shifted right by 126 - its exponent (at least 14).  0x400,
/// where it rounds up to 2^-14, is the smallest normal's pattern.
OZAKI_NARROW_BITS_FUNCTION std::uint32_t float16_subnormal(std::uint32_t magnitude) {
  const std::uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return 0;  // below 2^-25: rounds to zero (2^-25 itself is a tie to 0)
  const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  return shift_right_to_even(significand, 126u - exponent);
}

/// binary16's pattern of the float whose pattern is f: infinity and NaN (quiet) kept, from
/// 65520 infinity, subnormals kept.
OZAKI_NARROW_BITS_FUNCTION std::uint16_t float16_bits(std::uint32_t f) {
  const std::uint32_t sign = (f >> 16) & 0x8000u, magnitude = f & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {
    return static_cast<std::uint16_t>(sign | (magnitude > 0x7f800000u ? 0x7e00u : 0x7c00u));
  }
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {  // 2^-14 and up: normal
    // Exponent rebiased from 127 to 15, fraction cut from 23 to 10 bits, rounded to even.
    return static_cast<std::uint16_t>(sign | shift_right_to_even(magnitude - 0x38000000u, 13u));
  }
  return static_cast<std::uint16_t>(sign | float16_subnormal(magnitude));
}

}  // namespace Impl
}  // namespace ozaki
