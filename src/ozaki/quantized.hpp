#pragma once
/// \file quantized.hpp
/// Quantized GEMM for inference on ozaki's INT8 products (docs/design.md §14): W8A8, int8
/// activations with a scale per row (token) and int8 weights with a scale per output channel,
/// INT32 accumulation (exact), the scales applied once at the end, FP32, bfloat16 or float16
/// output with an optional bias.
///
///   ozaki::quantize_rows(space, X, X_q, x_scales);     // X: M x K (float, double, bf16, fp16)
///   ozaki::quantize_rows(space, W, W_q, w_scales);     // W: N x K, as torch.nn.Linear keeps it
///   ozaki::quantized_gemm(space, X_q, x_scales, W_q, w_scales, C);
///   ozaki::quantized_gemm(space, X_q, x_scales, W_q, w_scales, bias, C);
///
///   C(m, n) = round_C(fma(float(sum_k A(m, k) W(n, k)), a(m) w(n), bias(n)))
///
/// A (M x K) and W (N x K): int8 Views of any layout; rows contiguous along K, 16-byte aligned
/// with a stride that is a multiple of 16 are read in place (LayoutRight Views with K a
/// multiple of 16, say), others are first copied so.  a (M), w (N), bias (N): float Views.
/// C (M x N): float, ozaki::bfloat16 or ozaki::float16 (ozaki/half_precision.hpp), any
/// layout.  The sum is exact in INT64 for every K (INT32 products in chunks of 2^17 - 16), and
/// each later step rounds once, in the same order on every backend, so every backend gives
/// the same bits.  quantize_rows maps each row to [-127, 127] with its own scale, amax / 127;
/// a row holding NaN or Inf gets a NaN scale, so that its results are NaN, never a wrong
/// finite value.
///
/// Errors: ozaki::InvalidArgument for extents that do not match and for C overlapping an input,
/// thrown before C is touched; ozaki::BackendError where the space has no INT8 GEMM, or where a
/// stream being captured into a graph would need scratch the call has not yet got (a
/// Workspace reserved with reserve_quantized serves a capture).

#include <ozaki/errors.hpp>
#include <ozaki/half_precision.hpp>
#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/library_scratch.hpp>
#include <ozaki/impl/quantized/w8a8.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace ozaki {

/// What a quantized_gemm call did.
struct QuantizedReport {
  std::string backend;              // the INT8 GEMM's
  int int8_gemms = 0;               // INT8 GEMM calls (more than 1 where K ran in chunks)
  std::int64_t k_chunks = 0;        // K's chunks of at most 2^17 - 16
  bool staged_a = false;            // A's rows were copied into aligned rows first
  bool staged_w = false;            // W's likewise
  std::size_t workspace_bytes = 0;  // scratch the call used
};

