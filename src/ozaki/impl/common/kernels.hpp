#pragma once
/// \file kernels.hpp
/// The launch shapes every portable kernel uses: one team per row, flat ranges, (row, tile)
/// grids, and quads of four K-consecutive elements of a row.

#include <ozaki/impl/common/views.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

/// Every ozaki kernel launches with Kokkos' light-weight hint: its functor goes to the device as
/// a kernel argument (up to 4 KB; Kokkos copies larger ones through global memory, still
/// stream-ordered).  Without the hint Kokkos 3.4 passes functors above 512 bytes (most of
/// ozaki's: several Views and the CRT constants) through one constant-memory buffer, and each
/// such launch first blocks the host until the previous one has finished on the device: the
/// host could never queue ahead of the GPU, and every such kernel started only after a launch
/// round trip, time a call spends outside its kernels (the benchmarks diary in docs/history/,
/// "light-weight launches").  Host spaces ignore the hint.
using LaunchHint = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;
template <class ExecSpace>
using TeamLaunch = Kokkos::TeamPolicy<ExecSpace, LaunchHint>;
template <class ExecSpace>
using RangeLaunch = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>, LaunchHint>;

/// Team policy for "one team per row" kernels: 256 threads per row on a GPU (enough to stream
/// a row of thousands of elements; Kokkos' AUTO picked 32 there, leaving most of the memory
/// bandwidth unused), one thread per team on host spaces.
template <class ExecSpace>
TeamLaunch<ExecSpace> row_policy(const ExecSpace& space, std::int64_t rows) {
  if constexpr (is_host_space<ExecSpace>()) {
    return TeamLaunch<ExecSpace>(space, static_cast<int>(rows), Kokkos::AUTO);
  } else {
    return TeamLaunch<ExecSpace>(space, static_cast<int>(rows), 256);
  }
}

/// Rows read in tiles (scheme I's pass 1 of a strided or copied operand) keep one partial
/// result per row and tile of this many consecutive columns of K.
constexpr std::int64_t row_tile_columns = 32;
inline std::int64_t row_tiles(std::int64_t K) {
  return (K + row_tile_columns - 1) / row_tile_columns;
}

/// Scheme II's pass 1 and row norms read every row in norm tiles of up to 32 elements: in each
/// block of norm_tile_block columns (the last one may be narrower, c columns), tile j holds the
/// columns j, j + s, j + 2 s, ... of the block, for the stride s = ceil(c / 32) (32 in whole
/// blocks), and the block has s tiles.  Interleaved, so that one thread per tile reads
/// coalesced on both layouts: on K-contiguous rows consecutive threads take consecutive tiles
/// of a block (at each step consecutive k), on strided rows consecutive rows.  A row has
/// row_tiles(K) tiles, none empty.  The tiles are part of the norms' definition (rules.hpp,
/// "Row norms"): the oracle cuts rows the same way.
constexpr int norm_tile_elements = 32;
constexpr std::int64_t norm_tile_block = norm_tile_elements * norm_tile_elements;
inline std::int64_t norm_tiles(std::int64_t K) { return row_tiles(K); }

/// Norm tile t of a row of K columns: its i-th column is first + stride i, for i < count.
struct NormTile {
  std::int64_t first, stride;
  int count;
};
KOKKOS_INLINE_FUNCTION NormTile norm_tile(std::int64_t t, std::int64_t K) {
  const std::int64_t block = t / norm_tile_elements * norm_tile_block;
  const std::int64_t width = K - block < norm_tile_block ? K - block : norm_tile_block;
  const std::int64_t stride = (width + norm_tile_elements - 1) / norm_tile_elements;
  const std::int64_t j = t % norm_tile_elements;
  return {block + j, stride, static_cast<int>((width - j + stride - 1) / stride)};
}

/// f(i) for i in [0, count): 256-thread blocks on a GPU, a plain range on host spaces.
template <class ExecSpace, class Functor>
void flat_for(const char* label, const ExecSpace& space, std::int64_t count, const Functor& f) {
  if constexpr (is_host_space<ExecSpace>()) {
    Kokkos::parallel_for(label, RangeLaunch<ExecSpace>(space, 0, count), f);
  } else {
    using member_type = typename TeamLaunch<ExecSpace>::member_type;
    constexpr int block = 256;
    Kokkos::parallel_for(
        label, TeamLaunch<ExecSpace>(space, static_cast<int>((count + block - 1) / block), block),
        KOKKOS_LAMBDA(const member_type& team) {
          const std::int64_t i = std::int64_t(team.league_rank()) * block + team.team_rank();
          if (i < count) f(i);
        });
  }
}

