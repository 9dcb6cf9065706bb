#pragma once
/// \file w8a8.hpp
/// Quantized GEMM on the INT8 products (ozaki/quantized.hpp, docs/design.md §14): per-row
/// quantization of float rows, and C = diag(a) (A W^T) diag(w) + bias from int8 A and W.
///
/// The products are the backend's INT8 GEMM with INT32 accumulation, exact while no sum can
/// overflow: |A(m,k) W(n,k)| <= 2^14, so up to quantized_k_block terms per product; a longer
/// K runs in chunks of that length whose INT32 results are summed in INT64, still exact.  The
/// epilogue then rounds once per operation in a fixed order, the same on every backend:
///   s = a(m) * w(n), v = float(P) (exact below 2^24), C(m,n) = round_T(fma(v, s, bias(n))).

#include <ozaki/errors.hpp>
#include <ozaki/half_precision.hpp>
#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/quantized/amax.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// The longest K an INT32 product of int8 rows sums without overflow: 2^17 - 16 terms of at
/// most 2^14 (both entries -128) stay below 2^31, and a multiple of 16 keeps chunks aligned.
constexpr std::int64_t quantized_k_block = (std::int64_t(1) << 17) - 16;

/// Rows of int8 as the INT8 backend takes them in place: K-contiguous, and the row count, K, the
/// first row's address and the rows' stride multiples of 16 (the backends' operand form, which
/// cuBLAS's IMMA kernels need).
template <class View>
bool int8_rows_ready(const View& X) {
  const std::int64_t rows = X.extent(0), K = X.extent(1), stride = X.stride(0);
  const auto address = reinterpret_cast<std::uintptr_t>(X.data());
  return rows % 16 == 0 && K % 16 == 0 && (K == 0 || X.stride(1) == 1) && address % 16 == 0 &&
         stride % 16 == 0 && stride >= K;
}

inline std::int64_t round_up_16(std::int64_t x) { return (x + 15) / 16 * 16; }

/// X (R x K int8, any layout) into `padded_rows` K-contiguous rows of `length` bytes, zeros
/// beyond X.
template <class ExecSpace, class View>
void stage_int8_rows(const ExecSpace& space, const View& X, std::int8_t* out,
                     std::int64_t padded_rows, std::int64_t length) {
  const std::int64_t R = X.extent(0), K = X.extent(1);
  grid_for(
      "ozaki::quantized::stage", space, length, padded_rows,
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t r) {
        out[r * length + k] = r < R && k < K ? static_cast<std::int8_t>(X(r, k)) : std::int8_t(0);
      });
}

/// INT32 products a pass keeps for its epilogue: half the L2 cache of the smallest GPU the CUDA
/// backend targets (an H100's 50 MB), so that the epilogue reads them back from L2 rather than
/// from memory (the products are 4 bytes an entry, C's output 2).
constexpr std::int64_t quantized_pass_bytes = std::int64_t(24) << 20;

/// The shape of one call.  C's contiguous index is the products' fast one: for a row-major C the
/// products are P^T = W A^T (`transposed`), so that both the INT32 products and C are read and
/// written along their rows.  The "fast" operand (A, or W when transposed) is multiplied whole;
/// the other ("slow") in passes of `pass` rows, each pass's products then turned into C.
/// Scratch: the staged operands (zero-padded to 16 rows and 16 bytes), then `chunks` INT32
/// planes of fast_pad x pass.
struct QuantizedLayout {
  bool transposed = false;
  std::int64_t fast_rows = 0, slow_rows = 0, fast_pad = 0, slow_pad = 0;
  std::int64_t length = 0, chunks = 0, pass = 16;
  bool stage_fast = false, stage_slow = false;
  std::size_t fast_bytes() const { return stage_fast ? fast_pad * length : 0; }
  std::size_t slow_bytes() const { return stage_slow ? slow_pad * length : 0; }
  std::size_t products_offset() const {
    const std::size_t staged = fast_bytes() + slow_bytes();
    return (staged + scratch_alignment - 1) / scratch_alignment * scratch_alignment;
  }
  std::size_t bytes() const {
    return products_offset() + static_cast<std::size_t>(chunks * fast_pad * pass) * 4;
  }
};

