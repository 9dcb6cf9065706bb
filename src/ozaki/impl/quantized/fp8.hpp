#pragma once
/// \file fp8.hpp
/// FP8 e4m3 GEMM with DeepGEMM's block scales (ozaki/fp8.hpp, docs/design.md §14.1): the
/// quantizers (1 x 128 blocks per token, 128 x 128 blocks of weights), the portable kernel
/// that computes the oracle's result, and the staging that puts operands and scales into a
/// vendor backend's form (Fp8GemmBackend, backend.hpp).
///
/// The result's definition, the same on every space that runs the portable kernel: per entry
/// and 128-column block kb of K,
///   p_kb = sum_{k in kb} A(m, k) W(n, k)    exact in double: e4m3 values are 4-bit integers
///                                           times powers of two in [2^-9, 2^8], so a product
///                                           is 8 bits in [2^-18, 2^17] and 128 of them need
///                                           at most 43 bits from 2^-18 up;
///   s_kb = a(m, kb) * w(n / 128, kb)        float, rounded once;
///   acc  = acc + double(s_kb) * p_kb        double, kb in increasing order;
///   C(m, n) = round_C(float(acc))           float, then bfloat16 where C is.
/// A vendor's kernel accumulates in its own order and precision; its results are held to a
/// bound against this definition instead (the CUDA tests).

#include <ozaki/errors.hpp>
#include <ozaki/half_precision.hpp>
#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/quantized/amax.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// The block length along K (and the weights' block height) of every FP8 scale.
constexpr std::int64_t fp8_block = 128;
/// e4m3's largest finite value: a block's amax maps to it.
constexpr float fp8_e4m3_max = 448.0f;

inline std::int64_t fp8_blocks(std::int64_t n) { return (n + fp8_block - 1) / fp8_block; }

/// The library that runs a space's FP8 products.
template <class ExecSpace>
std::string fp8_backend_name() {
  if constexpr (Fp8GemmBackend<ExecSpace>::available) {
    return Fp8GemmBackend<ExecSpace>::name();
  } else {
    return "portable";
  }
}

/// Block quantization of X (R x K): blocks of `block_rows` rows (1 or fp8_block) by fp8_block
/// columns, scales (ceil(R / block_rows) x ceil(K / fp8_block)).  Per block: amax = max |x|,
/// scale = amax / 448 and Q = e4m3(x * (448 / amax)); an all-zero block gets scale 0 and
/// zeros; a block holding NaN or Inf gets a NaN scale and zeros, so every product with it is
/// NaN, never a finite wrong value.  One team per block.
template <class ExecSpace, class XView, class QView, class ScaleView>
void quantize_fp8_blocks(const ExecSpace& space, const XView& X, const QView& Q,
                         const ScaleView& scales, std::int64_t block_rows) {
  using Member = typename TeamLaunch<ExecSpace>::member_type;
  const std::int64_t R = X.extent(0), K = X.extent(1);
  const std::int64_t blocks_k = fp8_blocks(K), blocks = scales.extent(0) * blocks_k;
  const float max_float = std::numeric_limits<float>::max();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Kokkos::parallel_for(
      "ozaki::quantize_fp8", row_policy(space, blocks), KOKKOS_LAMBDA(const Member& team) {
        const std::int64_t b = team.league_rank(), br = b / blocks_k, bk = b % blocks_k;
        const std::int64_t r0 = br * block_rows, k0 = bk * fp8_block;
        const std::int64_t rows = R - r0 < block_rows ? R - r0 : block_rows;
        const std::int64_t cols = K - k0 < fp8_block ? K - k0 : fp8_block;
        const float amax = team_amax(team, rows * cols, [&](const std::int64_t i) {
          return X(r0 + i / cols, k0 + i % cols);
        });
        const bool finite = amax <= max_float;
        const float inverse = finite && amax > 0 ? fp8_e4m3_max / amax : 0.0f;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * cols), [&](const std::int64_t i) {
          const std::int64_t r = r0 + i / cols, k = k0 + i % cols;
          Q(r, k) = finite ? float8_e4m3::from_float(to_float(X(r, k)) * inverse) : float8_e4m3();
        });
        Kokkos::single(Kokkos::PerTeam(team),
                       [&]() { scales(br, bk) = finite ? amax / fp8_e4m3_max : nan; });
      });
}

