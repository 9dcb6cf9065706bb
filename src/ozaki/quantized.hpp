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
#include <ozaki/impl/batched/layouts.hpp>
#include <ozaki/impl/library_scratch.hpp>
#include <ozaki/impl/quantized/grouped.hpp>
#include <ozaki/impl/quantized/w8a8.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ozaki {

/// What a quantized_gemm call did.
struct QuantizedReport {
  std::string backend;              // the INT8 GEMM's, or the fused kernel's
  int int8_gemms = 0;               // INT8 GEMM calls (more than 1 where K ran in chunks)
  std::int64_t k_chunks = 0;        // K's chunks of at most 2^17 - 16
  bool fused = false;               // products, scales and rounding in one kernel (1 launch)
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
  const QuantizedRun run = quantized_products(space, l, A, a, W, w, bias, has_bias, C, base);
  report.int8_gemms = run.int8_gemms;
  if (run.fused != nullptr) {
    report.backend = run.fused;
    report.fused = true;
  }
  report.k_chunks = l.chunks;
  report.staged_a = l.transposed ? l.stage_slow : l.stage_fast;
  report.staged_w = l.transposed ? l.stage_fast : l.stage_slow;
  report.workspace_bytes = l.bytes();
  return report;
}

/// The Report of several calls: the backend, INT8 GEMMs summed, the rest the largest.
inline void add_run(QuantizedReport& sum, const QuantizedReport& run) {
  sum.backend = run.backend;
  sum.int8_gemms += run.int8_gemms;
  sum.k_chunks = std::max(sum.k_chunks, run.k_chunks);
  sum.fused = sum.fused || run.fused;
  sum.staged_a = sum.staged_a || run.staged_a;
  sum.staged_w = sum.staged_w || run.staged_w;
  sum.workspace_bytes = std::max(sum.workspace_bytes, run.workspace_bytes);
}

/// A grouped call (grouped.hpp): the whole Views checked against each other by the caller,
/// then every run checked and computed (check_then_compute).
template <class ExecSpace, class RunViews>
QuantizedReport quantized_grouped(const ExecSpace& space, const std::vector<GroupRun>& runs,
                                  bool has_bias, const RunViews& run_views) {
  QuantizedReport sum;
  sum.backend = Int8Gemm<ExecSpace>::name();
  check_then_compute(
      space, runs, run_views,
      [&](const auto& A, const auto& a, const auto& W, const auto& w, const auto& bias,
          const auto& C) { check_quantized<ExecSpace>(A, a, W, w, bias, has_bias, C); },
      [&](auto& buffer, const auto& A, const auto& a, const auto& W, const auto& w,
          const auto& bias, const auto& C) {
        add_run(sum, quantized_gemm_on(space, A, a, W, w, bias, has_bias, C, buffer));
      });
  return sum;
}

/// The Views of a grouped call must not meet C anywhere (the runs' checks see their own
/// blocks only).
template <class AView, class AScales, class WView, class WScales, class Bias, class CView>
void check_grouped_overlaps(const char* name, const AView& A, const AScales& a, const WView& W,
                            const WScales& w, const Bias& bias, bool has_bias, const CView& C) {
  if (views_meet(C, A) || views_meet(C, W) || views_meet(C, a) || views_meet(C, w) ||
      (has_bias && views_meet(C, bias))) {
    throw InvalidArgument(std::string(name) + ": C overlaps an input in memory");
  }
}

template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CountView,
          class Bias, class CView>
QuantizedReport quantized_masked(const ExecSpace& space, const AView& A, const AScales& a,
                                 const WView& W, const WScales& w, const CountView& masked_m,
                                 const Bias& bias, bool has_bias, const CView& C) {
  static_assert(AView::rank == 3 && AScales::rank == 2 && WView::rank == 3 && WScales::rank == 2 &&
                    Bias::rank == 2 && CView::rank == 3,
                "ozaki::quantized_gemm_masked: A, W and C are rank-3 Views and a, w and bias "
                "rank-2 Views, the groups along extent 0");
  const std::int64_t G = A.extent(0), rows = A.extent(1);
  if (W.extent(0) != A.extent(0) || a.extent(0) != A.extent(0) || w.extent(0) != A.extent(0) ||
      C.extent(0) != A.extent(0) || (has_bias && bias.extent(0) != A.extent(0)) ||
      a.extent(1) != A.extent(1) || C.extent(1) != A.extent(1)) {
    throw InvalidArgument(
        "ozaki::quantized_gemm_masked: A (G x max_m x K), a (G x max_m), W (G x N x K), w (G x "
        "N), bias (G x N) and C (G x max_m x N) hold the same groups and rows");
  }
  check_grouped_overlaps("ozaki::quantized_gemm_masked", A, a, W, w, bias, has_bias, C);
  const auto runs = masked_runs(host_values(space, masked_m, "masked_m"), G, rows,
                                "ozaki::quantized_gemm_masked");
  return quantized_grouped<ExecSpace>(space, runs, has_bias, [&](const GroupRun& r, auto&& f) {
    const auto rows_of = Kokkos::make_pair(r.r0, r.r1);
    f(Kokkos::subview(A, r.group, rows_of, Kokkos::ALL()), Kokkos::subview(a, r.group, rows_of),
      Kokkos::subview(W, r.group, Kokkos::ALL(), Kokkos::ALL()),
      Kokkos::subview(w, r.group, Kokkos::ALL()), Kokkos::subview(bias, r.group, Kokkos::ALL()),
      Kokkos::subview(C, r.group, rows_of, Kokkos::ALL()));
  });
}

