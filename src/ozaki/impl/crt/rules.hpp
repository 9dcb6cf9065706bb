#pragma once
/// \file rules.hpp
/// The definition of Ozaki scheme II (Algorithm::Int8Crt) that the Kokkos kernels and the
/// serial oracle share: constants, the range rule and the reconstruction constants.  Plain
/// C++ (no Kokkos), so that backends/serial can include it.  docs/design.md §5 derives it.
///
/// Scaling.  Row m of op(A) has the scale exponent e_m of scheme I (max |a_mk| <= 2^e_m) and
/// keeps b_m bits below it: a'_mk = round(a_mk 2^(b_m - e_m)) (to nearest, ties to even), an
/// integer with |a'_mk| < 2^b_m.  Columns of op(B) likewise with f_n and c_n.  The integer
/// product C'_mn = sum_k a'_mk b'_kn is recovered exactly from its residues modulo the moduli
/// m_1..m_L as long as |C'_mn| < M/2, M = m_1 ... m_L.  The scalings below guarantee
///     sum_k |a'_mk| |b'_kn| <= half_range = (M/2)(1 - 2^-16),
/// the margin covering the floating-point evaluation of the rule itself and leaving the
/// reconstruction's quotient at least 2^-17 away from a rounding tie.

#include <ozaki/errors.hpp>
#include <ozaki/options.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ozaki {
namespace Impl {

/// Most bits a row may keep: |a'| < 2^94, so that the residue kernels can cut a' into three
/// exact 32-bit pieces (residues.hpp).
constexpr int crt_max_bits = 94;
/// Fewest bits a row must keep; fewer means too few moduli for this K (an error).  At 16 or
/// more the accurate rule's rounding allowance (below) holds.
constexpr int crt_min_bits = 16;
/// Relative margin of half_range below M/2.
constexpr double crt_range_margin = 0x1p-16;
/// The reconstruction splits CRT weights into parts of this many bits (residues.hpp).
constexpr int crt_part_bits = 40;
/// Parts needed for max_moduli (M < 2^184).
constexpr int crt_max_parts = 5;
/// Parts for the first L moduli: every 5 of them add just under 40 bits (make_crt_constants
/// checks this against the bit length of M).
constexpr int crt_parts(int L) { return (L + 4) / 5; }

/// The symmetric residue range of modulus m: [crt_low(m), crt_high(m)].
constexpr int crt_high(int m) { return m % 2 == 0 ? m / 2 - 1 : (m - 1) / 2; }
constexpr int crt_low(int m) { return crt_high(m) - m + 1; }

/// (M/2)(1 - 2^-16) for the first L moduli, rounded below the true value (each of the L
/// roundings is relative 2^-53, far inside the margin).
inline double crt_half_range(int L) {
  double M = 1;
  for (int l = 0; l < L; ++l) M *= crt_moduli[l];
  return 0.5 * M * (1 - crt_range_margin);
}

/// log2 M for the first L moduli.
inline double crt_log2_range(int L) {
  double bits = 0;
  for (int l = 0; l < L; ++l) bits += std::log2(static_cast<double>(crt_moduli[l]));
  return bits;
}

/// Row norms, exact and independent of the order of summation, so that every backend and the
/// oracle choose the same bits (docs/design.md §5.1).  Each row is read once, in norm tiles of
/// up to 32 elements (common/kernels.hpp, norm_tiles); tile t with exponent e_t (the scale
/// exponent of its largest magnitude, so |x 2^-e_t| <= 1) sums the quanta
///     s2(x) = max(1, ceil(|x| 2^(16-e_t))) for x != 0, else 0;   s1(x) = floor(|x| 2^(31-e_t))
/// into S2_t = sum s2^2 and S1_t = sum s1, and with the row's exponent e = max_t e_t:
///     n_r  = sqrt(sum_t ceil(S2_t 4^(e_t-e))) 2^-16,   l1_r = (sum_t floor(S1_t 2^(e_t-e))) 2^-31
/// All sums are integers summed in 64 bits (exact for K < 2^32); n_r bounds ||x_r 2^-e||_2
/// from above, as the fast rule needs (up to the rounding of the integer to double, relative
/// 2^-53, which the range margin covers), n_r^2 exceeding it by at most 2^-15 + 2^-32 per element
/// and 2^-32 per tile; l1_r bounds ||x_r 2^-e||_1 from below within 2^-31 per element and per
/// tile, as the models need.
constexpr int crt_l2_quantum_bits = 16;
constexpr int crt_l1_quantum_bits = 31;

/// Fast (Cauchy-Schwarz) rule.  With |a'_mk| <= |a_mk| 2^(b_m-e_m) + 1/2,
///     sum_k |a'_mk||b'_kn| <= ||a'_m||_2 ||b'_n||_2 <= (2^b_m n_m + sqrt(K)/2)(2^c_n n_n +
///     sqrt(K)/2)
/// where n_m = ||a_m||_2 2^-e_m.  So 2^b_m n_m <= T and 2^c_n n_n <= T with
///     T = sqrt(half_range) - sqrt(K)/2
/// suffice: b_m = floor(log2(T / n_m)).  Returns T (0 or less: no bits at all).
inline double crt_fast_target(int L, std::int64_t K) {
  return std::sqrt(crt_half_range(L)) - 0.5 * std::sqrt(static_cast<double>(K));
}

/// Accurate rule.  With the 7-bit magnitudes q(a) = ceil(|a| 2^(7-e_m)) in [0, 127] (0 only
/// for a = 0) and P_mn = sum_k q(a_mk) q(b_kn) (one INT8 GEMM), |a'| <= 2^(b-7) q(a) + 1/2
/// <= 2^(b-7) q(a) (1 + 2^(6-b)) because q(a) >= 1 wherever a' != 0.  For b, c >= 16:
///     sum_k |a'||b'| <= 2^(b+c-14) P_mn (1 + 2^-10)^2 <= 2^(b+c-14) P_mn (1 + 2^-8).
/// So b_m + c_n <= lambda_mn = floor(log2(accurate_range / P_mn)) + 14 suffices, with
/// accurate_range = half_range / (1 + 2^-8).
inline double crt_accurate_range(int L) { return crt_half_range(L) / (1 + 0x1p-8); }

/// Auto scaling's test: peak = max over rows of sqrt(K) ||x_r||_2 / ||x_r||_1 (1 for rows of
/// equal magnitudes, about 1.3 for phi = 0.5, large for wide exponent ranges).  Cauchy-Schwarz
/// overestimates |A||B| by about peak_A * peak_B; beyond 8 (3 bits, about half a modulus) the
/// accurate rule's extra product pays for itself.
constexpr double crt_accurate_peak = 8;

/// An automatic count under a scaling rule that may be fast (Auto, Fast) and a peak product
/// in (crt_accurate_peak, crt_fast_extended_peak] keeps the fast rule with
/// crt_fast_extra_moduli more than its model asks for, instead of the accurate rule's bound
/// product and estimate.  Measured on the host (the benchmarks diary in docs/history/, host
/// analysis "can the fast rule's count serve moderately wide ranges?"): the model's count
/// plus one kept native FP64's error with a margin of 6x or more on six shapes up
/// to phi = 2.5, where peak products reach the hundreds; it failed only at phi = 4 on few-row
/// shapes (a single concentrated row meeting small elements of a column), whose peak products
/// are in the thousands.  At 8192^3, phi = 1 has 11.2 (phi = 0.5: 1.8).
constexpr double crt_fast_extended_peak = 32;
constexpr int crt_fast_extra_moduli = 1;

/// Which rule an automatic count takes for a peak product K q_A q_B.
enum class CrtPeakClass {
  Fast,          // <= crt_accurate_peak: the fast rule's model holds
  FastExtended,  // <= crt_fast_extended_peak: the fast rule with crt_fast_extra_moduli more
  Accurate,      // beyond: the accurate rule
};

/// The peak product K q_A q_B (q = max_r n_r / l1_r of each operand).
inline double crt_peak_product(std::int64_t K, double q_a, double q_b) {
  return static_cast<double>(K) * q_a * q_b;
}

inline CrtPeakClass crt_peak_class(std::int64_t K, double q_a, double q_b) {
  const double peak = crt_peak_product(K, q_a, q_b);
  if (!(peak > crt_accurate_peak)) return CrtPeakClass::Fast;
  return peak <= crt_fast_extended_peak ? CrtPeakClass::FastExtended : CrtPeakClass::Accurate;
}

/// Modelled typical error relative to |A||B| of the fast rule with L moduli (docs/design.md
/// §5): the split of row m rounds each element by up to 2^(e_m - b_m - 1) with random signs,
/// and with entries of |A||B| near their mean-field value ||a_m||_1 ||b_n||_1 / K,
///     error_mn ~ sqrt(K) (2^-(b_m+1) / l1_m + 2^-(c_n+1) / l1_n),   l1_m = ||a_m||_1 2^-e_m.
/// With 2^-b_m <= 2 n_m / T: error <= sqrt(K) (q_A + q_B) / T, q = max_r n_r / l1_r.
inline double crt_fast_model(int L, std::int64_t K, double q_a, double q_b) {
  const double T = crt_fast_target(L, K);
  if (!(T > 0)) return HUGE_VAL;
  return std::sqrt(static_cast<double>(K)) * (q_a + q_b) / T;
}

/// Smallest L whose modelled error model(L) meets the target u, the unit roundoff of the
/// accuracy promised (CallPlan::unit_roundoff; max_moduli if none does): the search every
/// automatic count makes, whatever its model.  Scheme I's target is the same
/// (slices/accuracy.hpp).
template <class Model>
int crt_smallest_moduli(const Model& model, double u) {
  for (int L = min_moduli; L < max_moduli; ++L) {
    if (model(L) <= u) return L;
  }
  return max_moduli;
}

/// Smallest L whose fast-rule model meets the target u (max_moduli if none does).
inline int crt_fast_moduli(std::int64_t K, double q_a, double q_b, double u) {
  return crt_smallest_moduli([&](int L) { return crt_fast_model(L, K, q_a, q_b); }, u);
}

/// The automatic count under the fast rule: the model's, plus crt_fast_extra_moduli for
/// FastExtended peaks.
inline int crt_fast_auto_moduli(std::int64_t K, double q_a, double q_b, double u) {
  const int extra =
      crt_peak_class(K, q_a, q_b) == CrtPeakClass::FastExtended ? crt_fast_extra_moduli : 0;
  const int L = crt_fast_moduli(K, q_a, q_b, u) + extra;
  return L < max_moduli ? L : max_moduli;
}

/// The moduli count Auto assumes before any work: the fast rule's choice for uniformly
/// distributed data (n_r / l1_r = 2 / sqrt(3 K)), the mildest real data.
inline int crt_first_guess(std::int64_t K, double u) {
  const double q = 2 / std::sqrt(3.0 * static_cast<double>(K));
  return crt_fast_moduli(K, q, q, u);
}

/// Smallest L for the accurate rule, given the modelled error `error_at_max` found with
/// max_moduli (scaling.hpp, crt_model_error: the scheme I model of accuracy.hpp with per-row bits
/// and lower bounds of (|A||B|)_mn from INT8 magnitudes): each modulus fewer shrinks the range
/// by its bits, split between the two operands, so the error grows by sqrt(M_max / M_L).
inline int crt_accurate_moduli(double error_at_max, double u) {
  if (!(error_at_max < HUGE_VAL)) return max_moduli;
  const double top = crt_log2_range(max_moduli);
  return crt_smallest_moduli(
      [&](int L) { return error_at_max * std::exp2(0.5 * (top - crt_log2_range(L))); }, u);
}

/// Counted fast rule: the fast rule's bits with the count taken from a lower bound of
/// (|A||B|)_mn instead of the mean-field value, for the wide exponent ranges whose peaks the
/// fast model does not cover (CrtPeakClass::Accurate).  Each row r gets a window shift s_r
/// (crt_window_shift: the row's mean magnitude l1_r / K lands near 2^(7-3) = 16 units of the
/// window) and window magnitudes
///     p(x) = min(127, floor(|x| 2^(7+s_r-e_r)))  in [0, 127]
/// (exact: a power-of-two scaling, a truncation and a clip, each only lowering |x|), and
/// Plo_mn = sum_k p(a_mk) p(b_kn) (one INT8 GEMM): (|A||B|)_mn >= 2^(e_m-s_m+f_n-s_n-14) Plo_mn.
/// The window, not the row's top 7 bits, is what the lower bound needs: at phi = 2 most
/// elements lie more than 2^7 below their row's largest, and with the top window some
/// (|A||B|)_mn of a 128 x 128 x 8192 product had no pair of visible elements at all (host
/// analysis in the benchmarks diary, docs/history/).  The split's rounding errors, up to 1/2
/// unit with random signs as in crt_fast_model, give
///     error_mn ~ (2^(e_m-b_m-1) ||b_n||_2 + 2^(f_n-c_n-1) ||a_m||_2) / (|A||B|)_mn
///             <= 2^13 (2^-b_m n_n + 2^-c_n n_m) 2^(s_m+s_n) / Plo_mn
///             <= 2^15 G_mn / T,   G_mn = n_m n_n 2^(s_m+s_n) / Plo_mn   (2^-b_m < 2 n_m / T)
/// so the model is 2^15 G / T with G = max_mn G_mn (+Inf where some Plo_mn = 0 under nonzero
/// norms: an entry the lower bound cannot see).  Unlike the mean-field model it sees how the two
/// operands' spreads line up (anti-aligned rows: small (|A||B|)_mn under large norms).  G is the
/// same on every backend: exact integer norms and Plo, then one rounded product, one rounded
/// division and an exact power of two per entry, and a max.
constexpr double crt_counted_model_scale = 0x1p15;
/// crt_window_shift puts the mean magnitude l1_r / K of a row at crt_window_mean_factor
/// times the window's top 2^-s (within a factor 2); shifts are capped at crt_max_window_shift.
constexpr double crt_window_mean_factor = 8;
constexpr int crt_max_window_shift = 60;

inline double crt_counted_model(int L, std::int64_t K, double G) {
  const double T = crt_fast_target(L, K);
  if (!(T > 0) || !(G < HUGE_VAL)) return HUGE_VAL;
  return crt_counted_model_scale * G / T;
}

/// Smallest L whose counted model meets the target u (max_moduli if none does, or G = +Inf).
inline int crt_counted_moduli(std::int64_t K, double G, double u) {
  return crt_smallest_moduli([&](int L) { return crt_counted_model(L, K, G); }, u);
}

/// Throws when the bits a rule left are too few (too few moduli for this K).
inline void check_crt_bits(int fewest_bits, int L, std::int64_t K) {
  if (fewest_bits < crt_min_bits) {
    throw InvalidArgument("Int8Crt: " + std::to_string(L) + " moduli leave only " +
                          std::to_string(fewest_bits) +
                          " bits per element at K = " + std::to_string(K) + " (at least " +
                          std::to_string(crt_min_bits) + " are needed): use more moduli");
  }
}

/// Reconstruction constants for the first L moduli (residues.hpp uses them).  With
/// w_l = (M/m_l) * ((M/m_l)^-1 mod m_l), C' = sum_l w_l r_l - k M for the integer k nearest
/// to sum_l w_l r_l / M.  Every w_l (and M) is cut into `parts` pieces of 40 bits,
///     w_l = sum_p weight[l][p] 2^(E - 40(p+1)),   E = bit length of M,
/// so that every partial sum sum_l weight[l][p] r_l is an exact FP64 integer:
/// |r_l| <= 129, weight < 2^40, L <= 24: below 2^51.6.
struct CrtConstants {
  int moduli = 0;
  int parts = 0;
  int top_exponent = 0;             // E - 40: the exponent of part 0
  double modulus[max_moduli] = {};  // m_l
  double inverse[max_moduli] = {};  // 1 / m_l, rounded
  double weight[max_moduli][crt_max_parts] = {};
  double range[crt_max_parts] = {};     // M in the same parts
  double quotient[crt_max_parts] = {};  // 2^(E - 40(p+1)) / M, rounded
  // The residue kernels' arithmetic (residues.hpp, "Residues from bytes"): 1 / m_l rounded to
  // float, -m_l modulo 2^32, the symmetric residues of the byte positions of x''s words as
  // signed bytes, four to a word (byte_weight[l][w]: bytes 4w .. 4w + 3 of the 64-bit word
  // pair for w = 0, 1; of the top pair, at 2^48 and up, for w = 2, 3), and each word form's
  // start, 1.5 2^23's bit pattern less the residue of the bias the words carry.
  float inverse_f[max_moduli] = {};
  // -m_l modulo 2^32, for residue_word's integer step: one multiply-add (IMAD) where
  // subtracting a product of m_l takes an IMAD and an IADD3 (in the SASS).
  std::uint32_t minus_modulus_u[max_moduli] = {};
  std::uint32_t byte_weight[max_moduli][4] = {};
  std::uint32_t word_start[max_moduli][2] = {};
  // The same sums on hosts (residues.hpp, shifted_congruent), in FP64 on whole 32-bit words:
  // the symmetric residues of 2^32, 2^48 and 2^80 modulo m_l, and of each form's bias.
  double word_weight[max_moduli][3] = {};
  double bias_residue[max_moduli][2] = {};
};

/// The first modulus is 256 (crt_moduli): a residue modulo 256 is the low byte of x' as two's
/// complement, which the residue kernels take without arithmetic (residues.hpp).
static_assert(crt_moduli[0] == 256, "the residue kernels take modulus 0 as the low byte");

/// The bias of the residue kernels' words: x' + crt_word_bias is the bit pattern of the double
/// 1.5 2^52 + x' for |x'| < 2^51 (residues.hpp, "Residues from bytes").
constexpr std::uint64_t crt_word_bias = 0x4338000000000000ull;

/// The bit pattern of the float 1.5 2^23: that of 1.5 2^23 + y is this plus y for an integer
/// |y| < 2^22.
constexpr std::uint32_t crt_float_shift_bits = 0x4B400000u;

/// The bit position of the top word pair of rows wider than 62 bits: x' = top 2^48 + bottom.
constexpr int crt_top_position = 48;

namespace detail {

/// Unsigned multi-word integer, 32-bit words, least significant first.
using BigNatural = std::vector<std::uint32_t>;

inline void multiply_small(BigNatural& x, std::uint32_t v) {
  std::uint64_t carry = 0;
  for (auto& word : x) {
    const std::uint64_t t = std::uint64_t(word) * v + carry;
    word = static_cast<std::uint32_t>(t);
    carry = t >> 32;
  }
  if (carry != 0) x.push_back(static_cast<std::uint32_t>(carry));
}

inline int bit_length(const BigNatural& x) {
  for (int w = static_cast<int>(x.size()) - 1; w >= 0; --w) {
    if (x[w] != 0) {
      int b = 32;
      while (!((x[w] >> (b - 1)) & 1u)) --b;
      return 32 * w + b;
    }
  }
  return 0;
}

/// Bits [low, low + count) of x as an integer (bits below 0 read as zero), count <= 52.
inline double bit_field(const BigNatural& x, int low, int count) {
  std::uint64_t v = 0;
  for (int i = count - 1; i >= 0; --i) {
    const int bit = low + i;
    const bool set =
        bit >= 0 && bit / 32 < static_cast<int>(x.size()) && ((x[bit / 32] >> (bit % 32)) & 1u);
    v = (v << 1) | (set ? 1u : 0u);
  }
  return static_cast<double>(v);
}

inline int inverse_mod(int a, int m) {
  // Extended Euclid; a and m coprime.
  int t = 0, new_t = 1, r = m, new_r = a % m;
  while (new_r != 0) {
    const int q = r / new_r;
    const int tt = t - q * new_t;
    t = new_t;
    new_t = tt;
    const int rr = r - q * new_r;
    r = new_r;
    new_r = rr;
  }
  return t < 0 ? t + m : t;
}

}  // namespace detail

inline CrtConstants make_crt_constants(int L) {
  CrtConstants c;
  c.moduli = L;
  detail::BigNatural M{1};
  for (int l = 0; l < L; ++l) detail::multiply_small(M, static_cast<std::uint32_t>(crt_moduli[l]));
  const int E = detail::bit_length(M);
  c.parts = (E + crt_part_bits - 1) / crt_part_bits;
  if (c.parts != crt_parts(L)) throw std::logic_error("crt_parts disagrees with the moduli");
  c.top_exponent = E - crt_part_bits;
  double M_double = 0;
  for (int p = 0; p < c.parts; ++p) {
    const int low = E - crt_part_bits * (p + 1);
    c.range[p] = detail::bit_field(M, low, crt_part_bits);
    M_double += std::ldexp(c.range[p], low);
  }
  for (int p = 0; p < c.parts; ++p) {
    c.quotient[p] = std::ldexp(1.0, E - crt_part_bits * (p + 1)) / M_double;
  }
  for (int l = 0; l < L; ++l) {
    const int m = crt_moduli[l];
    c.modulus[l] = m;
    c.inverse[l] = 1.0 / m;
    c.minus_modulus_u[l] = 0u - static_cast<std::uint32_t>(m);
    c.inverse_f[l] = static_cast<float>(1.0 / m);  // 1/m rounded once more: within 2^-24
    // The residue of 2^position modulo m, and a residue as the symmetric one.
    const auto power_mod = [m](int position) {
      std::uint64_t w = 1 % m;
      for (int b = 0; b < position; ++b) w = w * 2 % m;
      return w;
    };
    const auto symmetric = [m](std::uint64_t w) {
      return static_cast<int>(w) > crt_high(m) ? static_cast<int>(w) - m : static_cast<int>(w);
    };
    for (int w = 0; w < 4; ++w) {
      const int first = w < 2 ? 32 * w : crt_top_position + 32 * (w - 2);
      std::uint32_t packed = 0;
      for (int i = 0; i < 4; ++i) {
        const auto byte = static_cast<std::uint8_t>(symmetric(power_mod(first + 8 * i)));
        packed |= static_cast<std::uint32_t>(byte) << (8 * i);
      }
      c.byte_weight[l][w] = packed;
    }
    // bias mod m, and bias (1 + 2^48) mod m: the words' bias (of one pair, or of two).
    const std::uint64_t bias = crt_word_bias % static_cast<std::uint64_t>(m);
    const std::uint64_t both = bias * ((1 + power_mod(crt_top_position)) % m) % m;
    c.word_start[l][0] = crt_float_shift_bits - static_cast<std::uint32_t>(symmetric(bias));
    c.word_start[l][1] = crt_float_shift_bits - static_cast<std::uint32_t>(symmetric(both));
    c.word_weight[l][0] = symmetric(power_mod(32));
    c.word_weight[l][1] = symmetric(power_mod(crt_top_position));
    c.word_weight[l][2] = symmetric(power_mod(crt_top_position + 32));
    c.bias_residue[l][0] = symmetric(bias);
    c.bias_residue[l][1] = symmetric(both);
    // w_l = (M / m_l) * inverse((M / m_l) mod m_l).
    detail::BigNatural w{1};
    int others_mod_m = 1;
    for (int j = 0; j < L; ++j) {
      if (j == l) continue;
      detail::multiply_small(w, static_cast<std::uint32_t>(crt_moduli[j]));
      others_mod_m = others_mod_m * (crt_moduli[j] % m) % m;
    }
    detail::multiply_small(w, static_cast<std::uint32_t>(detail::inverse_mod(others_mod_m, m)));
    for (int p = 0; p < c.parts; ++p) {
      c.weight[l][p] = detail::bit_field(w, E - crt_part_bits * (p + 1), crt_part_bits);
    }
  }
  return c;
}

/// make_crt_constants(L) for L = min_moduli .. max_moduli, made once per process (making one
/// is not free, and the pipeline needs them on every call, between its host wait and the
/// residues' launch, where the GPU waits for the host).  A plain array of a trivially
/// destructible type: nothing is destroyed at exit, so calls made while static destructors
/// run (the exit tests) still find it.
inline const CrtConstants& crt_constants(int L) {
  using Table = std::array<CrtConstants, max_moduli - min_moduli + 1>;
  static_assert(std::is_trivially_destructible<Table>::value, "crt_constants outlives exit");
  static const Table table = [] {
    Table t;
    for (int l = min_moduli; l <= max_moduli; ++l) t[l - min_moduli] = make_crt_constants(l);
    return t;
  }();
  if (L < min_moduli || L > max_moduli) {
    throw std::logic_error("crt_constants: " + std::to_string(L) + " moduli");
  }
  return table[L - min_moduli];
}

}  // namespace Impl
}  // namespace ozaki
