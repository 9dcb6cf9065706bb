#pragma once
/// \file format.hpp
/// The int8 slice format of Ozaki scheme I, as used by every backend.
///
/// A row r of op(A) (likewise a column of op(B)) with largest magnitude mu gets the scale
/// exponent e = scale_exponent(mu), the smallest integer with mu <= (127/128) 2^e.  Each
/// element x of the row becomes the integer
///
///     X = round(x * 2^(8S-1-e))          (round half away from zero)
///
/// which satisfies |X| <= 127 * 256^(S-1) because |x| 2^-e <= 127/128.  X is written in
/// balanced base 256,
///
///     X = sum_{s=0}^{S-1} d_s 256^(S-1-s),   d_s in [-128, 127],   d_0 in [-127, 127],
///
/// and d_s is slice s (s = 0 most significant).  Everything here is exact: power-of-two
/// scaling, integer rounding of a 53-bit mantissa and integer digit extraction.  The only
/// error of the split is the final rounding, |x - X 2^(e-8S+1)| <= 2^(e-8S), i.e. 8S-1
/// bits below the row's scale are kept (7 for the first slice, 8 for every further one).
///
/// Why d_0 fits in [-127, 127]: the lower digits sum to L with |L| <= 128 (256^(S-1)-1)/255
/// < 0.51 * 256^(S-1), so |d_0| = |X - L| / 256^(S-1) < 127.51, an integer, hence <= 127.
/// Every digit product then has magnitude <= 128 * 128 = 2^14, and an INT32 sum of at most
/// max_k_block = 131071 such products cannot overflow (2^14 * 131071 < 2^31).
///
/// The product of slice i of row m of op(A) and slice j of column n of op(B) has weight
/// 2^(eA_m + eB_n - 2(8S-1) + 8(2S-2-i-j)) = 2^(eA_m + eB_n - 14 - 8(i+j)): it depends on
/// i+j only, so all pairs of one diagonal i+j = d can be summed by one INT8 GEMM, and the
/// weights do not depend on S.

#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/slices/schedule.hpp>

#include <cstdint>
#include <cstring>

namespace ozaki {
namespace Impl {

/// The int8 slices of one operand plus its row exponents: a "prepared operand".
template <class ExecSpace>
struct SliceStorage {
  typename Views<ExecSpace>::Digits digits;        // rows x (S * kpad)
  typename Views<ExecSpace>::Exponents exponents;  // rows
  int slices = 0;
  std::int64_t k = 0;
  std::int64_t kpad = 0;
  bool reversed = false;  // slice s at column block S-1-s (the op(B) side)
};

/// One element's digits: X = round(x 2^(8S-1-e)) = Y 256^base with |Y| < 2^61.  The balanced
/// base-256 digits of Y are the plain base-256 digits of Z = Y + sum_{j<8} 128 * 256^j, minus
/// 128 each (Z lies in [0, 2^64), so exactly 8 digits hold it): digit q of Y is
/// ((Z >> 8q) & 255) - 128.  Every digit is then one shift and one mask, with no carry chain
/// and no array, so a GPU thread keeps all of it in registers.
struct SplitElement {
  std::uint64_t z = 0x8080808080808080ull;  // Y = 0
  int base = 0;

  /// X for x with scale exponent e and S slices; the caller guarantees |x| <= (127/128) 2^e.
  /// x = +-mantissa 2^ex is read off the bits (no frexp/ldexp: the split is bound by
  /// instruction count on GPUs): a normal number's 52 fraction bits plus the hidden bit,
  /// a subnormal's fraction alone with ex = -1074.  X = mantissa 2^(ex - e + 8S - 1) exactly.
  KOKKOS_INLINE_FUNCTION SplitElement(double x, int e, int S) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    const int field = static_cast<int>((bits >> 52) & 0x7ff);
    std::int64_t mantissa = static_cast<std::int64_t>(bits & 0xfffffffffffffull);
    int ex = -1074;
    if (field != 0) {
      mantissa |= std::int64_t(1) << 52;
      ex = field - 1075;
    }
    std::int64_t Y = 0;
    if (mantissa != 0) {
      const int shift = ex - e + bits_per_slice * S - 1;  // X = +-mantissa * 2^shift
      if (shift >= 0) {
        base = shift / bits_per_slice;
        Y = mantissa * (std::int64_t(1) << (shift % bits_per_slice));  // < 2^60
      } else if (-shift <= 54) {
        // Round half away from zero; mantissa < 2^53 so the sum cannot overflow.
        const int n = -shift;
        Y = static_cast<std::int64_t>(
            (static_cast<std::uint64_t>(mantissa) + (std::uint64_t(1) << (n - 1))) >> n);
      }  // else |x 2^(8S-1-e)| < 1/2: X = 0
      if (bits >> 63) Y = -Y;
    }
    z = static_cast<std::uint64_t>(Y) + 0x8080808080808080ull;  // wraps to Y + C exactly
  }

  /// Slice s (0 = most significant) of S: the digit of X at position S-1-s.
  KOKKOS_INLINE_FUNCTION std::int8_t slice(int s, int S) const {
    const int q = S - 1 - s - base;  // digit index within Y
    if (q < 0 || q >= 8) return 0;
    return static_cast<std::int8_t>(static_cast<int>((z >> (8 * q)) & 0xff) - 128);
  }
};

}  // namespace Impl
}  // namespace ozaki
