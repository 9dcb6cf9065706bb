#pragma once
/// \file karatsuba.hpp
/// Scheme II on complex data by Karatsuba (docs/design.md §8): the residues of the real parts,
/// the imaginary parts and their sums, and the reconstruction of both parts from the three
/// INT8 products per modulus.  The operands are complex rows as real rows of 2K interleaved
/// (real, imaginary) parts, scaled by the real pipeline as rows of length 2K.
///
///   T1 = res(Xr) res(Yr)^T,  T2 = res(Xi) res(Yi)^T,  T3 = res(Xr + Xi) res(Yr + Yi)^T
///   Re C' = T1 - T2,  Im C' = T3 - T1 - T2   (mod m, exactly: every product is an exact
///                                             integer congruent to its scaled one)
///
/// Each part's residue is then the symmetric residue modulo m, which is unique (for m = 256 a
/// tie is absorbed by the reconstruction, as in the real kernel), so that the CRT gives
/// exactly the C' of the real embedding's products with the same bits, and the same C.

#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/crt/residues.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>

namespace ozaki {
namespace Impl {

/// Complex rows that a call captured into a graph copies into its own scratch as the real rows
/// of 2K interleaved parts it multiplies (crt/captured.hpp): empty where those rows are read in
/// place.
template <class ExecSpace>
struct CrtComplexRowsToCopy {
  typename Views<ExecSpace>::ConstComplexMatrix rows;
  bool conjugate = false;
  bool empty() const { return rows.data() == nullptr; }
};

/// Where a complex pass writes: C = alpha C' 2^(...) + beta C.  `per_part`: alpha and beta are
/// real and each part is updated as the real kernel updates a real C (the real embedding's
/// direct path); otherwise the complex update of the embedding's combine pass.  The same
/// arithmetic as the path the embedding takes for the same call, so both give the same bits.
template <class ExecSpace>
struct CrtComplexTarget {
  typename Views<ExecSpace>::ComplexMatrix C;
  Kokkos::complex<double> alpha, beta;
  bool per_part = true;
  /// Set by the pipeline when the data needs the accurate scaling rule, which the Karatsuba
  /// form does not run: the driver then takes the real embedding (C untouched).
  bool* needs_embedding = nullptr;
  /// For a call captured into a graph: the rows of the real call's op(A) and op(B)^T to copy
  /// (the real call's are then placeholders of the copies' shape, which nothing reads before
  /// the copies are made), and native ZGEMM of the whole call on a given instance.
  CrtComplexRowsToCopy<ExecSpace> copy_x, copy_y;
  std::function<void(const ExecSpace&)> native_on;
  /// herk: C's diagonal is real, as BLAS defines it: its entries are written with imaginary
  /// part zero, and the imaginary parts of beta C's diagonal are not read.
  bool real_diagonal = false;
  /// One operand for both sides, one of them conjugated (herk: A A^H): the real call's op(A)
  /// and op(B)^T are the same unconjugated rows, and the conjugated side's residues negate the
  /// imaginary parts as they are made (exact: the residues of a conjugated copy).
  bool conjugate_x = false, conjugate_y = false;
};

namespace detail {

/// One quad's 3L words of Karatsuba residues: block 3l + part of row r for part = real,
/// imaginary, and their sum.
template <int L, bool two_words, class Digits>
KOKKOS_INLINE_FUNCTION void write_complex_residue_words(const ScaledPatterns (&re)[4],
                                                        const ScaledPatterns (&im)[4],
                                                        const CrtConstants& c,
                                                        const Digits& residues, std::int64_t r,
                                                        std::int64_t kpad, std::int64_t k0) {
  // Modulus 256: the low bytes of the low words, and of their sums (x_re' + x_im' modulo 2^32).
  // Aligned: rows are 256-byte aligned, kpad and k0 are multiples of 4.
  std::uint32_t sums[4];
  for (int j = 0; j < 4; ++j) sums[j] = re[j].bottom.low + im[j].bottom.low;
  *reinterpret_cast<std::uint32_t*>(&residues(r, k0)) = low_byte_word(re);
  *reinterpret_cast<std::uint32_t*>(&residues(r, kpad + k0)) = low_byte_word(im);
  *reinterpret_cast<std::uint32_t*>(&residues(r, 2 * kpad + k0)) = pack_low_bytes(sums);
#pragma unroll
  for (int l = 1; l < L; ++l) {
    std::uint32_t w_re[4], w_im[4], w_sum[4];
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t s_re = shifted_congruent<two_words>(re[j], c, l);
      const std::uint32_t s_im = shifted_congruent<two_words>(im[j], c, l);
      w_re[j] = residue_word(s_re, c, l);
      w_im[j] = residue_word(s_im, c, l);
      // 1.5 2^23 + y_re + y_im (|y_re + y_im| < 2^20): congruent to x_re' + x_im'.
      w_sum[j] = residue_word(s_re + s_im - crt_float_shift_bits, c, l);
    }
    // Aligned: rows are 256-byte aligned, kpad and k0 are multiples of 4.
    *reinterpret_cast<std::uint32_t*>(&residues(r, (3 * l) * kpad + k0)) = pack_low_bytes(w_re);
    *reinterpret_cast<std::uint32_t*>(&residues(r, (3 * l + 1) * kpad + k0)) = pack_low_bytes(w_im);
    *reinterpret_cast<std::uint32_t*>(&residues(r, (3 * l + 2) * kpad + k0)) =
        pack_low_bytes(w_sum);
  }
}

template <int L, class ExecSpace>
void crt_complex_residues_fixed(const ExecSpace& space,
                                const typename Views<ExecSpace>::ConstMatrix& X,
                                const CrtRowScaling<ExecSpace>& scaling, const CrtConstants& c,
                                const typename Views<ExecSpace>::Digits& residues, bool conjugate) {
  const auto exponents = scaling.exponents;
  const double im_sign = conjugate ? -1.0 : 1.0;
  const auto bits = scaling.bits;
  const std::int64_t rows = X.extent(0), K = X.extent(1) / 2;
  const std::int64_t kpad = residues.extent(1) / (3 * L);
  // Consecutive threads on consecutive quads of k: each reads 8 consecutive doubles of its
  // row, and writes one 32-bit word per modulus and part.
  grid_for(
      "ozaki::crt::complex_residues", space, kpad / 4, residues.extent(0),
      KOKKOS_LAMBDA(const std::int64_t q, const std::int64_t r) {
        const std::int64_t k0 = 4 * q;
        const int b = r < rows ? bits(r) : 0;
        const CrtRowScale scale = crt_row_scale(b, r < rows ? b - exponents(r) : 0);
        double x_re[4], x_im[4];
        for (int j = 0; j < 4; ++j) {
          const std::int64_t k = k0 + j;
          const bool inside = r < rows && k < K;
          x_re[j] = inside ? X(r, 2 * k) : 0.0;
          x_im[j] = inside ? im_sign * X(r, 2 * k + 1) : 0.0;
        }
        // One branch per row (a block works on one row).
        with_row_form(scale, [&](auto two_words, const auto& patterns) {
          ScaledPatterns re[4], im[4];
          for (int j = 0; j < 4; ++j) {
            re[j] = patterns(x_re[j]);
            im[j] = patterns(x_im[j]);
          }
          write_complex_residue_words<L, decltype(two_words)::value>(re, im, c, residues, r, kpad,
                                                                     k0);
        });
      });
}

template <int L, class ExecSpace>
void crt_complex_reconstruct_fixed(const ExecSpace& space, const CrtPassProducts<ExecSpace>& pass,
                                   const CrtConstants& c, const CrtRowScaling<ExecSpace>& rows_a,
                                   const CrtRowScaling<ExecSpace>& rows_b,
                                   const CrtComplexTarget<ExecSpace>& target) {
  const auto P = pass.products;
  const auto C = target.C;
  const std::int64_t chunks = pass.chunks, n0 = pass.n0;
  const CrtPassEntries entries = pass.entries;
  const std::int64_t first = entries.first_row;
  const auto exponents_a = rows_a.exponents, bits_a = rows_a.bits;
  const auto exponents_b = rows_b.exponents, bits_b = rows_b.bits;
  const Kokkos::complex<double> alpha = target.alpha, beta = target.beta;
  const bool per_part = target.per_part, real_diagonal = target.real_diagonal;
  const bool no_beta = beta.real() == 0 && beta.imag() == 0;
  // Several entries per thread, as the real reconstruction (kernels.hpp).
  grid_for<reconstruction_rows_per_team>(
      "ozaki::crt::complex_reconstruct", space, pass_rows(entries, C.extent(0)), pass.width,
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        const std::int64_t m = first + i, n = n0 + j;
        if (!entries.holds(m, n)) return;
        // All 3 L loads (of the first chunk) first: they are independent, and issuing them
        // together is what keeps the kernel at memory bandwidth (as in the real kernel).
        double t1[L], t2[L], t3[L];
#pragma unroll
        for (int l = 0; l < L; ++l) {
          t1[l] = P((3 * l) * chunks, j, m);
          t2[l] = P((3 * l + 1) * chunks, j, m);
          t3[l] = P((3 * l + 2) * chunks, j, m);
        }
        for (std::int64_t ch = 1; ch < chunks; ++ch) {
#pragma unroll
          for (int l = 0; l < L; ++l) {
            t1[l] += P((3 * l) * chunks + ch, j, m);
            t2[l] += P((3 * l + 1) * chunks + ch, j, m);
            t3[l] += P((3 * l + 2) * chunks + ch, j, m);
          }
        }
        double re[L], im[L];
#pragma unroll
        for (int l = 0; l < L; ++l) {
          re[l] = symmetric_residue(t1[l] - t2[l], c, l);
          im[l] = symmetric_residue(t3[l] - t1[l] - t2[l], c, l);
        }
        const int e = c.top_exponent + exponents_a(m) - bits_a(m) + exponents_b(n) - bits_b(n);
        const bool diagonal_real = real_diagonal && m == n;
        const double ab_re = compat::ldexp(crt_value<L>(re, c), e);
        const double ab_im = diagonal_real ? 0.0 : compat::ldexp(crt_value<L>(im, c), e);
        if (diagonal_real) {
          // herk: alpha and beta are real.
          const double a = alpha.real(), b = beta.real();
          C(m, n) =
              Kokkos::complex<double>(b == 0 ? a * ab_re : a * ab_re + b * C(m, n).real(), 0.0);
        } else if (per_part) {
          const double a = alpha.real(), b = beta.real();
          const Kokkos::complex<double> old = b == 0 ? Kokkos::complex<double>() : C(m, n);
          C(m, n) = Kokkos::complex<double>(b == 0 ? a * ab_re : a * ab_re + b * old.real(),
                                            b == 0 ? a * ab_im : a * ab_im + b * old.imag());
        } else {
          const Kokkos::complex<double> p(ab_re, ab_im);
          C(m, n) = no_beta ? alpha * p : alpha * p + beta * C(m, n);
        }
      });
}

}  // namespace detail