/// result = the Reducer (Kokkos::Sum, Max or Min) of f(i, value) over i in [0, count), on a
/// GPU as a team reduction: 2048 elements per team, joined by one thread of each team.  Kokkos
/// 3.4's RangePolicy reductions on CUDA reduce through warp-synchronous shared memory that
/// compute-sanitizer's racecheck reports as races (they are, under independent thread
/// scheduling); its team reductions use shuffles.  The reducers ozaki uses (integer sums,
/// maxima, minima) give the same result in any order.
template <template <class...> class Reducer, class T, class ExecSpace, class Functor>
void flat_reduce(const char* label, const ExecSpace& space, std::int64_t count, const Functor& f,
                 T& result) {
  if constexpr (is_host_space<ExecSpace>()) {
    Kokkos::parallel_reduce(label, RangeLaunch<ExecSpace>(space, 0, count), f, Reducer<T>(result));
  } else {
    using member_type = typename TeamLaunch<ExecSpace>::member_type;
    constexpr std::int64_t chunk = 2048;
    Kokkos::parallel_reduce(
        label, TeamLaunch<ExecSpace>(space, static_cast<int>((count + chunk - 1) / chunk), 256),
        KOKKOS_LAMBDA(const member_type& team, T& value) {
          const std::int64_t begin = std::int64_t(team.league_rank()) * chunk;
          const std::int64_t end = begin + chunk < count ? begin + chunk : count;
          T part;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, begin, end),
              [&](const std::int64_t i, T& v) { f(i, v); }, Reducer<T>(part));
          Kokkos::single(Kokkos::PerTeam(team), [&]() { Reducer<T>(value).join(value, part); });
        },
        Reducer<T>(result));
  }
}

/// Per row r < rows: acc = join over t < tiles of load(t, r) (starting from `identity`), then
/// finish(r, acc), for partial results stored per (tile, row) with consecutive rows contiguous
/// (pass 1's tile maxima, the norms' tile sums).  `join` must give the same value in any order
/// (maxima, integer sums).  On a GPU a team of 8 x 32 threads takes 32 consecutive rows: lane v
/// reads row r0 + v (coalesced across the warp), warp g the tiles t = g, g + 8, ...; the 8
/// partial results of a row meet in team scratch.  One thread per row looping over all tiles
/// (what flat_reduce gave, 2048 rows per team) kept only 4 teams busy at 8192 rows, far below
/// the memory speed that 16 MB of partials allow (the benchmarks diary in docs/history/, "the
/// split kernels per kernel").
///
/// With `Reduce` the sum of finish's results (an int) is returned, which waits for the kernel;
/// without, finish's results are dropped and nothing waits (the caller reads what finish wrote
/// later, after more kernels: scheme II's one wait for pass 1 and the norms, scaling.hpp).
template <bool Reduce, class T, class ExecSpace, class Load, class Join, class Finish>
int row_tiles_kernel(const char* label, const ExecSpace& space, std::int64_t rows,
                     std::int64_t tiles, const T identity, const Load& load, const Join& join,
                     const Finish& finish) {
  int result = 0;
  if constexpr (is_host_space<ExecSpace>()) {
    const auto row = [=](const std::int64_t r, int& sum) {
      T acc = identity;
      for (std::int64_t t = 0; t < tiles; ++t) join(acc, load(t, r));
      sum += finish(r, acc);
    };
    if constexpr (Reduce) {
      Kokkos::parallel_reduce(label, RangeLaunch<ExecSpace>(space, 0, rows), row,
                              Kokkos::Sum<int>(result));
    } else {
      Kokkos::parallel_for(label, RangeLaunch<ExecSpace>(space, 0, rows),
                           [=](const std::int64_t r) {
                             int unused = 0;
                             row(r, unused);
                           });
    }
  } else {
    using policy_type = TeamLaunch<ExecSpace>;
    using member_type = typename policy_type::member_type;
    constexpr int lanes = 32, groups = 8;
    using Partials = Kokkos::View<T[groups][lanes], typename ExecSpace::scratch_memory_space,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    policy_type policy(space, static_cast<int>((rows + lanes - 1) / lanes), groups, lanes);
    policy.set_scratch_size(0, Kokkos::PerTeam(Partials::shmem_size()));
    const auto team_rows = KOKKOS_LAMBDA(const member_type& team, int& sum) {
      const std::int64_t r0 = std::int64_t(team.league_rank()) * lanes;
      const int g = team.team_rank();
      Partials part(team.team_scratch(0));
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int v) {
        T acc = identity;
        if (r0 + v < rows) {
          for (std::int64_t t = g; t < tiles; t += groups) join(acc, load(t, r0 + v));
        }
        part(g, v) = acc;
      });
      team.team_barrier();
      if (g == 0) {
        int found = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, lanes),
            [&](const int v, int& f) {
              if (r0 + v >= rows) return;
              T acc = part(0, v);
              for (int h = 1; h < groups; ++h) join(acc, part(h, v));
              f += finish(r0 + v, acc);
            },
            found);
        Kokkos::single(Kokkos::PerThread(team), [&]() { sum += found; });
      }
    };
    if constexpr (Reduce) {
      Kokkos::parallel_reduce(label, policy, team_rows, Kokkos::Sum<int>(result));
    } else {
      Kokkos::parallel_for(
          label, policy, KOKKOS_LAMBDA(const member_type& team) {
            int unused = 0;
            team_rows(team, unused);
          });
    }
  }
  return result;
}

