// The side streams of scheme II's overlapped passes (see SideInstance in
// ozaki/cuda/int8_gemm_cublas.hpp).
#include <ozaki/cuda/int8_gemm_cublas.hpp>

#include "cublas_handles.hpp"
#include "device_cache_config.hpp"

#include <Kokkos_Core.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace ozaki {
namespace Impl {

struct SideInstance<Kokkos::Cuda>::Lane {
  std::mutex mutex;
  cudaStream_t stream = nullptr;
  cudaEvent_t events[slots] = {};
  std::unique_ptr<Kokkos::Cuda> side;  // on `stream`; released at Kokkos::finalize
};

namespace {

using LaneKey = std::tuple<int, cudaStream_t>;

struct Lanes {
  std::mutex mutex;
  std::map<LaneKey, std::unique_ptr<SideInstance<Kokkos::Cuda>::Lane>> lanes;
  bool finalize_hook = false;
};

// Never destroyed: a program that finalizes Kokkos from std::atexit finds it intact.  The
// streams and events live as long as the process (the CUDA context takes them at exit).
Lanes& lanes() {
  static Lanes* l = new Lanes;
  return *l;
}

void release_instances() {
  Lanes& l = lanes();
  std::lock_guard<std::mutex> lock(l.mutex);
  for (auto& kv : l.lanes) {
    std::lock_guard<std::mutex> lane_lock(kv.second->mutex);
    kv.second->side.reset();  // a Kokkos::Cuda must not outlive Kokkos::finalize
  }
  l.finalize_hook = false;
}

}  // namespace

SideInstance<Kokkos::Cuda>::Lease::Lease(Lane& lane) : lane_(lane) { lane_.mutex.lock(); }

SideInstance<Kokkos::Cuda>::Lease::~Lease() { lane_.mutex.unlock(); }

const Kokkos::Cuda& SideInstance<Kokkos::Cuda>::Lease::side() const {
  if (!lane_.side) {
    const cuda::KeepDeviceCacheConfig program_cache;  // the program's, not Kokkos'
    lane_.side = std::make_unique<Kokkos::Cuda>(lane_.stream);
  }
  return *lane_.side;
}

void SideInstance<Kokkos::Cuda>::Lease::record(int slot, const Kokkos::Cuda& on) {
  cuda::check(cudaEventRecord(lane_.events[slot], on.cuda_stream()), "cudaEventRecord");
}

void SideInstance<Kokkos::Cuda>::Lease::wait(const Kokkos::Cuda& waiter, int slot) {
  cuda::check(cudaStreamWaitEvent(waiter.cuda_stream(), lane_.events[slot], 0),
              "cudaStreamWaitEvent");
}

SideInstance<Kokkos::Cuda>::Lease SideInstance<Kokkos::Cuda>::lease(const Kokkos::Cuda& main) {
  Lanes& l = lanes();
  Lane* lane = nullptr;
  {
    std::lock_guard<std::mutex> lock(l.mutex);
    if (!l.finalize_hook) {
      Kokkos::push_finalize_hook(release_instances);
      l.finalize_hook = true;
    }
    std::unique_ptr<Lane>& entry = l.lanes[LaneKey{main.cuda_device(), main.cuda_stream()}];
    if (!entry) {
      auto created = std::make_unique<Lane>();
      cuda::check(cudaStreamCreateWithFlags(&created->stream, cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags");
      for (cudaEvent_t& e : created->events)
        cuda::check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
      entry = std::move(created);
    }
    lane = entry.get();
  }
  return Lease(*lane);
}

}  // namespace Impl
}  // namespace ozaki
