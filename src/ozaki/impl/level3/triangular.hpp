#pragma once
/// \file triangular.hpp
/// ozaki::trsm and ozaki::trmm's recursion (docs/design.md §12.2, §12.3): op(A) is halved
/// until the diagonal blocks have at most `leaf` rows.  Of the two halves, S is the one whose
/// rows of B feed the other's through op(A)'s off-diagonal block and U the one they feed; that
/// feed is one GEMM (Int8Crt, Int8Slices, Auto or native, as Options say):
///   trsm: solve S, then B_U -= op(A)_US X_S, then solve U;
///   trmm: multiply U, then B_U += op(A)_US B_S (B_S not yet overwritten), then multiply S.
/// Diagonal blocks are solved or multiplied in FP64, one team per right-hand side.

#include <ozaki/errors.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/level3/common.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// A diagonal block [b0, b1) of op(A) applied in FP64 to each vector v of B, one team per
/// vector: side L to rows [b0, b1) of B, v a column of B; side R to its columns, v a row.
/// Position q of the block is row b0 + q where `before` (op(A)'s off-diagonal entries of a
/// row (side L) or column (side R) lie at smaller indices), row b1 - 1 - q otherwise, so that
/// position q depends on positions below q only.
///   solve, q ascending:      x_q = b_q / op(A)_qq, then b_r -= op(A)_rq x_q for every r > q;
///   multiply, q descending:  t = b_q, b_q = op(A)_qq b_q, then b_r += op(A)_rq t for r > q
/// (t is b_q before any write: multiply reads only entries not yet written).  Each entry gets
/// its terms one at a time in the order of q, so it is the recursive summation of substitution
/// (docs/design.md §12.2: gamma_b, the same steps for any team size).  Thread m of the team
/// owns the positions q = m mod (team size) and alone reads and writes their entries; the
/// step's x_q (or t) reaches the others through one of two scratch slots, which alternate so
/// that one barrier per step orders them.
template <class ExecSpace, class ConstMatrix, class Matrix>
struct DiagonalBlock {
  using T = typename Matrix::non_const_value_type;
  using Team = typename TeamLaunch<ExecSpace>::member_type;
  using Slots = Kokkos::View<T[2], typename ExecSpace::scratch_memory_space,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  ConstMatrix A;
  Matrix B;
  std::int64_t b0, b1;
  bool left, transposed, conjugate, before, unit, multiply;

  KOKKOS_INLINE_FUNCTION T op_a(std::int64_t r, std::int64_t s) const {
    return conj_if(transposed ? A(s, r) : A(r, s), conjugate);
  }
  KOKKOS_INLINE_FUNCTION std::int64_t row(std::int64_t q) const {
    return before ? b0 + q : b1 - 1 - q;
  }
  KOKKOS_INLINE_FUNCTION T& entry(std::int64_t v, std::int64_t i) const {
    return left ? B(i, v) : B(v, i);
  }
  /// op(A)_ri x (side L) or x op(A)_ir (side R): the term vector entry r gets from entry i.
  KOKKOS_INLINE_FUNCTION T term(std::int64_t r, std::int64_t i, const T& x) const {
    return left ? op_a(r, i) * x : x * op_a(i, r);
  }
  /// Step `step` of vector v's thread `me` of `threads`: the owner of position q writes its
  /// entry and puts x_q (or t) in `slot`; after `barrier`, every thread applies it to its own
  /// positions above q.
  template <class Slot, class Barrier>
  KOKKOS_INLINE_FUNCTION void step(std::int64_t v, std::int64_t step, std::int64_t threads,
                                   std::int64_t me, Slot& slot, const Barrier& barrier) const {
    const std::int64_t n = b1 - b0;
    const std::int64_t q = multiply ? n - 1 - step : step;
    const std::int64_t i = row(q);
    if (q % threads == me) {
      T& b = entry(v, i);
      if (multiply) {
        slot = b;
        if (!unit) b = op_a(i, i) * b;
      } else {
        if (!unit) b = b / op_a(i, i);
        slot = b;
      }
    }
    barrier();
    const T x = slot;
    // This thread's positions above q: the first is q + 1 + ((me - q - 1) mod threads).
    const std::int64_t first = q + 1 + ((me - q - 1) % threads + threads) % threads;
    for (std::int64_t r = first; r < n; r += threads) {
      const std::int64_t j = row(r);
      T& b = entry(v, j);
      b = multiply ? b + term(j, i, x) : b - term(j, i, x);
    }
  }
  /// GPU spaces: one team per vector.
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    Slots slots(team.team_scratch(0));
    const auto barrier = [&]() { team.team_barrier(); };
    for (std::int64_t s = 0; s < b1 - b0; ++s) {
      step(team.league_rank(), s, team.team_size(), team.team_rank(), slots(s % 2), barrier);
    }
  }
  /// Host spaces: one thread per vector, the same steps without a team.
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t v) const {
    T slot{};
    const auto barrier = []() {};
    for (std::int64_t s = 0; s < b1 - b0; ++s) step(v, s, 1, 0, slot, barrier);
  }
};