namespace Impl {

template <class V>
constexpr bool is_int8_matrix = Kokkos::is_view<V>::value&& V::rank == 2 &&
                                std::is_same<typename V::non_const_value_type, std::int8_t>::value;
template <class V>
constexpr bool is_float_vector = Kokkos::is_view<V>::value&& V::rank == 1 &&
                                 std::is_same<typename V::non_const_value_type, float>::value;
template <class T>
constexpr bool is_quantized_output =
    std::is_same<T, float>::value || std::is_same<T, bfloat16>::value ||
    std::is_same<T, float16>::value;

/// Whether the bytes of two Views meet (rank 1 or 2: from the first to past the last element).
template <class V1, class V2>
bool views_meet(const V1& x, const V2& y) {
  if (x.size() == 0 || y.size() == 0) return false;
  const auto span = [](const auto& v) {
    using View = std::decay_t<decltype(v)>;
    std::int64_t last = 0;
    for (unsigned d = 0; d < View::rank; ++d) {
      last += (static_cast<std::int64_t>(v.extent(d)) - 1) * static_cast<std::int64_t>(v.stride(d));
    }
    const auto* first = reinterpret_cast<const char*>(v.data());
    return std::make_pair(first, first + (last + 1) * sizeof(typename View::value_type));
  };
  const auto a = span(x), b = span(y);
  return a.first < b.second && b.first < a.second;
}

template <class ExecSpace, class AView, class AScales, class WView, class WScales, class Bias,
          class CView>
void check_quantized(const AView& A, const AScales& a, const WView& W, const WScales& w,
                     const Bias& bias, bool has_bias, const CView& C) {
  static_assert(is_int8_matrix<AView> && is_int8_matrix<WView>,
                "ozaki::quantized_gemm: A and W are rank-2 Views of int8_t");
  static_assert(is_float_vector<AScales> && is_float_vector<WScales> && is_float_vector<Bias>,
                "ozaki::quantized_gemm: scales and bias are rank-1 Views of float");
  static_assert(Kokkos::is_view<CView>::value && CView::rank == 2 &&
                    is_quantized_output<typename CView::non_const_value_type>,
                "ozaki::quantized_gemm: C is a rank-2 View of float, ozaki::bfloat16 or "
                "ozaki::float16");
  const std::int64_t M = A.extent(0), N = W.extent(0), K = A.extent(1);
  std::string what;
  if (static_cast<std::int64_t>(W.extent(1)) != K) {
    what = "A is M x K and W is N x K, with the same K";
  } else if (static_cast<std::int64_t>(a.extent(0)) != M) {
    what = "a (A's scales) has one entry per row of A";
  } else if (static_cast<std::int64_t>(w.extent(0)) != N) {
    what = "w (W's scales) has one entry per row of W";
  } else if (has_bias && static_cast<std::int64_t>(bias.extent(0)) != N) {
    what = "bias has one entry per row of W";
  } else if (static_cast<std::int64_t>(C.extent(0)) != M ||
             static_cast<std::int64_t>(C.extent(1)) != N) {
    what = "C is M x N";
  } else if (views_meet(C, A) || views_meet(C, W) || views_meet(C, a) || views_meet(C, w) ||
             (has_bias && views_meet(C, bias))) {
    what = "C overlaps an input in memory";
  }
  if (!what.empty()) {
    throw InvalidArgument("ozaki::quantized_gemm: " + what + " (A " + std::to_string(M) + " x " +
                          std::to_string(K) + ", W " + std::to_string(W.extent(0)) + " x " +
                          std::to_string(W.extent(1)) + ", C " + std::to_string(C.extent(0)) +
                          " x " + std::to_string(C.extent(1)) + ")");
  }
}

/// The call on `scratch` (checked first; nothing is written before the checks pass).
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class Bias,
          class CView>
QuantizedReport quantized_gemm_on(const ExecSpace& space, const AView& A, const AScales& a,
                                  const WView& W, const WScales& w, const Bias& bias, bool has_bias,
                                  const CView& C, ScratchBuffer<ExecSpace>& scratch) {
  check_quantized<ExecSpace>(A, a, W, w, bias, has_bias, C);
  std::string why;
  if (!Int8Gemm<ExecSpace>::supported(space, why)) throw BackendError(why);
  if (Int8Gemm<ExecSpace>::torn_down(why)) throw BackendError(why);
  QuantizedReport report;
  report.backend = Int8Gemm<ExecSpace>::name();
  if (C.size() == 0) return report;
  const QuantizedLayout l = quantized_layout(A, W, C);
  if (l.bytes() > scratch.bytes() && captured(space)) {
    throw BackendError(
        "ozaki::quantized_gemm: the stream is being captured into a graph and the call needs " +
        std::to_string(l.bytes()) +
        " bytes of scratch it does not hold yet: pass a Workspace "
        "reserved with ozaki::reserve_quantized before the capture");
  }
  unsigned char* base = scratch.reserve(l.bytes());
  report.int8_gemms = quantized_passes(space, l, A, a, W, w, bias, has_bias, C, base);
  report.k_chunks = l.chunks;
  report.staged_a = l.transposed ? l.stage_slow : l.stage_fast;
  report.staged_w = l.transposed ? l.stage_fast : l.stage_slow;
  report.workspace_bytes = l.bytes();
  return report;
}

}  // namespace Impl

