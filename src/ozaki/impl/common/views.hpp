#pragma once
/// \file views.hpp
/// The View types ozaki's kernels work on, for one execution space.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

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
  /// The same for complex operands (complex/driver.hpp turns them into real ones).
  using ConstComplexMatrix =
      Kokkos::View<const Kokkos::complex<double>**, Kokkos::LayoutStride, device_type, unmanaged>;
  using ComplexMatrix =
      Kokkos::View<Kokkos::complex<double>**, Kokkos::LayoutStride, device_type, unmanaged>;
  /// int8 rows, K contiguous: slices (slices/schedule.hpp has the column layout), residues,
  /// magnitudes.
  using Digits = Kokkos::View<std::int8_t**, Kokkos::LayoutRight, device_type>;
  /// One scale exponent (or bit count) per row.
  using Exponents = Kokkos::View<int*, device_type>;
  /// INT32 products, (product, n, m): m contiguous, i.e. column-major M x N per product.
  using Products = Kokkos::View<std::int32_t***, Kokkos::LayoutRight, device_type>;
  /// Per-product weights 2^(-8 * diagonal).
  using Weights = Kokkos::View<double*, device_type>;
  /// Per-row norms.
  using Norms = Kokkos::View<double*, device_type>;
  /// Per-row, per-tile partial results (tile, row): row maxima, partial sums, K-contiguous copies.
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, device_type>;
  /// Per-tile integer partial results (tile, row): the accurate rule's row minima.
  using IntTiles = Kokkos::View<int**, Kokkos::LayoutRight, device_type>;
  /// Per-tile packed counts (tile, row): scheme II's norm tiles' layer bins (crt/coverage.hpp).
  using TileCounts = Kokkos::View<std::uint64_t**, Kokkos::LayoutRight, device_type>;
  /// Per-row counts (value, row), consecutive rows contiguous: the coverage certificate's.
  using RowCounts = Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, device_type>;
};

/// Strided views of one scalar type on one execution space.
template <class ExecSpace, class T>
struct StridedViews {
  using device_type = typename Views<ExecSpace>::device_type;
  using unmanaged = typename Views<ExecSpace>::unmanaged;
  using ConstMatrix = Kokkos::View<const T**, Kokkos::LayoutStride, device_type, unmanaged>;
  using Matrix = Kokkos::View<T**, Kokkos::LayoutStride, device_type, unmanaged>;
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

/// Rows [r0, r1) and columns [c0, c1) of a strided matrix (a view of the same memory).
template <class Matrix>
Matrix block(const Matrix& X, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  const Kokkos::LayoutStride layout(r1 - r0, X.stride(0), c1 - c0, X.stride(1));
  return Matrix(X.data() + r0 * X.stride(0) + c0 * X.stride(1), layout);
}

/// op(X) as a strided view: transposition swaps extents and strides.
template <class Matrix>
Matrix transposed_if(const Matrix& X, bool transpose) {
  if (!transpose) return X;
  const Kokkos::LayoutStride layout(X.extent(1), X.stride(1), X.extent(0), X.stride(0));
  return Matrix(X.data(), layout);
}

/// Whether two matrices are one: the same elements at the same places (not merely equal
/// values).  Never for shape-only views (no data yet: a captured call's copies), which may come
/// to hold different elements.
template <class Matrix>
bool same_matrix(const Matrix& X, const Matrix& Y) {
  return X.data() != nullptr && X.data() == Y.data() && X.extent(0) == Y.extent(0) &&
         X.extent(1) == Y.extent(1) && X.stride(0) == Y.stride(0) && X.stride(1) == Y.stride(1);
}

/// A rows x K row-major (K-contiguous) buffer seen as a matrix of rows.
template <class ExecSpace>
typename Views<ExecSpace>::ConstMatrix k_contiguous_rows(
    const typename Views<ExecSpace>::Rows& rows) {
  const std::int64_t count = rows.extent(0), K = rows.extent(1);
  return typename Views<ExecSpace>::ConstMatrix(rows.data(), Kokkos::LayoutStride(count, K, K, 1));
}

/// True where the space's memory is host memory: host spaces run a team as one thread and read
/// strided rows in place; GPU spaces copy such rows where a kernel reads them along K.
template <class ExecSpace>
constexpr bool is_host_space() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                    typename ExecSpace::memory_space>::accessible;
}

}  // namespace Impl
}  // namespace ozaki