/// Threads of a GPU team of grid_for.
constexpr int grid_team = 256;

/// f(i, j) for i in [0, rows), j in [0, cols), consecutive threads on consecutive i: on a GPU a
/// grid_team-thread team takes rows_per_team consecutive rows of one column, each thread every
/// grid_team-th of them (no 64-bit division per element); a plain range on host spaces.
/// rows_per_team = grid_team, one element per thread, unless a kernel's measurements say
/// otherwise (the reconstruction: reconstruction_rows_per_team).
template <std::int64_t rows_per_team = grid_team, class ExecSpace, class Functor>
void grid_for(const char* label, const ExecSpace& space, std::int64_t rows, std::int64_t cols,
              const Functor& f) {
  static_assert(rows_per_team % grid_team == 0, "a team's rows are a multiple of its threads");
  if constexpr (is_host_space<ExecSpace>()) {
    Kokkos::parallel_for(label, RangeLaunch<ExecSpace>(space, 0, rows * cols),
                         [=](const std::int64_t idx) { f(idx % rows, idx / rows); });
  } else {
    using member_type = typename TeamLaunch<ExecSpace>::member_type;
    constexpr int block = grid_team;
    const int segments = static_cast<int>((rows + rows_per_team - 1) / rows_per_team);
    Kokkos::parallel_for(
        label, TeamLaunch<ExecSpace>(space, static_cast<int>(segments * cols), block),
        KOKKOS_LAMBDA(const member_type& team) {
          const int j = team.league_rank() / segments;
          const std::int64_t first =
              std::int64_t(team.league_rank() - j * segments) * rows_per_team;
          // A plain if: nvcc's extended lambdas may not first capture inside if constexpr; the
          // condition is a constant all the same.
          if (rows_per_team == block) {
            const std::int64_t i = first + team.team_rank();
            if (i < rows) f(i, std::int64_t(j));
          } else {
            const std::int64_t last = first + rows_per_team < rows ? first + rows_per_team : rows;
            for (std::int64_t i = first + team.team_rank(); i < last; i += block)
              f(i, std::int64_t(j));
          }
        });
  }
}

/// f(r, t) for every norm tile t < tiles of every row r < rows, one thread per tile: on strided
/// rows consecutive threads take consecutive rows (grid_for, label `strided_label`), on
/// K-contiguous ones consecutive tiles of a row (label `label`): coalesced either way, as
/// norm_tile's interleaving intends.
template <class ExecSpace, class Functor>
void for_each_norm_tile(const char* label, const char* strided_label, const ExecSpace& space,
                        bool strided, std::int64_t rows, std::int64_t tiles, const Functor& f) {
  if (strided) {
    grid_for(strided_label, space, rows, tiles, f);
  } else {
    flat_for(
        label, space, rows * tiles,
        KOKKOS_LAMBDA(const std::int64_t i) { f(i / tiles, i % tiles); });
  }
}

