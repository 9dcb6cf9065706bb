#pragma once
/// \file float_bits.hpp
/// A float's bit pattern and back, on hosts and devices alike (memcpy: no aliasing through
/// pointers of another type).

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>

namespace ozaki {
namespace Impl {

KOKKOS_INLINE_FUNCTION std::uint32_t float_bits(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}
KOKKOS_INLINE_FUNCTION float bits_float(std::uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace Impl
}  // namespace ozaki