/// Threads per team of DiagonalBlock on GPU spaces: one warp (its barrier is cheap, and its
/// threads' entries are consecutive rows of a column-major B).
constexpr int diagonal_team_size = 32;

/// DiagonalBlock on GPU spaces for blocks of at most 32 rows_per_lane rows: one warp takes
/// `vectors` right-hand sides at once and each thread keeps its positions' entries of all of
/// them in registers, so that a step reads only op(A)'s entries (each once for all the
/// vectors) and B is read and written once per block; DiagonalBlock's own steps.  Entries kept
/// in B cost a read and a write of B per multiply-add (24 bytes), which makes the substitutions
/// memory-bound (docs/design.md §12.2).
template <class ExecSpace, class ConstMatrix, class Matrix, int vectors>
struct DiagonalBlockInRegisters {
  static constexpr int lanes = diagonal_team_size, rows_per_lane = 8;
  static constexpr std::int64_t max_rows = lanes * rows_per_lane;
  using Block = DiagonalBlock<ExecSpace, ConstMatrix, Matrix>;
  using T = typename Block::T;
  using Team = typename Block::Team;
  using Slots = Kokkos::View<T[2][vectors], typename ExecSpace::scratch_memory_space,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Block block;
  std::int64_t count;  // right-hand sides in all

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const std::int64_t me = team.team_rank();
    const std::int64_t v0 = std::int64_t(team.league_rank()) * vectors;
    const std::int64_t n = block.b1 - block.b0;
    Slots slots(team.team_scratch(0));
    T b[rows_per_lane][vectors];
    for (int k = 0; k < rows_per_lane; ++k) {
      const std::int64_t r = me + lanes * k;
      for (int v = 0; v < vectors; ++v) {
        b[k][v] = r < n && v0 + v < count ? block.entry(v0 + v, block.row(r)) : T(0);
      }
    }
    for (std::int64_t step = 0; step < n; ++step) {
      const std::int64_t q = block.multiply ? n - 1 - step : step;
      const std::int64_t i = block.row(q);
      const int slot = static_cast<int>(step % 2);
      if (q % lanes == me) {
        const T diagonal = block.unit ? T(1) : block.op_a(i, i);
        for (int k = 0; k < rows_per_lane; ++k) {
          if (k != q / lanes) continue;
          for (int v = 0; v < vectors; ++v) {
            if (block.multiply) {
              slots(slot, v) = b[k][v];
              if (!block.unit) b[k][v] = diagonal * b[k][v];
            } else {
              if (!block.unit) b[k][v] = b[k][v] / diagonal;
              slots(slot, v) = b[k][v];
            }
          }
        }
      }
      team.team_barrier();
      T x[vectors];
      for (int v = 0; v < vectors; ++v) x[v] = slots(slot, v);
      for (int k = 0; k < rows_per_lane; ++k) {
        const std::int64_t r = me + lanes * k;
        if (r <= q || r >= n) continue;
        const std::int64_t j = block.row(r);
        const T a = block.left ? block.op_a(j, i) : block.op_a(i, j);
        for (int v = 0; v < vectors; ++v) {
          const T t = block.left ? a * x[v] : x[v] * a;
          b[k][v] = block.multiply ? b[k][v] + t : b[k][v] - t;
        }
      }
    }
    for (int k = 0; k < rows_per_lane; ++k) {
      const std::int64_t r = me + lanes * k;
      for (int v = 0; v < vectors; ++v) {
        if (r < n && v0 + v < count) block.entry(v0 + v, block.row(r)) = b[k][v];
      }
    }
  }
};

