#pragma once
// INT8 products with their epilogue in the GEMM (residue_products_sm90.cu), by a kernel of our
// own for compute capability 9.0: scheme II's pass of L products written as residue tiles
// (ozaki/impl/crt/residue_tiles.hpp), and W8A8's product written as scaled C entries.
// Internal to the backend; plain CUDA (no Kokkos), compiled for sm_90a alone.

#include <ozaki/impl/quantized/quantized_problem.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace ozaki {
namespace Impl {
namespace cuda {

/// P_l(r, c) = sum_k a[r lda + l kpad + k] b[c ldb + l kpad + k] for l < moduli, r < rows_a,
/// c < rows_b, written as P_l mod crt_moduli[l] into `tiles` (ResidueTiles of rows_a x rows_b,
/// plane l at l plane_bytes()).  lda = ldb = moduli kpad.
struct ResidueProducts {
  const std::int8_t* a = nullptr;
  const std::int8_t* b = nullptr;
  std::int64_t rows_a = 0, rows_b = 0, kpad = 0;
  int moduli = 0;
  std::int8_t* tiles = nullptr;
};

/// Whether the kernel can run this problem on `device`, and why not: compute capability 9.0
/// (its code is sm_90a's), kpad a multiple of 16 and at most max_k_block (exact INT32 sums),
/// 16-byte aligned operands, sizes within the bulk copies' and the grid's limits.
bool residue_products_supported(int device, const ResidueProducts& p, std::string& why_not);

/// Enqueues the products on `stream` (one launch for all moduli).  `pairs_share_b`: CTAs in
/// clusters of 2 load B's tiles once for both (the default; off for comparison, the same bits).
/// Throws ozaki::BackendError on a CUDA or driver error.
void residue_products(const ResidueProducts& p, bool pairs_share_b, cudaStream_t stream);

/// Whether the kernel can run this problem on `device`, and why not: as for the residue
/// products (compute capability 9.0, k a multiple of 16 and at most max_k_block, 16-byte
/// aligned rows with strides that are multiples of 16), and at least as many tiles of 128 x 256
/// entries as the device has multiprocessors (fewer leave multiprocessors idle, where the INT8
/// GEMM's own tiling and the separate epilogue are faster).
bool scaled_products_supported(int device, const QuantizedGemmProblem& p, std::string& why_not);

/// Enqueues W8A8's products and their epilogue (QuantizedGemmProblem) on `stream` (one launch;
/// `pairs_share_b` as for residue_products).  Throws ozaki::BackendError on a CUDA or driver
/// error.
void scaled_products(const QuantizedGemmProblem& p, bool pairs_share_b, cudaStream_t stream);

}  // namespace cuda
}  // namespace Impl
}  // namespace ozaki
