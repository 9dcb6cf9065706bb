// Native FP64 and complex FP64 GEMM through cuBLAS on the caller's stream (NativeBackend).
//
// Kokkos Kernels 3.4's KokkosBlas::gemm has no execution-space overload: ozaki had to fence
// the caller's instance, run it on Kokkos Kernels' one global cuBLAS handle (the default
// stream) and fence the device again, so every native call (Auto's choice at small shapes,
// every fallback) blocked the host twice and serialised all streams.  Later versions take the
// instance but re-bind one global handle to its stream on every call.  Here each stream has a
// handle of its own, bound once (cublas_handles.hpp), and the call is enqueued like any other
// kernel of the instance: nothing waits.

#include "cublas_handles.hpp"

#include <ozaki/cuda/int8_gemm_cublas.hpp>

#include <cuComplex.h>

#include <mutex>

namespace ozaki {
namespace Impl {

namespace {

cublasOperation_t cublas_op(BlasOp op) {
  return !op.transpose ? CUBLAS_OP_N : op.conjugate ? CUBLAS_OP_C : CUBLAS_OP_T;
}

}  // namespace

bool StreamCapture<Kokkos::Cuda>::active(const Kokkos::Cuda& space) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(space.cuda_stream(), &status) != cudaSuccess) {
    cudaGetLastError();  // a query's error is not the caller's: clear it
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}

void NativeBackend<Kokkos::Cuda>::run(const Kokkos::Cuda& space,
                                      const ColumnMajorProduct<double>& g, double alpha,
                                      double beta) {
  if (g.m == 0 || g.n == 0) return;
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Fp64);
  std::lock_guard<std::mutex> lock(*h.mutex);
  cuda::check(cublasDgemm_64(h.handle, cublas_op(g.op_x), cublas_op(g.op_y), g.m, g.n, g.k, &alpha,
                             g.x, g.ldx, g.y, g.ldy, &beta, g.c, g.ldc),
              "cublasDgemm_64");
  cuda::note_cublas_used();
}

void NativeBackend<Kokkos::Cuda>::run(const Kokkos::Cuda& space,
                                      const ColumnMajorProduct<Kokkos::complex<double>>& g,
                                      Kokkos::complex<double> alpha, Kokkos::complex<double> beta) {
  // Kokkos::complex<double> is two doubles, real part first, aligned to 16 bytes: the layout
  // of cuDoubleComplex.
  static_assert(sizeof(Kokkos::complex<double>) == sizeof(cuDoubleComplex) &&
                    alignof(Kokkos::complex<double>) == alignof(cuDoubleComplex),
                "Kokkos::complex<double> and cuDoubleComplex must share their layout");
  if (g.m == 0 || g.n == 0) return;
  const cuDoubleComplex a = make_cuDoubleComplex(alpha.real(), alpha.imag());
  const cuDoubleComplex b = make_cuDoubleComplex(beta.real(), beta.imag());
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Fp64);
  std::lock_guard<std::mutex> lock(*h.mutex);
  cuda::check(cublasZgemm_64(h.handle, cublas_op(g.op_x), cublas_op(g.op_y), g.m, g.n, g.k, &a,
                             reinterpret_cast<const cuDoubleComplex*>(g.x), g.ldx,
                             reinterpret_cast<const cuDoubleComplex*>(g.y), g.ldy, &b,
                             reinterpret_cast<cuDoubleComplex*>(g.c), g.ldc),
              "cublasZgemm_64");
  cuda::note_cublas_used();
}

// FP32 data (single/driver.hpp): the handle's default math mode keeps SGEMM and CGEMM in FP32
// (no TF32 tensor cores), native FP32 GEMM's accuracy.
void NativeBackend<Kokkos::Cuda>::run(const Kokkos::Cuda& space, const ColumnMajorProduct<float>& g,
                                      float alpha, float beta) {
  if (g.m == 0 || g.n == 0) return;
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Fp64);
  std::lock_guard<std::mutex> lock(*h.mutex);
  cuda::check(cublasSgemm_64(h.handle, cublas_op(g.op_x), cublas_op(g.op_y), g.m, g.n, g.k, &alpha,
                             g.x, g.ldx, g.y, g.ldy, &beta, g.c, g.ldc),
              "cublasSgemm_64");
  cuda::note_cublas_used();
}

