#pragma once
/// \file embedding.hpp
/// Complex GEMM as one real GEMM (docs/design.md §8).  With x = op(A)(m, k) and
/// y = op(B)(k, n), conjugation applied,
///
///   Re c_mn = sum_k (Re x Re y - Im x Im y),   Im c_mn = sum_k (Im x Re y + Re x Im y),
///
/// so the complex product is the real product of
///
///   X_e (2M x 2K):  row 2m   = ( Re x_m0, -Im x_m0,  Re x_m1, -Im x_m1, ... )
///                   row 2m+1 = ( Im x_m0,  Re x_m0,  Im x_m1,  Re x_m1, ... )
///   Y_e (N x 2K):   row n    = ( Re y_0n,  Im y_0n,  Re y_1n,  Im y_1n, ... )
///
/// as C_e = X_e Y_e^T (2M x N): C_e(2m, n) = Re c_mn, C_e(2m + 1, n) = Im c_mn.  Every entry of
/// X_e and Y_e is an entry of A or B, negated or not: the embedding is exact, and the real
/// schemes see a real GEMM of inner length 2K whose rows 2m and 2m+1 hold the same values
/// (the same scale exponent, norms and bits).  C_e's rows interleave as a complex C stored with
/// unit stride along m does (real part, then imaginary part), so C_e can be that C itself,
/// seen as doubles.

#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/views.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

/// The rows of X (R x K complex, conjugated if `conjugate`) as K-contiguous real rows of 2K:
/// doubled (2R rows, the X_e above) or not (R rows, the Y_e above).
///
/// Where X's rows are K-contiguous, consecutive threads take consecutive k of a row: reads and
/// writes coalesce.  Where X is stored along its rows (op(A) of a column-major A), 32 x 32
/// tiles go through team scratch, read along X's contiguous index and written along K: the
/// direct form, coalesced reads but 16-byte writes to 32 different rows per warp, ran far
/// below memory speed (the benchmarks diary in docs/history/, "the split kernels per kernel").
template <class ExecSpace>
void embed_complex_rows(const ExecSpace& space,
                        const typename Views<ExecSpace>::ConstComplexMatrix& X, bool conjugate,
                        bool doubled, const typename Views<ExecSpace>::Rows& out) {
  const std::int64_t R = X.extent(0), K = X.extent(1);
  const double s = conjugate ? -1.0 : 1.0;
  auto write =
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t k, const Kokkos::complex<double>& x) {
    const double re = x.real(), im = s * x.imag();
    if (doubled) {
      out(2 * r, 2 * k) = re;
      out(2 * r, 2 * k + 1) = -im;
      out(2 * r + 1, 2 * k) = im;
      out(2 * r + 1, 2 * k + 1) = re;
    } else {
      out(r, 2 * k) = re;
      out(r, 2 * k + 1) = im;
    }
  };
  if (!(X.stride(0) == 1 && R > 1)) {
    grid_for(
        "ozaki::complex::embed", space, K, R,
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t r) { write(r, k, X(r, k)); });
    return;
  }
  using policy_type = TeamLaunch<ExecSpace>;
  using member_type = typename policy_type::member_type;
  constexpr int edge = 32;
  // tile(part, kk, rr), real and imaginary parts apart (team scratch is 8-byte aligned, a
  // Kokkos::complex<double> wants 16); the pitch of edge + 1 keeps the transposed reads
  // conflict-free.
  using Tile = Kokkos::View<double[2][edge][edge + 1], typename ExecSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t tiles_r = (R + edge - 1) / edge, tiles_k = (K + edge - 1) / edge;
  policy_type policy(space, static_cast<int>(tiles_r * tiles_k), is_host_space<ExecSpace>() ? 1 : 8,
                     edge);
  policy.set_scratch_size(0, Kokkos::PerTeam(Tile::shmem_size()));
  Kokkos::parallel_for(
      "ozaki::complex::embed_tiled", policy, KOKKOS_LAMBDA(const member_type& team) {
        const std::int64_t r0 = (team.league_rank() % tiles_r) * edge;
        const std::int64_t k0 = (team.league_rank() / tiles_r) * edge;
        Tile tile(team.team_scratch(0));
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, edge), [&](const int kk) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, edge), [&](const int rr) {
            if (r0 + rr < R && k0 + kk < K) {
              const Kokkos::complex<double> x = X(r0 + rr, k0 + kk);
              tile(0, kk, rr) = x.real();
              tile(1, kk, rr) = x.imag();
            }
          });
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, edge), [&](const int rr) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, edge), [&](const int kk) {
            if (r0 + rr < R && k0 + kk < K) {
              write(r0 + rr, k0 + kk, Kokkos::complex<double>(tile(0, kk, rr), tile(1, kk, rr)));
            }
          });
        });
      });
}

/// C = alpha (C_e(2m, n) + i C_e(2m + 1, n)) + beta C; beta == 0 does not read C.
template <class ExecSpace>
void combine_complex(const ExecSpace& space, const typename Views<ExecSpace>::Matrix& Ce,
                     Kokkos::complex<double> alpha, Kokkos::complex<double> beta,
                     const typename Views<ExecSpace>::ComplexMatrix& C) {
  const bool no_beta = beta.real() == 0 && beta.imag() == 0;
  grid_for(
      "ozaki::complex::combine", space, C.extent(0), C.extent(1),
      KOKKOS_LAMBDA(const std::int64_t m, const std::int64_t n) {
        const Kokkos::complex<double> p(Ce(2 * m, n), Ce(2 * m + 1, n));
        C(m, n) = no_beta ? alpha * p : alpha * p + beta * C(m, n);
      });
}

}  // namespace Impl
}  // namespace ozaki
