#pragma once
// ozaki::gemm as a call made while its stream is captured into a graph, then the graph run:
// on Cuda a real capture (a non-blocking stream of its own, global capture mode, as
// torch.cuda.graph captures); on host spaces the library's emulation
// (Experimental::TestHooks::emulate_capture: the device's verdict evaluated on the host).
#include "common.hpp"

#include <ozaki/impl/common/bounds.hpp>

#include <cmath>
#include <cstring>
#include <type_traits>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace ozaki_test {

/// A and B scaled against each other along k: A D and D^-1 B with D = diag(2^d_k), d_k
/// uniform in [-r, r].  AB is unchanged, but the certificate cannot bound |A||B| near its
/// mean-field value, so no count from the shape is certified for it (crt/captured.hpp).
inline void scale_against_each_other(HostMatrix& A, HostMatrix& B, int r, Random& rng) {
  const std::int64_t M = A.rows, K = A.cols, N = B.cols;
  for (std::int64_t k = 0; k < K; ++k) {
    const int d = static_cast<int>(std::floor(rng.uniform() * (2 * r + 1))) - r;
    for (std::int64_t m = 0; m < M; ++m) A.values[m + k * M] = std::ldexp(A.values[m + k * M], d);
    for (std::int64_t n = 0; n < N; ++n) B.values[k + n * K] = std::ldexp(B.values[k + n * K], -d);
  }
}

/// Native FP64 GEMM's result inside a graph against an eager one: the same bits on host
/// spaces (the same BLAS call); on a GPU, cuBLAS may pick another kernel inside a graph (its
/// workspace differs there), so both within native's own bound gamma_(K+2) (|A||B|)_mn of the
/// exact product, i.e. |c - n| <= 2 gamma_(K+2) (|A||B|)_mn, NaN where the other has NaN.
inline bool agrees_with_native(const HostMatrix& C, const HostMatrix& native, const HostMatrix& A,
                               const HostMatrix& B) {
  if constexpr (ozaki::Impl::is_host_space<TestSpace>()) {
    return C.values.size() == native.values.size() &&
           std::memcmp(C.values.data(), native.values.data(), C.values.size() * sizeof(double)) ==
               0;
  }
  const double bound = 2 * ozaki::Impl::native_componentwise_bound(A.cols);
  for (std::int64_t n = 0; n < C.cols; ++n) {
    for (std::int64_t m = 0; m < C.rows; ++m) {
      const double c = C(m, n), x = native(m, n);
      if (c == x) continue;  // infinities included
      if (std::isnan(x) || std::isnan(c)) {
        if (std::isnan(x) != std::isnan(c)) return false;
        continue;
      }
      double abs_ab = 0;
      for (std::int64_t k = 0; k < A.cols; ++k) abs_ab += std::fabs(A(m, k)) * std::fabs(B(k, n));
      if (!(std::fabs(c - x) <= bound * abs_ab)) return false;
    }
  }
  return true;
}

#if defined(KOKKOS_ENABLE_CUDA)
/// Captures `call()` on `stream` into a graph, instantiates it and launches it `launches`
/// times, each after `before_launch(i)` and followed by `after_launch(i)`.  A throw ends the
/// capture first.
template <class Call, class Before, class After>
ozaki::Report capture_and_launch(cudaStream_t stream, const Call& call, int launches,
                                 const Before& before_launch, const After& after_launch) {
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  ozaki::Report report;
  try {
    report = call();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    throw;
  }
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess) << report.reason;
  cudaGraphExec_t exec = nullptr;
  EXPECT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess) << report.reason;
  for (int i = 0; i < launches && exec != nullptr; ++i) {
    before_launch(i);
    EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    after_launch(i);
  }
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  return report;
}
#endif

#if defined(KOKKOS_ENABLE_CUDA)
/// Eager calls on `space` before its stream is captured, as cuBLAS programs warm up: cuBLAS
/// cannot make a handle while a stream is being captured, so the stream's handles (native FP64
/// GEMM's, the INT8 products') and the library's streams for graphs (made by the first eager
/// INT8 call on the device) must exist before.
inline void warm_up(const Kokkos::Cuda& space) {
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::CudaSpace> a("warm a", 64, 64),
      b("warm b", 64, 64), c("warm c", 64, 64);
  Kokkos::deep_copy(a, 1.0);
  Kokkos::deep_copy(b, 0.5);
  ozaki::Options native, crt;
  native.algorithm = ozaki::Algorithm::Native;
  crt.algorithm = ozaki::Algorithm::Int8Crt;
  crt.moduli = 14;
  // (Options::experimental.graph_products, on by default, makes the library's streams for
  // graphs.)
  ozaki::gemm(space, "N", "N", 1.0, a, b, 0.0, c, native);
  ozaki::gemm(space, "N", "N", 1.0, a, b, 0.0, c, crt);
  space.fence();
}
#endif

/// `gemm(space)` (a call of ozaki::gemm on `space`, returning its Report) made as a captured
/// call and run once, on Cuda after warm_up on the captured stream.  The operands must be on
/// the device before.
template <class Gemm>
ozaki::Report captured_call(const Gemm& gemm) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<TestSpace, Kokkos::Cuda>::value) {
    Kokkos::fence();
    cudaStream_t stream = nullptr;
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    ozaki::Report report;
    try {
      const Kokkos::Cuda space(stream);
      warm_up(space);
      report = capture_and_launch(
          stream, [&] { return gemm(space); }, 1, [](int) {}, [](int) {});
    } catch (...) {
      cudaStreamDestroy(stream);
      throw;
    }
    cudaStreamDestroy(stream);
    return report;
  }
#endif
  ozaki::Experimental::TestHooks hooks = ozaki::Experimental::test_hooks();
  hooks.emulate_capture = true;
  ozaki::Experimental::set_test_hooks(hooks);
  ozaki::Report report;
  try {
    report = gemm(TestSpace());
  } catch (...) {
    hooks.emulate_capture = false;
    ozaki::Experimental::set_test_hooks(hooks);
    throw;
  }
  hooks.emulate_capture = false;
  ozaki::Experimental::set_test_hooks(hooks);
  return report;
}

/// run_gemm (column-major operands) as a captured call.
inline GemmRun run_gemm_captured(char ta, char tb, double alpha, const HostMatrix& A,
                                 const HostMatrix& B, double beta, const HostMatrix& C0,
                                 const ozaki::Options& options) {
  const DeviceMatrix dA = device_copy(A, Layout::Left), dB = device_copy(B, Layout::Left);
  const DeviceMatrix dC = device_copy(C0, Layout::Left);
  const std::string sa(1, ta), sb(1, tb);
  GemmRun run;
  run.report = captured_call([&](const TestSpace& space) {
    return ozaki::gemm(space, sa.c_str(), sb.c_str(), alpha, dA.left, dB.left, beta, dC.left,
                       options);
  });
  run.C = to_host(dC.view);
  return run;
}

}  // namespace ozaki_test