void NativeBackend<Kokkos::Cuda>::run(const Kokkos::Cuda& space,
                                      const ColumnMajorProduct<Kokkos::complex<float>>& g,
                                      Kokkos::complex<float> alpha, Kokkos::complex<float> beta) {
  static_assert(sizeof(Kokkos::complex<float>) == sizeof(cuFloatComplex) &&
                    alignof(Kokkos::complex<float>) == alignof(cuFloatComplex),
                "Kokkos::complex<float> and cuFloatComplex must share their layout");
  if (g.m == 0 || g.n == 0) return;
  const cuFloatComplex a = make_cuFloatComplex(alpha.real(), alpha.imag());
  const cuFloatComplex b = make_cuFloatComplex(beta.real(), beta.imag());
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Fp64);
  std::lock_guard<std::mutex> lock(*h.mutex);
  cuda::check(cublasCgemm_64(h.handle, cublas_op(g.op_x), cublas_op(g.op_y), g.m, g.n, g.k, &a,
                             reinterpret_cast<const cuFloatComplex*>(g.x), g.ldx,
                             reinterpret_cast<const cuFloatComplex*>(g.y), g.ldy, &b,
                             reinterpret_cast<cuFloatComplex*>(g.c), g.ldc),
              "cublasCgemm_64");
  cuda::note_cublas_used();
}

}  // namespace Impl
}  // namespace ozaki

namespace ozaki {
namespace Impl {
namespace {

/// One strided-batched call of the real or complex, FP64 or FP32 GEMM on the stream's handle.
template <class T, class Cublas, class Call>
void strided_batch(const Kokkos::Cuda& space, const ColumnMajorProduct<T>& g, T alpha, T beta,
                   const StridedBatch& batch, const Call& call, const char* what) {
  if (g.m == 0 || g.n == 0 || batch.count == 0) return;
  static_assert(sizeof(T) == sizeof(Cublas) && alignof(T) == alignof(Cublas),
                "Kokkos' scalar and cuBLAS's must share their layout");
  const cuda::BoundHandle h = cuda::handle_for(space.cuda_stream(), cuda::HandleUse::Fp64);
  std::lock_guard<std::mutex> lock(*h.mutex);
  const auto* a = reinterpret_cast<const Cublas*>(&alpha);
  const auto* b = reinterpret_cast<const Cublas*>(&beta);
  cuda::check(call(h.handle, cublas_op(g.op_x), cublas_op(g.op_y), g.m, g.n, g.k, a,
                   reinterpret_cast<const Cublas*>(g.x), g.ldx, batch.stride_x,
                   reinterpret_cast<const Cublas*>(g.y), g.ldy, batch.stride_y, b,
                   reinterpret_cast<Cublas*>(g.c), g.ldc, batch.stride_c, batch.count),
              what);
  cuda::note_cublas_used();
}

}  // namespace

void NativeBackend<Kokkos::Cuda>::run_strided_batch(const Kokkos::Cuda& space,
                                                    const ColumnMajorProduct<double>& g,
                                                    double alpha, double beta,
                                                    const StridedBatch& batch) {
  strided_batch<double, double>(space, g, alpha, beta, batch, cublasDgemmStridedBatched_64,
                                "cublasDgemmStridedBatched_64");
}

void NativeBackend<Kokkos::Cuda>::run_strided_batch(
    const Kokkos::Cuda& space, const ColumnMajorProduct<Kokkos::complex<double>>& g,
    Kokkos::complex<double> alpha, Kokkos::complex<double> beta, const StridedBatch& batch) {
  strided_batch<Kokkos::complex<double>, cuDoubleComplex>(
      space, g, alpha, beta, batch, cublasZgemmStridedBatched_64, "cublasZgemmStridedBatched_64");
}

void NativeBackend<Kokkos::Cuda>::run_strided_batch(const Kokkos::Cuda& space,
                                                    const ColumnMajorProduct<float>& g, float alpha,
                                                    float beta, const StridedBatch& batch) {
  strided_batch<float, float>(space, g, alpha, beta, batch, cublasSgemmStridedBatched_64,
                              "cublasSgemmStridedBatched_64");
}

void NativeBackend<Kokkos::Cuda>::run_strided_batch(
    const Kokkos::Cuda& space, const ColumnMajorProduct<Kokkos::complex<float>>& g,
    Kokkos::complex<float> alpha, Kokkos::complex<float> beta, const StridedBatch& batch) {
  strided_batch<Kokkos::complex<float>, cuComplex>(
      space, g, alpha, beta, batch, cublasCgemmStridedBatched_64, "cublasCgemmStridedBatched_64");
}

}  // namespace Impl
}  // namespace ozaki