/// The reconstructions' rows per team (grid_for): 2048, eight entries per thread and eight
/// times fewer teams than one entry per thread, made the reconstruction faster (the benchmarks
/// diary in docs/history/, "the reconstruction in column segments"); which of the two
/// differences mattered was not separated.
constexpr std::int64_t reconstruction_rows_per_team = 2048;

/// Row tiles of for_each_quad's transposing path: 32 rows x 128 columns of K.
constexpr int quad_tile_rows = 32;
constexpr int quad_tile_k = 128;
/// Loads each thread of a tile team issues before storing them (a GPU team of 8 threads: all
/// 16 of its columns at once), for tile_teams teams per SM (for_each_quad): half as many at 6
/// teams, whose 40 registers per thread would not hold 16 doubles in flight without spills.
KOKKOS_INLINE_FUNCTION constexpr int quad_tile_batch(int tile_teams) {
  return tile_teams >= 6 ? 8 : 16;
}

/// for_each_quad on rows whose elements are contiguous (or K <= 1): one team per row.
template <class ExecSpace, class RowFunction, class QuadFunction>
void for_each_quad_contiguous(const char* label, const ExecSpace& space,
                              const typename Views<ExecSpace>::ConstMatrix& X,
                              std::int64_t rows_out, std::int64_t kpad, const RowFunction& row,
                              const QuadFunction& f) {
  using member_type = typename TeamLaunch<ExecSpace>::member_type;
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  Kokkos::parallel_for(
      label, row_policy(space, rows_out), KOKKOS_LAMBDA(const member_type& team) {
        const int r = team.league_rank();
        const bool real_row = r < rows;
        const auto state = row(r);
        // Row r's elements (stride 1 here, or K <= 1).
        const double* x_row = X.data() + (real_row ? r * X.stride(0) : 0);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kpad / 4), [&](const std::int64_t quad) {
          const std::int64_t k = 4 * quad;
          double x[4];
          if (real_row && k + 4 <= K) {  // one test for most quads
            for (int j = 0; j < 4; ++j) x[j] = x_row[k + j];
          } else {
            for (int j = 0; j < 4; ++j) x[j] = real_row && k + j < K ? x_row[k + j] : 0.0;
          }
          f(state, r, k, x);
        });
      });
}

/// for_each_quad on strided rows: 32 x 128 tiles through team scratch (the layout and the
/// batched loads: for_each_quad).
template <int tile_teams, class ExecSpace, class RowFunction, class QuadFunction>
void for_each_quad_tiled(const char* label, const ExecSpace& space,
                         const typename Views<ExecSpace>::ConstMatrix& X, std::int64_t rows_out,
                         std::int64_t kpad, const RowFunction& row, const QuadFunction& f) {
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  // tile_teams 256-thread teams per SM on GPUs, bounded by registers: four by default (at most
  // 64 registers; without the bound ptxas gives the tile path 72, three teams, which Nsight
  // Compute shows register-limited; scheme I's split_rows spills 24/36 bytes at 64 by ptxas
  // -v).  Four teams make op(A)'s FP32-digit residues faster than three (the benchmarks diary
  // in docs/history/, "the tile path at 64 registers").  A kernel with less work per element
  // asks for more (the residues from bytes: six, 40 registers and 8 loads per batch, no spills
  // for L <= 24, where split_rows would spill 152 bytes; faster again, the diary's "residues
  // from bytes (DP4A)").  The team scratch (33.8 KB) lets 6 teams share an SM.
  using tile_policy_type =
      Kokkos::TeamPolicy<ExecSpace, LaunchHint, Kokkos::LaunchBounds<256, tile_teams>>;
  constexpr int batch = quad_tile_batch(tile_teams);
  constexpr int quads = quad_tile_k / 4;
  using Tile =
      Kokkos::View<double[4][quad_tile_rows][quads + 1], typename ExecSpace::scratch_memory_space,
                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t tiles_r = (rows_out + quad_tile_rows - 1) / quad_tile_rows;
  const std::int64_t tiles_k = (kpad + quad_tile_k - 1) / quad_tile_k;
  tile_policy_type policy(space, static_cast<int>(tiles_r * tiles_k),
                          is_host_space<ExecSpace>() ? 1 : 8, 32);
  policy.set_scratch_size(0, Kokkos::PerTeam(Tile::shmem_size()));
  Kokkos::parallel_for(
      label, policy, KOKKOS_LAMBDA(const typename tile_policy_type::member_type& team) {
        const std::int64_t r0 = (team.league_rank() % tiles_r) * quad_tile_rows;
        const std::int64_t k0 = (team.league_rank() / tiles_r) * quad_tile_k;
        Tile tile(team.team_scratch(0));
        // Thread t of the team takes the tile's columns kk = t, t + size, ...: all its loads
        // first (quad_tile_batch in flight at once), then the stores to scratch.  One load and
        // its store per step, as a TeamThreadRange gives them, leaves one load in flight per
        // thread (each store waits for its load), and few teams fit an SM beside their tiles.
        const int t = team.team_rank(), size = team.team_size();
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, quad_tile_rows), [&](const int rr) {
          const std::int64_t r = r0 + rr;
          for (int base = t; base < quad_tile_k; base += size * batch) {
            double v[batch];
            for (int i = 0; i < batch; ++i) {
              const int kk = base + i * size;
              v[i] = kk < quad_tile_k && r < rows && k0 + kk < K ? X(r, k0 + kk) : 0.0;
            }
            for (int i = 0; i < batch; ++i) {
              const int kk = base + i * size;
              if (kk < quad_tile_k) tile(kk % 4, rr, kk / 4) = v[i];
            }
          }
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, quad_tile_rows), [&](const int rr) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, quads), [&](const int q) {
            const std::int64_t r = r0 + rr, k = k0 + 4 * q;
            if (r < rows_out && k < kpad) {
              double x[4];
              for (int j = 0; j < 4; ++j) x[j] = tile(j, rr, q);
              f(row(static_cast<int>(r)), static_cast<int>(r), k, x);
            }
          });
        });
      });
}