template <class AView, class WView, class CView>
QuantizedLayout quantized_layout(const AView& A, const WView& W, const CView& C) {
  QuantizedLayout l;
  l.transposed = C.extent(1) > 1 && C.stride(1) < C.stride(0);
  const std::int64_t M = A.extent(0), N = W.extent(0), K = A.extent(1);
  l.fast_rows = l.transposed ? N : M;
  l.slow_rows = l.transposed ? M : N;
  l.fast_pad = round_up_16(l.fast_rows);
  l.slow_pad = round_up_16(l.slow_rows);
  l.stage_fast = l.transposed ? !int8_rows_ready(W) : !int8_rows_ready(A);
  l.stage_slow = l.transposed ? !int8_rows_ready(A) : !int8_rows_ready(W);
  l.length = round_up_16(K);
  l.chunks = (K + quantized_k_block - 1) / quantized_k_block;
  const std::int64_t plane = std::max<std::int64_t>(1, l.chunks) * l.fast_pad * 4;
  l.pass = std::min(l.slow_pad, std::max<std::int64_t>(16, quantized_pass_bytes / plane / 16 * 16));
  return l;
}

/// One pass's C entries: C(m, n) = round_T(fma(float(P), a(m) w(n), bias(n))), P the chunks'
/// sum in INT64 (exact), for the slow rows [s0, s0 + count).
template <class ExecSpace, class AScales, class WScales, class Bias, class CView>
void quantized_epilogue(const ExecSpace& space, const QuantizedLayout& l, std::int64_t s0,
                        std::int64_t count, const std::int32_t* products, const AScales& a_scales,
                        const WScales& w_scales, const Bias& bias, bool has_bias, const CView& C) {
  using T = typename CView::non_const_value_type;
  const std::int64_t ldc = l.fast_pad, plane = l.fast_pad * l.pass, chunks = l.chunks;
  const bool transposed = l.transposed;
  grid_for(
      "ozaki::quantized::epilogue", space, l.fast_rows, count,
      KOKKOS_LAMBDA(const std::int64_t f, const std::int64_t s) {
        std::int64_t sum = 0;  // K = 0: no chunk, an empty sum
        for (std::int64_t c = 0; c < chunks; ++c) sum += products[c * plane + f + s * ldc];
        const std::int64_t m = transposed ? s0 + s : f, n = transposed ? f : s0 + s;
        const float scale = static_cast<float>(a_scales(m)) * static_cast<float>(w_scales(n));
        const float offset = has_bias ? static_cast<float>(bias(n)) : 0.0f;
        C(m, n) = from_float<T>(::fmaf(static_cast<float>(sum), scale, offset));
      });
}

/// Rows of an operand as the INT8 GEMM takes them: staged into `scratch` (and staged there
/// now) or in place.
struct Int8Rows {
  const std::int8_t* data;
  std::int64_t stride;
};
template <class ExecSpace, class View>
Int8Rows int8_rows(const ExecSpace& space, const View& X, bool staged, std::int64_t padded_rows,
                   std::int64_t length, std::int8_t* scratch) {
  if (!staged) return {reinterpret_cast<const std::int8_t*>(X.data()), std::int64_t(X.stride(0))};
  stage_int8_rows(space, X, scratch, padded_rows, length);
  return {scratch, length};
}

/// Whether a rank-1 View's entries are contiguous (what a kernel given its data pointer reads).
template <class View>
bool contiguous_vector(const View& v) {
  return v.extent(0) <= 1 || v.stride(0) == 1;
}

/// The call as one QuantizedGemmProblem (quantized_problem.hpp) into `p`, or false where it is not
/// one: K in more than one INT32-exact chunk, or scales or bias not contiguous.  The kernel's rows
/// are the layout's slow operand and its columns the fast one, so that C's contiguous index
/// runs along the kernel's columns, as it does along the INT32 products' rows in the passes.
template <class AScales, class WScales, class Bias, class CView>
bool fused_problem(const QuantizedLayout& l, const Int8Rows& fast, const Int8Rows& slow,
                   const AScales& a, const WScales& w, const Bias& bias, bool has_bias,
                   const CView& C, QuantizedGemmProblem& p) {
  if (l.chunks != 1 || !contiguous_vector(a) || !contiguous_vector(w) ||
      (has_bias && !contiguous_vector(bias))) {
    return false;
  }
  using T = typename CView::non_const_value_type;
  p.output = std::is_same<T, float>::value      ? QuantizedOutput::Float
             : std::is_same<T, bfloat16>::value ? QuantizedOutput::BFloat16
                                                : QuantizedOutput::Float16;
  p.rows = l.slow_rows;
  p.columns = l.fast_rows;
  p.k = l.length;  // K itself wherever an operand is read in place (K % 16 == 0)
  p.a = slow.data;
  p.lda = slow.stride;
  p.b = fast.data;
  p.ldb = fast.stride;
  // Transposed: kernel rows are C's rows m (scale a, bias along the columns n); otherwise the
  // kernel's rows are C's columns n.
  p.row_scales = l.transposed ? a.data() : w.data();
  p.column_scales = l.transposed ? w.data() : a.data();
  (l.transposed ? p.bias_columns : p.bias_rows) = has_bias ? bias.data() : nullptr;
  p.c = C.data();
  p.c_row_stride = l.transposed ? C.stride(0) : C.stride(1);
  p.c_column_stride = l.transposed ? C.stride(1) : C.stride(0);
  return true;
}

