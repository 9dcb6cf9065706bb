#pragma once
/// \file residues.hpp
/// Portable Kokkos kernels of scheme II's residues and reconstruction (docs/design.md §5.2,
/// §5.3):
///
///   crt_residues        every element scaled to an integer and reduced modulo each modulus
///   (one INT8 GEMM per modulus and K chunk, in the backends)
///   crt_reconstruct     residues of C' -> C' exactly (CRT) -> FP64 -> alpha/beta update

#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/crt/rules.hpp>
#include <ozaki/impl/crt/scaling.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// 2^h as a double for |h| <= 1023: for normal powers (h >= -1022) its bit pattern, (h + 1023)
/// in the exponent field, the value ldexp(1, h) has; the residue kernels make two per quad of
/// elements, and ldexp is a sequence of about 15 instructions on GPUs (its range checks).
KOKKOS_INLINE_FUNCTION double power_of_two(int h) {
  if (h < -1022 || h > 1023) return compat::ldexp(1.0, h);
  const std::uint64_t bits = static_cast<std::uint64_t>(h + 1023) << 52;
  double p;
  std::memcpy(&p, &bits, sizeof p);
  return p;
}

/// y rounded to an integer, half away from zero, exactly, without conversion instructions
/// (they are slow on GPUs): |y| + 2^52 rounds |y| < 2^52 to the nearest integer (ties to
/// even), and a tie is then moved away from zero.
KOKKOS_INLINE_FUNCTION double round_half_away(double y) {
  const double a = magnitude(y);
  if (!(a < 0x1p52)) return y;  // already an integer
  double t = (a + 0x1p52) - 0x1p52;
  if (a - t == 0.5) t += 1;
  return y < 0 ? -t : t;
}

/// Nearest integer of y for |y| < 2^51 (ties either way): the classic 1.5 * 2^52 shift.
KOKKOS_INLINE_FUNCTION double round_small(double y) {
  const double shift = 0x1.8p52;
  return (y + shift) - shift;
}

/// The integer scaling of one operand's rows: x' = round(x 2^(bits_r - e_r)).
template <class ExecSpace>
struct CrtRowScaling {
  typename Views<ExecSpace>::Exponents exponents;  // e_r, from pass 1
  CrtBits<ExecSpace> bits;                         // b_r, from the scaling rule
};

/// The INT32 products of one pass of columns [n0, n0 + width) of C:
/// products(l * chunks + c, j, m) is chunk c of modulus l for column n0 + j.
template <class ExecSpace>
struct CrtPassProducts {
  typename Views<ExecSpace>::Products products;
  std::int64_t chunks = 1, n0 = 0, width = 0;
};

namespace detail {

/// f(std::integral_constant<int, L>{}) for the runtime moduli count L: the kernels below are
/// compiled per L, so that their loops over the moduli unroll (all products' loads of an
/// entry issue at once; the constants become immediate operands).
template <int L = min_moduli, class F>
void with_moduli_count(int moduli, const F& f) {
  if constexpr (L <= max_moduli) {
    if (moduli == L) {
      f(std::integral_constant<int, L>{});
    } else {
      with_moduli_count<L + 1>(moduli, f);
    }
  }
}

/// a b + c, fused on CUDA devices (one instruction and one rounding; the library's build has
/// --fmad=false, so an unfused expression stays a multiply and an add there), separate
/// elsewhere (a software fma on hosts without the instruction).  Only for uses whose value is
/// the same either way, each saying why: mostly exact products and sums of integers, where
/// fusing halves the instructions.  Fusing the residue kernels' FP32 quotient removed one in
/// eleven of their FP32 instructions per element and modulus (their SASS, docs/benchmarks.md).
template <class T>
KOKKOS_INLINE_FUNCTION T multiply_add(T a, T b, T c) {
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                "multiply_add is for float and double");
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<T, float>::value) {
    return __fmaf_rn(a, b, c);
  } else {
    return __fma_rn(a, b, c);
  }
#else
  return a * b + c;
#endif
}

