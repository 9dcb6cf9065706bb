// Scheme II inside a CUDA graph: the branch on the device's verdict (DeviceBranch in
// ozaki/cuda/int8_gemm_cublas.hpp; the pipeline in src/ozaki/impl/crt/captured.hpp).
#include <ozaki/cuda/int8_gemm_cublas.hpp>
#include <ozaki/errors.hpp>
#include <ozaki/impl/crt/captured.hpp>

#include "cublas_handles.hpp"
#include "device_cache_config.hpp"

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace ozaki {
namespace Impl {

/// The library's two streams of one device for captured calls: `work` joins the caller's
/// capture for the work before the verdict, `branch` is captured into each branch's own graph.
struct DeviceBranch<Kokkos::Cuda>::Lane {
  std::mutex mutex;
  cudaStream_t work = nullptr, branch = nullptr;
  cudaEvent_t forked = nullptr, joined = nullptr;
  std::unique_ptr<Kokkos::Cuda> work_space, branch_space;  // released at Kokkos::finalize
};

namespace {

using Lane = DeviceBranch<Kokkos::Cuda>::Lane;

struct Lanes {
  std::mutex mutex;
  std::map<int, std::unique_ptr<Lane>> by_device;
  bool finalize_hook = false;
};

// Never destroyed, as the side streams' (side_stream.cpp).
Lanes& lanes() {
  static Lanes* l = new Lanes;
  return *l;
}

/// Devices whose lane exists (bit d for device d < 64): prepare's test without a lock.
std::atomic<std::uint64_t> lanes_made{0};

void release_instances() {
  Lanes& l = lanes();
  std::lock_guard<std::mutex> lock(l.mutex);
  for (auto& kv : l.by_device) {
    std::lock_guard<std::mutex> lane_lock(kv.second->mutex);
    kv.second->work_space.reset();
    kv.second->branch_space.reset();
  }
  lanes_made.store(0, std::memory_order_release);
  l.finalize_hook = false;
}

/// The branch stream's cuBLAS handles get workspaces of their own (cuBLAS's default size on
/// Hopper): without one, cuBLAS takes its workspace with cudaMallocAsync while the stream is
/// being captured, an allocation node that a conditional node's body may not hold.  Then one
/// product of each kind, run now: cuBLAS sets up a handle's state on its first product, which
/// must not happen during a capture.  (The `_64` entry points, as everywhere in the library:
/// the interposer exports the others.)
void warm_up_handles(cudaStream_t stream) {
  void* memory = nullptr;
  cuda::check(cudaMallocAsync(&memory, 4096, stream), "cudaMallocAsync");
  cuda::check(cudaMemsetAsync(memory, 0, 4096, stream), "cudaMemsetAsync");
  auto* bytes = static_cast<std::int8_t*>(memory);
  const cuda::BoundHandle int8 = cuda::handle_for(stream, cuda::HandleUse::Int8);
  const cuda::BoundHandle fp64 = cuda::handle_for(stream, cuda::HandleUse::Fp64);
  for (const cuda::BoundHandle& h : {int8, fp64}) {
    void* workspace = nullptr;  // kept for the process's life, as the lane's streams
    cuda::check(cudaMalloc(&workspace, cuda::lt_workspace_bytes), "cudaMalloc");
    cuda::check(cublasSetWorkspace(h.handle, workspace, cuda::lt_workspace_bytes),
                "cublasSetWorkspace");
  }
  const std::int32_t one_i = 1, zero_i = 0;
  cuda::check(cublasGemmEx_64(int8.handle, CUBLAS_OP_T, CUBLAS_OP_N, 16, 16, 16, &one_i, bytes,
                              CUDA_R_8I, 16, bytes + 256, CUDA_R_8I, 16, &zero_i, bytes + 512,
                              CUDA_R_32I, 16, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx_64");
  const double one = 1, zero = 0;
  auto* values = reinterpret_cast<double*>(bytes + 2048);
  cuda::check(cublasDgemm_64(fp64.handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, values, 4,
                             values + 16, 4, &zero, values + 32, 4),
              "cublasDgemm_64");
  // A complex call's native branch (Karatsuba's verdict may take it) is ZGEMM.
  const cuDoubleComplex one_z{1, 0}, zero_z{0, 0};
  auto* complex_values = reinterpret_cast<cuDoubleComplex*>(bytes + 3072);
  cuda::check(cublasZgemm_64(fp64.handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one_z, complex_values,
                             2, complex_values + 4, 2, &zero_z, complex_values + 8, 2),
              "cublasZgemm_64");
  cuda::check(cudaFreeAsync(memory, stream), "cudaFreeAsync");
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cuda::note_cublas_used();
}

std::unique_ptr<Lane> make_lane() {
  auto lane = std::make_unique<Lane>();
  cuda::check(cudaStreamCreateWithFlags(&lane->work, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda::check(cudaStreamCreateWithFlags(&lane->branch, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda::check(cudaEventCreateWithFlags(&lane->forked, cudaEventDisableTiming), "cudaEventCreate");
  cuda::check(cudaEventCreateWithFlags(&lane->joined, cudaEventDisableTiming), "cudaEventCreate");
  {
    const cuda::KeepDeviceCacheConfig program_cache;  // the program's, not Kokkos'
    lane->work_space = std::make_unique<Kokkos::Cuda>(lane->work);
    lane->branch_space = std::make_unique<Kokkos::Cuda>(lane->branch);
  }
  warm_up_handles(lane->branch);
  return lane;
}

/// The lane of `device`, or null where none has been made (prepare makes it, outside any
/// capture: cuBLAS cannot make a handle while a stream is being captured).
Lane* existing_lane(int device) {
  Lanes& l = lanes();
  std::lock_guard<std::mutex> lock(l.mutex);
  const auto found = l.by_device.find(device);
  if (found == l.by_device.end() || !found->second->work_space) return nullptr;
  return found->second.get();
}

/// Whether a conditional node's body may hold every node of `graph` (kernels, memsets,
/// memcopies, empty nodes, child graphs and conditionals); why not otherwise.
bool fits_a_branch(cudaGraph_t graph, std::string& why) {
  std::size_t count = 0;
  cuda::check(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes");
  std::vector<cudaGraphNode_t> nodes(count);
  cuda::check(cudaGraphGetNodes(graph, nodes.data(), &count), "cudaGraphGetNodes");
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    cuda::check(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType");
    switch (type) {
      case cudaGraphNodeTypeKernel:
      case cudaGraphNodeTypeMemcpy:
      case cudaGraphNodeTypeMemset:
      case cudaGraphNodeTypeEmpty:
      case cudaGraphNodeTypeGraph:
      case cudaGraphNodeTypeConditional: break;
      default:
        why = "a branch holds a graph node of type " + std::to_string(int(type)) +
              ", which a conditional node's body may not";
        return false;
    }
  }
  return true;
}

/// The verdict of crt/captured.hpp on the summary partials, as the conditional's value: 1
/// runs the products, 0 native FP64 GEMM.
__global__ void capture_verdict(cudaGraphConditionalHandle handle, CrtCaptureConstants c,
                                const double* partials, int teams) {
  double v[summary_values] = {};
  summary_maxima(partials, teams, v);
  cudaGraphSetConditional(handle, crt_capture_verdict(c, v) ? 1u : 0u);
}

}  // namespace

void DeviceBranch<Kokkos::Cuda>::prepare(const Kokkos::Cuda& space) {
  const int device = space.cuda_device();
  const std::uint64_t bit = device < 64 ? std::uint64_t(1) << device : 0;
  if (bit != 0 && (lanes_made.load(std::memory_order_acquire) & bit) != 0) return;
  Lanes& l = lanes();
  std::lock_guard<std::mutex> lock(l.mutex);
  std::unique_ptr<Lane>& entry = l.by_device[device];
  if (!entry || !entry->work_space) {
    if (!l.finalize_hook) {
      Kokkos::push_finalize_hook(release_instances);
      l.finalize_hook = true;
    }
    entry = make_lane();
  }
  lanes_made.fetch_or(bit, std::memory_order_release);
}

DeviceBranch<Kokkos::Cuda>::DeviceBranch(const Kokkos::Cuda& space) : space_(space) {}

DeviceBranch<Kokkos::Cuda>::~DeviceBranch() {
  release_branches();
  if (locked_) lane_->mutex.unlock();
}

bool DeviceBranch<Kokkos::Cuda>::open(std::size_t bytes, std::string& why) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(space_.cuda_stream(), &status) != cudaSuccess ||
      status != cudaStreamCaptureStatusActive) {
    cudaGetLastError();
    why = "the stream's capture is not active (invalidated)";
    return false;
  }
  lane_ = existing_lane(space_.cuda_device());
  if (lane_ == nullptr) {
    why =
        "no eager INT8 call has run on this device yet: the library's streams and cuBLAS "
        "handles for graphs are made by the first one, outside any capture (cuBLAS cannot "
        "make a handle while a stream is being captured)";
    return false;
  }
  lane_->mutex.lock();
  locked_ = true;
  void* memory = nullptr;
  if (cudaMallocAsync(&memory, bytes, space_.cuda_stream()) != cudaSuccess) {
    cudaGetLastError();
    why = "cudaMallocAsync of " + std::to_string(bytes) + " bytes failed";
    return false;
  }
  scratch_ = static_cast<unsigned char*>(memory);
  return true;
}

const Kokkos::Cuda& DeviceBranch<Kokkos::Cuda>::branch_space() const {
  return *lane_->branch_space;
}

bool DeviceBranch<Kokkos::Cuda>::begin_branch(std::string& why) {
  if (cudaStreamBeginCapture(lane_->branch, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
    cudaGetLastError();
    why = "the library's branch stream could not be captured";
    return false;
  }
  return true;
}

bool DeviceBranch<Kokkos::Cuda>::end_branch(int which, bool enqueued, std::string& why) {
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(lane_->branch, &graph);
  if (ended != cudaSuccess || graph == nullptr) {
    cudaGetLastError();
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (enqueued) why = std::string("capturing a branch failed: ") + cudaGetErrorString(ended);
    return false;
  }
  if (!enqueued || !fits_a_branch(graph, why)) {
    cudaGraphDestroy(graph);
    return false;
  }
  branches_[which] = graph;
  return true;
}

void DeviceBranch<Kokkos::Cuda>::release_branches() {
  for (cudaGraph_t& g : branches_) {
    if (g != nullptr) cudaGraphDestroy(g);
    g = nullptr;
  }
}

void DeviceBranch<Kokkos::Cuda>::abandon() {
  release_branches();
  close();
}

Kokkos::Cuda DeviceBranch<Kokkos::Cuda>::fork() {
  cuda::check(cudaEventRecord(lane_->forked, space_.cuda_stream()), "cudaEventRecord");
  cuda::check(cudaStreamWaitEvent(lane_->work, lane_->forked, 0), "cudaStreamWaitEvent");
  return *lane_->work_space;
}

void DeviceBranch<Kokkos::Cuda>::decide(const CrtCaptureConstants& c, const double* partials,
                                        int teams) {
  cudaStream_t work = lane_->work;
  cudaStreamCaptureStatus status;
  cudaGraph_t graph = nullptr;
  cuda::check(cudaStreamGetCaptureInfo(work, &status, nullptr, &graph), "cudaStreamGetCaptureInfo");
  cudaGraphConditionalHandle handle;
  cuda::check(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0),
              "cudaGraphConditionalHandleCreate");
  capture_verdict<<<1, 1, 0, work>>>(handle, c, partials, teams);
  cuda::check(cudaGetLastError(), "capture_verdict");
  const cudaGraphNode_t* after = nullptr;
  std::size_t count = 0;
  cuda::check(cudaStreamGetCaptureInfo(work, &status, nullptr, &graph, &after, nullptr, &count),
              "cudaStreamGetCaptureInfo");
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeIf;
  params.conditional.size = 2;  // [0]: the verdict's 1 (the products), [1]: its 0 (native)
  cudaGraphNode_t node;
  cuda::check(cudaGraphAddNode(&node, graph, after, nullptr, count, &params), "cudaGraphAddNode");
  for (int b = 0; b < 2; ++b) {
    cudaGraphNode_t child;
    cuda::check(cudaGraphAddChildGraphNode(&child, params.conditional.phGraph_out[b], nullptr, 0,
                                           branches_[b]),
                "cudaGraphAddChildGraphNode");
  }
  release_branches();  // the bodies hold copies
  cuda::check(cudaStreamUpdateCaptureDependencies(work, &node, nullptr, 1,
                                                  cudaStreamSetCaptureDependencies),
              "cudaStreamUpdateCaptureDependencies");
  cuda::check(cudaEventRecord(lane_->joined, work), "cudaEventRecord");
  cuda::check(cudaStreamWaitEvent(space_.cuda_stream(), lane_->joined, 0), "cudaStreamWaitEvent");
}

void DeviceBranch<Kokkos::Cuda>::close() {
  if (scratch_ == nullptr) return;
  cuda::check(cudaFreeAsync(scratch_, space_.cuda_stream()), "cudaFreeAsync");
  scratch_ = nullptr;
}

}  // namespace Impl
}  // namespace ozaki
