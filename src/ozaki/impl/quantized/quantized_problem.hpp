#pragma once
/// \file quantized_problem.hpp
/// W8A8's products and epilogue as one problem (ozaki/quantized.hpp), the form in which the
/// library hands a call to a backend's fused kernel (FusedQuantizedGemmBackend, backend.hpp).
/// Plain C++ without Kokkos: the CUDA backend's kernel, built without Kokkos, takes it too.
///
///   C(r, c) = round_C(fma(float(P(r, c)), row_scales[r] column_scales[c], bias)),
///   P(r, c) = sum_k a[r lda + k] b[c ldb + k]  (exact in INT32: k <= quantized_k_block),
///
/// bias = bias_rows[r] or bias_columns[c] (one of them, or neither: 0), C(r, c) at
/// c[r c_row_stride + c c_column_stride] elements.  The rows of a and b are K-contiguous,
/// 16-byte aligned, their strides (bytes) multiples of 16, K a multiple of 16; the scales and
/// the bias contiguous floats.  The same bits as the INT8 GEMM followed by the portable
/// epilogue, the rounding steps being the same.
///
/// `partials`: where the kernel's 128 x 256 tiles of P are fewer than the GPU's
/// multiprocessors (the small-batch shapes, memory-bound on b), the kernel may split K across
/// CTAs; each adds its partial sums into these INT32 entries (exact: every partial and every
/// sum of partials is a sum of a subset of P's terms, within the bound above), and the last
/// CTA of a tile to arrive turns the totals into C.  quantized_partials_bytes(rows, columns)
/// bytes, 256-byte aligned, or null (no split: the kernel then needs as many tiles as
/// multiprocessors).

#include <ozaki/impl/crt/residue_tiles.hpp>

#include <cstdint>

namespace ozaki {
namespace Impl {

enum class QuantizedOutput { Float, BFloat16, Float16 };

struct QuantizedGemmProblem {
  std::int64_t rows = 0, columns = 0, k = 0;
  const std::int8_t* a = nullptr;
  std::int64_t lda = 0;
  const std::int8_t* b = nullptr;
  std::int64_t ldb = 0;
  const float* row_scales = nullptr;
  const float* column_scales = nullptr;
  const float* bias_rows = nullptr;
  const float* bias_columns = nullptr;
  void* c = nullptr;
  std::int64_t c_row_stride = 0, c_column_stride = 0;
  QuantizedOutput output = QuantizedOutput::Float;
  void* partials = nullptr;
};

/// A K split's workspace: rows x columns INT32 sums (row-major), then one arrival counter per
/// 128 x 256 tile at quantized_arrivals_offset.  Zeroed before each split launch.
inline std::int64_t quantized_arrivals_offset(std::int64_t rows, std::int64_t columns) {
  return (rows * columns * 4 + 255) / 256 * 256;
}
inline std::int64_t quantized_partials_bytes(std::int64_t rows, std::int64_t columns) {
  const ResidueTiles t = ResidueTiles::of(rows, columns);
  return quantized_arrivals_offset(rows, columns) + t.tiles_r * t.tiles_c * 4;
}

/// The calls whose layout reserves a split's workspace: fewer 128 x 256 tiles than this, more
/// than any GPU the kernel runs on has multiprocessors (an H100 or H200 has 132).  At most
/// 256 tiles' INT32 sums: 32 MiB, as much as the unfused path's products.
constexpr std::int64_t quantized_split_tiles = 256;

}  // namespace Impl
}  // namespace ozaki
