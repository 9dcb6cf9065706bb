#pragma once
/// \file fp8.hpp
/// FP8 e4m3 GEMM with block scales, as DeepGEMM defines it for inference (docs/design.md
/// §14.1): activations with a float scale per token and 128 columns of K (1 x 128 blocks),
/// weights with a float scale per 128 x 128 block, bfloat16 or float output.
///
///   ozaki::quantize_per_token(space, X, X_q, x_scales);  // X: M x K; x_scales: M x ceil(K/128)
///   ozaki::quantize_per_block(space, W, W_q, w_scales);  // W: N x K (torch.nn.Linear's form);
///                                                        // w_scales: ceil(N/128) x ceil(K/128)
///   ozaki::fp8_gemm(space, X_q, x_scales, W_q, w_scales, C);   // C: M x N
///
///   C(m, n) = sum_kb x_scales(m, kb) w_scales(n / 128, kb) sum_{k in block kb} X_q(m, k) W_q(n, k)
///
/// X, W: float, double, ozaki::bfloat16 or ozaki::float16; X_q, W_q: ozaki::float8_e4m3
/// (ozaki/half_precision.hpp); scales: float; C: ozaki::bfloat16 or float.  Any layouts.
/// A quantizer maps each block's largest magnitude amax to 448, e4m3's largest value (scale
/// amax / 448), rounding to nearest even; an all-zero block gets scale 0, and a block holding
/// NaN or Inf a NaN scale (its products are NaN, never a finite wrong value).
///
/// Backends: on host spaces (and any space without a vendor kernel) the portable kernel gives
/// the oracle's result bit for bit (serial::fp8_gemm); on Kokkos::Cuda cuBLASLt's FP8 kernels
/// with VEC128 and BLK128x128 scales run it on compute capability 9.0 (Hopper), within a bound
/// of the oracle's result (docs/design.md §14.1).  Other CUDA devices have no such kernel: the
/// call throws BackendError.
///
/// Errors: ozaki::InvalidArgument for extents that do not match and for C overlapping an input,
/// thrown before C is touched; ozaki::BackendError where the device has no FP8 block-scaled
/// GEMM, or where a stream being captured into a graph would need scratch or handles the call
/// does not hold (one eager call on the stream first makes the handles, and a Workspace
/// reserved with reserve_fp8 serves the capture).

#include <ozaki/errors.hpp>
#include <ozaki/half_precision.hpp>
#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/batched/layouts.hpp>
#include <ozaki/impl/library_scratch.hpp>
#include <ozaki/impl/quantized/fp8.hpp>
#include <ozaki/impl/quantized/grouped.hpp>
#include <ozaki/quantized.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace ozaki {

/// What an fp8_gemm call did.
struct Fp8Report {
  std::string backend;              // "portable" or the vendor kernel's library
  bool staged_a = false;            // A's rows were copied into aligned K-contiguous rows first
  bool staged_w = false;            // W's likewise
  bool staged_c = false;            // the result went through scratch into C's layout
  std::size_t workspace_bytes = 0;  // scratch the call used
};

