#pragma once
// cuBLAS handles bound to streams, cached device properties, and status checks that throw.
// Internal to the backend.
//
// A handle is created for one (device, stream, use), bound to that stream once with
// cublasSetStream and never re-bound, so two execution space instances on two streams never
// share a handle and cannot race on its stream or its settings.  Emulation settings (math
// mode, mantissa control) live on a handle, so the emulation path has handles of its own.
// All handles are destroyed when Kokkos finalizes.

#include <ozaki/impl/cost_model.hpp>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace ozaki {
namespace Impl {
namespace cuda {

/// Int8: scheme II's and scheme I's INT8 products; Fp64: native FP64 GEMM (default math
/// mode, never changed); Emulation: cuBLAS's FP64 emulation (its math mode and mantissa
/// settings are set on every call).
enum class HandleUse { Int8, Fp64, Emulation };

/// The cuBLASLt handle (created on first use) and the kernel chosen per INT8 product shape
/// (int8_gemm_cublas.cpp, TestHooks::cublas_int8_path Lt): keyed on M, N, K, the three leading
/// dimensions, the operands' common alignment and the batch (count and strides), never on data.
struct Int8Kernels {
  using Shape = std::array<std::int64_t, 11>;
  struct Choice {
    bool found = false;  // false: cuBLASLt offered no kernel; cublasGemmEx runs the product
    cublasLtMatmulAlgo_t algo{};
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  };
  cublasLtHandle_t lt = nullptr;
  /// cuBLASLt's workspace for this handle's stream (lt_workspace_bytes, allocated with the
  /// cuBLASLt handle, freed at finalize): with no workspace the heuristic lists only its
  /// algo 21 kernels for scheme II's products, slower ones (the benchmarks diary in
  /// docs/history/, "cuBLASLt with a workspace, batched products, norm tiles").
  void* workspace = nullptr;
  std::map<Shape, Choice> chosen;
};

/// The bytes of Int8Kernels::workspace: cuBLAS's own default workspace on Hopper.
constexpr std::size_t lt_workspace_bytes = std::size_t(32) << 20;

/// Creates the cuBLASLt handle and its workspace on first use.
void make_lt(Int8Kernels& kernels);

/// Destroys a choice's descriptors.
void release(Int8Kernels::Choice& choice);

/// A handle and the mutex that serialises host threads enqueueing work through it (and, for
/// HandleUse::Int8, the cuBLASLt handle and kernel choices used under the same mutex).
struct BoundHandle {
  cublasHandle_t handle = nullptr;
  std::mutex* mutex = nullptr;
  Int8Kernels* int8_kernels = nullptr;
};

/// The handle for (current device, stream, use): created and bound on first use.
BoundHandle handle_for(cudaStream_t stream, HandleUse use);

/// Whether the HandleUse::Int8 handle of (current device, stream) and its cuBLASLt handle and
/// workspace exist, without making them (a stream being captured cannot: cublasCreate and
/// cudaMalloc are not allowed there).
bool lt_ready_for(cudaStream_t stream);

/// The properties of `device`, queried once per device and process (cudaGetDeviceProperties
/// costs microseconds, and every call's support and rate queries need them).
const cudaDeviceProp& device_properties(int device);

/// The peaks `device` reports (its clocks and memory bus), queried once per device and process:
/// what Auto's cost model scales the measured sm_90 rates by.
const GpuPeaks& device_peaks(int device);

/// Throw ozaki::BackendError naming the call and cuBLAS's / CUDA's reason.
/// After a successful cuBLAS call: registers, once, an atexit function that marks the process
/// as exiting.  cuBLAS builds some of its state lazily on first use and tears it down at exit;
/// registered after that state, the mark is set before the state is gone, so a call made
/// later in exit (from a static destructor) is refused instead of crashing inside cuBLAS.
void note_cublas_used();
/// True once exit has begun after cuBLAS was used (note_cublas_used).
bool cublas_torn_down();

void check(cublasStatus_t status, const char* call);
void check(cudaError_t status, const char* call);

}  // namespace cuda
}  // namespace Impl
}  // namespace ozaki
