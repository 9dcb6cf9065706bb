#pragma once
/// \file views.hpp
/// The View types ozaki's kernels work on, for one execution space.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

/// Team policy for "one team per row" kernels: 256 threads per row on a GPU (enough to stream
/// a row of thousands of elements; Kokkos' AUTO picked 32 there, leaving most of the memory
/// bandwidth unused, docs/benchmarks.md), one thread per team on host spaces.
template <class ExecSpace>
Kokkos::TeamPolicy<ExecSpace> row_policy(const ExecSpace& space, std::int64_t rows) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename ExecSpace::memory_space>::accessible) {
    return Kokkos::TeamPolicy<ExecSpace>(space, static_cast<int>(rows), Kokkos::AUTO);
  } else {
    return Kokkos::TeamPolicy<ExecSpace>(space, static_cast<int>(rows), 256);
  }
}

/// Rows read in tiles (pass 1 of a strided or copied operand, scheme II's norms) keep one
/// partial result per row and tile of this many columns of K.
constexpr std::int64_t row_tile_columns = 32;
inline std::int64_t row_tiles(std::int64_t K) {
  return (K + row_tile_columns - 1) / row_tile_columns;
}

/// f(i) for i in [0, count): 256-thread blocks on a GPU, a plain range on host spaces.
template <class ExecSpace, class Functor>
void flat_for(const char* label, const ExecSpace& space, std::int64_t count, const Functor& f) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename ExecSpace::memory_space>::accessible) {
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, count), f);
  } else {
    using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
    constexpr int block = 256;
    Kokkos::parallel_for(
        label,
        Kokkos::TeamPolicy<ExecSpace>(space, static_cast<int>((count + block - 1) / block), block),
        KOKKOS_LAMBDA(const member_type& team) {
          const std::int64_t i = std::int64_t(team.league_rank()) * block + team.team_rank();
          if (i < count) f(i);
        });
  }
}

/// f(i, j) for i in [0, rows), j in [0, cols), consecutive threads on consecutive i:
/// 256-thread blocks along i on a GPU (no 64-bit division per element), a plain range on host
/// spaces.
template <class ExecSpace, class Functor>
void grid_for(const char* label, const ExecSpace& space, std::int64_t rows, std::int64_t cols,
              const Functor& f) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename ExecSpace::memory_space>::accessible) {
    Kokkos::parallel_for(
        label,
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows * cols),
        [=](const std::int64_t idx) { f(idx % rows, idx / rows); });
  } else {
    using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
    constexpr int block = 256;
    const int blocks = static_cast<int>((rows + block - 1) / block);
    Kokkos::parallel_for(
        label, Kokkos::TeamPolicy<ExecSpace>(space, static_cast<int>(blocks * cols), block),
        KOKKOS_LAMBDA(const member_type& team) {
          const int j = team.league_rank() / blocks;
          const std::int64_t i =
              std::int64_t(team.league_rank() - j * blocks) * block + team.team_rank();
          if (i < rows) f(i, std::int64_t(j));
        });
  }
}

template <class ExecSpace>
struct Views {
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using device_type = Kokkos::Device<ExecSpace, memory_space>;
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;

  /// op(A) (M x K) or op(B)^T (N x K): every operand is seen as rows along K, so that one
  /// kernel splits both.  Transposition is a swap of extents and strides, never a copy.
  using ConstMatrix = Kokkos::View<const double**, Kokkos::LayoutStride, device_type, unmanaged>;
  using Matrix = Kokkos::View<double**, Kokkos::LayoutStride, device_type, unmanaged>;
  /// Slice digits, rows x (S * kpad), K contiguous (see schedule.hpp for the column layout).
  using Digits = Kokkos::View<std::int8_t**, Kokkos::LayoutRight, device_type>;
  /// One scale exponent per row.
  using Exponents = Kokkos::View<int*, device_type>;
  /// INT32 products, (product, n, m): m contiguous, i.e. column-major M x N per product.
  using Products = Kokkos::View<std::int32_t***, Kokkos::LayoutRight, device_type>;
  /// Per-product weights 2^(-8 * diagonal).
  using Weights = Kokkos::View<double*, device_type>;
  /// Per-row norms.
  using Norms = Kokkos::View<double*, device_type>;
};

/// Rows [first, first + count) of a matrix of rows (a view of the same memory).
template <class T, class... P>
Kokkos::View<T**, Kokkos::LayoutStride, P...> row_block(
    const Kokkos::View<T**, Kokkos::LayoutStride, P...>& X, std::int64_t first,
    std::int64_t count) {
  const Kokkos::LayoutStride layout(count, X.stride(0), X.extent(1), X.stride(1));
  return Kokkos::View<T**, Kokkos::LayoutStride, P...>(X.data() + first * X.stride(0), layout);
}

/// Entries [first, first + count) of a per-row view (a view of the same memory).
template <class T, class... P>
Kokkos::View<T*, P...> row_block(const Kokkos::View<T*, P...>& x, std::int64_t first,
                                 std::int64_t count) {
  return Kokkos::View<T*, P...>(x.data() + first, count);
}

}  // namespace Impl
}  // namespace ozaki