template <class ExecSpace, class AView, class AScales, class WView, class WScales, class IndexView,
          class Bias, class CView>
QuantizedReport quantized_contiguous(const ExecSpace& space, const AView& A, const AScales& a,
                                     const WView& W, const WScales& w, const IndexView& m_indices,
                                     const Bias& bias, bool has_bias, const CView& C) {
  static_assert(AView::rank == 2 && AScales::rank == 1 && WView::rank == 3 && WScales::rank == 2 &&
                    Bias::rank == 2 && CView::rank == 2,
                "ozaki::quantized_gemm_contiguous: A (rows x K), a (rows) and C (rows x N) stack "
                "the groups' rows; W (G x N x K), w (G x N) and bias (G x N) hold a group each "
                "along extent 0");
  if (w.extent(0) != W.extent(0) || (has_bias && bias.extent(0) != W.extent(0))) {
    throw InvalidArgument(
        "ozaki::quantized_gemm_contiguous: W (G x N x K), w (G x N) and bias (G x N) hold the "
        "same groups");
  }
  check_grouped_overlaps("ozaki::quantized_gemm_contiguous", A, a, W, w, bias, has_bias, C);
  const std::int64_t rows = A.extent(0);
  if (static_cast<std::int64_t>(C.extent(0)) != rows || a.extent(0) != A.extent(0)) {
    throw InvalidArgument("ozaki::quantized_gemm_contiguous: A, a and C have one row per token");
  }
  const auto runs = contiguous_runs(host_values(space, m_indices, "m_indices"), W.extent(0), rows,
                                    "ozaki::quantized_gemm_contiguous");
  return quantized_grouped<ExecSpace>(space, runs, has_bias, [&](const GroupRun& r, auto&& f) {
    const auto rows_of = Kokkos::make_pair(r.r0, r.r1);
    f(Kokkos::subview(A, rows_of, Kokkos::ALL()), Kokkos::subview(a, rows_of),
      Kokkos::subview(W, r.group, Kokkos::ALL(), Kokkos::ALL()),
      Kokkos::subview(w, r.group, Kokkos::ALL()), Kokkos::subview(bias, r.group, Kokkos::ALL()),
      Kokkos::subview(C, rows_of, Kokkos::ALL()));
  });
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

/// Grouped W8A8 in DeepGEMM's two layouts, each group with its own weights (docs/design.md
/// §14); every count, index and extent is checked before any C is written.
///   masked:      A (G x max_m x K), a (G x max_m), W (G x N x K), w (G x N), C (G x max_m x N):
///                group g multiplies its first masked_m(g) rows; C's other rows are not touched.
///   contiguous:  A (rows x K), a (rows), W (G x N x K), w (G x N), C (rows x N): row r belongs to
///                group m_indices(r), or to none where it is -1 (C's row not touched).
/// masked_m and m_indices: rank-1 Views of integers, read on the host (as the grouped FP64
/// calls read theirs: ozaki/batched.hpp).  bias, where given, is G x N.  The library's scratch
/// of `space`'s instance serves every group.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CountView,
          class CView>
QuantizedReport quantized_gemm_masked(const ExecSpace& space, const AView& A, const AScales& a,
                                      const WView& W, const WScales& w, const CountView& masked_m,
                                      const CView& C) {
  return Impl::quantized_masked(space, A, a, W, w, masked_m, w, false, C);
}
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CountView,
          class Bias, class CView>
QuantizedReport quantized_gemm_masked(const ExecSpace& space, const AView& A, const AScales& a,
                                      const WView& W, const WScales& w, const CountView& masked_m,
                                      const Bias& bias, const CView& C) {
  return Impl::quantized_masked(space, A, a, W, w, masked_m, bias, true, C);
}
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class IndexView,
          class CView>
QuantizedReport quantized_gemm_contiguous(const ExecSpace& space, const AView& A, const AScales& a,
                                          const WView& W, const WScales& w,
                                          const IndexView& m_indices, const CView& C) {
  return Impl::quantized_contiguous(space, A, a, W, w, m_indices, w, false, C);
}
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class IndexView,
          class Bias, class CView>
QuantizedReport quantized_gemm_contiguous(const ExecSpace& space, const AView& A, const AScales& a,
                                          const WView& W, const WScales& w,
                                          const IndexView& m_indices, const Bias& bias,
                                          const CView& C) {
  return Impl::quantized_contiguous(space, A, a, W, w, m_indices, bias, true, C);
}

}  // namespace ozaki