/// Right-hand sides per warp of DiagonalBlockInRegisters: registers for 8 rows of 4 doubles or
/// 2 complex doubles per thread.
template <class T>
constexpr int diagonal_vectors() {
  return std::is_same<T, double>::value ? 4 : 2;
}

/// DiagonalBlock for blocks of at most `max_rows` rows (GPUs' leaves, and host blocks of that
/// size): one thread per right-hand side, which keeps its entries in registers (on GPUs) and
/// takes DiagonalBlock's steps alone, without a barrier between them.
///
/// The registers are a shift register over the positions.  Before step q of a solve, b[j]
/// holds position q + j; x_q = b[0] / op(A)_qq goes to B, and every other entry moves down one
/// place as it takes its term: b[j] = b[j + 1] - s(q, j + 1) x_q.  A multiply runs q
/// downwards and shifts up: b[j] = b[j - 1] + s(q, j) t_q, with t_q read from B (not yet
/// written), and b[0] = op(A)_qq t_q.  Either way each entry takes its terms in DiagonalBlock's
/// order, every register index is fixed (only the j loop is unrolled: a short loop body), and
/// positions past the block are zero entries with zero coefficients, which only ever move
/// among themselves.
///
/// The team first copies op(A)'s block into shared memory as s(q, j), the coefficient position
/// q gives position q + j (op(A)_(q+j)q for side L, op(A)_q(q+j) for side R; s(q, 0) the
/// diagonal), so that a step's reads are broadcasts.  Each thread takes `vectors_per_thread`
/// right-hand sides in turn: one on GPUs, many on host spaces (one thread per team there, so
/// that a copy of the block serves many right-hand sides; the same steps, so that CI's host
/// runs check the GPUs' kernel too).
template <class ExecSpace, class ConstMatrix, class Matrix, int max_rows_, int team_size_,
          int vectors_per_thread_>
struct DiagonalBlockPerThread {
  static constexpr int max_rows = max_rows_, team_size = team_size_,
                       vectors_per_thread = vectors_per_thread_;
  using Block = DiagonalBlock<ExecSpace, ConstMatrix, Matrix>;
  using T = typename Block::T;
  using Team = typename Block::Team;
  using Coefficients = Kokkos::View<T[max_rows][max_rows], Kokkos::LayoutRight,
                                    typename ExecSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Block block;
  std::int64_t count;  // right-hand sides in all