namespace Impl {

template <class V>
constexpr bool is_fp8_matrix = Kokkos::is_view<V>::value&& V::rank == 2 &&
                               std::is_same<typename V::non_const_value_type, float8_e4m3>::value;
template <class V>
constexpr bool is_float_matrix = Kokkos::is_view<V>::value&& V::rank == 2 &&
                                 std::is_same<typename V::non_const_value_type, float>::value;
template <class T>
constexpr bool is_fp8_output = std::is_same<T, float>::value || std::is_same<T, bfloat16>::value;

template <class AView, class AScales, class WView, class WScales, class CView>
void check_fp8(const AView& A, const AScales& a, const WView& W, const WScales& w, const CView& C) {
  static_assert(is_fp8_matrix<AView> && is_fp8_matrix<WView>,
                "ozaki::fp8_gemm: A and W are rank-2 Views of ozaki::float8_e4m3");
  static_assert(is_float_matrix<AScales> && is_float_matrix<WScales>,
                "ozaki::fp8_gemm: the scales are rank-2 Views of float");
  static_assert(Kokkos::is_view<CView>::value && CView::rank == 2 &&
                    is_fp8_output<typename CView::non_const_value_type>,
                "ozaki::fp8_gemm: C is a rank-2 View of ozaki::bfloat16 or float");
  const std::int64_t M = A.extent(0), N = W.extent(0), K = A.extent(1);
  const std::int64_t blocks_k = fp8_blocks(K);
  std::string what;
  if (static_cast<std::int64_t>(W.extent(1)) != K) {
    what = "A is M x K and W is N x K, with the same K";
  } else if (static_cast<std::int64_t>(a.extent(0)) != M ||
             static_cast<std::int64_t>(a.extent(1)) != blocks_k) {
    what = "A's scales are M x ceil(K / 128)";
  } else if (static_cast<std::int64_t>(w.extent(0)) != fp8_blocks(N) ||
             static_cast<std::int64_t>(w.extent(1)) != blocks_k) {
    what = "W's scales are ceil(N / 128) x ceil(K / 128)";
  } else if (static_cast<std::int64_t>(C.extent(0)) != M ||
             static_cast<std::int64_t>(C.extent(1)) != N) {
    what = "C is M x N";
  } else if (views_meet(C, A) || views_meet(C, W) || views_meet(C, a) || views_meet(C, w)) {
    what = "C overlaps an input in memory";
  }
  if (!what.empty()) {
    throw InvalidArgument(
        "ozaki::fp8_gemm: " + what + " (A " + std::to_string(M) + " x " + std::to_string(K) +
        ", W " + std::to_string(W.extent(0)) + " x " + std::to_string(W.extent(1)) +
        ", A's scales " + std::to_string(a.extent(0)) + " x " + std::to_string(a.extent(1)) +
        ", W's scales " + std::to_string(w.extent(0)) + " x " + std::to_string(w.extent(1)) +
        ", C " + std::to_string(C.extent(0)) + " x " + std::to_string(C.extent(1)) + ")");
  }
}

/// The call on `scratch`, checked first: nothing is written before the checks pass.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CView>
Fp8Report fp8_gemm_on(const ExecSpace& space, const AView& A, const AScales& a, const WView& W,
                      const WScales& w, const CView& C, ScratchBuffer<ExecSpace>& scratch) {
  check_fp8(A, a, W, w, C);
  Fp8Report report;
  if constexpr (Fp8GemmBackend<ExecSpace>::available) {
    std::string why;
    if (captured(space) && !Fp8GemmBackend<ExecSpace>::ready(space)) {
      throw BackendError(
          "ozaki::fp8_gemm: the stream is being captured into a graph and no fp8_gemm has run "
          "on it yet: the first call, outside any capture, makes the cuBLAS and cuBLASLt "
          "handles a captured call needs");
    }
    if (!Fp8GemmBackend<ExecSpace>::supported(space, why)) throw BackendError(why);
    report.backend = fp8_backend_name<ExecSpace>();
    if (C.size() == 0) return report;
    const Fp8Layout l = fp8_layout(A, W, C, Fp8GemmBackend<ExecSpace>::forms(space));
    if (l.bytes() > scratch.bytes() && captured(space)) {
      throw BackendError(
          "ozaki::fp8_gemm: the stream is being captured into a graph and the call needs " +
          std::to_string(l.bytes()) +
          " bytes of scratch it does not hold yet: pass a Workspace reserved with "
          "ozaki::reserve_fp8 before the capture");
    }
    if (l.k == 0) {  // an empty sum: zeros, no vendor call
      fp8_gemm_portable(space, A, a, W, w, C);
      return report;
    }
    fp8_gemm_vendor(space, l, A, a, W, w, C, scratch.reserve(l.bytes()));
    report.staged_a = l.stage_a;
    report.staged_w = l.stage_w;
    report.staged_c = l.stage_c;
    report.workspace_bytes = l.bytes();
  } else {
    report.backend = fp8_backend_name<ExecSpace>();
    if (C.size() > 0) fp8_gemm_portable(space, A, a, W, w, C);
  }
  return report;
}

template <class QView, class ScaleView>
void check_fp8_quantizer(const char* name, std::int64_t rows, std::int64_t cols, const QView& Q,
                         const ScaleView& scales, std::int64_t block_rows) {
  static_assert(is_fp8_matrix<QView> && is_float_matrix<ScaleView>,
                "ozaki::quantize_per_token / quantize_per_block: Q is a rank-2 View of "
                "ozaki::float8_e4m3, scales a rank-2 View of float");
  const std::int64_t want_rows = (rows + block_rows - 1) / block_rows;
  if (static_cast<std::int64_t>(Q.extent(0)) != rows ||
      static_cast<std::int64_t>(Q.extent(1)) != cols ||
      static_cast<std::int64_t>(scales.extent(0)) != want_rows ||
      static_cast<std::int64_t>(scales.extent(1)) != fp8_blocks(cols)) {
    throw InvalidArgument(std::string(name) + ": Q is as X (" + std::to_string(rows) + " x " +
                          std::to_string(cols) + ") and scales is " + std::to_string(want_rows) +
                          " x " + std::to_string(fp8_blocks(cols)) + " (got Q " +
                          std::to_string(Q.extent(0)) + " x " + std::to_string(Q.extent(1)) +
                          ", scales " + std::to_string(scales.extent(0)) + " x " +
                          std::to_string(scales.extent(1)) + ")");
  }
}

/// The Report of several runs: the backend, the staging flags of any, the largest scratch.
inline void add_run(Fp8Report& sum, const Fp8Report& run) {
  sum.backend = run.backend;
  sum.staged_a = sum.staged_a || run.staged_a;
  sum.staged_w = sum.staged_w || run.staged_w;
  sum.staged_c = sum.staged_c || run.staged_c;
  sum.workspace_bytes = std::max(sum.workspace_bytes, run.workspace_bytes);
}

/// A grouped call: every run checked and computed (check_then_compute).
template <class ExecSpace, class RunViews>
Fp8Report fp8_grouped(const ExecSpace& space, const std::vector<GroupRun>& runs,
                      const RunViews& run_views) {
  Fp8Report sum;
  sum.backend = fp8_backend_name<ExecSpace>();
  check_then_compute(
      space, runs, run_views,
      [&](const auto& A, const auto& a, const auto& W, const auto& w, const auto& C) {
        check_fp8(A, a, W, w, C);
      },
      [&](auto& buffer, const auto& A, const auto& a, const auto& W, const auto& w, const auto& C) {
        add_run(sum, fp8_gemm_on(space, A, a, W, w, C, buffer));
      });
  return sum;
}

}  // namespace Impl