/// The result's definition (the file comment) for every entry, one thread per entry: the
/// portable kernel, on any space; the oracle's bits.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CView>
void fp8_gemm_portable(const ExecSpace& space, const AView& A, const AScales& a, const WView& W,
                       const WScales& w, const CView& C) {
  using T = typename CView::non_const_value_type;
  const std::int64_t M = A.extent(0), N = W.extent(0), K = A.extent(1);
  const std::int64_t blocks_k = fp8_blocks(K);
  flat_for(
      "ozaki::fp8_gemm[portable]", space, M * N, KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t m = i % M, n = i / M;
        double acc = 0;
        for (std::int64_t bk = 0; bk < blocks_k; ++bk) {
          const std::int64_t k0 = bk * fp8_block, k1 = k0 + fp8_block < K ? k0 + fp8_block : K;
          double p = 0;  // exact (the file comment)
          for (std::int64_t k = k0; k < k1; ++k) {
            p += static_cast<double>(A(m, k).to_float()) * static_cast<double>(W(n, k).to_float());
          }
          const float s = a(m, bk) * w(n / fp8_block, bk);
          acc += static_cast<double>(s) * p;
        }
        C(m, n) = from_float<T>(static_cast<float>(acc));
      });
}

/// Rows of e4m3 as a vendor's FP8 GEMM takes them in place: K-contiguous, K, the first address
/// and the rows' stride multiples of 16.
template <class View>
bool fp8_rows_ready(const View& X) {
  const std::int64_t K = X.extent(1), stride = X.stride(0);
  const auto address = reinterpret_cast<std::uintptr_t>(X.data());
  return K % 16 == 0 && (K == 0 || X.stride(1) == 1) && address % 16 == 0 && stride % 16 == 0 &&
         stride >= K && X.extent(0) > 0;
}

/// C as a vendor's kernel writes it in place: rows (C(m, n) at m ldc + n) or columns (at
/// m + n ldc) contiguous, 16-byte aligned with ldc a multiple of 16 bytes.
template <class View>
bool fp8_output_ready(const View& C, bool rows) {
  using T = typename View::non_const_value_type;
  const int fast = rows ? 1 : 0, slow = rows ? 0 : 1;
  const std::int64_t ldc = C.stride(slow);
  const auto address = reinterpret_cast<std::uintptr_t>(C.data());
  return (C.extent(fast) <= 1 || C.stride(fast) == 1) && address % 16 == 0 &&
         (ldc * static_cast<std::int64_t>(sizeof(T))) % 16 == 0 &&
         ldc >= static_cast<std::int64_t>(C.extent(fast));
}

inline std::int64_t fp8_round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

/// The vendor path's scratch: operands staged where they are not ready (zero-padded rows of
/// round_up(K, 16) bytes), both scale tables in the vendor's layout (a kb-major with
/// round_up(M, 4) per block column, w n-block-major with round_up(K blocks, 4) per row), and
/// the output where C is not ready for an orientation the vendor writes (`forms`).
struct Fp8Layout {
  /// m and n padded to multiples of fp8_vendor_rows, the extents the vendor's call takes.
  std::int64_t m = 0, n = 0, k = 0, mpad = 0, npad = 0, length = 0, blocks_k = 0, lda_scales = 0,
               ldw_scales = 0;
  bool stage_a = false, stage_w = false, stage_c = false, d_row_major = true;
  std::size_t c_element = 0;
  static std::size_t aligned(std::size_t x) {
    return (x + scratch_alignment - 1) / scratch_alignment * scratch_alignment;
  }
  std::size_t a_bytes() const { return stage_a ? aligned(mpad * length) : 0; }
  std::size_t w_bytes() const { return stage_w ? aligned(npad * length) : 0; }
  std::size_t a_scale_bytes() const { return aligned(4 * blocks_k * lda_scales); }
  std::size_t w_scale_bytes() const { return aligned(4 * fp8_blocks(n) * ldw_scales); }
  std::size_t c_bytes() const { return stage_c ? aligned(c_element * mpad * npad) : 0; }
  std::size_t bytes() const {
    return a_bytes() + w_bytes() + a_scale_bytes() + w_scale_bytes() + c_bytes();
  }
};

/// The vendor's FP8 block-scaled kernels are taken with M and N in multiples of this, as
/// cuBLASLt does not offer them for every M (docs/design.md §14.1).  Other extents run on zero
/// rows padded to it (zero rows make zero products, whatever their scales), their results not
/// copied out.
constexpr std::int64_t fp8_vendor_rows = 16;

template <class AView, class WView, class CView>
Fp8Layout fp8_layout(const AView& A, const WView& W, const CView& C, const Fp8Forms& forms) {
  Fp8Layout l;
  l.m = A.extent(0);
  l.n = W.extent(0);
  l.k = A.extent(1);
  l.mpad = fp8_round_up(l.m, fp8_vendor_rows);
  l.npad = fp8_round_up(l.n, fp8_vendor_rows);
  l.length = fp8_round_up(l.k, 16);
  l.blocks_k = fp8_blocks(l.k);
  l.lda_scales = fp8_round_up(l.mpad, 4);
  l.ldw_scales = fp8_round_up(l.blocks_k, 4);
  l.stage_a = !fp8_rows_ready(A) || l.mpad != l.m;
  l.stage_w = !fp8_rows_ready(W) || l.npad != l.n;
  // A padded call's D holds the padded rows and columns too, so it is never C itself.
  const bool padded = l.mpad != l.m || l.npad != l.n;
  if (!padded && forms.rows && fp8_output_ready(C, true)) {
    l.d_row_major = true;
  } else if (!padded && forms.columns && fp8_output_ready(C, false)) {
    l.d_row_major = false;
  } else {
    l.stage_c = true;
    l.d_row_major = forms.rows;
  }
  l.c_element = sizeof(typename CView::non_const_value_type);
  return l;
}