  /// What position q gives position r >= q (r = q: the diagonal, one where it is unit), zero
  /// past the block's n positions.  Branch-free around the read, so that a thread's reads are
  /// all in flight at once: the read is always of an entry inside the block (position 0 stands
  /// in past the block) and its value is dropped where the coefficient is zero or one.
  KOKKOS_INLINE_FUNCTION T coefficient(std::int64_t q, std::int64_t r, std::int64_t n) const {
    const bool inside = q < n && r < n;
    const std::int64_t i = block.row(inside ? q : 0), j = block.row(inside ? r : 0);
    // Side L: op(A)_ji; side R: op(A)_ij; op(A)_xy is A_yx where transposed.
    const std::int64_t x = block.left ? j : i, y = block.left ? i : j;
    const T a = conj_if(block.transposed ? block.A(y, x) : block.A(x, y), block.conjugate);
    if (!inside) return T(0);
    return q == r && block.unit ? T(1) : a;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const std::int64_t n = block.b1 - block.b0;
    Coefficients s(team.team_scratch(0));
    // Reads of op(A) in groups of 16, each group's reads first and then its writes to shared
    // memory: one wait per group, not per entry.
    constexpr int per_thread = max_rows * max_rows / team_size, group = 16;
    static_assert(per_thread % group == 0, "whole groups of reads per thread");
#pragma unroll 1
    for (int k0 = 0; k0 < per_thread; k0 += group) {
      T read[group];
#pragma unroll
      for (int k = 0; k < group; ++k) {
        const int e = (k0 + k) * team_size + team.team_rank();
        read[k] = coefficient(e / max_rows, e / max_rows + e % max_rows, n);
      }
#pragma unroll
      for (int k = 0; k < group; ++k) {
        const int e = (k0 + k) * team_size + team.team_rank();
        s(e / max_rows, e % max_rows) = read[k];
      }
    }
    team.team_barrier();
    const std::int64_t first_vector =
        std::int64_t(team.league_rank()) * team_size * vectors_per_thread;
    for (int t = 0; t < vectors_per_thread; ++t) {
      const std::int64_t v = first_vector + std::int64_t(t) * team_size + team.team_rank();
      if (v < count) apply(s, n, v);
    }
  }

  /// The block's steps on right-hand side v.
  KOKKOS_INLINE_FUNCTION void apply(const Coefficients& s, std::int64_t n, std::int64_t v) const {
    // Position p's entry of this right-hand side: first[p * step].
    T* const first = &block.entry(v, block.row(0));
    const std::int64_t step = n < 2 ? 0 : &block.entry(v, block.row(1)) - first;
    // Four phases of a quarter of the steps each: at step q only positions q to max_rows - 1
    // can be in the block, so each phase shifts a quarter fewer registers (the rest hold
    // positions past the block, left as they are).
    constexpr int part = max_rows / 4;
    const std::int64_t p1 = n < part ? n : part, p2 = n < 2 * part ? n : 2 * part,
                       p3 = n < 3 * part ? n : 3 * part;
    T b[max_rows];
    if (block.multiply) {
#pragma unroll
      for (int j = 0; j < max_rows; ++j) b[j] = T(0);
      multiply_steps<part>(b, s, first, step, p3, n);
      multiply_steps<2 * part>(b, s, first, step, p2, p3);
      multiply_steps<3 * part>(b, s, first, step, p1, p2);
      multiply_steps<max_rows>(b, s, first, step, 0, p1);
#pragma unroll
      for (int j = 0; j < max_rows; ++j) {
        if (j < n) first[j * step] = b[j];
      }
    } else {
#pragma unroll
      for (int j = 0; j < max_rows; ++j) b[j] = j < n ? first[j * step] : T(0);
      solve_steps<max_rows>(b, s, first, step, 0, p1);
      solve_steps<3 * part>(b, s, first, step, p1, p2);
      solve_steps<2 * part>(b, s, first, step, p2, p3);
      solve_steps<part>(b, s, first, step, p3, n);
    }
  }

  /// Solve steps [q0, q1) on the first `width` registers (positions q to q + width - 1).
  template <int width>
  KOKKOS_FORCEINLINE_FUNCTION void solve_steps(T (&b)[max_rows], const Coefficients& s, T* first,
                                               std::int64_t step, std::int64_t q0,
                                               std::int64_t q1) const {
    for (std::int64_t q = q0; q < q1; ++q) {
      const T x = block.unit ? b[0] : b[0] / s(q, 0);
      first[q * step] = x;
#pragma unroll
      for (int j = 0; j + 1 < width; ++j) b[j] = b[j + 1] - s(q, j + 1) * x;
      b[width - 1] = T(0);
    }
  }

