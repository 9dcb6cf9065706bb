#pragma once
/// \file pass1.hpp
/// Pass 1 of both schemes: every row of op(A) and op(B)^T gets its scale exponent, the
/// smallest e with max |x| <= (127/128) 2^e, and the pass says whether any element is NaN or
/// Inf (such inputs never reach a split: native FP64 GEMM gives the IEEE result).
///
/// Rows are read one of three ways (OperandPlan): K-contiguous rows row by row
/// (row_scale_exponents); strided rows in place, per tile of 32 columns
/// (strided_tile_max + exponents_from_tile_max); or, on GPU spaces where a later kernel must
/// read them along K, through a K-contiguous copy made in the same pass (copy_to_k_contiguous).

#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/views.hpp>

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// True for every double except +-Inf and NaN.  Bitwise, so that -ffast-math cannot fold it.
KOKKOS_INLINE_FUNCTION bool is_finite(double x) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return ((bits >> 52) & 0x7ff) != 0x7ff;
}

KOKKOS_INLINE_FUNCTION double magnitude(double x) { return x < 0 ? -x : x; }

/// Smallest e with mu <= (127/128) 2^e; 0 for mu == 0 (a zero row needs no scale).
KOKKOS_INLINE_FUNCTION int scale_exponent(double mu) {
  if (!(mu > 0)) return 0;
  int e = 0;
  const double f = compat::frexp(mu, &e);  // mu = f 2^e, f in [1/2, 1)
  if (f > 127.0 / 128.0) ++e;              // 127/128 is exact, so is the comparison
  return e;
}

/// Exponent stored for a row that holds NaN or Inf (such inputs never reach the split).
constexpr int nonfinite_row = INT_MAX;

