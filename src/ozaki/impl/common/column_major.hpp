#pragma once
/// \file column_major.hpp
/// A GEMM on strided views re-expressed as a column-major BLAS call, the form vendor BLAS
/// (cuBLAS, and Kokkos Kernels' TPL paths) takes.
///
/// Every operand with a unit stride is re-expressed as a column-major matrix, transposed
/// where its rows are contiguous, and a row-major C is handled as C^T = op(B)^T op(A)^T.

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ozaki {
namespace Impl {

/// A BLAS operation on a stored matrix.  BLAS names three: N (neither), T (transpose) and C
/// (conjugate transpose); "conjugate without transpose" has no character, and appears when a
/// conjugate-transposed operand stored row-major, or a row-major C, is re-expressed in
/// column-major form.
struct BlasOp {
  bool transpose = false, conjugate = false;
  bool has_char() const { return transpose || !conjugate; }
  const char* blas_char() const { return !transpose ? "N" : conjugate ? "C" : "T"; }
  /// op(X) written as an operation on X^T (X row-major is X^T column-major).
  BlasOp on_transpose() const { return {!transpose, conjugate}; }
  bool operator==(const BlasOp& o) const {
    return transpose == o.transpose && conjugate == o.conjugate;
  }
  bool operator!=(const BlasOp& o) const { return !(*this == o); }
};

/// C (m x n, column-major, ldc) = alpha op(X) op(Y) + beta C, X and Y column-major.
template <class Scalar>
struct ColumnMajorProduct {
  BlasOp op_x, op_y;
  std::int64_t m = 0, n = 0, k = 0;
  const Scalar* x = nullptr;
  std::int64_t ldx = 0;
  const Scalar* y = nullptr;
  std::int64_t ldy = 0;
  Scalar* c = nullptr;
  std::int64_t ldc = 0;
};
using ColumnMajorGemm = ColumnMajorProduct<double>;

/// `count` column-major products of one form, product i's X, Y and C at i stride_x,
/// i stride_y and i stride_c elements past the first's (BLAS's strided batch).
struct StridedBatch {
  std::int64_t count = 0;
  std::int64_t stride_x = 0, stride_y = 0, stride_c = 0;
};

inline bool has_unit_stride(std::size_t extent, std::size_t stride) {
  return stride == 1 || extent <= 1;
}

/// Whether X is stored row-major: unit stride along its columns, not along its rows (a
/// column-major or single-row/column X is not).
template <class View>
bool stored_row_major(const View& X) {
  return !has_unit_stride(X.extent(0), X.stride(0)) && has_unit_stride(X.extent(1), X.stride(1));
}

template <class View>
bool column_or_row_major(const View& X) {
  return has_unit_stride(X.extent(0), X.stride(0)) || has_unit_stride(X.extent(1), X.stride(1));
}

/// C = alpha op(A) op(B) + beta C (A, B as stored) in column-major form; false when an
/// operand has no unit stride, or when the form needs "conjugate without transpose".
template <class ConstMatrix, class Matrix, class Scalar>
bool as_column_major(BlasOp op_a, BlasOp op_b, const ConstMatrix& A, const ConstMatrix& B,
                     const Matrix& C, ColumnMajorProduct<Scalar>& out) {
  if (!column_or_row_major(A) || !column_or_row_major(B) || !column_or_row_major(C)) return false;
  // A row-major C is computed as C^T = op(B)^T op(A)^T.
  const bool c_row_major = !has_unit_stride(C.extent(0), C.stride(0));
  const ConstMatrix& X = c_row_major ? B : A;
  const ConstMatrix& Y = c_row_major ? A : B;
  const BlasOp op_x = c_row_major ? op_b.on_transpose() : op_a;
  const BlasOp op_y = c_row_major ? op_a.on_transpose() : op_b;
  out.m = c_row_major ? C.extent(1) : C.extent(0);
  out.n = c_row_major ? C.extent(0) : C.extent(1);
  out.k = op_a.transpose ? A.extent(0) : A.extent(1);
  out.c = C.data();
  out.ldc = std::max<std::int64_t>(
      {static_cast<std::int64_t>(c_row_major ? C.stride(0) : C.stride(1)), out.m, 1});
  // An operand stored row-major is its transpose stored column-major.
  auto place = [](const ConstMatrix& V, BlasOp op, BlasOp& placed, const Scalar*& ptr,
                  std::int64_t& ld) {
    const bool row_major = !has_unit_stride(V.extent(0), V.stride(0));
    placed = row_major ? op.on_transpose() : op;
    ptr = V.data();
    const std::int64_t rows = row_major ? V.extent(1) : V.extent(0);
    ld = std::max<std::int64_t>(
        {static_cast<std::int64_t>(row_major ? V.stride(0) : V.stride(1)), rows, 1});
  };
  place(X, op_x, out.op_x, out.x, out.ldx);
  place(Y, op_y, out.op_y, out.y, out.ldy);
  return out.op_x.has_char() && out.op_y.has_char();
}

}  // namespace Impl
}  // namespace ozaki