/// What the call ran: INT8 GEMM calls (or 1 launch of the fused kernel), and the fused
/// kernel's name where it ran.
struct QuantizedRun {
  int int8_gemms = 0;
  const char* fused = nullptr;
};

/// The call's products: where the backend has a fused kernel that runs the problem, that one
/// launch; otherwise passes, each pass's INT8 products (in K chunks) into the INT32 planes,
/// then its epilogue.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class Bias,
          class CView>
QuantizedRun quantized_products(const ExecSpace& space, const QuantizedLayout& l, const AView& A,
                                const AScales& a, const WView& W, const WScales& w,
                                const Bias& bias, bool has_bias, const CView& C,
                                unsigned char* base) {
  auto* staged = reinterpret_cast<std::int8_t*>(base);
  const Int8Rows fast = l.transposed
                            ? int8_rows(space, W, l.stage_fast, l.fast_pad, l.length, staged)
                            : int8_rows(space, A, l.stage_fast, l.fast_pad, l.length, staged);
  staged += l.fast_bytes();
  const Int8Rows slow = l.transposed
                            ? int8_rows(space, A, l.stage_slow, l.slow_pad, l.length, staged)
                            : int8_rows(space, W, l.stage_slow, l.slow_pad, l.length, staged);
  if constexpr (FusedQuantizedGemmBackend<ExecSpace>::available) {
    QuantizedGemmProblem p;
    std::string why_not;
    if (fused_problem(l, fast, slow, a, w, bias, has_bias, C, p) &&
        FusedQuantizedGemmBackend<ExecSpace>::supported(space, p, why_not)) {
      FusedQuantizedGemmBackend<ExecSpace>::run(space, p);
      return {1, FusedQuantizedGemmBackend<ExecSpace>::name()};
    }
  }
  auto* products = reinterpret_cast<std::int32_t*>(base + l.products_offset());
  int gemms = 0;
  for (std::int64_t s0 = 0; s0 < l.slow_pad; s0 += l.pass) {
    const std::int64_t width = std::min(l.pass, l.slow_pad - s0);
    if (l.chunks > 0) {
      Int8GemmProblem p;
      p.rows_a = l.fast_pad;
      p.rows_b = width;
      p.length = l.length;  // K itself wherever an operand is read in place (K % 16 == 0)
      p.a = fast.data;
      p.lda = fast.stride;
      p.b = slow.data + s0 * slow.stride;
      p.ldb = slow.stride;
      p.c = products;
      p.ldc = l.fast_pad;
      gemms += int8_gemm_in_k_chunks(space, p, quantized_k_block, l.fast_pad * l.pass);
    }
    const std::int64_t count = std::min(width, l.slow_rows - s0);
    if (count > 0) {
      quantized_epilogue(space, l, s0, count, products, a, w, bias, has_bias, C);
    }
  }
  return {gemms, nullptr};
}

/// Per-row symmetric quantization of X (R x K; float, double, bfloat16 or float16):
/// scales(r) = amax_r / 127 and Q(r, k) = rint(X(r, k) * (127 / amax_r)), in [-127, 127].  A
/// zero row gets scale 0 and zeros; a row holding NaN or Inf gets a NaN scale and zeros, so
/// every product with it is NaN, never a finite wrong value.
template <class ExecSpace, class XView, class QView, class ScaleView>
void quantize_rows_impl(const ExecSpace& space, const XView& X, const QView& Q,
                        const ScaleView& scales) {
  using Member = typename TeamLaunch<ExecSpace>::member_type;
  const std::int64_t K = X.extent(1);
  const float max_float = std::numeric_limits<float>::max();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Kokkos::parallel_for(
      "ozaki::quantize_rows", row_policy(space, static_cast<std::int64_t>(X.extent(0))),
      KOKKOS_LAMBDA(const Member& team) {
        const std::int64_t r = team.league_rank();
        const float amax = team_amax(team, K, [&](const std::int64_t k) { return X(r, k); });
        const bool finite = amax <= max_float;
        const float inverse = finite && amax > 0 ? 127.0f / amax : 0.0f;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, K), [&](const std::int64_t k) {
          const float q = ::rintf(to_float(X(r, k)) * inverse);
          Q(r, k) = static_cast<std::int8_t>(q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q);
        });
        Kokkos::single(Kokkos::PerTeam(team), [&]() { scales(r) = finite ? amax / 127.0f : nan; });
      });
}

}  // namespace Impl
}  // namespace ozaki