KOKKOS_INLINE_FUNCTION double positive_infinity() {
  const std::uint64_t bits = 0x7ff0000000000000ull;
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// Whether this space reads strided rows through a K-contiguous copy where a kernel reads them
/// along K (GPU spaces: coalescing).
template <class ExecSpace>
constexpr bool copies_strided_rows() {
  return !is_host_space<ExecSpace>();
}

/// Y = X for an X whose rows are not K-contiguous (op(A) of a column-major A, say), with Y
/// row-major (K-contiguous): the row kernels below read rows with consecutive threads along K,
/// which is coalesced on a GPU only when K is the contiguous index.  32 x 32 tiles go through
/// team scratch, read along X's contiguous index and written along K; the pitch of 33 keeps
/// the transposed reads free of bank conflicts.
///
/// The same pass does pass 1's reduction (so the copied operand is read once): each tile
/// stores its rows' maxima of |x| (+Inf for NaN/Inf) in tile_max(tile column, row), and
/// exponents_from_tile_max takes the max over the tile columns.  Plain stores, no atomics:
/// every tile writes its own entries (the benchmarks diary in docs/history/, optimisation
/// log 5).
template <class ExecSpace>
void copy_to_k_contiguous(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                          const typename Views<ExecSpace>::Rows& Y,
                          const typename Views<ExecSpace>::Rows& tile_max) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  using Tile = Kokkos::View<double[32][33], typename ExecSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  static_assert(row_tile_columns == 32, "a copied tile is one tile of the row maxima");
  const std::int64_t tiles_r = (rows + 31) / 32, tiles_k = row_tiles(K);
  // 8 x 32 threads per tile on a GPU; a host space runs a team as one thread.
  policy_type policy(space, static_cast<int>(tiles_r * tiles_k), is_host_space<ExecSpace>() ? 1 : 8,
                     32);
  policy.set_scratch_size(0, Kokkos::PerTeam(Tile::shmem_size()));
  Kokkos::parallel_for(
      "ozaki::pass1::copy_to_k_contiguous", policy, KOKKOS_LAMBDA(const member_type& team) {
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

/// Pass 1's exponents from per-tile maxima (of copy_to_k_contiguous, strided_tile_max or
/// scheme II's norm tiles: any partition of the rows): exponents(r) = scale_exponent of the
/// row's largest magnitude, nonfinite_row where the row holds NaN or Inf.  With `Count`, returns
/// the number of such rows (a wait for the kernel); without, 0 and nothing waits.
template <bool Count, class ExecSpace>
int tile_max_exponents(const ExecSpace& space, const typename Views<ExecSpace>::Rows& tile_max,
                       const typename Views<ExecSpace>::Exponents& exponents) {
  return row_tiles_kernel<Count>(
      "ozaki::pass1::exponents_from_tile_max", space, exponents.extent(0), tile_max.extent(0), 0.0,
      KOKKOS_LAMBDA(const std::int64_t t, const std::int64_t r) { return tile_max(t, r); },
      KOKKOS_LAMBDA(double& mu, const double v) { mu = v > mu ? v : mu; },
      KOKKOS_LAMBDA(const std::int64_t r, const double mu) {
        const bool finite = is_finite(mu);
        exponents(r) = finite ? scale_exponent(mu) : nonfinite_row;
        return finite ? 0 : 1;
      });
}

/// tile_max_exponents; returns true when some element was NaN or Inf.
template <class ExecSpace>
bool exponents_from_tile_max(const ExecSpace& space,
                             const typename Views<ExecSpace>::Rows& tile_max,
                             const typename Views<ExecSpace>::Exponents& exponents) {
  return tile_max_exponents<true>(space, tile_max, exponents) > 0;
}

/// The largest magnitude of an element's real parts (one for double, two for a complex
/// element: the parts its real embedding holds), NaN and Inf mapped to +Inf.
KOKKOS_INLINE_FUNCTION double largest_part(double x) {
  return is_finite(x) ? magnitude(x) : positive_infinity();
}
KOKKOS_INLINE_FUNCTION double largest_part(const Kokkos::complex<double>& x) {
  const double a = largest_part(x.real()), b = largest_part(x.imag());
  return a > b ? a : b;
}

/// use(load(k), k) for every k < K of one row, by a team: thread t takes k = base + j size
/// for base = t, t + Step size, ... and j < Step, all Step loads of a step first (independent,
/// so a thread keeps Step in flight), each of them coalesced across a warp where the row is
/// K-contiguous (consecutive threads on consecutive k).  (The row norms kernel reads its
/// operand faster with 4 loads per step than with one: the benchmarks diary in docs/history/,
/// "batched strided loads, the Cuda -> OpenMP replay, row kernels".)
template <int Step, class Member, class Load, class Use>
KOKKOS_INLINE_FUNCTION void team_row_loop(const Member& team, std::int64_t K, const Load& load,
                                          const Use& use) {
  using Value = typename std::decay<decltype(load(std::int64_t(0)))>::type;
  const std::int64_t size = team.team_size();
  for (std::int64_t base = team.team_rank(); base < K; base += size * Step) {
    Value x[Step];
    for (int j = 0; j < Step; ++j) {
      const std::int64_t k = base + j * size;
      x[j] = k < K ? load(k) : Value(0);
    }
    for (int j = 0; j < Step; ++j) {
      const std::int64_t k = base + j * size;
      if (k < K) use(x[j], k);
    }
  }
}

/// Row i of a sample of `count` rows out of `rows` (count <= rows): all rows where count is
/// rows, else evenly spread groups of sample_group adjacent rows (single rows where count is
/// not a multiple of it).  The groups are for operands whose rows are strided (op(A) of a
/// column-major A): a group's elements of one column share 32-byte sectors, and the group's
/// teams, consecutive in the league, run at once, so DRAM serves each sector once for the
/// group instead of once per row.  Distinct rows: with groups = count / g < rows / g the
/// group starts floor(s rows / groups) lie more than g apart.
constexpr std::int64_t sample_group = 4;
KOKKOS_INLINE_FUNCTION std::int64_t sampled_row(std::int64_t i, std::int64_t rows,
                                                std::int64_t count) {
  if (count >= rows) return i;
  const std::int64_t g = count % sample_group == 0 ? sample_group : 1;
  return (i / g) * rows / (count / g) + i % g;
}

/// Room for one partial result per thread of the largest team any space runs (CUDA's 1024).
constexpr int max_team_size = 1024;

/// max_k |X(r, k)| over one row by a team (the largest real part for complex X), with NaN and
/// Inf mapped to +Inf so that one max reduction also flags them.  Every thread of the team
/// gets the result, and may start another team reduction at once.
template <class Member, class Matrix>
KOKKOS_INLINE_FUNCTION double team_row_max(const Member& team, const Matrix& X, std::int64_t r,
                                           std::int64_t K) {
  double mu = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, K),
      [&](const std::int64_t k, double& m) {
        const double v = largest_part(X(r, k));
        if (v > m) m = v;
      },
      Kokkos::Max<double>(mu));
  // Kokkos 3.4 broadcasts a team reduction's result through team scratch that the next one
  // overwrites: the barrier lets the caller start another reduction (racecheck found the
  // race in the sampled peak ratio when it ran three in a row).
  team.team_barrier();
  return mu;
}

/// Pass 1.  exponents(r) = scale_exponent(max_k |X(r,k)|), or nonfinite_row.
/// Returns true when some element of X is NaN or Inf.  (One element per step of a team
/// reduction: four per step, consecutive or coalesced as team_row_loop reads them, were slower
/// here, unlike in the norms: the benchmarks diary in docs/history/, "batched strided loads,
/// the Cuda -> OpenMP replay, row kernels".)
template <class ExecSpace>
bool row_scale_exponents(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                         const typename Views<ExecSpace>::Exponents& exponents) {
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  const std::int64_t K = X.extent(1);
  int any_nonfinite = 0;
  Kokkos::parallel_reduce(
      "ozaki::pass1::row_scale_exponents", row_policy(space, X.extent(0)),
      KOKKOS_LAMBDA(const member_type& team, int& nonfinite) {
        const int r = team.league_rank();
        const double mu = team_row_max(team, X, r, K);
        const bool finite = is_finite(mu);
        // Every thread of the team holds mu and may count the row: only "> 0" matters.
        if (!finite) nonfinite += 1;
        Kokkos::single(Kokkos::PerTeam(team),
                       [&]() { exponents(r) = finite ? scale_exponent(mu) : nonfinite_row; });
      },
      Kokkos::Sum<int>(any_nonfinite));
  return any_nonfinite > 0;
}

/// Pass 1 for rows that are not K-contiguous, without copying them: one thread per row and
/// tile of row_tile_columns, consecutive threads on consecutive rows (X's contiguous index),
/// writing the tile's max |x| (+Inf for NaN/Inf) to tile_max(tile, row) for
/// exponents_from_tile_max.
template <class ExecSpace>
void strided_tile_max(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                      const typename Views<ExecSpace>::Rows& tile_max) {
  const std::int64_t K = X.extent(1);
  grid_for(
      "ozaki::pass1::strided_tile_max", space, X.extent(0), row_tiles(K),
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

/// Pass 1 for one operand read in place: its scale exponents, from 32-column tiles of its
/// strided rows or row by row.  True on NaN/Inf.
template <class ExecSpace>
bool operand_pass1_in_place(const ExecSpace& space, bool strided,
                            const typename Views<ExecSpace>::ConstMatrix& op,
                            const typename Views<ExecSpace>::Rows& tile_max,
                            const typename Views<ExecSpace>::Exponents& exps) {
  if (strided) {
    strided_tile_max(space, op, tile_max);
    return exponents_from_tile_max(space, tile_max, exps);
  }
  return row_scale_exponents(space, op, exps);
}

/// Pass 1 for one operand: its scale exponents, read through a K-contiguous copy (made here,
/// `rows` then views it) or in place (`rows` stays op).  True on NaN/Inf.
template <class ExecSpace>
bool operand_pass1(const ExecSpace& space, bool copy, bool strided,
                   const typename Views<ExecSpace>::ConstMatrix& op,
                   const typename Views<ExecSpace>::Rows& copy_rows,
                   const typename Views<ExecSpace>::Rows& tile_max,
                   const typename Views<ExecSpace>::Exponents& exps,
                   typename Views<ExecSpace>::ConstMatrix& rows) {
  rows = op;
  if (copy) {
    copy_to_k_contiguous(space, op, copy_rows, tile_max);
    rows = k_contiguous_rows<ExecSpace>(copy_rows);
    return exponents_from_tile_max(space, tile_max, exps);
  }
  return operand_pass1_in_place(space, strided, op, tile_max, exps);
}

}  // namespace Impl
}  // namespace ozaki
