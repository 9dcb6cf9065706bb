#pragma once
/// \file split.hpp
/// Portable Kokkos kernels that turn FP64 rows into int8 slices (format.hpp).
///
/// Both operands are handled as "rows along K": op(A) is M x K and op(B)^T is N x K, so one
/// set of kernels serves both.  Three passes, each reading the operand once:
///   1. scale exponents and "any NaN/Inf?" (common/pass1.hpp)
///   2. row_magnitudes (only when S is chosen automatically): the row norms and coarse int8
///      magnitudes from which estimate.hpp bounds the split's relative error
///   3. split_rows: all S slices of every element, written in one fused pass.

#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/slices/format.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

/// Pass 2 (only when S is chosen automatically, see estimate.hpp).  Per row r:
///   scaled_l1(r) = sum_k |X(r,k)| 2^-e_r, at most K, so it cannot overflow;
///   magnitudes(r, k) = min(127, floor(|X(r,k)| 2^(7 + 7 level - e_r))) (zero in the padding
///   columns [K, kpad) and padding rows [rows, magnitudes.extent(0))),
/// so that an INT8 GEMM of two such arrays bounds |A||B| from below: every term is rounded
/// down (or clamped) and none can cancel.  Level 0 resolves entries down to 2^-7 of their row's
/// scale; each further level looks 7 binades deeper and clamps what it has already seen.
template <class ExecSpace>
void row_magnitudes(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                    const typename Views<ExecSpace>::Exponents& exponents, int level,
                    const typename Views<ExecSpace>::Digits& magnitudes,
                    const typename Views<ExecSpace>::Norms& scaled_l1) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  const std::int64_t K = X.extent(1);
  const std::int64_t rows = X.extent(0);
  const std::int64_t kpad = magnitudes.extent(1);
  const double level_scale = compat::ldexp(1.0, 7 + 7 * level);
  Kokkos::parallel_for(
      "ozaki::split::row_magnitudes", row_policy(space, magnitudes.extent(0)),
      KOKKOS_LAMBDA(const member_type& team) {
        const int r = team.league_rank();
        const int e = r < rows ? exponents(r) : 0;
        double l1 = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, kpad),
            [&](const std::int64_t k, double& sum) {
              const double scaled =
                  (k < K && r < rows) ? compat::ldexp(magnitude(X(r, k)), -e) : 0.0;
              const double v = scaled * level_scale;  // exact: a power-of-two scaling
              magnitudes(r, k) = static_cast<std::int8_t>(v >= 127 ? 127 : v);  // floor, clamped
              sum += scaled;
            },
            l1);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          if (r < rows) scaled_l1(r) = l1;
        });
      });
}

/// Pass 3.  Every element X(r,k) is read once and all its S digits are written:
/// digits(r, block(s) * kpad + k) with block(s) = s, or S-1-s when reversed.
/// Columns [K, kpad) of every block and rows [rows, digits.extent(0)) are zeroed, so GEMMs
/// over the padded storage add nothing.  Each call of the quad function writes each slice's
/// 4 digits as one aligned 32-bit store (kpad is a multiple of 16).
template <class ExecSpace>
void split_rows(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                const SliceStorage<ExecSpace>& out) {
  const auto digits = out.digits;
  const auto exponents = out.exponents;
  const int S = out.slices;
  const std::int64_t kpad = out.kpad;
  const bool reversed = out.reversed;
  const std::int64_t rows = X.extent(0);
  for_each_quad(
      "ozaki::split::split_rows", space, X, digits.extent(0), kpad,
      KOKKOS_LAMBDA(const int r) { return r < rows ? exponents(r) : 0; },
      KOKKOS_LAMBDA(const int e, const int r, const std::int64_t k, const double(&x)[4]) {
        const SplitElement v0(x[0], e, S), v1(x[1], e, S), v2(x[2], e, S), v3(x[3], e, S);
        for (int s = 0; s < S; ++s) {
          // Little-endian packing: byte j of the word is column k + j.
          const std::uint32_t word = std::uint32_t(std::uint8_t(v0.slice(s, S))) |
                                     std::uint32_t(std::uint8_t(v1.slice(s, S))) << 8 |
                                     std::uint32_t(std::uint8_t(v2.slice(s, S))) << 16 |
                                     std::uint32_t(std::uint8_t(v3.slice(s, S))) << 24;
          const int block = reversed ? S - 1 - s : s;
          // 4-byte aligned (rows are 256-byte aligned, kpad and k multiples of 4); reading
          // the bytes back through int8_t is allowed aliasing.
          *reinterpret_cast<std::uint32_t*>(&digits(r, block * kpad + k)) = word;
        }
      });
}

}  // namespace Impl
}  // namespace ozaki
