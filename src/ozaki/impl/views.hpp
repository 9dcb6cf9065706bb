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

}  // namespace Impl
}  // namespace ozaki
