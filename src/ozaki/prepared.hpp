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
#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/pass1.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/slices/format.hpp>
#include <ozaki/impl/slices/split.hpp>
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
  if (const char* why = Impl::compat::unusable_here(space)) throw BackendError(why);
  const auto turn = Impl::instance_turn(space);
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
  // Pass 1 as a gemm call makes it (common/pass1.hpp): strided rows are read in place, or, on
  // GPU spaces, through a K-contiguous copy that the split then reads.
  using Rows = typename V::Rows;
  const bool strided = K > 1 && rows.stride(1) != 1;
  const bool copy = strided && Impl::copies_strided_rows<ExecSpace>();
  const Rows copied =
      copy ? Rows(Kokkos::view_alloc("ozaki::prepared.copy", Kokkos::WithoutInitializing), R, K)
           : Rows();
  const Rows tile_max =
      strided ? Rows(Kokkos::view_alloc("ozaki::prepared.tile_max", Kokkos::WithoutInitializing),
                     Impl::row_tiles(K), R)
              : Rows();
  typename V::ConstMatrix split_from;
  const bool nonfinite = Impl::operand_pass1(space, copy, strided && !copy, rows, copied, tile_max,
                                             p.storage_.exponents, split_from);
  if (!nonfinite) Impl::split_rows(space, split_from, p.storage_);
  space.fence();  // the copy and tile maxima are freed on return
  if (nonfinite) {
    throw InvalidArgument(
        "prepare: the operand holds NaN or Inf, which slices cannot carry; pass "
        "it to gemm as a View for the IEEE result");
  }
  return p;
}

}  // namespace ozaki