  /// Multiply steps q1 - 1 down to q0 on the first `width` registers; t_q read one step ahead.
  template <int width>
  KOKKOS_FORCEINLINE_FUNCTION void multiply_steps(T (&b)[max_rows], const Coefficients& s,
                                                  const T* first, std::int64_t step,
                                                  std::int64_t q0, std::int64_t q1) const {
    if (q1 <= q0) return;
    T next = first[(q1 - 1) * step];
    for (std::int64_t q = q1 - 1; q >= q0; --q) {
      const T t = next;
      if (q > q0) next = first[(q - 1) * step];
#pragma unroll
      for (int j = width - 1; j >= 1; --j) b[j] = b[j - 1] + s(q, j) * t;
      b[0] = block.unit ? t : s(q, 0) * t;
    }
  }
};

/// Rows DiagonalBlockPerThread keeps per thread: 64 doubles or 32 complex doubles (128
/// registers), the GPU's leaf.
template <class T>
constexpr int per_thread_rows() {
  return std::is_same<T, double>::value ? 64 : 32;
}

/// Threads per team of DiagonalBlockPerThread: right-hand sides that share one copy of op(A)'s
/// block.
constexpr int per_thread_team_size = 64;

/// B := alpha op(A)^-1 B or alpha op(A) B (side L), alpha B op(A)^-1 or alpha B op(A) (side R),
/// A triangular (`uplo` read, a unit diagonal not read).
template <class ExecSpace, class T>
class TriangularRoutine {
 public:
  using ConstMatrix = typename StridedViews<ExecSpace, T>::ConstMatrix;
  using Matrix = typename StridedViews<ExecSpace, T>::Matrix;

  /// Checks every argument before anything is written (a throw leaves B untouched).
  /// `multiply`: trmm, else trsm.
  TriangularRoutine(const ExecSpace& space, bool multiply, const char side[], const char uplo[],
                    const char trans[], const char diag[], const T& alpha, const ConstMatrix& A,
                    const Matrix& B, const Options& options, PartsScratch<ExecSpace>& scratch)
      : space_(space),
        multiply_(multiply),
        left_(parse_choice(side, "side", 'L', 'R')),
        op_(parse_op<T>(trans, "trans", "NTC")),
        unit_diagonal_(parse_choice(diag, "diag", 'U', 'N')),
        alpha_(alpha),
        A_(A),
        B_(B),
        options_(options),
        scratch_(scratch) {
    const bool upper = parse_choice(uplo, "uplo", 'U', 'L');
    // op(A) is lower triangular where A is lower and not transposed, or upper and transposed.
    const bool op_lower = upper == (op_ != Op::None);
    // Row i of op(A) (side L) has its off-diagonal entries before i where op(A) is lower;
    // column j (side R) where op(A) is upper.
    before_ = left_ ? op_lower : !op_lower;
    check_shapes();
    check_call(space, options);
    // GPU leaves: the rows one thread keeps in registers (DiagonalBlockPerThread), whose
    // substitution is latency-bound along its rows; larger blocks go to GEMMs on tensor cores
    // (design.md §12.2, "Cost").
    leaf_ = leaf_rows<ExecSpace>(options, 64, per_thread_rows<T>());
  }

  Report run() {
    const std::int64_t n = A_.extent(0);
    Report& report = sum_.report();
    if (B_.extent(0) == 0 || B_.extent(1) == 0) return report;
    // B = alpha B first (alpha = 0: zeros, B not read).
    if (alpha_ != T(1)) scale_c(space_, alpha_, B_);
    if (alpha_ == T(0)) {
      report.reason = "alpha = 0: B = 0";
      return report;
    }
    const double bound = recurse(0, n);
    if (report.algorithm == Algorithm::None) {
      report.algorithm = Algorithm::Native;
      report.reason = "op(A) is one diagonal block: FP64 only, no GEMM";
    }
    report.error_bound = sum_.bounded() ? bound + fp64_unit_roundoff : 0;  // u: alpha B
    return report;
  }

 private:
  const char* name() const { return multiply_ ? "trmm" : "trsm"; }