/// Grouped FP8 GEMM in DeepGEMM's two layouts for mixtures of experts, each group with its own
/// weights and block scales (docs/design.md §14.1); every count, index and extent is checked
/// before any C is written, and a group's rows get the bits those rows alone would.
///   masked:      A (G x max_m x K), a (G x max_m x ceil(K/128)), W (G x N x K),
///                w (G x ceil(N/128) x ceil(K/128)), C (G x max_m x N): group g multiplies its
///                first masked_m(g) rows; C's other rows are not touched.
///   contiguous:  A (rows x K), a (rows x ceil(K/128)), W, w as above, C (rows x N): row r
///                belongs to group m_indices(r), or to none where it is -1 (C's row not touched).
/// masked_m and m_indices: rank-1 Views of integers, read on the host (as the grouped FP64 and
/// W8A8 calls read theirs).
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CountView,
          class CView>
Fp8Report fp8_gemm_masked(const ExecSpace& space, const AView& A, const AScales& a, const WView& W,
                          const WScales& w, const CountView& masked_m, const CView& C) {
  static_assert(AView::rank == 3 && AScales::rank == 3 && WView::rank == 3 && WScales::rank == 3 &&
                    CView::rank == 3,
                "ozaki::fp8_gemm_masked: A, a, W, w and C are rank-3 Views, the groups along "
                "extent 0");
  const char* call = "ozaki::fp8_gemm_masked";
  const std::int64_t G = A.extent(0), rows = A.extent(1);
  if (W.extent(0) != A.extent(0) || a.extent(0) != A.extent(0) || w.extent(0) != A.extent(0) ||
      C.extent(0) != A.extent(0) || a.extent(1) != A.extent(1) || C.extent(1) != A.extent(1)) {
    throw InvalidArgument(std::string(call) +
                          ": A (G x max_m x K), a (G x max_m x K/128), W (G x N x K), w (G x "
                          "N/128 x K/128) and C (G x max_m x N) hold the same groups and rows");
  }
  Impl::check_grouped_overlaps(call, A, a, W, w, w, false, C);  // (no bias)
  const auto runs =
      Impl::masked_runs(Impl::host_values(space, masked_m, "masked_m"), G, rows, call);
  return Impl::fp8_grouped(space, runs, [&](const Impl::GroupRun& r, auto&& f) {
    const auto rows_of = Kokkos::make_pair(r.r0, r.r1);
    f(Kokkos::subview(A, r.group, rows_of, Kokkos::ALL()),
      Kokkos::subview(a, r.group, rows_of, Kokkos::ALL()),
      Kokkos::subview(W, r.group, Kokkos::ALL(), Kokkos::ALL()),
      Kokkos::subview(w, r.group, Kokkos::ALL(), Kokkos::ALL()),
      Kokkos::subview(C, r.group, rows_of, Kokkos::ALL()));
  });
}

template <class ExecSpace, class AView, class AScales, class WView, class WScales, class IndexView,
          class CView>
