#pragma once
/// \file split.hpp
/// Portable Kokkos kernels that turn FP64 rows into int8 slices (slice_format.hpp).
///
/// Both operands are handled as "rows along K": op(A) is M x K and op(B)^T is N x K, so one
/// set of kernels serves both.  Three passes, each reading the operand once:
///   1. row_scale_exponents: per-row max |x| -> scale exponent, and "any NaN/Inf?"
///   2. row_magnitudes (only when S is chosen automatically): the row norms and coarse int8
///      magnitudes from which slice_count.hpp bounds the split's relative error
///   3. split_rows: all S slices of every element, written in one fused pass.

#include <ozaki/impl/schedule.hpp>
#include <ozaki/impl/slice_format.hpp>
#include <ozaki/impl/views.hpp>

#include <climits>
#include <cstdint>
#include <string>

namespace ozaki {
namespace Impl {

/// Exponent stored for a row that holds NaN or Inf (such inputs never reach the split).
constexpr int nonfinite_row = INT_MAX;

KOKKOS_INLINE_FUNCTION double positive_infinity() {
  const std::uint64_t bits = 0x7ff0000000000000ull;
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

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

/// Y = X for an X whose rows are not K-contiguous (op(A) of a column-major A, say), with Y
/// row-major (K-contiguous): the row kernels below read rows with consecutive threads along K,
/// which is coalesced on a GPU only when K is the contiguous index.  32 x 32 tiles go through
/// team scratch, read along X's contiguous index and written along K; the pitch of 33 keeps
/// the transposed reads free of bank conflicts.
///
/// The same pass does pass 1's reduction (so the copied operand is read once): each tile
/// stores its rows' maxima of |x| (+Inf for NaN/Inf) in tile_max(tile column, row), and
/// exponents_from_tile_max takes the max over the tile columns.  Plain stores: no atomics
/// (merging the maxima with atomics made the copy 60% slower on the H200, docs/benchmarks.md).
template <class ExecSpace>
void copy_to_k_contiguous(
    const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
    const Kokkos::View<double**, Kokkos::LayoutRight, typename Views<ExecSpace>::device_type>& Y,
    const Kokkos::View<double**, Kokkos::LayoutRight, typename Views<ExecSpace>::device_type>&
        tile_max) {
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  using member_type = typename policy_type::member_type;
  using Tile = Kokkos::View<double[32][33], typename ExecSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  static_assert(row_tile_columns == 32, "a copied tile is one tile of the row maxima");
  const std::int64_t tiles_r = (rows + 31) / 32, tiles_k = row_tiles(K);
  // 8 x 32 threads per tile on a GPU; a host space runs a team as one thread.
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
  policy_type policy(space, static_cast<int>(tiles_r * tiles_k), host ? 1 : 8, 32);
  policy.set_scratch_size(0, Kokkos::PerTeam(Tile::shmem_size()));
  Kokkos::parallel_for(
      "ozaki::split::copy_to_k_contiguous", policy, KOKKOS_LAMBDA(const member_type& team) {
        const std::int64_t tr = team.league_rank() % tiles_r, tk = team.league_rank() / tiles_r;
        const std::int64_t r0 = tr * 32, k0 = tk * 32;
        Tile tile(team.team_scratch(0));
        // Read: vector lanes along the rows index (X's contiguous one).
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 32), [&](const int kk) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, 32), [&](const int rr) {
            tile(kk, rr) = (r0 + rr < rows && k0 + kk < K) ? X(r0 + rr, k0 + kk) : 0.0;
          });
        });
        team.team_barrier();
        // Write: vector lanes along K (Y's contiguous index).
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 32), [&](const int rr) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, 32), [&](const int kk) {
            if (r0 + rr < rows && k0 + kk < K) Y(r0 + rr, k0 + kk) = tile(kk, rr);
          });
        });
        // Each row's max over the tile: one lane per row, reading down a column of the tile.
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, 32), [&](const int rr) {
          if (r0 + rr >= rows) return;
          double mu = 0;
          for (int kk = 0; kk < 32; ++kk) {
            const double x = tile(kk, rr);
            const double v = is_finite(x) ? magnitude(x) : positive_infinity();
            mu = v > mu ? v : mu;
          }
          tile_max(tk, r0 + rr) = mu;
        });
      });
}

