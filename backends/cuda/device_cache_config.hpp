#pragma once
// The device's cache preference is the host program's: Kokkos 3.4 sets it to prefer shared
// memory (cudaDeviceSetCacheConfig) each time it initialises and each time it makes an
// instance on a stream, and every kernel of the program that sets no preference of its own
// (cuSOLVER's, PyTorch's) would then run under ours.  Kokkos' kernels, ozaki's among them, set
// a preference per kernel, so putting the program's back costs them nothing.

#include <cuda_runtime.h>

namespace ozaki {
namespace Impl {
namespace cuda {

/// Keeps the current device's cache preference across a scope that starts Kokkos or makes a
/// Kokkos::Cuda instance.
class KeepDeviceCacheConfig {
 public:
  KeepDeviceCacheConfig() : known_(cudaDeviceGetCacheConfig(&config_) == cudaSuccess) {
    if (!known_) cudaGetLastError();  // the query's error is not the caller's
  }
  ~KeepDeviceCacheConfig() {
    if (known_ && cudaDeviceSetCacheConfig(config_) != cudaSuccess) cudaGetLastError();
  }
  KeepDeviceCacheConfig(const KeepDeviceCacheConfig&) = delete;
  KeepDeviceCacheConfig& operator=(const KeepDeviceCacheConfig&) = delete;

 private:
  cudaFuncCache config_ = cudaFuncCachePreferNone;
  bool known_;
};

}  // namespace cuda
}  // namespace Impl
}  // namespace ozaki