  void check_shapes() const {
    const std::int64_t n = left_ ? B_.extent(0) : B_.extent(1);
    if (static_cast<std::int64_t>(A_.extent(0)) != n ||
        static_cast<std::int64_t>(A_.extent(1)) != n) {
      std::ostringstream os;
      os << name() << ": A is " << A_.extent(0) << " x " << A_.extent(1) << " but B is "
         << B_.extent(0) << " x " << B_.extent(1) << ": A must be " << n << " x " << n << " (side "
         << (left_ ? 'L' : 'R') << ")";
      throw InvalidArgument(os.str());
    }
    if (overlaps(B_, A_)) {
      throw InvalidArgument(std::string(name()) + ": B overlaps A in memory (B must not alias A)");
    }
  }

  /// The bound of §12.2 for a diagonal block of b rows, relative to |op(A)||X| + |B| (trsm) or
  /// |op(A)||B| (trmm): gamma_b (complex data: sqrt(2) gamma_(b+6), for the complex products
  /// and division).
  static double diagonal_bound(std::int64_t b) {
    const double u = fp64_unit_roundoff;
    if (std::is_same<T, double>::value) return gamma_bound(static_cast<double>(b), u);
    return 1.4142135623730951 * gamma_bound(static_cast<double>(b) + 6, u);
  }

  /// With the bounds of S's rows (`source`) and of U's own recursion (`own`), and the feed's
  /// GEMM bound plus gamma_2 for its beta C = B_U, U's rows have own + feed + gamma_2, first
  /// order in u; the block has the larger.
  static double combined_bound(double source, double feed, double own) {
    return std::max(source, own + feed + gamma_bound(2, fp64_unit_roundoff));
  }

  /// Rows [r0, r1) and columns [c0, c1) of op(A): the block of A that holds them, which the
  /// GEMM takes with op_.
  ConstMatrix op_block(std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) const {
    return op_ == Op::None ? block(A_, r0, r1, c0, c1) : block(A_, c0, c1, r0, r1);
  }

  /// Rows (side L) or columns (side R) [i0, i1) of B.
  Matrix part_of_b(std::int64_t i0, std::int64_t i1) const {
    return left_ ? block(B_, i0, i1, 0, B_.extent(1)) : block(B_, 0, B_.extent(0), i0, i1);
  }

  /// B_U += sign op(A)_US B_S (side L) or B_U += sign B_S op(A)_SU (side R); its GEMM bound.
  double feed(std::int64_t s0, std::int64_t s1, std::int64_t u0, std::int64_t u1, const T& sign) {
    const ConstMatrix source = part_of_b(s0, s1);
    if (left_) {
      return level3_gemm(space_, op_, op_block(u0, u1, s0, s1), Op::None, source, sign, T(1),
                         part_of_b(u0, u1), options_, scratch_, sum_);
    }
    return level3_gemm(space_, Op::None, source, op_, op_block(s0, s1, u0, u1), sign, T(1),
                       part_of_b(u0, u1), options_, scratch_, sum_);
  }