/// Nearest integer of y 2^s for |y 2^s| < 2^51 (ties either way) where y 2^s is exact (the
/// scale a power of two, no underflow): the product is exact fused or not, so one shift
/// instruction fewer than round_small(y * 2^s) on CUDA devices, the same value.
KOKKOS_INLINE_FUNCTION double round_scaled(double y, double power_of_two_scale) {
  const double shift = 0x1.8p52;
  return multiply_add(y, power_of_two_scale, shift) - shift;
}

/// y - m_l q, q the nearest integer to y / m_l: the symmetric residue of an integer-valued
/// |y| < 2^40, in three FP64 instructions on CUDA devices (five unfused).  q is the same fused
/// or not: y (1/m) + 1.5 2^52 rounds to 1.5 2^52 + q whether y (1/m) is rounded first or not,
/// because for odd m the exact y / m is at least 1 / (2m) >= 2^-9 from a tie, and 1/m's
/// rounding and the product's move y (1/m) by at most 2 |y / m| 2^-53 < 2^-13; for m = 256,
/// 1/m = 2^-8 makes the product exact.  y - q m is exact (|q m| < 2^41).  For the even
/// modulus 256 a tie comes out as +128 or -128: the same class (whose low byte is -128's
/// either way), and crt_value's result does not depend on which (k absorbs the multiple of M).
KOKKOS_INLINE_FUNCTION double symmetric_residue(double y, const CrtConstants& c, int l) {
  const double shift = 0x1.8p52;
  const double q = multiply_add(y, c.inverse[l], shift) - shift;
  return multiply_add(-q, c.modulus[l], y);
}

/// x' = round(x 2^(bits - e)) (half away from zero; the scale is p1 p2, two powers of two that
/// keep every nonzero x' normal) cut into exact signed pieces x' = hi 2^64 + mid 2^32 + lo
/// (nearest-integer splits, |hi| <= 2^30, |mid|, |lo| <= 2^31); a row of at most 62 bits
/// (`wide` false: bits <= 62, a per-row branch of the kernels) has hi = 0.
struct ScaledPieces {
  double hi, mid, lo;
};

template <bool wide>
KOKKOS_INLINE_FUNCTION ScaledPieces scaled_pieces(double x, double p1, double p2) {
  const double t = round_half_away(x * p1 * p2);
  // Every product by a power of two here is exact, and so are the differences (|t| < 2^94
  // is an integer, hi 2^64 and mid 2^32 its nearest multiples): fused or not, the same pieces.
  const double hi = wide ? round_scaled(t, 0x1p-64) : 0.0;
  const double rest = multiply_add(-hi, 0x1p64, t);
  const double mid = round_scaled(rest, 0x1p-32);
  return {hi, mid, multiply_add(-mid, 0x1p32, rest)};
}

/// Residues in FP32 (docs/design.md §5.2).  The residue kernels were bound by FP64
/// arithmetic on GPUs (about 10 FP64 operations per element and modulus: 0.9 ms per 8192 x
/// 8192 operand at 14 moduli on the H200, where its bytes take 0.35 ms), so the per-modulus
/// work runs in FP32, which GPUs execute at twice the FP64 rate, and every step stays exact:
///
/// - x' is cut into exact float digits, x' = sum_i d_i 2^(position i), from the two's
///   complement words of its pieces (below);
/// - per modulus y = sum_i d_i w_i with w_i the symmetric residue of 2^(position i): every
///   product and partial sum is an integer below 2^22 in magnitude (bounds below), so all
///   are exact floats, fused or not;
/// - q = nearest integer to y / m from the float product y (1/m)(1 + d), |d| <= 2^-23 with
///   or without a fused multiply-add: the error |y| 2^-23 / m is below 1 / (2m), the least
///   distance of y / m from a tie for odd m; r = y - q m is then the symmetric residue, exact.
///
/// The digits, by the row's bits b (a per-row branch of the kernels; |x'| < 2^b):
/// - b > 62: each 32-bit piece p of x' = hi 2^64 + mid 2^32 + lo (|p| <= 2^31,
///   scaled_pieces) as p = d0 + d1 2^13 + d2 2^26, 0 <= d0, d1 < 2^13, |d2| <= 32: nine
///   digits at crt_digit_position; y stays below 3.14e6 for the six low digits and 2.09e6
///   for the three high ones, which are reduced first (|w| <= 128).
/// - b <= 62: the 64-bit two's complement of x' = mid 2^32 + lo cut at crt_narrow_digit_position
///   0, 20, 33, 46 (and 59): a 20-bit digit, whose weight is 1 for every modulus, 13-bit
///   digits, and a signed top digit.  With |w| <= 127 (odd moduli; modulus 256 is taken
///   apart, below): for b <= crt_narrow4_bits = 59 four digits, the top one a' >> 46 in
///   [-2^13, 2^13), |y| <= (2^20 - 1) + 2 * 8191 * 127 + 2^13 * 127 = 4169473 < 2^22 = 4194304;
///   for 59 < b <= 62 five, the top one a' >> 59 in [-8, 8),
///   |y| <= (2^20 - 1) + 3 * 8191 * 127 + 8 * 127 = 4170362 < 2^22.  Per odd modulus three
///   FMAs for the digits (b <= 59: 14 to 16 moduli at ordinary data) where 13-bit digits took
///   four, and five digits had taken five.
/// - modulus 256 (always the first, rules.hpp): its symmetric residue's byte is the low byte
///   of x' as two's complement, the low word's: no arithmetic at all.
/// The residues are the same integers as those of the FP64 formulation, so the same bytes.
template <int D>
struct ResidueDigits {
  float d[D];
  std::uint32_t low;  // the low word of x' as two's complement: its residue modulo 256
};

