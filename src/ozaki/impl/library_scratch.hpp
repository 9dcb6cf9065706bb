#pragma once
/// \file library_scratch.hpp
/// The scratch of the plain call (ozaki::gemm without a Workspace): owned by the library, one
/// buffer per execution space instance (ScratchKey: device and stream on CUDA, the calling
/// thread on host spaces), grown once to what the calls need and reused, so that a repeated
/// call allocates nothing.
///
///   - Stream-ordered: a call holds its instance's entry locked while it enqueues its work;
///     the next call on the same stream enqueues after it, so the stream orders every use of
///     the buffer.  Calls on different instances use different buffers and run concurrently.
///   - Keyed on nothing but the instance: it holds no results, so changing A or B in place and
///     calling again always gives the new product.
///   - Bounded: a call grows the buffer to at most what its Options::workspace_limit allows
///     (plus its unavoidable minimum, and under the library's own limit the passes of scheme
///     II's fastest width: crt/layout.hpp), so the bytes held are at most the largest limit
///     used.
///   - Freed at Kokkos::finalize, or earlier by ozaki::release_scratch (ozaki/scratch.hpp).
///   - Never destroyed itself: a program that finalizes Kokkos from std::atexit, after static
///     destructors have begun, finds it intact.

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/scratch.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace ozaki {
namespace Impl {

template <class ExecSpace>
class LibraryScratch {
  struct Entry {
    std::mutex mutex;
    ScratchBuffer<ExecSpace> buffer;
    ScratchBuffer<ExecSpace> operands;  // complex calls' real embedding (complex/driver.hpp)
    ScratchBuffer<ExecSpace> staged;    // FP32 calls' data in FP64 (single/driver.hpp)
    ScratchBuffer<ExecSpace> blocks;    // level-3 routines' own (level3/)
    void release() {
      buffer.release();
      operands.release();
      staged.release();
      blocks.release();
    }
  };

 public:
  /// An instance's buffer, held for one call.
  class Lease {
   public:
    Lease(const ExecSpace& space, Entry& entry)
        : space_(space), lock_(entry.mutex), entry_(entry) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      // A device space whose instances are not known to be ordered: finish before another
      // call may take the buffer.
      if (!ScratchKey<ExecSpace>::stream_ordered && !is_host_space<ExecSpace>()) space_.fence();
    }
    ScratchBuffer<ExecSpace>& buffer() { return entry_.buffer; }
    ScratchBuffer<ExecSpace>& operands() { return entry_.operands; }
    ScratchBuffer<ExecSpace>& staged() { return entry_.staged; }
    ScratchBuffer<ExecSpace>& blocks() { return entry_.blocks; }

   private:
    ExecSpace space_;
    std::unique_lock<std::mutex> lock_;
    Entry& entry_;
  };

  /// Locks and returns the buffer of `space`'s instance (created empty on first use).
  static Lease lease(const ExecSpace& space) { return Lease(space, entry_of(space)); }

  /// Frees the buffer of `space`'s instance (after the call holding it, if any).
  static void release(const ExecSpace& space) {
    Entry& e = entry_of(space);
    std::lock_guard<std::mutex> lock(e.mutex);
    e.release();
  }

  /// Bytes the buffer of `space`'s instance holds.
  static std::size_t bytes(const ExecSpace& space) {
    Entry& e = entry_of(space);
    std::lock_guard<std::mutex> lock(e.mutex);
    return e.buffer.bytes() + e.operands.bytes() + e.staged.bytes() + e.blocks.bytes();
  }

 private:
  struct Registry {
    std::mutex mutex;
    std::map<ScratchKeyValue, std::unique_ptr<Entry>> entries;  // entries are never erased
    bool finalize_hook = false;
  };

  static Registry& registry() {
    static Registry* r = new Registry;  // never destroyed (see the file comment)
    return *r;
  }

  static Entry& entry_of(const ExecSpace& space) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.finalize_hook) {
      Kokkos::push_finalize_hook(release_all);
      r.finalize_hook = true;
    }
    std::unique_ptr<Entry>& e = r.entries[ScratchKey<ExecSpace>::of(space)];
    if (!e) e = std::make_unique<Entry>();
    return *e;
  }

  /// At Kokkos::finalize: every buffer freed while Kokkos can still free it.
  static void release_all() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto& kv : r.entries) {
      std::lock_guard<std::mutex> entry_lock(kv.second->mutex);
      kv.second->release();
    }
    r.finalize_hook = false;  // a later Kokkos::initialize needs a new hook
  }
};

}  // namespace Impl
}  // namespace ozaki
