#pragma once
/// \file native.hpp
/// FP64 GEMM through KokkosBlas::gemm, used for Algorithm::Native and for the reported
/// fallbacks (NaN/Inf inputs).
///
/// Operands reach ozaki as strided views.  Kokkos Kernels only hands LayoutLeft/LayoutRight
/// views to vendor BLAS (cuBLAS), so every operand with a unit stride is re-expressed as a
/// LayoutLeft view, transposed where its rows are contiguous, and a row-major C is handled as
/// C^T = op(B)^T op(A)^T.  Only truly strided operands take Kokkos Kernels' generic kernel.

#include <ozaki/impl/kokkos_compat.hpp>
#include <ozaki/impl/views.hpp>

#include <algorithm>
#include <cstdint>

namespace ozaki {
namespace Impl {

template <class ExecSpace>
struct NativeGemm {
  using V = Views<ExecSpace>;
  using ConstLeft = Kokkos::View<const double**, Kokkos::LayoutLeft, typename V::device_type,
                                 typename V::unmanaged>;
  using Left = Kokkos::View<double**, Kokkos::LayoutLeft, typename V::device_type,
                            typename V::unmanaged>;

  static bool has_unit_stride(std::size_t extent, std::size_t stride) {
    return stride == 1 || extent <= 1;
  }

  /// X (rows x cols, strided) as a column-major view, or its transpose when X is row-major.
  /// `transposed` tells which.  Requires a unit stride in one dimension.
  template <class View, class LeftView>
  static LeftView as_left(const View& X, bool& transposed) {
    transposed = !has_unit_stride(X.extent(0), X.stride(0));
    const std::size_t rows = transposed ? X.extent(1) : X.extent(0);
    const std::size_t cols = transposed ? X.extent(0) : X.extent(1);
    const std::size_t ld_stride = transposed ? X.stride(0) : X.stride(1);
    const std::size_t ld = std::max<std::size_t>({ld_stride, rows, 1});
    // A column-major view with leading dimension ld: the first `rows` rows of rows=ld.
    return Kokkos::subview(LeftView(X.data(), ld, cols), Kokkos::make_pair<std::size_t>(0, rows),
                           Kokkos::ALL());
  }

  static bool blas_compatible(const typename V::ConstMatrix& X) {
    return has_unit_stride(X.extent(0), X.stride(0)) || has_unit_stride(X.extent(1), X.stride(1));
  }

  /// C = alpha op(A) op(B) + beta C, A and B as stored, op given by the flags.
  static void run(const ExecSpace& space, bool trans_a, bool trans_b, double alpha,
                  const typename V::ConstMatrix& A, const typename V::ConstMatrix& B, double beta,
                  const typename V::Matrix& C) {
    const bool all_unit = blas_compatible(A) && blas_compatible(B) &&
                          (has_unit_stride(C.extent(0), C.stride(0)) ||
                           has_unit_stride(C.extent(1), C.stride(1)));
    if (!all_unit) {
      compat::native_gemm(space, trans_a ? "T" : "N", trans_b ? "T" : "N", alpha, A, B, beta, C);
      return;
    }
    bool c_transposed = false;
    const Left Cl = as_left<typename V::Matrix, Left>(C, c_transposed);
    // Row-major C: compute C^T = op(B)^T op(A)^T, i.e. swap the operands and flip both ops.
    const typename V::ConstMatrix& X = c_transposed ? B : A;
    const typename V::ConstMatrix& Y = c_transposed ? A : B;
    const bool op_x = c_transposed ? !trans_b : trans_a;
    const bool op_y = c_transposed ? !trans_a : trans_b;
    bool x_transposed = false, y_transposed = false;
    const ConstLeft Xl = as_left<typename V::ConstMatrix, ConstLeft>(X, x_transposed);
    const ConstLeft Yl = as_left<typename V::ConstMatrix, ConstLeft>(Y, y_transposed);
    compat::native_gemm(space, (op_x != x_transposed) ? "T" : "N",
                        (op_y != y_transposed) ? "T" : "N", alpha, Xl, Yl, beta, Cl);
  }
};

}  // namespace Impl
}  // namespace ozaki
