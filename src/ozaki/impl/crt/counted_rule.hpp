#pragma once
/// \file counted_rule.hpp
/// Scheme II's counted fast rule for wide exponent ranges (rules.hpp, crt_counted_model): the
/// fast rule's bits, the moduli count from an INT8 lower bound of |A||B| made of window
/// magnitudes rounded down (window_magnitudes7), reduced to the ratio G (counted_ratio).

#include <ozaki/impl/crt/norms.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

/// Counted fast rule (rules.hpp, crt_counted_model): the window shift of a row with lower
/// 1-norm bound l1 (of x 2^-e) along K: 2^-s is the power of two just above
/// crt_window_mean_factor l1 / K, s in [0, crt_max_window_shift].
KOKKOS_INLINE_FUNCTION int crt_window_shift(double l1, std::int64_t K) {
  if (!(l1 > 0)) return 0;
  int e = 0;
  compat::frexp(l1 * crt_window_mean_factor / static_cast<double>(K), &e);
  return -e < 0 ? 0 : (-e > crt_max_window_shift ? crt_max_window_shift : -e);
}

/// min(127, floor(|x| 2^(7+s-e))): exact (a power-of-two scaling of a finite double either
/// is exact or underflows below 1, where the floor is 0 either way).
KOKKOS_INLINE_FUNCTION int window_magnitude7(double x, int e, int s) {
  const double v = compat::ldexp(magnitude(x), 7 + s - e);
  return v >= 127 ? 127 : static_cast<int>(v);
}

/// Counted rule, step 1: the window magnitudes of every row (shift from its l1), into
/// rows x kpad int8 storage with zero padding (magnitudes7's layout).
template <class ExecSpace>
void window_magnitudes7(const ExecSpace& space, const typename Views<ExecSpace>::ConstMatrix& X,
                        const typename Views<ExecSpace>::Exponents& exponents,
                        const typename Views<ExecSpace>::Norms& l1,
                        const typename Views<ExecSpace>::Digits& q) {
  const std::int64_t rows = X.extent(0), K = X.extent(1);
  for_each_quad(
      "ozaki::crt::window_magnitudes7", space, X, q.extent(0), q.extent(1),
      KOKKOS_LAMBDA(const int r) {
        return Kokkos::pair<int, int>(r < rows ? exponents(r) : 0,
                                      r < rows ? crt_window_shift(l1(r), K) : 0);
      },
      KOKKOS_LAMBDA(const Kokkos::pair<int, int>& e_shift, const int r, const std::int64_t k,
                    const double(&x)[4]) {
        std::uint32_t word = 0;
        for (int j = 0; j < 4; ++j)
          word |= std::uint32_t(window_magnitude7(x[j], e_shift.first, e_shift.second)) << (8 * j);
        *reinterpret_cast<std::uint32_t*>(&q(r, k)) = word;
      });
}

/// Counted rule, step 2: G = max_mn n_m n_n 2^(s_m+s_n) / Plo_mn from the chunks of the
/// window product (+Inf where some Plo_mn = 0 under nonzero norms).  One wait.  A team per
/// column n of C, its threads on consecutive m (coalesced reads of Plo): about twice as fast as
/// a flat index over the M N entries (its 64-bit division and remainder per entry, most
/// likely).  Still far from the memory time of reading Plo: the per-entry frexp, ldexp and
/// division remain (per-row scaled norms would remove the first two).
template <class ExecSpace>
double counted_ratio(const ExecSpace& space, const typename Views<ExecSpace>::Products& P,
                     std::int64_t chunks, std::int64_t K,
                     const typename Views<ExecSpace>::Norms& l2a,
                     const typename Views<ExecSpace>::Norms& l1a,
                     const typename Views<ExecSpace>::Norms& l2b,
                     const typename Views<ExecSpace>::Norms& l1b) {
  using member_type = typename TeamLaunch<ExecSpace>::member_type;
  const std::int64_t M = l2a.extent(0), N = l2b.extent(0);
  double G = 0;
  Kokkos::parallel_reduce(
      "ozaki::crt::counted_ratio", row_policy(space, N),
      KOKKOS_LAMBDA(const member_type& team, double& w) {
        const std::int64_t n = team.league_rank();
        const double norm_b = l2b(n);
        if (!(norm_b > 0)) return;  // exact zero products (the same for the whole team)
        const int shift_b = crt_window_shift(l1b(n), K);
        double worst = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, M),
            [&](const std::int64_t m, double& v) {
              if (!(l2a(m) > 0)) return;
              double p = 0;  // exact: a few chunks of < 2^31
              for (std::int64_t c = 0; c < chunks; ++c) p += P(c, n, m);
              const double g =
                  p > 0 ? compat::ldexp(l2a(m) * norm_b / p, crt_window_shift(l1a(m), K) + shift_b)
                        : positive_infinity();
              if (g > v) v = g;
            },
            Kokkos::Max<double>(worst));
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          if (worst > w) w = worst;
        });
      },
      Kokkos::Max<double>(G));
  return G > 0 ? G : 0.0;
}

}  // namespace Impl
}  // namespace ozaki
