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
};

}  // namespace Impl
}  // namespace ozaki
