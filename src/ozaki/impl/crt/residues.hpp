#pragma once
/// \file residues.hpp
/// Portable Kokkos kernels of scheme II's residues and reconstruction (docs/design.md §5.2,
/// §5.3):
///
///   crt_residues        every element scaled to an integer and reduced modulo each modulus
///   (one INT8 GEMM per modulus and K chunk, in the backends)
///   crt_reconstruct     residues of C' -> C' exactly (CRT) -> FP64 -> alpha/beta update
///   crt_reconstruct_tiles  the same from residue tiles (a backend that reduced its products)

#include <ozaki/impl/common/float_bits.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/crt/residue_tiles.hpp>
#include <ozaki/impl/crt/rules.hpp>
#include <ozaki/impl/crt/scaling.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// Whether 2^h is a normal double (-1022 <= h <= 1023), and for such h the double itself from
/// its bit pattern, (h + 1023) in the exponent field: the value ldexp(1, h) has, without
/// ldexp's sequence of about 15 instructions on GPUs (its range checks).
KOKKOS_INLINE_FUNCTION constexpr bool is_normal_power_of_two(int h) {
  return h >= -1022 && h <= 1023;
}
KOKKOS_INLINE_FUNCTION double normal_power_of_two(int h) {
  const std::uint64_t bits = static_cast<std::uint64_t>(h + 1023) << 52;
  double p;
  std::memcpy(&p, &bits, sizeof p);
  return p;
}
/// 2^h as a double for |h| <= 1023, ldexp(1, h)'s value (the residue kernels make one or two per
/// row, crt_row_scale).
KOKKOS_INLINE_FUNCTION double power_of_two(int h) {
  return is_normal_power_of_two(h) ? normal_power_of_two(h) : compat::ldexp(1.0, h);
}