Fp8Report fp8_gemm_contiguous(const ExecSpace& space, const AView& A, const AScales& a,
                              const WView& W, const WScales& w, const IndexView& m_indices,
                              const CView& C) {
  static_assert(AView::rank == 2 && AScales::rank == 2 && WView::rank == 3 && WScales::rank == 3 &&
                    CView::rank == 2,
                "ozaki::fp8_gemm_contiguous: A (rows x K), a (rows x K/128) and C (rows x N) "
                "stack the groups' rows; W (G x N x K) and w (G x N/128 x K/128) hold a group "
                "each along extent 0");
  const char* call = "ozaki::fp8_gemm_contiguous";
  if (w.extent(0) != W.extent(0)) {
    throw InvalidArgument(std::string(call) + ": W and w hold the same groups");
  }
  const std::int64_t rows = A.extent(0);
  if (static_cast<std::int64_t>(C.extent(0)) != rows || a.extent(0) != A.extent(0)) {
    throw InvalidArgument(std::string(call) + ": A, a and C have one row per token");
  }
  Impl::check_grouped_overlaps(call, A, a, W, w, w, false, C);  // (no bias)
  const auto runs = Impl::contiguous_runs(Impl::host_values(space, m_indices, "m_indices"),
                                          W.extent(0), rows, call);
  return Impl::fp8_grouped(space, runs, [&](const Impl::GroupRun& r, auto&& f) {
    const auto rows_of = Kokkos::make_pair(r.r0, r.r1);
    f(Kokkos::subview(A, rows_of, Kokkos::ALL()), Kokkos::subview(a, rows_of, Kokkos::ALL()),
      Kokkos::subview(W, r.group, Kokkos::ALL(), Kokkos::ALL()),
      Kokkos::subview(w, r.group, Kokkos::ALL(), Kokkos::ALL()),
      Kokkos::subview(C, rows_of, Kokkos::ALL()));
  });
}

/// Per-token FP8 quantization (the file comment): 1 x 128 blocks of X (M x K), scales
/// M x ceil(K / 128).
template <class ExecSpace, class XView, class QView, class ScaleView>
void quantize_per_token(const ExecSpace& space, const XView& X, const QView& Q,
                        const ScaleView& scales) {
  Impl::check_fp8_quantizer("ozaki::quantize_per_token", X.extent(0), X.extent(1), Q, scales, 1);
  if (X.size() == 0) return;
  Impl::quantize_fp8_blocks(space, X, Q, scales, 1);
}

/// Per-block FP8 quantization (the file comment): 128 x 128 blocks of W (N x K), scales
/// ceil(N / 128) x ceil(K / 128).
template <class ExecSpace, class XView, class QView, class ScaleView>
void quantize_per_block(const ExecSpace& space, const XView& W, const QView& Q,
                        const ScaleView& scales) {
  Impl::check_fp8_quantizer("ozaki::quantize_per_block", W.extent(0), W.extent(1), Q, scales,
                            Impl::fp8_block);
  if (W.size() == 0) return;
  Impl::quantize_fp8_blocks(space, W, Q, scales, Impl::fp8_block);
}

/// C = the block-scaled product (the file comment) on the library's scratch for `space`'s
/// instance.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CView>
Fp8Report fp8_gemm(const ExecSpace& space, const AView& A, const AScales& a, const WView& W,
                   const WScales& w, const CView& C) {
  auto lease = Impl::LibraryScratch<ExecSpace>::lease(space);
  return Impl::fp8_gemm_on(space, A, a, W, w, C, lease.buffer());
}

/// The same on a Workspace's scratch.
template <class ExecSpace, class AView, class AScales, class WView, class WScales, class CView>
Fp8Report fp8_gemm(const ExecSpace& space, const AView& A, const AScales& a, const WView& W,
                   const WScales& w, const CView& C, Workspace<ExecSpace>& workspace) {
  return Impl::fp8_gemm_on(space, A, a, W, w, C,
                           Impl::WorkspaceAccess<ExecSpace>::buffer(workspace));
}

/// Reserves `workspace` for fp8_gemm on A, W and C as these, so that a call, a captured one
/// too, allocates nothing: the most any device's kernels need (C staged too).
template <class ExecSpace, class AView, class WView, class CView>
void reserve_fp8(Workspace<ExecSpace>& workspace, const AView& A, const WView& W, const CView& C) {
  if constexpr (Impl::Fp8GemmBackend<ExecSpace>::available) {
    Impl::WorkspaceAccess<ExecSpace>::buffer(workspace).reserve(
        Impl::fp8_layout(A, W, C, Impl::Fp8Forms{}).bytes());
  }
}

}  // namespace ozaki
