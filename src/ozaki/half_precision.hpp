#pragma once
/// \file half_precision.hpp
/// 16- and 8-bit floating-point storage for quantized GEMM (ozaki/quantized.hpp, ozaki/fp8.hpp):
///
///   ozaki::bfloat16      1 sign, 8 exponent and 7 fraction bits (float's range)
///   ozaki::float16       IEEE binary16: 1 sign, 5 exponent and 10 fraction bits
///   ozaki::float8_e4m3   FP8 e4m3: 1 sign, 4 exponent and 3 fraction bits, saturating
///
/// Conversion from float rounds to nearest, ties to even; overflow gives infinity, NaN stays
/// NaN (quiet), float16 keeps subnormals.  Plain integer arithmetic on the bit patterns, so
/// every backend gives the same bits, and no vendor type is needed: Kokkos 3.4 has no
/// bfloat16, and its half_t is float on host spaces.  The layouts are those of CUDA's
/// __nv_bfloat16 and __half, so a View of either can be handed to cuBLAS as CUDA_R_16BF or
/// CUDA_R_16F data.

#include <ozaki/impl/common/float_bits.hpp>
#include <ozaki/impl/common/narrow_bits.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ozaki {

struct bfloat16 {
  std::uint16_t bits = 0;

  KOKKOS_INLINE_FUNCTION static bfloat16 from_float(float x) {
    bfloat16 b;
    b.bits = Impl::bfloat16_bits(Impl::float_bits(x));
    return b;
  }
  KOKKOS_INLINE_FUNCTION float to_float() const {
    return Impl::bits_float(static_cast<std::uint32_t>(bits) << 16);
  }
};

struct float16 {
  std::uint16_t bits = 0;

  KOKKOS_INLINE_FUNCTION static float16 from_float(float x) {
    float16 h;
    h.bits = Impl::float16_bits(Impl::float_bits(x));
    return h;
  }
  KOKKOS_INLINE_FUNCTION float to_float() const {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1fu, fraction = bits & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: fraction 2^-24, exact in float
      const float v = static_cast<float>(fraction) * 5.9604644775390625e-8f;
      return Impl::bits_float(sign | Impl::float_bits(v));
    }
    if (exponent == 31) return Impl::bits_float(sign | 0x7f800000u | (fraction << 13));
    return Impl::bits_float(sign | ((exponent + 112u) << 23) | (fraction << 13));
  }
};

/// FP8 e4m3 ("e4m3fn", the OCP FP8 format CUDA's __nv_fp8_e4m3 and torch.float8_e4m3fn store):
/// 1 sign, 4 exponent (bias 7) and 3 fraction bits, no infinity, S.1111.111 NaN, largest
/// finite 448, subnormals down to 2^-9.  Conversion from float rounds to nearest, ties to
/// even, and saturates: a finite value beyond 448 (infinity too) gives +-448, NaN gives NaN.
/// Saturation keeps quantization from turning a large value into NaN; the quantizers
/// (ozaki/fp8.hpp) never reach it for finite data, and give a non-finite block a NaN scale.
struct float8_e4m3 {
  std::uint8_t bits = 0;

  KOKKOS_INLINE_FUNCTION static float8_e4m3 from_float(float x) {
    const std::uint32_t f = Impl::float_bits(x);
    const std::uint32_t sign = (f >> 24) & 0x80u, magnitude = f & 0x7fffffffu;
    float8_e4m3 q;
    if (magnitude > 0x7f800000u) {
      q.bits = static_cast<std::uint8_t>(sign | 0x7fu);
      return q;
    }
    const int exponent = static_cast<int>(magnitude >> 23) - 127;
    std::uint32_t code;
    if (exponent > 8) {
      code = 0x7eu;  // beyond 2^9 (and infinity): saturated
    } else if (exponent >= -6) {
      // Normal: exponent rebiased to 7, fraction cut from 23 to 3 bits, rounded to even (a
      // carry into the exponent is right; past 448 it saturates below).
      code = (static_cast<std::uint32_t>(exponent + 7) << 3) | ((magnitude >> 20) & 7u);
      const std::uint32_t dropped = magnitude & 0xfffffu;
      if (dropped > 0x80000u || (dropped == 0x80000u && (code & 1u))) ++code;
      if (code > 0x7eu) code = 0x7eu;
    } else {
      code = subnormal(magnitude, exponent);
    }
    q.bits = static_cast<std::uint8_t>(sign | code);
    return q;
  }
  /// Exact: every e4m3 value is a float.
  KOKKOS_INLINE_FUNCTION float to_float() const {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x80u) << 24;
    const std::uint32_t exponent = (bits >> 3) & 0xfu, fraction = bits & 7u;
    if (exponent == 15 && fraction == 7) return Impl::bits_float(sign | 0x7fc00000u);
    if (exponent == 0) {  // zero or subnormal: fraction 2^-9
      return Impl::bits_float(sign | Impl::float_bits(static_cast<float>(fraction) * 0x1p-9f));
    }
    return Impl::bits_float(sign | ((exponent + 120u) << 23) | (fraction << 20));
  }

 private:
  /// A float magnitude below 2^-6 in units of 2^-9 (e4m3's subnormal step), rounded to even: the
  /// float's significand shifted right by 14 - its exponent.  8 (where it rounds up to 2^-6) is
  /// the smallest normal's code.
  KOKKOS_INLINE_FUNCTION static std::uint32_t subnormal(std::uint32_t magnitude, int exponent) {
    if (exponent < -11 || (magnitude >> 23) == 0) return 0;  // below 2^-10: rounds to zero
    const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    return Impl::shift_right_to_even(significand, static_cast<std::uint32_t>(14 - exponent));
  }
};

/// An input of quantized GEMM's helpers as float (double rounded to nearest), and float to an
/// output type: float itself, bfloat16, float16.
KOKKOS_INLINE_FUNCTION float to_float(float x) { return x; }
KOKKOS_INLINE_FUNCTION float to_float(double x) { return static_cast<float>(x); }
KOKKOS_INLINE_FUNCTION float to_float(const bfloat16& x) { return x.to_float(); }
KOKKOS_INLINE_FUNCTION float to_float(const float16& x) { return x.to_float(); }

template <class T>
KOKKOS_INLINE_FUNCTION T from_float(float x);
template <>
KOKKOS_INLINE_FUNCTION float from_float<float>(float x) {
  return x;
}
template <>
KOKKOS_INLINE_FUNCTION bfloat16 from_float<bfloat16>(float x) {
  return bfloat16::from_float(x);
}
template <>
KOKKOS_INLINE_FUNCTION float16 from_float<float16>(float x) {
  return float16::from_float(x);
}

}  // namespace ozaki