/// Calls f(row(r), r, k, x) for every row r < rows_out and every k = 0, 4, ..., kpad - 4, with
/// x[j] = X(r, k + j) (0 beyond X's rows and K): the shape of every kernel that turns rows
/// of FP64 into K-contiguous int8 (slices, residues, magnitudes), one thread per 4 k so that
/// each writes whole 32-bit words and a warp 128 contiguous bytes per output row.  row(r) is
/// what f needs of row r (its exponent, its scale), made once per row where a team takes a
/// row: f's stores may alias its loads, so the compiler cannot hoist them out of the loop.
///
/// K-contiguous X: one team per row, consecutive threads on consecutive k (coalesced reads)
/// from a pointer to the row.
/// Otherwise (op(A) of a column-major A, say) X is read in 32 x 128 tiles through team
/// scratch, consecutive lanes on consecutive rows (X's contiguous index), so that no FP64 copy
/// of X is needed.  The tile is stored by position in the quad: tile(j, rr, q) = X(r0 + rr,
/// k0 + 4 q + j), so that the lanes of a warp, which take consecutive quads q of one row, read
/// consecutive doubles (a row-major 32 x 129 tile put them 32 bytes apart, 8-way bank
/// conflicts); the pitch of 33 keeps the transposed writes conflict-free.  The conflicts were
/// not what bounded it (the time was the same either way); the batched loads below were, and
/// with them the strided path comes close to the K-contiguous one on the same data (the
/// benchmarks diary in docs/history/, "batched strided loads").
template <int tile_teams = 4, class ExecSpace, class RowFunction, class QuadFunction>
void for_each_quad(const char* label, const ExecSpace& space,
                   const typename Views<ExecSpace>::ConstMatrix& X, std::int64_t rows_out,
                   std::int64_t kpad, const RowFunction& row, const QuadFunction& f) {
  if (X.extent(1) <= 1 || X.stride(1) == 1) {
    for_each_quad_contiguous(label, space, X, rows_out, kpad, row, f);
  } else {
    for_each_quad_tiled<tile_teams>(label, space, X, rows_out, kpad, row, f);
  }
}

/// C = beta C for any element type, the whole update when no product is needed (K == 0 or
/// alpha == 0); beta == 0 writes zeros without reading C, as BLAS does.
template <class ExecSpace, class Matrix>
void scale_c(const ExecSpace& space, typename Matrix::non_const_value_type beta, const Matrix& C) {
  using T = typename Matrix::non_const_value_type;
  const bool beta_zero = beta == T(0);
  grid_for(
      "ozaki::scale_c", space, C.extent(0), C.extent(1),
      KOKKOS_LAMBDA(const std::int64_t m, const std::int64_t n) {
        C(m, n) = beta_zero ? T(0) : beta * C(m, n);
      });
}

}  // namespace Impl
}  // namespace ozaki