  /// op(A)'s diagonal block [b0, b1) applied to B's rows or columns in FP64; its bound.
  double diagonal_block(std::int64_t b0, std::int64_t b1) {
    using Block = DiagonalBlock<ExecSpace, ConstMatrix, Matrix>;
    using InRegisters =
        DiagonalBlockInRegisters<ExecSpace, ConstMatrix, Matrix, diagonal_vectors<T>()>;
    // GPUs: a team of 64 threads, one right-hand side each; hosts: one thread a team, 64 in turn.
    constexpr bool host = is_host_space<ExecSpace>();
    using PerThread =
        DiagonalBlockPerThread<ExecSpace, ConstMatrix, Matrix, per_thread_rows<T>(),
                               host ? 1 : per_thread_team_size, host ? per_thread_team_size : 1>;
    const Block f{A_,
                  B_,
                  b0,
                  b1,
                  left_,
                  op_ != Op::None,
                  op_ == Op::ConjugateTranspose,
                  before_,
                  unit_diagonal_,
                  multiply_};
    const std::int64_t vectors = left_ ? B_.extent(1) : B_.extent(0);
    if (b1 - b0 <= PerThread::max_rows) {
      launch_teams(PerThread{f, vectors}, PerThread::team_size * PerThread::vectors_per_thread,
                   PerThread::team_size, PerThread::Coefficients::shmem_size(), vectors);
    } else if constexpr (host) {
      Kokkos::parallel_for("ozaki::triangular_diagonal_block",
                           RangeLaunch<ExecSpace>(space_, 0, vectors), f);
    } else if (b1 - b0 <= InRegisters::max_rows) {
      launch_teams(InRegisters{f, vectors}, diagonal_vectors<T>(), diagonal_team_size,
                   InRegisters::Slots::shmem_size(), vectors);
    } else {
      launch_teams(f, 1, diagonal_team_size, Block::Slots::shmem_size(), vectors);
    }
    return diagonal_bound(b1 - b0);
  }

  /// A diagonal-block kernel on teams of `team_size` threads with `scratch` bytes of team
  /// scratch each, a team for every `per_team` of the `vectors` right-hand sides.
  template <class Kernel>
  void launch_teams(const Kernel& kernel, std::int64_t per_team, int team_size, std::size_t scratch,
                    std::int64_t vectors) {
    TeamLaunch<ExecSpace> policy(space_, static_cast<int>((vectors + per_team - 1) / per_team),
                                 team_size);
    policy.set_scratch_size(0, Kokkos::PerTeam(scratch));
    Kokkos::parallel_for("ozaki::triangular_diagonal_block", policy, kernel);
  }

  /// op(A)'s diagonal block [b0, b1) applied to B's rows or columns; its bound.
  double recurse(std::int64_t b0, std::int64_t b1) {
    if (b1 - b0 <= leaf_) return diagonal_block(b0, b1);
    const std::int64_t h = b0 + split_point(b1 - b0);
    // S: the half whose entries come first along op(A)'s off-diagonal rows.
    const std::int64_t s0 = before_ ? b0 : h, s1 = before_ ? h : b1;
    const std::int64_t u0 = before_ ? h : b0, u1 = before_ ? b1 : h;
    if (multiply_) {
      const double own = recurse(u0, u1);
      const double fed = feed(s0, s1, u0, u1, T(1));
      return combined_bound(recurse(s0, s1), fed, own);
    }
    const double source = recurse(s0, s1);
    const double fed = feed(s0, s1, u0, u1, T(-1));
    return combined_bound(source, fed, recurse(u0, u1));
  }

  ExecSpace space_;
  bool multiply_, left_, before_ = false;
  Op op_;
  bool unit_diagonal_;
  T alpha_;
  ConstMatrix A_;
  Matrix B_;
  Options options_;
  PartsScratch<ExecSpace>& scratch_;
  std::int64_t leaf_ = 1;
  ReportSum sum_;
};

/// ozaki::trsm (multiply false) or ozaki::trmm on Views of any layout.
template <class ExecSpace, class AViewType, class BViewType, class T>
Report triangular_views(const ExecSpace& space, bool multiply, const char side[], const char uplo[],
                        const char trans[], const char diag[], const T& alpha, const AViewType& A,
                        const BViewType& B, const Options& options,
                        PartsScratch<ExecSpace>& scratch) {
  static_assert(is_level3_scalar<T>::value,
                "ozaki::trsm, ozaki::trmm: B must hold double or Kokkos::complex<double>");
  using V = StridedViews<ExecSpace, T>;
  return TriangularRoutine<ExecSpace, T>(space, multiply, side, uplo, trans, diag, alpha,
                                         level3_view<ExecSpace, typename V::ConstMatrix>(A),
                                         level3_view<ExecSpace, typename V::Matrix>(B), options,
                                         scratch)
      .run();
}

}  // namespace Impl
}  // namespace ozaki