/// Digit counts of the three kinds of rows.
constexpr int crt_wide_digits = 9;

/// The digit count of a row of `bits` bits.
KOKKOS_INLINE_FUNCTION int crt_row_digits(int bits) {
  return bits > 62 ? crt_wide_digits : bits > crt_narrow4_bits ? 5 : 4;
}

/// u as a float, exactly, for 0 <= u < 2^23, without a conversion instruction: the bit
/// pattern 0x4B000000 | u is 2^23 + u.
KOKKOS_INLINE_FUNCTION float exact_float(std::uint32_t u) {
  const std::uint32_t bits = 0x4B000000u | u;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f - 0x1p23f;
}

/// The two's complement word of a piece p (an integer-valued double, |p| <= 2^31) and its
/// sign: the low 32 bits of p + 1.5 2^52 are those of p's two's complement, bit 32 is set
/// for p < 0 (for |p| < 2^51).
struct PieceWord {
  std::uint32_t low, negative;
};

KOKKOS_INLINE_FUNCTION PieceWord piece_word(double p) {
  const double w = p + 0x1.8p52;
  std::uint64_t bits;
  std::memcpy(&bits, &w, sizeof bits);
  return {static_cast<std::uint32_t>(bits), static_cast<std::uint32_t>(bits >> 32) & 1u};
}

/// The three digits of one piece p (|p| <= 2^31); returns its two's complement word.
KOKKOS_INLINE_FUNCTION std::uint32_t piece_digits(double p, float* d) {
  const PieceWord word = piece_word(p);
  const std::uint32_t low = word.low, negative = word.negative;
  d[0] = exact_float(low & 0x1fffu);
  d[1] = exact_float((low >> 13) & 0x1fffu);
  // p >> 26 = (low >> 26) - 64 negative, in [-32, 32]; shifted by 64 to be non-negative.
  d[2] = exact_float((low >> 26) + 64u - 64u * negative) - 64.0f;
  return low;
}

/// The nine digits of x' (rows of more than 62 bits).
KOKKOS_INLINE_FUNCTION ResidueDigits<crt_wide_digits> wide_digits(const ScaledPieces& x) {
  ResidueDigits<crt_wide_digits> r;
  r.low = piece_digits(x.lo, r.d);
  piece_digits(x.mid, r.d + 3);
  piece_digits(x.hi, r.d + 6);
  return r;
}