/// Per-row symmetric INT8 quantization (the file comment): Q (R x K int8) and scales (R float)
/// from X (R x K: float, double, ozaki::bfloat16 or ozaki::float16), on `space`'s instance.
template <class ExecSpace, class XView, class QView, class ScaleView>
void quantize_rows(const ExecSpace& space, const XView& X, const QView& Q,
                   const ScaleView& scales) {
  static_assert(Impl::is_int8_matrix<QView> && Impl::is_float_vector<ScaleView>,
                "ozaki::quantize_rows: Q is a rank-2 View of int8_t, scales a rank-1 View of "
                "float");
  if (X.extent(0) != Q.extent(0) || X.extent(1) != Q.extent(1) || scales.extent(0) != X.extent(0)) {
    throw InvalidArgument("ozaki::quantize_rows: Q is as X (" + std::to_string(X.extent(0)) +
                          " x " + std::to_string(X.extent(1)) +
                          ") and scales has one entry per row");
  }
  if (X.extent(0) == 0) return;
  Impl::quantize_rows_impl(space, X, Q, scales);
}

/// C = round(diag(a) A W^T diag(w)) on the library's scratch for `space`'s instance.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CView,
          class = std::enable_if_t<Kokkos::is_view<CView>::value>>
QuantizedReport quantized_gemm(const ExecSpace& space, const AView& A, const AScales& a,
                               const WView& W, const WScales& w, const CView& C) {
  auto lease = Impl::LibraryScratch<ExecSpace>::lease(space);
  return Impl::quantized_gemm_on(space, A, a, W, w, AScales(), false, C, lease.buffer());
}

/// C = round(diag(a) A W^T diag(w) + bias) (bias added to every row) on the library's scratch.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class Bias,
          class CView, class = std::enable_if_t<Kokkos::is_view<CView>::value>>
QuantizedReport quantized_gemm(const ExecSpace& space, const AView& A, const AScales& a,
                               const WView& W, const WScales& w, const Bias& bias, const CView& C) {
  auto lease = Impl::LibraryScratch<ExecSpace>::lease(space);
  return Impl::quantized_gemm_on(space, A, a, W, w, bias, true, C, lease.buffer());
}

/// The same two calls on a Workspace's scratch.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CView>
QuantizedReport quantized_gemm(const ExecSpace& space, const AView& A, const AScales& a,
                               const WView& W, const WScales& w, const CView& C,
                               Workspace<ExecSpace>& workspace) {
  return Impl::quantized_gemm_on(space, A, a, W, w, AScales(), false, C,
                                 Impl::WorkspaceAccess<ExecSpace>::buffer(workspace));
}
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class Bias,
          class CView>
QuantizedReport quantized_gemm(const ExecSpace& space, const AView& A, const AScales& a,
                               const WView& W, const WScales& w, const Bias& bias, const CView& C,
                               Workspace<ExecSpace>& workspace) {
  return Impl::quantized_gemm_on(space, A, a, W, w, bias, true, C,
                                 Impl::WorkspaceAccess<ExecSpace>::buffer(workspace));
}

/// Reserves `workspace` for quantized_gemm on A, W and C as these (their layouts decide what is
/// staged and how the products run), so that a call, a captured one too, allocates nothing.
template <class ExecSpace, class AView, class WView, class CView>
void reserve_quantized(Workspace<ExecSpace>& workspace, const AView& A, const WView& W,
                       const CView& C) {
  Impl::WorkspaceAccess<ExecSpace>::buffer(workspace).reserve(
      Impl::quantized_layout(A, W, C).bytes());
}

}  // namespace ozaki