/// Pass 1 for a copied operand: exponents from the tile maxima of copy_to_k_contiguous.
/// Returns true when some element was NaN or Inf.
template <class ExecSpace>
bool exponents_from_tile_max(const ExecSpace& space,
                             const Kokkos::View<double**, Kokkos::LayoutRight,
                                                typename Views<ExecSpace>::device_type>& tile_max,
                             const typename Views<ExecSpace>::Exponents& exponents) {
  const std::int64_t tiles = tile_max.extent(0);
  int nonfinite_rows = 0;
  Kokkos::parallel_reduce(
      "ozaki::split::exponents_from_tile_max",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                      exponents.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t r, int& bad) {
        double mu = 0;
        for (std::int64_t t = 0; t < tiles; ++t) mu = tile_max(t, r) > mu ? tile_max(t, r) : mu;
        const bool finite = is_finite(mu);
        exponents(r) = finite ? scale_exponent(mu) : nonfinite_row;
        if (!finite) ++bad;
      },
      Kokkos::Sum<int>(nonfinite_rows));
  return nonfinite_rows > 0;
}

/// Pass 1.  exponents(r) = scale_exponent(max_k |X(r,k)|), or nonfinite_row.
/// Returns true when some element of X is NaN or Inf.
template <class ExecSpace>
bool row_scale_exponents(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                         const typename Views<ExecSpace>::Exponents& exponents) {
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  using member_type = typename policy_type::member_type;
  const std::int64_t K = X.extent(1);
  int any_nonfinite = 0;
  Kokkos::parallel_reduce(
      "ozaki::split::row_scale_exponents", row_policy(space, X.extent(0)),
      KOKKOS_LAMBDA(const member_type& team, int& nonfinite) {
        const int r = team.league_rank();
        double mu = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, K),
            [&](const std::int64_t k, double& m) {
              const double x = X(r, k);
              // NaN and Inf map to +Inf so that one max reduction also flags them.
              const double v = is_finite(x) ? magnitude(x) : positive_infinity();
              if (v > m) m = v;
            },
            Kokkos::Max<double>(mu));
        const bool finite = is_finite(mu);
        // Every thread of the team holds mu and may count the row: only "> 0" matters.
        if (!finite) nonfinite += 1;
        Kokkos::single(Kokkos::PerTeam(team),
                       [&]() { exponents(r) = finite ? scale_exponent(mu) : nonfinite_row; });
      },
      Kokkos::Sum<int>(any_nonfinite));
  return any_nonfinite > 0;
}

/// Pass 2 (only when S is chosen automatically, see slice_count.hpp).  Per row r:
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
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
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

/// Row tiles of for_each_quad's transposing path: 32 rows x 128 columns of K.
constexpr int quad_tile_rows = 32;
constexpr int quad_tile_k = 128;