/// The D = 4 or 5 digits of x' = mid 2^32 + lo, |x'| < 2^59 or 2^62 (so |mid| <= 2^30 and
/// |lo| <= 2^31): x''s 64-bit two's complement has the low word of lo and the high word
/// mid - [lo < 0].  A signed top digit in [-h, h) is read from a field one bit wider than its
/// magnitude, plus h modulo twice h.
template <int D>
KOKKOS_INLINE_FUNCTION ResidueDigits<D> narrow_digits(const ScaledPieces& x) {
  static_assert(D == 4 || D == 5, "rows of at most 62 bits take four or five digits");
  const PieceWord lo = piece_word(x.lo), mid = piece_word(x.mid);
  const std::uint32_t high = mid.low - lo.negative, low = lo.low;
  ResidueDigits<D> r;
  r.low = low;
  r.d[0] = exact_float(low & 0xfffffu);                          // bits 0-19
  r.d[1] = exact_float(((low >> 20) | (high << 12)) & 0x1fffu);  // bits 20-32
  r.d[2] = exact_float((high >> 1) & 0x1fffu);                   // bits 33-45
  if constexpr (D == 4) {
    // x' >> 46 in [-2^13, 2^13): bits 46-59.
    r.d[3] = exact_float(((high >> 14) & 0x3fffu) ^ 0x2000u) - 8192.0f;
  } else {
    r.d[3] = exact_float((high >> 14) & 0x1fffu);  // bits 46-58
    // x' >> 59 in [-8, 8): bits 59-63.
    r.d[4] = exact_float((high >> 27) ^ 0x10u) - 16.0f;
  }
  return r;
}

/// The digits of a row of D digits (crt_row_digits).
template <int D>
KOKKOS_INLINE_FUNCTION ResidueDigits<D> residue_digits(const ScaledPieces& x) {
  if constexpr (D == crt_wide_digits) {
    return wide_digits(x);
  } else {
    return narrow_digits<D>(x);
  }
}

/// Adding it rounds a float |v| < 2^22 to an integer; v + 1.5 2^23 then lies in [2^23, 2^24).
constexpr float float_shift = 0x1.8p23f;

/// 1.5 2^23 + q, q the nearest integer to y / m_l for an integer-valued float |y| < 2^22 (proof
/// above): the quotient both reduce_f and residue_word take.
KOKKOS_INLINE_FUNCTION float shifted_quotient_f(float y, const CrtConstants& c, int l) {
  return multiply_add(y, c.inverse_f[l], float_shift);
}

/// The symmetric residue of an integer-valued float |y| < 2^22 modulo m_l (proof above).
KOKKOS_INLINE_FUNCTION float reduce_f(float y, const CrtConstants& c, int l) {
  const float q = shifted_quotient_f(y, c, l) - float_shift;
  return multiply_add(-q, c.modulus_f[l], y);
}