/// X (R x K e4m3, any layout) into `rows` (>= R) K-contiguous rows of `length` bytes, zeros
/// beyond K and beyond R.
template <class ExecSpace, class View>
void stage_fp8_rows(const ExecSpace& space, const View& X, std::uint8_t* out, std::int64_t rows,
                    std::int64_t length) {
  const std::int64_t R = X.extent(0), K = X.extent(1);
  grid_for(
      "ozaki::fp8::stage", space, length, rows,
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t r) {
        out[r * length + k] = k < K && r < R ? X(r, k).bits : std::uint8_t(0);
      });
}

/// The vendor path: operands, scales and (where needed) C through the backend's layout.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CView>
void fp8_gemm_vendor(const ExecSpace& space, const Fp8Layout& l, const AView& A, const AScales& a,
                     const WView& W, const WScales& w, const CView& C, unsigned char* base) {
  using T = typename CView::non_const_value_type;
  Fp8GemmProblem p;
  p.m = l.mpad;
  p.n = l.npad;
  p.k = l.length;
  unsigned char* next = base;
  auto* staged_a = reinterpret_cast<std::uint8_t*>(next);
  next += l.a_bytes();
  auto* staged_w = reinterpret_cast<std::uint8_t*>(next);
  next += l.w_bytes();
  auto* a_scales = reinterpret_cast<float*>(next);
  next += l.a_scale_bytes();
  auto* w_scales = reinterpret_cast<float*>(next);
  next += l.w_scale_bytes();
  T* staged_c = reinterpret_cast<T*>(next);
  if (l.stage_a) stage_fp8_rows(space, A, staged_a, l.mpad, l.length);
  if (l.stage_w) stage_fp8_rows(space, W, staged_w, l.npad, l.length);
  p.a = l.stage_a ? staged_a : reinterpret_cast<const std::uint8_t*>(A.data());
  p.lda = l.stage_a ? l.length : static_cast<std::int64_t>(A.stride(0));
  p.w = l.stage_w ? staged_w : reinterpret_cast<const std::uint8_t*>(W.data());
  p.ldw = l.stage_w ? l.length : static_cast<std::int64_t>(W.stride(0));
  const std::int64_t M = l.m, lda_s = l.lda_scales, ldw_s = l.ldw_scales, blocks_k = l.blocks_k;
  // Padding entries are zeros: they scale nothing the products hold.
  grid_for(
      "ozaki::fp8::a_scales", space, lda_s, blocks_k,
      KOKKOS_LAMBDA(const std::int64_t m, const std::int64_t bk) {
        a_scales[bk * lda_s + m] = m < M ? static_cast<float>(a(m, bk)) : 0.0f;
      });
  grid_for(
      "ozaki::fp8::w_scales", space, ldw_s, fp8_blocks(l.n),
      KOKKOS_LAMBDA(const std::int64_t bk, const std::int64_t bn) {
        w_scales[bn * ldw_s + bk] = bk < blocks_k ? static_cast<float>(w(bn, bk)) : 0.0f;
      });
  p.a_scales = a_scales;
  p.lda_scales = lda_s;
  p.w_scales = w_scales;
  p.ldw_scales = ldw_s;
  const bool rows = l.d_row_major;
  p.d = l.stage_c ? static_cast<void*>(staged_c) : static_cast<void*>(C.data());
  p.ldd = l.stage_c ? (rows ? l.npad : l.mpad) : static_cast<std::int64_t>(C.stride(rows ? 0 : 1));
  p.d_row_major = rows;
  p.d_bfloat16 = std::is_same<T, bfloat16>::value;
  Fp8GemmBackend<ExecSpace>::run(space, p);
  if (l.stage_c) {
    const std::int64_t N = l.n, Npad = l.npad, Mpad = l.mpad;
    grid_for(
        "ozaki::fp8::output", space, N, M,
        KOKKOS_LAMBDA(const std::int64_t n, const std::int64_t m) {
          C(m, n) = staged_c[rows ? m * Npad + n : m + n * Mpad];
        });
  }
}

}  // namespace Impl
}  // namespace ozaki
