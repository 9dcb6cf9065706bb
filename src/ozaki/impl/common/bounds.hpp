#pragma once
/// \file bounds.hpp
/// The yardstick of every componentwise bound (docs/design.md §3a): native FP64 GEMM's own.
/// Plain C++ (the serial oracle includes it).

#include <cstdint>
#include <cstdio>
#include <string>

namespace ozaki {
namespace Impl {

/// Unit roundoffs of the two precisions a call can promise (Options::accuracy).
constexpr double fp64_unit_roundoff = 0x1p-53;
constexpr double fp32_unit_roundoff = 0x1p-24;

/// gamma_n = n u / (1 - n u), u = 2^-53 unless given.
inline double gamma_bound(double n, double u = fp64_unit_roundoff) { return n * u / (1 - n * u); }

/// Native GEMM's componentwise bound in the precision of unit roundoff u (FP64 unless given)
/// for inner length K, alpha and beta included: any order of summation, with or without fused
/// multiply-adds, gives
///     |C - (alpha AB + beta C0)| <= gamma_(K+2) (|alpha| |A||B| + |beta C0|).
inline double native_componentwise_bound(std::int64_t K, double u = fp64_unit_roundoff) {
  return gamma_bound(static_cast<double>(K) + 2, u);
}

/// The same for complex GEMM (ZGEMM, CGEMM) of inner length K, relative to |A||B| with complex
/// moduli: each complex product and sum adds at most sqrt(2) gamma_2, so sqrt(2) gamma_(K+4).
inline double native_complex_componentwise_bound(std::int64_t K, double u = fp64_unit_roundoff) {
  return 1.4142135623730951 * gamma_bound(static_cast<double>(K) + 4, u);
}

/// A bound for a Report's reason: three significant digits ("inf" where none holds).
inline std::string bound_text(double bound) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", bound);
  return text;
}

}  // namespace Impl
}  // namespace ozaki