/// The bit pattern of a float.
KOKKOS_INLINE_FUNCTION std::uint32_t float_bits(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

/// A word whose low byte is the symmetric residue r of an integer-valued float |y| < 2^22
/// modulo an odd m_l, as two's complement: the residue's byte without r itself.  A float v in
/// [2^23, 2^24) holding an integer has the bit pattern 0x4B000000 + (v - 2^23), so with
/// t = shifted_quotient_f(y) = 1.5 2^23 + q (reduce_f's q) and y + 1.5 2^23 (exact),
/// (-m) bits(t) + bits(y + 1.5 2^23) = 0x4B400000 (1 - m) + y - q m modulo 2^32,
/// whose low byte is r's: 0x4B400000 ends in a zero byte.  Three instructions per element and
/// modulus (FFMA, FADD, IMAD) where reduce_f and the float packing took four (FFMA, FADD, FFMA,
/// FADD).
KOKKOS_INLINE_FUNCTION std::uint32_t residue_word(float y, const CrtConstants& c, int l) {
  return c.minus_modulus_u[l] * float_bits(shifted_quotient_f(y, c, l)) +
         float_bits(y + float_shift);
}

/// y, an integer-valued float below 2^22 in magnitude congruent to x' modulo an odd m_l
/// (l >= 1), for a row of more than 62 bits (its high piece is nonzero) ...
KOKKOS_INLINE_FUNCTION float congruent_f(const ResidueDigits<crt_wide_digits>& x,
                                         const CrtConstants& c, int l) {
  const float* w = c.digit_weight[l];
  float y = x.d[0];
  float h = x.d[6] * w[6];
  h = multiply_add(x.d[7], w[7], h);
  h = multiply_add(x.d[8], w[8], h);
  y += reduce_f(h, c, l);
#pragma unroll
  for (int i = 1; i < 6; ++i) y = multiply_add(x.d[i], w[i], y);
  return y;
}

/// ... and for a row of at most 62 bits (D = 4 or 5 digits).
template <int D>
KOKKOS_INLINE_FUNCTION float congruent_f(const ResidueDigits<D>& x, const CrtConstants& c, int l) {
  const float* w = c.narrow_weight[l];
  float y = x.d[0];
#pragma unroll
  for (int i = 1; i < D; ++i) y = multiply_add(x.d[i], w[i], y);
  return y;
}

/// The symmetric residue of x' modulo an odd m_l as a float.
template <class RowDigits>
KOKKOS_INLINE_FUNCTION float residue_f(const RowDigits& x, const CrtConstants& c, int l) {
  return reduce_f(congruent_f(x, c, l), c, l);
}

/// The low bytes of four words as one word, w[0]'s lowest: on CUDA devices three byte
/// permutations instead of four masks, three shifts and three ors (the residue kernels are
/// bound by instruction issue on the H200: docs/benchmarks.md).
KOKKOS_INLINE_FUNCTION std::uint32_t pack_low_bytes(const std::uint32_t (&w)[4]) {
#if defined(__CUDA_ARCH__)
  // __byte_perm(x, y, s): byte i of the result is byte s_i of y:x (x's bytes are 0-3).
  const std::uint32_t low = __byte_perm(w[0], w[1], 0x0040);   // w1.0 w0.0 in bytes 1, 0
  const std::uint32_t high = __byte_perm(w[2], w[3], 0x0040);  // w3.0 w2.0 in bytes 1, 0
  return __byte_perm(low, high, 0x5410);
#else
  std::uint32_t word = 0;
  for (int j = 0; j < 4; ++j) word |= (w[j] & 0xffu) << (8 * j);
  return word;
#endif
}

/// The low bytes of four integer-valued floats |v| < 2^22 as two's complement, as one word:
/// the bit pattern of v + 1.5 2^23 is that of 1.5 2^23 plus v as an integer.
KOKKOS_INLINE_FUNCTION std::uint32_t pack_low_bytes(const float (&v)[4]) {
  std::uint32_t b[4];
  for (int j = 0; j < 4; ++j) b[j] = float_bits(v[j] + float_shift);
  return pack_low_bytes(b);
}

/// Modulus 256's word of a quad: the low bytes of its elements' low words.
template <class RowDigits>
KOKKOS_INLINE_FUNCTION std::uint32_t low_byte_word(const RowDigits (&x)[4]) {
  const std::uint32_t lows[4] = {x[0].low, x[1].low, x[2].low, x[3].low};
  return pack_low_bytes(lows);
}

/// One quad's L words of residues (4 bytes each), residues(r, l kpad + k).
template <int L, class RowDigits, class Digits>
KOKKOS_INLINE_FUNCTION void write_residue_words(const RowDigits (&x)[4], const CrtConstants& c,
                                                const Digits& residues, int r, std::int64_t kpad,
                                                std::int64_t k) {
  // Aligned: rows are 256-byte aligned, kpad and k multiples of 4.
  *reinterpret_cast<std::uint32_t*>(&residues(r, k)) = low_byte_word(x);  // modulus 256
#pragma unroll
  for (int l = 1; l < L; ++l) {
    std::uint32_t w[4];
    for (int j = 0; j < 4; ++j) w[j] = residue_word(congruent_f(x[j], c, l), c, l);
    *reinterpret_cast<std::uint32_t*>(&residues(r, l * kpad + k)) = pack_low_bytes(w);
  }
}

/// One quad of consecutive elements of row r scaled, cut into D digits each and written as L
/// words.
template <int L, int D, class Digits>
KOKKOS_INLINE_FUNCTION void write_residue_quad(const double (&x)[4], double p1, double p2,
                                               const CrtConstants& c, const Digits& residues, int r,
                                               std::int64_t kpad, std::int64_t k) {
  constexpr bool wide = D == crt_wide_digits;
  ResidueDigits<D> digits[4];
  for (int j = 0; j < 4; ++j) digits[j] = residue_digits<D>(scaled_pieces<wide>(x[j], p1, p2));
  write_residue_words<L>(digits, c, residues, r, kpad, k);
}

template <int L, class ExecSpace>
void crt_residues_fixed(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                        const CrtRowScaling<ExecSpace>& scaling, const CrtConstants& c,
                        const typename Views<ExecSpace>::Digits& residues) {
  const auto exponents = scaling.exponents;
  const auto bits = scaling.bits;
  const std::int64_t rows = X.extent(0);
  const std::int64_t kpad = residues.extent(1) / L;
  for_each_quad(
      "ozaki::crt::residues", space, X, residues.extent(0), kpad,
      KOKKOS_LAMBDA(const int r, const std::int64_t k, const double(&x)[4]) {
        const int b = r < rows ? bits(r) : 0;
        const int shift = r < rows ? b - exponents(r) : 0;
        const double p1 = power_of_two(shift / 2), p2 = power_of_two(shift - shift / 2);
        // One branch per row (a warp works on one row): most rows keep at most 59 bits (four
        // digits), and all of at most 62 bits skip the high piece.
        switch (crt_row_digits(b)) {
          case crt_wide_digits:
            write_residue_quad<L, crt_wide_digits>(x, p1, p2, c, residues, r, kpad, k);
            break;
          case 5: write_residue_quad<L, 5>(x, p1, p2, c, residues, r, kpad, k); break;
          default: write_residue_quad<L, 4>(x, p1, p2, c, residues, r, kpad, k); break;
        }
      });
}

/// C' from its residues r_l (|r_l| <= m_l/2 + 1), as a double rounded once (docs/design.md §5):
///   S_p = sum_l weight[l][p] r_l                (exact FP64 integers, rules.hpp)
///   k   = round(sum_p S_p quotient[p])          (|C'| < M/2 (1 - 2^-16): far from a tie)
///   D_p = S_p - k range[p]                      (exact), carries normalised to |D_p| <= 2^39
///   C'  = sum_p D_p 2^(-40p)                    (summed from the least significant part;
///                                                times 2^top by the caller)
/// (`parts` is a template argument: a constexpr host function may not be called in a device
/// function's body.)
///
/// Every step but q's sum is an exact product and sum of integers (or a product by a power of
/// two), so multiply_add fuses them on CUDA devices with no change of value: about 100 FP64
/// instructions per entry at L = 14 instead of about 185 (the reconstruction's FP64 work was
/// about as long as its memory time on the H200).  q's products are not exact and stay
/// unfused, so that k is computed the same way everywhere.
template <int L, int parts = crt_parts(L)>
KOKKOS_INLINE_FUNCTION double crt_value(const double (&r)[L], const CrtConstants& c) {
  double S[parts] = {};
#pragma unroll
  for (int l = 0; l < L; ++l) {
#pragma unroll
    for (int p = 0; p < parts; ++p) S[p] = multiply_add(c.weight[l][p], r[l], S[p]);
  }
  double q = 0;
#pragma unroll
  for (int p = 0; p < parts; ++p) q += S[p] * c.quotient[p];
  const double k = round_small(q);
#pragma unroll
  for (int p = 0; p < parts; ++p) S[p] = multiply_add(-k, c.range[p], S[p]);
#pragma unroll
  for (int p = parts - 1; p >= 1; --p) {
    const double carry = round_scaled(S[p], 0x1p-40);
    S[p] = multiply_add(-carry, 0x1p40, S[p]);
    S[p - 1] += carry;
  }
  double v = 0;
#pragma unroll
  for (int p = parts - 1; p >= 0; --p) v = multiply_add(v, 0x1p-40, S[p]);
  return v;
}

template <int L, class ExecSpace>
void crt_reconstruct_fixed(const ExecSpace& space, const CrtPassProducts<ExecSpace>& pass,
                           const CrtConstants& c, const CrtRowScaling<ExecSpace>& rows_a,
                           const CrtRowScaling<ExecSpace>& rows_b, double alpha, double beta,
                           const typename Views<ExecSpace>::Matrix& C) {
  const auto P = pass.products;
  const std::int64_t chunks = pass.chunks, n0 = pass.n0;
  const auto exponents_a = rows_a.exponents, bits_a = rows_a.bits;
  const auto exponents_b = rows_b.exponents, bits_b = rows_b.bits;
  // Several entries per thread (kernels.hpp, reconstruction_rows_per_team).
  grid_for<reconstruction_rows_per_team>(
      "ozaki::crt::reconstruct", space, C.extent(0), pass.width,
      KOKKOS_LAMBDA(const std::int64_t m, const std::int64_t j) {
        const std::int64_t n = n0 + j;
        // All L (times chunks) loads first: they are independent.
        double y[L];
#pragma unroll
        for (int l = 0; l < L; ++l) y[l] = P(l * chunks, j, m);
        for (std::int64_t ch = 1; ch < chunks; ++ch) {
#pragma unroll
          for (int l = 0; l < L; ++l) y[l] += P(l * chunks + ch, j, m);
        }
        double r[L];
#pragma unroll
        for (int l = 0; l < L; ++l) r[l] = symmetric_residue(y[l], c, l);
        const double v = crt_value<L>(r, c);
        const double ab = compat::ldexp(
            v, c.top_exponent + exponents_a(m) - bits_a(m) + exponents_b(n) - bits_b(n));
        C(m, n) = beta == 0 ? alpha * ab : alpha * ab + beta * C(m, n);
      });
}

}  // namespace detail

