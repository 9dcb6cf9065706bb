#include "cublas_handles.hpp"

#include <ozaki/errors.hpp>

#include <Kokkos_Core.hpp>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace ozaki {
namespace Impl {
namespace cuda {

namespace {

struct Entry {
  cublasHandle_t handle = nullptr;
  std::unique_ptr<std::mutex> mutex = std::make_unique<std::mutex>();
  std::unique_ptr<Int8Kernels> int8_kernels = std::make_unique<Int8Kernels>();
};

using Key = std::tuple<int, cudaStream_t, HandleUse>;

// Never destroyed, like the mutex that guards it: a program that finalizes Kokkos from
// std::atexit (registered before the first call) runs destroy_all after the static
// destructors of everything constructed later, so a function-local static map would already
// be gone when the finalize hook walks it.
std::mutex& registry_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
std::map<Key, Entry>& registry() {
  static auto* handles = new std::map<Key, Entry>;
  return *handles;
}

void destroy_all() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (auto& kv : registry()) {  // at finalize: nothing to report to
    cublasDestroy(kv.second.handle);
    for (auto& chosen : kv.second.int8_kernels->chosen) release(chosen.second);
    if (kv.second.int8_kernels->lt != nullptr) cublasLtDestroy(kv.second.int8_kernels->lt);
    if (kv.second.int8_kernels->workspace != nullptr) cudaFree(kv.second.int8_kernels->workspace);
  }
  registry().clear();
}

}  // namespace

void make_lt(Int8Kernels& kernels) {
  if (kernels.lt != nullptr) return;
  check(cublasLtCreate(&kernels.lt), "cublasLtCreate");
  check(cudaMalloc(&kernels.workspace, lt_workspace_bytes), "cudaMalloc(cuBLASLt workspace)");
}

void release(Int8Kernels::Choice& choice) {
  if (choice.a != nullptr) cublasLtMatrixLayoutDestroy(choice.a);
  if (choice.b != nullptr) cublasLtMatrixLayoutDestroy(choice.b);
  if (choice.c != nullptr) cublasLtMatrixLayoutDestroy(choice.c);
  if (choice.desc != nullptr) cublasLtMatmulDescDestroy(choice.desc);
  choice = Int8Kernels::Choice{};
}

namespace {
std::atomic<bool> exiting{false};  // trivially destructible: valid to the very end
}  // namespace

void note_cublas_used() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit([] { exiting.store(true); }); });
}

bool cublas_torn_down() { return exiting.load(); }

void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw BackendError(std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
                     cublasGetStatusString(status) + ")");
}

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  throw BackendError(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                     cudaGetErrorString(status) + ")");
}

namespace {

/// What a device reports of itself, queried once.
struct DeviceFacts {
  cudaDeviceProp prop;
  GpuPeaks peaks;
};

int device_attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  check(cudaDeviceGetAttribute(&value, what, device), "cudaDeviceGetAttribute");
  return value;
}

const DeviceFacts& device_facts(int device) {
  // Every call's decision asks several times (Auto's rates, the INT8 GEMM's support): each
  // thread keeps the device it asked about last, which references into the map keep valid,
  // so a call that declines takes no lock here.
  thread_local int last_device = -1;
  thread_local const DeviceFacts* last_facts = nullptr;
  if (device == last_device) return *last_facts;
  // Never destroyed (a static's destructor could run before a late caller's use at exit);
  // a node-based map keeps references valid.
  static std::mutex* mutex = new std::mutex;
  static auto* known = new std::map<int, DeviceFacts>;
  std::lock_guard<std::mutex> lock(*mutex);
  auto found = known->find(device);
  if (found == known->end()) {
    DeviceFacts facts;
    check(cudaGetDeviceProperties(&facts.prop, device), "cudaGetDeviceProperties");
    facts.peaks.multiprocessors = facts.prop.multiProcessorCount;
    facts.peaks.clock_khz = device_attribute(cudaDevAttrClockRate, device);
    facts.peaks.memory_clock_khz = device_attribute(cudaDevAttrMemoryClockRate, device);
    facts.peaks.memory_bus_bits = facts.prop.memoryBusWidth;
    found = known->emplace(device, facts).first;
  }
  last_device = device;
  last_facts = &found->second;
  return found->second;
}

}  // namespace

const cudaDeviceProp& device_properties(int device) { return device_facts(device).prop; }

const GpuPeaks& device_peaks(int device) { return device_facts(device).peaks; }

BoundHandle handle_for(cudaStream_t stream, HandleUse use) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(registry_mutex());
  static const bool hook = [] {
    Kokkos::push_finalize_hook(destroy_all);
    return true;
  }();
  (void)hook;
  Entry& entry = registry()[Key{device, stream, use}];
  if (entry.handle == nullptr) {
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), "cublasCreate");
    const cublasStatus_t bound = cublasSetStream(h, stream);
    if (bound != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(h);
      check(bound, "cublasSetStream");
    }
    entry.handle = h;
  }
  return {entry.handle, entry.mutex.get(),
          use == HandleUse::Int8 ? entry.int8_kernels.get() : nullptr};
}

bool lt_ready_for(cudaStream_t stream) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  std::mutex* entry_mutex = nullptr;
  Int8Kernels* kernels = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    const auto found = registry().find(Key{device, stream, HandleUse::Int8});
    if (found == registry().end() || found->second.handle == nullptr) return false;
    entry_mutex = found->second.mutex.get();
    kernels = found->second.int8_kernels.get();
  }
  std::lock_guard<std::mutex> lock(*entry_mutex);  // (never both locks at once)
  return kernels->lt != nullptr;
}

}  // namespace cuda
}  // namespace Impl
}  // namespace ozaki