/// The nearest integer to y, ties to even (IEEE's rounding), exactly, without conversion
/// instructions (they are slow on GPUs): |y| + 2^52 rounds |y| < 2^52 to an integer.
KOKKOS_INLINE_FUNCTION double round_nearest(double y) {
  const double a = magnitude(y);
  if (!(a < 0x1p52)) return y;  // already an integer
  const double t = (a + 0x1p52) - 0x1p52;
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

/// The entries of C a pass's reconstruction writes: rows [first_row, end_row), the rows its
/// INT8 products covered (a triangular call's pass multiplies only the rows that meet its
/// triangle, CallPlan::triangle), and of those the entries (m, n) with n - m <= above and
/// m - n <= below: the triangle as a band (Full: no limit; Lower: above = 0; Upper: below = 0).
struct CrtPassEntries {
  static constexpr std::int64_t unlimited = std::numeric_limits<std::int64_t>::max() / 2;
  std::int64_t first_row = 0, end_row = unlimited;
  std::int64_t above = unlimited, below = unlimited;

  static CrtPassEntries of(Triangle triangle, std::int64_t first_row, std::int64_t end_row) {
    return {first_row, end_row, triangle == Triangle::Lower ? 0 : unlimited,
            triangle == Triangle::Upper ? 0 : unlimited};
  }
  KOKKOS_INLINE_FUNCTION bool holds(std::int64_t m, std::int64_t n) const {
    return n - m <= above && m - n <= below;
  }
};

/// One pass's products as residue tiles (residue_tiles.hpp) written by the backend
/// (ResidueGemmBackend), for columns [n0, n0 + width) of C; tile row 0 starts at
/// entries.first_row.
struct CrtPassTiles {
  const std::int8_t* tiles = nullptr;
  ResidueTiles geometry;
  std::int64_t n0 = 0, width = 0;
  CrtPassEntries entries;
};

/// The INT32 products of one pass of columns [n0, n0 + width) of C:
/// products(l * chunks + c, j, m) is chunk c of modulus l for column n0 + j (rows of
/// `entries` only).
template <class ExecSpace>
struct CrtPassProducts {
  typename Views<ExecSpace>::Products products;
  std::int64_t chunks = 1, n0 = 0, width = 0;
  CrtPassEntries entries;
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
/// fusing halves the instructions.  Fusing the residue kernels' FP32 quotient removes one in
/// eleven of their FP32 instructions per element and modulus (their SASS; the benchmarks
/// diary in docs/history/).
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

/// Residues from bytes (docs/design.md §5.2).  Every element x of a row becomes the integer
/// x' = round(x 2^(b - e)) (to nearest, ties to even), |x'| < 2^b, and its symmetric residue
/// modulo every modulus is written as one byte.  Cut into FP32 digits, x' kept the kernels
/// bound by instruction issue on sm_90 (185 instructions per element at 14 moduli, 78 of them
/// the per-modulus work, the rest the FP64 scaling and the cutting), so x' is taken as
/// the bytes of the bit pattern of a double, and each modulus sums their weighted residues with
/// DP4A on CUDA devices (four byte products and a sum in one instruction; hosts sum whole words
/// in FP64, shifted_congruent):
///
/// - rows of at most 51 bits (crt_fused_bits) whose scale 2^(b - e) is a double: the bit
///   pattern V of 1.5 2^52 + x' is x' + crt_word_bias as a 64-bit integer (|x'| < 2^51, so
///   1.5 2^52 + x' lies in [2^52, 2^53), where doubles are the integers and the pattern is
///   0x4330000000000000 plus the value less 2^52), and one fused multiply-add of x, 2^(b - e)
///   and 1.5 2^52 makes that double, rounding x 2^(b - e) once, to nearest even;
/// - rows of at most 62 bits: x' rounded as above in two steps, then V = x' + crt_word_bias from
///   the two's complement words of its exact halves x' = h 2^32 + lo;
/// - wider rows (at most crt_max_bits = 94): x' = top 2^48 + bottom, both halves below 2^47 in
///   magnitude, each as its double 1.5 2^52 + half: two such 64-bit patterns.
///
/// With V's bytes v_i (0 <= v_i <= 255) and w_i the symmetric residue of 2^(8i) modulo m
/// (2^(48 + 8i) for the top pattern's bytes), y = sum_i v_i w_i - res(bias) is congruent to x'
/// modulo m (res(bias) the symmetric residue of crt_word_bias, of crt_word_bias (1 + 2^48) for
/// two patterns).  |w_i| <= 127 for odd m <= 255, so |y| <= 16 * 255 * 127 + 127 < 2^19, and
/// DP4A's 32-bit sums are exact.  The sums start at 1.5 2^23's bit pattern less res(bias)
/// (CrtConstants::word_start): the result is the bit pattern of the float 1.5 2^23 + y, from
/// which residue_word takes the residue's byte in three instructions (its proof below).  Per
/// element and odd modulus: two DP4A (four for the widest rows), FADD, FFMA and IMAD, where the
/// FP32 digits took three FFMAs for the digit sum and three for the byte; per element one
/// DFMA where the scaling, the rounding and the digits took about 50 instructions.  Modulus
/// 256 (always the first, rules.hpp) is x''s low byte, that of V's low word (crt_word_bias'
/// low word is zero): no arithmetic at all.  The residues are integers, so every formulation
/// that computes them exactly gives the same bytes (the serial backend's is __int128 arithmetic).

/// Rows of at most this many bits (and a scale that is a double) take one fused multiply-add.
constexpr int crt_fused_bits = 51;
/// Rows of at most this many bits take one 64-bit pattern, wider ones two.
constexpr int crt_one_word_bits = 62;

/// How a row's elements become bytes (above).
enum class CrtRowForm { Fused, OneWord, TwoWords };

KOKKOS_INLINE_FUNCTION CrtRowForm crt_row_form(int bits, int shift) {
  // 2^shift is a double for shift <= 1023; shift = b - e >= 1 - 1025 is never below -1074.
  if (bits <= crt_fused_bits && shift <= 1023) return CrtRowForm::Fused;
  return bits <= crt_one_word_bits ? CrtRowForm::OneWord : CrtRowForm::TwoWords;
}

/// A 64-bit pattern as two 32-bit words.
struct PatternWords {
  std::uint32_t low, high;
};

KOKKOS_INLINE_FUNCTION PatternWords pattern_words(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return {static_cast<std::uint32_t>(bits), static_cast<std::uint32_t>(bits >> 32)};
}

/// x' + crt_word_bias (bottom), and for rows of TwoWords top + crt_word_bias with
/// x' = top 2^48 + bottom.
struct ScaledPatterns {
  PatternWords bottom, top;
};

/// Rows of CrtRowForm::Fused: x 2^(b - e) + 1.5 2^52 rounded once (scale = 2^(b - e)).  Fused
/// on CUDA devices; unfused, x scale is exact or, below 2^-1022, rounds to x' = 0 either way.
KOKKOS_INLINE_FUNCTION ScaledPatterns fused_patterns(double x, double scale) {
  return {pattern_words(multiply_add(x, scale, 0x1.8p52)), {0, 0}};
}

/// The two's complement word of a piece p (an integer-valued double, |p| <= 2^31) and its
/// sign: the low 32 bits of p + 1.5 2^52 are those of p's two's complement, bit 32 is set
/// for p < 0 (for |p| < 2^51).
struct PieceWord {
  std::uint32_t low, negative;
};

KOKKOS_INLINE_FUNCTION PieceWord piece_word(double p) {
  const PatternWords w = pattern_words(p + 0x1.8p52);
  return {w.low, w.high & 1u};
}

/// Rows of CrtRowForm::OneWord (|x'| < 2^62): x' = h 2^32 + lo exactly (h the nearest integer
/// to x' 2^-32, |h| <= 2^30, |lo| <= 2^31), whose 64-bit two's complement has the low word of
/// lo and the high word h - [lo < 0]; crt_word_bias' low word is zero.  The scale is p1 p2,
/// two powers of two that keep every nonzero x' normal (products exact, fused or not).
KOKKOS_INLINE_FUNCTION ScaledPatterns one_word_patterns(double x, double p1, double p2) {
  const double t = round_nearest(x * p1 * p2);
  const double h = round_scaled(t, 0x1p-32);
  const PieceWord lo = piece_word(multiply_add(-h, 0x1p32, t)), hi = piece_word(h);
  constexpr auto bias_high = static_cast<std::uint32_t>(crt_word_bias >> 32);
  return {{lo.low, hi.low - lo.negative + bias_high}, {0, 0}};
}

/// Rows of CrtRowForm::TwoWords (|x'| < 2^94): top the nearest integer to x' 2^-48 (|top| <
/// 2^46; 1.5 2^52 + top is the fused multiply-add's value, rounded once either way: the
/// product is exact), bottom = x' - top 2^48 exactly (|bottom| <= 2^47).
KOKKOS_INLINE_FUNCTION ScaledPatterns two_word_patterns(double x, double p1, double p2) {
  const double t = round_nearest(x * p1 * p2);
  const double shifted_top = multiply_add(t, 0x1p-48, 0x1.8p52);
  const double top = shifted_top - 0x1.8p52;
  return {pattern_words(multiply_add(-top, 0x1p48, t) + 0x1.8p52), pattern_words(shifted_top)};
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610
/// c + sum_i a_i b_i over the four bytes of a and b, a's unsigned and b's signed, modulo 2^32:
/// one DP4A (CUDA devices from sm_61).
__device__ inline std::uint32_t dot_bytes(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::uint32_t d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#endif

/// The bit pattern of the float 1.5 2^23 + y, y congruent to x' modulo the odd m_l (l >= 1)
/// and |y| < 2^19 (above).  On hosts (and GPUs without DP4A), where a byte loop costs about five
/// times the FP32 digits it replaced, the same sum in FP64 on whole words: y = hi (2^32 mod m) +
/// lo - res(bias) (+ the top pattern's words at 2^48 and 2^80) is an integer below 2^41, exact
/// fused or not, and its symmetric residue (symmetric_residue: exact for such y) is the y
/// returned.  Either way the residue's byte is the same.
template <bool two_words>
KOKKOS_INLINE_FUNCTION std::uint32_t shifted_congruent(const ScaledPatterns& x,
                                                       const CrtConstants& c, int l) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610
  const std::uint32_t* w = c.byte_weight[l];
  std::uint32_t sum = dot_bytes(x.bottom.low, w[0], c.word_start[l][two_words ? 1 : 0]);
  sum = dot_bytes(x.bottom.high, w[1], sum);
  if constexpr (two_words) {
    sum = dot_bytes(x.top.low, w[2], sum);
    sum = dot_bytes(x.top.high, w[3], sum);
  }
  return sum;
#else
  const double* w = c.word_weight[l];
  double y = multiply_add(static_cast<double>(x.bottom.high), w[0],
                          static_cast<double>(x.bottom.low) - c.bias_residue[l][two_words ? 1 : 0]);
  if constexpr (two_words) {
    y = multiply_add(static_cast<double>(x.top.low), w[1], y);
    y = multiply_add(static_cast<double>(x.top.high), w[2], y);
  }
  const auto r = static_cast<std::int32_t>(symmetric_residue(y, c, l));
  return crt_float_shift_bits + static_cast<std::uint32_t>(r);
#endif
}

/// Adding it rounds a float |v| < 2^22 to an integer; v + 1.5 2^23 then lies in [2^23, 2^24).
constexpr float float_shift = 0x1.8p23f;

/// A word whose low byte is the symmetric residue r of y modulo an odd m_l as two's
/// complement, from s = the bit pattern of the float 1.5 2^23 + y for an integer |y| < 2^22.
///
/// q, the nearest integer to y / m_l, comes from the float y (1/m)(1 + d) + 1.5 2^23, |d| <=
/// 2^-23 fused or not: the error |y| 2^-23 / m is below 1 / (2m), the least distance of y / m
/// from a tie for odd m, so t = 1.5 2^23 + q.  A float v in [2^23, 2^24) holding an integer has
/// the bit pattern 0x4B000000 + (v - 2^23), so
///   s + (-m) bits(t) = 0x4B400000 (1 - m) + y - q m   modulo 2^32,
/// whose low byte is r's: 0x4B400000 ends in a zero byte.  FADD, FFMA and IMAD.
KOKKOS_INLINE_FUNCTION std::uint32_t residue_word(std::uint32_t s, const CrtConstants& c, int l) {
  const float y = bits_float(s) - float_shift;
  const float t = multiply_add(y, c.inverse_f[l], float_shift);
  return s + c.minus_modulus_u[l] * float_bits(t);
}

/// The low bytes of four words as one word, w[0]'s lowest: on CUDA devices three byte
/// permutations instead of four masks, three shifts and three ors.
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

/// Modulus 256's word of a quad: the low bytes of its elements' low words.
KOKKOS_INLINE_FUNCTION std::uint32_t low_byte_word(const ScaledPatterns (&x)[4]) {
  const std::uint32_t lows[4] = {x[0].bottom.low, x[1].bottom.low, x[2].bottom.low,
                                 x[3].bottom.low};
  return pack_low_bytes(lows);
}

/// One quad's L words of residues (4 bytes each), residues(r, l kpad + k).
template <int L, bool two_words, class Digits>
KOKKOS_INLINE_FUNCTION void write_residue_words(const ScaledPatterns (&x)[4], const CrtConstants& c,
                                                const Digits& residues, int r, std::int64_t kpad,
                                                std::int64_t k) {
  // Aligned: rows are 256-byte aligned, kpad and k multiples of 4.
  *reinterpret_cast<std::uint32_t*>(&residues(r, k)) = low_byte_word(x);  // modulus 256
#pragma unroll
  for (int l = 1; l < L; ++l) {
    std::uint32_t w[4];
    for (int j = 0; j < 4; ++j) w[j] = residue_word(shifted_congruent<two_words>(x[j], c, l), c, l);
    *reinterpret_cast<std::uint32_t*>(&residues(r, l * kpad + k)) = pack_low_bytes(w);
  }
}

/// A row's form and scale 2^shift: one double p1 for Fused rows, else p1 p2 (two powers of two
/// that keep every nonzero x' normal).
struct CrtRowScale {
  CrtRowForm form = CrtRowForm::Fused;
  double p1 = 1, p2 = 1;
};

KOKKOS_INLINE_FUNCTION CrtRowScale crt_row_scale(int bits, int shift) {
  CrtRowScale s;
  s.form = crt_row_form(bits, shift);
  if (s.form == CrtRowForm::Fused) {
    s.p1 = power_of_two(shift);
  } else {
    s.p1 = power_of_two(shift / 2);
    s.p2 = power_of_two(shift - shift / 2);
  }
  return s;
}

/// f(two_words, patterns) with patterns(x) the function of the row's form and two_words
/// std::true_type for TwoWords rows.  One branch per row (a warp works on one row).
template <class F>
KOKKOS_INLINE_FUNCTION void with_row_form(const CrtRowScale& s, const F& f) {
  const double p1 = s.p1, p2 = s.p2;
  switch (s.form) {
    case CrtRowForm::Fused:
      f(std::false_type{}, [p1](double x) { return fused_patterns(x, p1); });
      break;
    case CrtRowForm::OneWord:
      f(std::false_type{}, [p1, p2](double x) { return one_word_patterns(x, p1, p2); });
      break;
    default: f(std::true_type{}, [p1, p2](double x) { return two_word_patterns(x, p1, p2); });
  }
}

template <int L, class ExecSpace>
void crt_residues_fixed(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                        const CrtRowScaling<ExecSpace>& scaling, const CrtConstants& c,
                        const typename Views<ExecSpace>::Digits& residues) {
  const auto exponents = scaling.exponents;
  const auto bits = scaling.bits;
  const std::int64_t rows = X.extent(0);
  const std::int64_t kpad = residues.extent(1) / L;
  // Six tile teams per SM (for_each_quad): with four, op(A)'s residues through tiles ran well
  // below the memory speed that K-contiguous ones reach (the benchmarks diary in
  // docs/history/, "residues from bytes (DP4A)").
  for_each_quad<6>(
      "ozaki::crt::residues", space, X, residues.extent(0), kpad,
      KOKKOS_LAMBDA(const int r) {
        const int b = r < rows ? bits(r) : 0;
        return crt_row_scale(b, r < rows ? b - exponents(r) : 0);
      },
      KOKKOS_LAMBDA(const CrtRowScale& scale, const int r, const std::int64_t k,
                    const double(&x)[4]) {
        with_row_form(scale, [&](auto two_words, const auto& patterns) {
          const ScaledPatterns p[4] = {patterns(x[0]), patterns(x[1]), patterns(x[2]),
                                       patterns(x[3])};
          write_residue_words<L, decltype(two_words)::value>(p, c, residues, r, kpad, k);
        });
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
/// instructions per entry at L = 14 instead of about 185 (unfused, the reconstruction's FP64
/// work takes about as long as its memory traffic on sm_90).  q's products are not exact and
/// stay unfused, so that k is computed the same way everywhere.
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

/// x 2^e, exactly ldexp(x, e): for a normal power of two one multiplication (exact, or rounded
/// once where x 2^e is subnormal or overflows, as ldexp rounds), otherwise ldexp itself.  On GPUs
/// ldexp is about 20 instructions (its range checks and four multiplications), a fifth of a
/// reconstructed entry's work at 14 moduli.
KOKKOS_INLINE_FUNCTION double scale_by_power_of_two(double x, int e) {
  return is_normal_power_of_two(e) ? x * normal_power_of_two(e) : compat::ldexp(x, e);
}

/// The last steps of both real reconstructions (from INT32 products, from residue tiles):
/// C' = crt_value(r), scaled by 2^(e_m - b_m + f_n - c_n) and written with alpha and beta.  One
/// function, so that the two paths are one arithmetic, not two copies of a formula.  The row's
/// and the column's exponents come apart (row_exponent, column_exponent), so that a kernel
/// writing several entries of a row or column reads them once.
template <class ExecSpace>
struct CrtEntryUpdate {
  typename Views<ExecSpace>::Exponents exponents_a, exponents_b;
  CrtBits<ExecSpace> bits_a, bits_b;
  double alpha, beta;
  typename Views<ExecSpace>::Matrix C;

  CrtEntryUpdate(const CrtRowScaling<ExecSpace>& rows_a, const CrtRowScaling<ExecSpace>& rows_b,
                 double alpha_, double beta_, const typename Views<ExecSpace>::Matrix& C_)
      : exponents_a(rows_a.exponents),
        exponents_b(rows_b.exponents),
        bits_a(rows_a.bits),
        bits_b(rows_b.bits),
        alpha(alpha_),
        beta(beta_),
        C(C_) {}

  KOKKOS_INLINE_FUNCTION int row_exponent(std::int64_t m) const {
    return exponents_a(m) - bits_a(m);
  }
  KOKKOS_INLINE_FUNCTION int column_exponent(std::int64_t n) const {
    return exponents_b(n) - bits_b(n);
  }

  /// *c_mn = alpha 2^(top + row + column) crt_value(r) (+ beta *c_mn).
  template <int L>
  KOKKOS_INLINE_FUNCTION void write(const double (&r)[L], const CrtConstants& c, int row,
                                    int column, double* c_mn) const {
    const double ab = scale_by_power_of_two(crt_value<L>(r, c), c.top_exponent + row + column);
    *c_mn = beta == 0 ? alpha * ab : alpha * ab + beta * *c_mn;
  }

  template <int L>
  KOKKOS_INLINE_FUNCTION void operator()(const double (&r)[L], const CrtConstants& c,
                                         std::int64_t m, std::int64_t n) const {
    write(r, c, row_exponent(m), column_exponent(n), &C(m, n));
  }
};

/// Rows of C a pass's reconstruction runs over: its entries' rows that C has.
inline std::int64_t pass_rows(const CrtPassEntries& entries, std::int64_t rows) {
  return std::max<std::int64_t>(0, std::min(rows, entries.end_row) - entries.first_row);
}

template <int L, class ExecSpace>
void crt_reconstruct_fixed(const ExecSpace& space, const CrtPassProducts<ExecSpace>& pass,
                           const CrtConstants& c, const CrtRowScaling<ExecSpace>& rows_a,
                           const CrtRowScaling<ExecSpace>& rows_b, double alpha, double beta,
                           const typename Views<ExecSpace>::Matrix& C) {
  const auto P = pass.products;
  const std::int64_t chunks = pass.chunks, n0 = pass.n0;
  const CrtPassEntries entries = pass.entries;
  const std::int64_t first = entries.first_row;
  const CrtEntryUpdate<ExecSpace> update(rows_a, rows_b, alpha, beta, C);
  // Several entries per thread (kernels.hpp, reconstruction_rows_per_team).
  grid_for<reconstruction_rows_per_team>(
      "ozaki::crt::reconstruct", space, pass_rows(entries, C.extent(0)), pass.width,
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        const std::int64_t m = first + i, n = n0 + j;
        if (!entries.holds(m, n)) return;
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
        // Modulus 256's tie class as -128 (crt_low), the representative a residue tile
        // holds, so that both paths hand crt_value the same residues.
        r[0] = r[0] > 127 ? r[0] - 256 : r[0];
        update(r, c, m, n);
      });
}

/// Byte `byte` of `word` as a signed integer, in a double.  On CUDA devices one byte permute
/// and one conversion, where the shift, the sign extension and the conversion took three
/// instructions: PTX's prmt.b32 in its generic mode, where a selector nibble with its top bit
/// set replicates the selected byte's sign bit (PTX ISA, prmt).  Not CUDA's __byte_perm: it
/// documents only the nibbles' low 3 bits, and on sm_90 it does not sign-extend, which
/// crt_cuda's reconstruction tests catch.
KOKKOS_INLINE_FUNCTION double signed_byte(std::uint32_t word, int byte) {
#if defined(__CUDA_ARCH__)
  const unsigned sign = 8u | static_cast<unsigned>(byte);
  const unsigned selector = static_cast<unsigned>(byte) | sign << 4 | sign << 8 | sign << 12;
  int value;
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(value) : "r"(word), "r"(selector));
  return static_cast<double>(value);
#else
  return static_cast<double>(static_cast<std::int8_t>((word >> (8 * byte)) & 0xFFu));
#endif
}

/// 16 bytes, read as one load (residue tiles are 16-byte aligned, vector by vector).
struct alignas(16) TileVector {
  std::uint32_t word[4];
};

template <int L, class ExecSpace>
void crt_reconstruct_tiles_fixed(const ExecSpace& space, const CrtPassTiles& pass,
                                 const CrtConstants& c, const CrtRowScaling<ExecSpace>& rows_a,
                                 const CrtRowScaling<ExecSpace>& rows_b, double alpha, double beta,
                                 const typename Views<ExecSpace>::Matrix& C) {
  const std::int8_t* tiles = pass.tiles;
  const std::int64_t plane = pass.geometry.plane_bytes(), tiles_c = pass.geometry.tiles_c;
  const std::int64_t n0 = pass.n0, width = pass.width;
  const CrtPassEntries entries = pass.entries;
  const std::int64_t first_row = entries.first_row;
  const std::int64_t rows = std::min<std::int64_t>(C.extent(0), entries.end_row);
  const std::int64_t row_stride = C.stride(0), column_stride = C.stride(1);
  const CrtEntryUpdate<ExecSpace> update(rows_a, rows_b, alpha, beta, C);
  // One thread per 16-byte vector of a slot (x = (tile 8 + v) 256 + s, so consecutive threads
  // read consecutive vectors of every plane), its 16 entries from L loads of 16 bytes.  Byte b
  // of vector v is entry i = 16 v + b, so the vector's entries are 2 rows x 8 columns
  // (residue_tiles.hpp): row_in_tile(s, 16 v) + 8 ((b % 4) / 2), column_in_tile(s, 16 v) +
  // 8 (b / 4) + b % 2.  Their exponents are read once per row and column, and their addresses
  // are one base plus constant steps: otherwise this kernel is issue-bound at 14 moduli on
  // sm_90 (Nsight Compute: 236 instructions per entry at 110 registers), a third of them
  // per-entry index arithmetic, exponent loads and ldexp's range checks (the benchmarks diary
  // in docs/history/, "the residue-tile reconstruction").
  Kokkos::parallel_for(
      "ozaki::crt::reconstruct_tiles",
      RangeLaunch<ExecSpace>(space, 0, pass.geometry.vector_count()),
      KOKKOS_LAMBDA(const std::int64_t x) {
        const int s = static_cast<int>(x % ResidueTiles::slots);
        const int v = static_cast<int>(x / ResidueTiles::slots % ResidueTiles::vectors);
        const std::int64_t tile = x / (ResidueTiles::slots * ResidueTiles::vectors);
        const int first_byte = ResidueTiles::vector_bytes * v;
        const std::int64_t m = first_row + tile / tiles_c * ResidueTiles::rows +
                               ResidueTiles::row_in_tile(s, first_byte);
        const std::int64_t j =
            tile % tiles_c * ResidueTiles::columns + ResidueTiles::column_in_tile(s, first_byte);
        TileVector w[L];
#pragma unroll
        for (int l = 0; l < L; ++l) {
          w[l] = *reinterpret_cast<const TileVector*>(tiles + l * plane +
                                                      x * ResidueTiles::vector_bytes);
        }
        // Rows m and m + 8; columns j + 8 h + {0, 1} for h < 4.
        bool row_in[2], column_in[8];
        int row_exponent[2], column_exponent[8];
#pragma unroll
        for (int a = 0; a < 2; ++a) {
          row_in[a] = m + 8 * a < rows;
          row_exponent[a] = row_in[a] ? update.row_exponent(m + 8 * a) : 0;
        }
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const std::int64_t jk = j + 8 * (k / 2) + k % 2;
          column_in[k] = jk < width;
          column_exponent[k] = column_in[k] ? update.column_exponent(n0 + jk) : 0;
        }
        // Whether all 16 entries (rows m, m + 8; columns n0 + j + {0, 1, 8, 9, ..., 24, 25})
        // lie in the pass's triangle: then no entry is tested alone (always, for all of C).
        const bool all_in = entries.holds(m, n0 + j + 25) && entries.holds(m + 8, n0 + j);
        double* const c_first = C.data() + m * row_stride + (n0 + j) * column_stride;
#pragma unroll
        for (int b = 0; b < ResidueTiles::vector_bytes; ++b) {
          const int a = (b % 4) / 2, k = 2 * (b / 4) + b % 2;
          if (row_in[a] && column_in[k] &&
              (all_in || entries.holds(m + 8 * a, n0 + j + 8 * (b / 4) + b % 2))) {
            double r[L];
#pragma unroll
            for (int l = 0; l < L; ++l) r[l] = signed_byte(w[l].word[b / 4], b % 4);
            update.write(r, c, row_exponent[a], column_exponent[k],
                         c_first + 8 * a * row_stride + (8 * (b / 4) + b % 2) * column_stride);
          }
        }
      });
}

}  // namespace detail

/// Every element x of row r becomes x' = round(x 2^(bits_r - e_r)) (to nearest, ties to even,
/// |x'| < 2^94) and its symmetric residue modulo each of the L moduli is written to
/// residues(r, l * kpad + k).  Padding columns and rows are zero.
///
/// Exactness (detail, "Residues from bytes"): x 2^(bits - e) is one multiplication by a power
/// of two fused with the rounding, or two that keep every nonzero x' normal; x' is taken as the
/// bytes of one or two exact 64-bit patterns, whose weighted sum per modulus is an exact
/// integer below 2^19 congruent to x', reduced in FP32 exactly.  No conversion instruction is
/// used.  One thread per 4 consecutive k (for_each_quad) writes each modulus' 4 residues as one
/// 32-bit store.
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

/// crt_reconstruct's update of C from a pass's residue tiles instead of its INT32 products
/// (the residues each r_l of crt_reconstruct would take: the same bits).
template <class ExecSpace>
void crt_reconstruct_tiles(const ExecSpace& space, const CrtPassTiles& pass,
                           const CrtConstants& constants, const CrtRowScaling<ExecSpace>& rows_a,
                           const CrtRowScaling<ExecSpace>& rows_b, double alpha, double beta,
                           const typename Views<ExecSpace>::Matrix& C) {
  detail::with_moduli_count(constants.moduli, [&](auto count) {
    detail::crt_reconstruct_tiles_fixed<decltype(count)::value>(space, pass, constants, rows_a,
                                                                rows_b, alpha, beta, C);
  });
}

}  // namespace Impl
}  // namespace ozaki
