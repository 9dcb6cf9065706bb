#pragma once
/// \file prepared.hpp
/// ozaki::PreparedOperand: op(A) or op(B) split into int8 slices once, multiplied many times.
///
///   auto pa = ozaki::prepare(space, ozaki::Side::A, "T", A, 7);    // split op(A) = A^T once
///   for (auto& B : many) ozaki::gemm(space, "N", "N", 1.0, pa, B, 0.0, C, options, ws);
///
/// A prepared operand stands in for its View in ozaki::gemm (with transpose "N": it already
/// holds op(X)).  It keeps only the slices and scale exponents, no FP64 values, so it cannot
/// run Algorithm::Native, cannot stand in for an operand holding NaN or Inf (prepare() throws),
/// and it reflects the View as it was when prepared: changing the View later does not change it.
/// Its slice count fixes S for the calls it takes part in.

#include <ozaki/errors.hpp>
#include <ozaki/impl/arguments.hpp>
#include <ozaki/impl/split.hpp>
#include <ozaki/impl/workspace_layout.hpp>
#include <ozaki/options.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace ozaki {

/// Which operand of C = op(A) op(B) a prepared operand is.
enum class Side { A, B };

template <class ExecSpace = Kokkos::DefaultExecutionSpace>
class PreparedOperand {
 public:
  using execution_space = ExecSpace;
  PreparedOperand() = default;

  Side side() const { return side_; }
  int slices() const { return storage_.slices; }
  /// M for Side::A, N for Side::B.
  std::int64_t rows() const { return rows_; }
  std::int64_t k() const { return storage_.k; }
  /// Device bytes held (slices and exponents).
  std::size_t bytes() const {
    return storage_.digits.span() + storage_.exponents.span() * sizeof(int);
  }
  /// Internal: the split storage.
  const Impl::SliceStorage<ExecSpace>& storage() const { return storage_; }

 private:
  template <class E, class V>
  friend PreparedOperand<E> prepare(const E&, Side, const char[], const V&, int);
  Side side_ = Side::A;
  std::int64_t rows_ = 0;
  Impl::SliceStorage<ExecSpace> storage_;
};

/// Splits op(X) (Side::A) or op(X)^T (Side::B) into `slices` int8 slices on `space`.
/// Throws ozaki::InvalidArgument for a bad slice count or transpose, or when X holds NaN/Inf.
template <class ExecSpace, class ViewType>
PreparedOperand<ExecSpace> prepare(const ExecSpace& space, Side side, const char trans[],
                                   const ViewType& X, int slices) {
  static_assert(Kokkos::is_view<ViewType>::value && ViewType::rank == 2 &&
                    std::is_same<typename ViewType::non_const_value_type, double>::value,
                "ozaki::prepare: X must be a rank-2 View of double");
  using V = Impl::Views<ExecSpace>;
  if (slices < 1 || slices > max_slices) {
    throw InvalidArgument("prepare: slices = " + std::to_string(slices) + ": expected 1.." +
                          std::to_string(max_slices));
  }
  const bool t = Impl::parse_trans(trans, "trans");
  const typename V::ConstMatrix stored(
      X.data(), Kokkos::LayoutStride(X.extent(0), X.stride(0), X.extent(1), X.stride(1)));
  const typename V::ConstMatrix op = Impl::transposed_if(stored, t);
  // Rows along K: op(A) for A, op(B)^T for B.
  typename V::ConstMatrix rows = side == Side::A ? op : Impl::transposed_if(op, true);
  const std::int64_t R = rows.extent(0), K = rows.extent(1);
  PreparedOperand<ExecSpace> p;
  p.side_ = side;
  p.rows_ = R;
  const std::int64_t kpad = Impl::padded_k(K);
  p.storage_ = Impl::SliceStorage<ExecSpace>{
      typename V::Digits(Kokkos::view_alloc("ozaki::prepared.digits", Kokkos::WithoutInitializing),
                         Impl::padded_rows(R), slices * kpad),
      typename V::Exponents(
          Kokkos::view_alloc("ozaki::prepared.exponents", Kokkos::WithoutInitializing), R),
      slices,
      K,
      kpad,
      side == Side::B};
  bool nonfinite = false;
  if (Impl::copies_strided_rows<ExecSpace>() && K > 1 && rows.stride(1) != 1) {
    // GPU spaces read rows K-contiguously (see copy_to_k_contiguous).
    using Rows = typename Impl::RowCopyRegion<ExecSpace>::Rows;
    const Rows copy(Kokkos::view_alloc("ozaki::prepared.copy", Kokkos::WithoutInitializing), R, K);
    const Rows tile_max(Kokkos::view_alloc("ozaki::prepared.tile_max", Kokkos::WithoutInitializing),
                        (K + 31) / 32, R);
    Impl::copy_to_k_contiguous(space, rows, copy, tile_max);
    nonfinite = Impl::exponents_from_tile_max(space, tile_max, p.storage_.exponents);
    if (!nonfinite) {
      Impl::split_rows(space,
                       typename V::ConstMatrix(copy.data(), Kokkos::LayoutStride(R, K, K, 1)),
                       p.storage_);
    }
    space.fence();  // the copy is freed on return
  } else {
    nonfinite = Impl::row_scale_exponents(space, rows, p.storage_.exponents);
    if (!nonfinite) Impl::split_rows(space, rows, p.storage_);
  }
  if (nonfinite) {
    throw InvalidArgument(
        "prepare: the operand holds NaN or Inf, which slices cannot carry; pass "
        "it to gemm as a View for the IEEE result");
  }
  return p;
}

}  // namespace ozaki