/// Calls f(r, k, x) for every row r < rows_out and every k = 0, 4, ..., kpad - 4, with
/// x[j] = X(r, k + j) (0 beyond X's rows and K): the shape of every kernel that turns rows
/// of FP64 into K-contiguous int8 (slices, residues, magnitudes), one thread per 4 k so that
/// each writes whole 32-bit words and a warp 128 contiguous bytes per output row.
///
/// K-contiguous X: one team per row, consecutive threads on consecutive k (coalesced reads).
/// Otherwise (op(A) of a column-major A, say) X is read in 32 x 128 tiles through team
/// scratch, consecutive lanes on consecutive rows (X's contiguous index), so that no FP64 copy
/// of X is needed.  The tile pitch of 129 keeps the transposed writes to scratch at most
/// 2-way bank-conflicted.
template <class ExecSpace, class QuadFunction>
void for_each_quad(const char* label, const ExecSpace& space,
                   const typename Views<ExecSpace>::ConstMatrix& X, std::int64_t rows_out,
                   std::int64_t kpad, const QuadFunction& f) {
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  using member_type = typename policy_type::member_type;
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  if (K <= 1 || X.stride(1) == 1) {
    Kokkos::parallel_for(
        label, row_policy(space, rows_out), KOKKOS_LAMBDA(const member_type& team) {
          const int r = team.league_rank();
          const bool real_row = r < rows;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kpad / 4),
                               [&](const std::int64_t quad) {
                                 const std::int64_t k = 4 * quad;
                                 double x[4];
                                 for (int j = 0; j < 4; ++j)
                                   x[j] = real_row && k + j < K ? X(r, k + j) : 0.0;
                                 f(r, k, x);
                               });
        });
    return;
  }
  using Tile = Kokkos::View<double[quad_tile_rows][quad_tile_k + 1],
                            typename ExecSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t tiles_r = (rows_out + quad_tile_rows - 1) / quad_tile_rows;
  const std::int64_t tiles_k = (kpad + quad_tile_k - 1) / quad_tile_k;
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
  policy_type policy(space, static_cast<int>(tiles_r * tiles_k), host ? 1 : 8, 32);
  policy.set_scratch_size(0, Kokkos::PerTeam(Tile::shmem_size()));
  Kokkos::parallel_for(
      label, policy, KOKKOS_LAMBDA(const member_type& team) {
        const std::int64_t r0 = (team.league_rank() % tiles_r) * quad_tile_rows;
        const std::int64_t k0 = (team.league_rank() / tiles_r) * quad_tile_k;
        Tile tile(team.team_scratch(0));
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, quad_tile_k), [&](const int kk) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, quad_tile_rows), [&](const int rr) {
            const std::int64_t r = r0 + rr, k = k0 + kk;
            tile(rr, kk) = r < rows && k < K ? X(r, k) : 0.0;
          });
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, quad_tile_rows), [&](const int rr) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, quad_tile_k / 4), [&](const int q) {
            const std::int64_t r = r0 + rr, k = k0 + 4 * q;
            if (r < rows_out && k < kpad) {
              double x[4];
              for (int j = 0; j < 4; ++j) x[j] = tile(rr, 4 * q + j);
              f(static_cast<int>(r), k, x);
            }
          });
        });
      });
}

/// Pass 1 for rows that are not K-contiguous, without copying them: one thread per row and
/// tile of row_tile_columns, consecutive threads on consecutive rows (X's contiguous index),
/// writing the tile's max |x| (+Inf for NaN/Inf) to tile_max(tile, row) for
/// exponents_from_tile_max.
template <class ExecSpace>
void strided_tile_max(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                      const Kokkos::View<double**, Kokkos::LayoutRight,
                                         typename Views<ExecSpace>::device_type>& tile_max) {
  const std::int64_t K = X.extent(1);
  grid_for(
      "ozaki::split::strided_tile_max", space, X.extent(0), row_tiles(K),
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t t) {
        const std::int64_t begin = t * row_tile_columns;
        const std::int64_t end = begin + row_tile_columns < K ? begin + row_tile_columns : K;
        double mu = 0;
        for (std::int64_t k = begin; k < end; ++k) {
          const double x = X(r, k);
          const double v = is_finite(x) ? magnitude(x) : positive_infinity();
          mu = v > mu ? v : mu;
        }
        tile_max(t, r) = mu;
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
      KOKKOS_LAMBDA(const int r, const std::int64_t k, const double(&x)[4]) {
        const int e = r < rows ? exponents(r) : 0;
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