/// Karatsuba's residues of complex rows (X: rows x 2K, interleaved parts, scaled per row as
/// crt_residues scales): residues(r, (3l + part) kpad + k) is the symmetric residue modulo
/// m_l of the scaled real part (part 0), imaginary part (1) or their sum (2) of element k;
/// `conjugate`: of the rows' conjugates (imaginary parts negated, exactly: the scaling, a
/// function of magnitudes, is the same).
template <class ExecSpace>
void crt_complex_residues(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                          const CrtRowScaling<ExecSpace>& scaling, const CrtConstants& constants,
                          const typename Views<ExecSpace>::Digits& residues, bool conjugate) {
  detail::with_moduli_count(constants.moduli, [&](auto count) {
    detail::crt_complex_residues_fixed<decltype(count)::value>(space, X, scaling, constants,
                                                               residues, conjugate);
  });
}

/// Both parts of C(m, n0 + j) from the three INT32 products per modulus of one pass
/// (products((3l + part) chunks + chunk, j, m)).
template <class ExecSpace>
void crt_complex_reconstruct(const ExecSpace& space, const CrtPassProducts<ExecSpace>& pass,
                             const CrtConstants& constants, const CrtRowScaling<ExecSpace>& rows_a,
                             const CrtRowScaling<ExecSpace>& rows_b,
                             const CrtComplexTarget<ExecSpace>& target) {
  detail::with_moduli_count(constants.moduli, [&](auto count) {
    detail::crt_complex_reconstruct_fixed<decltype(count)::value>(space, pass, constants, rows_a,
                                                                  rows_b, target);
  });
}

}  // namespace Impl
}  // namespace ozaki