/// Every element x of row r becomes x' = round(x 2^(bits_r - e_r)) (half away from zero,
/// |x'| < 2^94, an exact double) and its symmetric residue modulo each of the L moduli is
/// written to residues(r, l * kpad + k).  Padding columns and rows are zero.
///
/// Exactness: x 2^(bits - e) is two multiplications by powers of two, split so that neither
/// leaves the normal range for any x whose x' is nonzero.  x' is cut into exact pieces
/// x' = hi 2^64 + mid 2^32 + lo (|hi| <= 2^30, |mid|, |lo| <= 2^31), so that
/// y = hi (2^64 mod m) + mid (2^32 mod m) + lo is an exact integer below 2^40 congruent to x',
/// and y - m round(y / m) is exact too.  No conversion instruction is used.  One thread per 4
/// consecutive k (for_each_quad) writes each modulus' 4 residues as one 32-bit store.
template <class ExecSpace>
void crt_residues(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                  const CrtRowScaling<ExecSpace>& scaling, const CrtConstants& constants,
                  const typename Views<ExecSpace>::Digits& residues) {
  detail::with_moduli_count(constants.moduli, [&](auto count) {
    detail::crt_residues_fixed<decltype(count)::value>(space, X, scaling, constants, residues);
  });
}

/// C(m, n0 + j) from the INT32 products of one pass of columns (CrtPassProducts).  Per entry:
///   r_l = (sum_c P) mod m_l, |r_l| <= m_l/2 + 1;
///   S_p = sum_l weight[l][p] r_l                (exact FP64 integers, rules.hpp)
///   k   = round(sum_p S_p quotient[p])          (|C'| < M/2 (1 - 2^-16): far from a tie)
///   D_p = S_p - k range[p]                      (exact), carries normalised to |D_p| <= 2^39
///   C'  = sum_p D_p 2^(top - 40p)               (summed from the least significant part:
///                                                within 2u |C'|, docs/design.md §5)
///   C(m, n) = alpha 2^(e_m - b_m + f_n - c_n) C' (+ beta C(m, n)).
template <class ExecSpace>
void crt_reconstruct(const ExecSpace& space, const CrtPassProducts<ExecSpace>& pass,
                     const CrtConstants& constants, const CrtRowScaling<ExecSpace>& rows_a,
                     const CrtRowScaling<ExecSpace>& rows_b, double alpha, double beta,
                     const typename Views<ExecSpace>::Matrix& C) {
  detail::with_moduli_count(constants.moduli, [&](auto count) {
    detail::crt_reconstruct_fixed<decltype(count)::value>(space, pass, constants, rows_a, rows_b,
                                                          alpha, beta, C);
  });
}

}  // namespace Impl
}  // namespace ozaki
