// A Kokkos Tools library that draws the GPU timeline of a run without fences: at the start and
// the end of every Kokkos kernel and profiling region it records a CUDA event on the legacy
// default stream (the stream of Kokkos' default CUDA instance, which ozaki_bench and its
// cuBLAS handle use), and the host time of the callback.  At finalize it writes, per event,
// the GPU time since the first event and the host time, so that the gaps between kernels show
// who waited for whom: a kernel whose begin event the GPU reaches long after the previous end
// event waited for the host (a round trip, or host work); one whose host callback comes long
// before its GPU begin was queued ahead.  (Nsight Systems does not run on the GPU machine.)
//
// Use: KOKKOS_PROFILE_LIBRARY=libozaki_gpu_timeline.so OZAKI_TIMELINE_FILE=out.txt program.
// Events recorded on stream 0 order behind everything on blocking streams, so use it on
// programs that run on the default instance (ozaki's overlap, off by default, uses another).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Mark {
  std::string name;
  char kind;  // 'B' begin, 'E' end of a kernel; '[' and ']' of a region
  cudaEvent_t event;
  double host_ms;
};

struct Timeline {
  std::mutex lock;
  std::vector<Mark> marks;
  std::vector<std::string> kernels;  // by kernel id
  std::vector<std::string> regions;  // the open regions
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool failed = false;

  void mark(const std::string& name, char kind) {
    std::lock_guard<std::mutex> guard(lock);
    if (failed) return;
    cudaEvent_t e;
    if (cudaEventCreate(&e) != cudaSuccess || cudaEventRecord(e, 0) != cudaSuccess) {
      failed = true;
      return;
    }
    const double host =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    marks.push_back({name, kind, e, host});
  }
};

Timeline& timeline() {
  static Timeline* t = new Timeline;  // outlives every static destructor
  return *t;
}

void begin_kernel(const char* name, std::uint64_t* id) {
  Timeline& t = timeline();
  {
    std::lock_guard<std::mutex> guard(t.lock);
    *id = t.kernels.size();
    t.kernels.emplace_back(name);
  }
  t.mark(name, 'B');
}

void end_kernel(std::uint64_t id) {
  Timeline& t = timeline();
  std::string name;
  {
    std::lock_guard<std::mutex> guard(t.lock);
    if (id < t.kernels.size()) name = t.kernels[id];
  }
  t.mark(name, 'E');
}

}  // namespace

/// Kokkos Tools' settings block (Kokkos_Profiling_C_Interface.h, the same layout in 3.4 and
/// later): a tool that does not ask otherwise gets a global fence around every callback, which
/// would hide exactly the gaps this tool is for.
struct Kokkos_Tools_ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};

extern "C" {

void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) { timeline(); }

void kokkosp_request_tool_settings(std::uint32_t, Kokkos_Tools_ToolSettings* settings) {
  settings->requires_global_fencing = false;
}

void kokkosp_begin_parallel_for(const char* name, std::uint32_t, std::uint64_t* id) {
  begin_kernel(name, id);
}
void kokkosp_end_parallel_for(std::uint64_t id) { end_kernel(id); }
void kokkosp_begin_parallel_reduce(const char* name, std::uint32_t, std::uint64_t* id) {
  begin_kernel(name, id);
}
void kokkosp_end_parallel_reduce(std::uint64_t id) { end_kernel(id); }
void kokkosp_begin_parallel_scan(const char* name, std::uint32_t, std::uint64_t* id) {
  begin_kernel(name, id);
}
void kokkosp_end_parallel_scan(std::uint64_t id) { end_kernel(id); }

void kokkosp_push_profile_region(const char* name) {
  Timeline& t = timeline();
  {
    std::lock_guard<std::mutex> guard(t.lock);
    t.regions.emplace_back(name);
  }
  t.mark(name, '[');
}

void kokkosp_pop_profile_region() {
  Timeline& t = timeline();
  std::string name;
  {
    std::lock_guard<std::mutex> guard(t.lock);
    if (!t.regions.empty()) {
      name = t.regions.back();
      t.regions.pop_back();
    }
  }
  t.mark(name, ']');
}

/// Writes one line per mark: GPU ms since the first mark, host ms, the GPU gap since the
/// previous mark, kind and name.
void kokkosp_finalize_library() {
  Timeline& t = timeline();
  const char* path = std::getenv("OZAKI_TIMELINE_FILE");
  std::FILE* out = path && *path ? std::fopen(path, "w") : stderr;
  if (!out) out = stderr;
  if (t.failed) std::fprintf(out, "gpu_timeline: a CUDA event could not be recorded\n");
  cudaDeviceSynchronize();
  std::fprintf(out, "# gpu_ms host_ms gap_ms kind name\n");
  float previous = 0;
  for (std::size_t i = 0; i < t.marks.size(); ++i) {
    float gpu = 0;
    if (i > 0 && cudaEventElapsedTime(&gpu, t.marks[0].event, t.marks[i].event) != cudaSuccess)
      gpu = -1;
    std::fprintf(out, "%10.3f %10.3f %8.3f %c %s\n", gpu, t.marks[i].host_ms, gpu - previous,
                 t.marks[i].kind, t.marks[i].name.c_str());
    previous = gpu;
  }
  if (out != stderr) std::fclose(out);
}

}  // extern "C"
