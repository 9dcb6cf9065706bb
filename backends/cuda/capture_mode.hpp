#pragma once
// This thread's stream-capture mode relaxed for a guard's life.  A capture in global mode (the
// default, and torch.cuda.graph's) forbids the capturing thread calls that may synchronise or
// allocate outside stream order, and making a Kokkos 3.4 instance is such a call (it allocates
// and writes its scratch).  The interposer makes the instance of a stream first seen inside a
// capture under this guard, and only where that cannot touch the captured stream
// (apart_from_default_stream; docs/design.md §7).  cuBLAS handles are never made so:
// cublasCreate fails while any stream is being captured.  Internal to the backend.

#include <cuda_runtime.h>

namespace ozaki {
namespace Impl {
namespace cuda {

class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

/// Whether work on the legacy default stream leaves `stream` alone (a non-blocking stream):
/// then a Kokkos instance or cuBLAS handle may be made while `stream` is being captured.
inline bool apart_from_default_stream(cudaStream_t stream) {
  unsigned int flags = 0;
  if (stream == nullptr || cudaStreamGetFlags(stream, &flags) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return (flags & cudaStreamNonBlocking) != 0;
}

}  // namespace cuda
}  // namespace Impl
}  // namespace ozaki
