#pragma once
/// \file scratch.hpp
/// A call's scratch: the buffer (ScratchBuffer, owned by an ozaki::Workspace or by the
/// library), how a call carves it (Carver), and the regions both schemes carve first.
///
/// The same code sizes and carves, so the two cannot disagree: carving from a null base only
/// counts bytes.  Layout: [exponents | row copies and tile partials | scheme's own regions |
/// phase scratch].  The phase scratch holds first the estimates, then, reusing the same bytes,
/// the slices or residues and the INT32 products.  Reuse is safe because all kernels of a call
/// run in order on one execution space instance.

#include <ozaki/errors.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/test_hooks.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <string>

namespace ozaki {
namespace Impl {

/// A device buffer that grows and never shrinks.  It holds no results between calls and is
/// keyed on nothing: whoever owns it (a Workspace, the library's scratch per stream) only
/// lends its bytes to one call at a time.
/// TestHooks::poison_scratch fills every new scratch buffer, and every buffer about to be
/// freed, with 0xA5 bytes (the tests set it): a kernel that reads scratch it did not write, or a
/// view left pointing into a freed buffer, then gives wrong results at once, instead of results
/// that depend on what the memory held before.
inline bool poison_new_scratch() { return Experimental::test_hooks().poison_scratch; }

/// Scratch that could not be allocated (a BackendError to the caller; Auto falls back to
/// native FP64 GEMM instead).
class ScratchUnavailable : public BackendError {
 public:
  using BackendError::BackendError;
};

/// TestHooks::fail_scratch_above makes every scratch allocation above that many bytes fail as
/// if the memory were exhausted (fault injection for the tests; read at each allocation).
inline std::size_t injected_allocation_limit() {
  const std::optional<std::int64_t> above = Experimental::test_hooks().fail_scratch_above;
  return above ? static_cast<std::size_t>(*above) : static_cast<std::size_t>(-1);
}

/// Every piece of scratch starts at a multiple of this many bytes: the buffer itself
/// (ScratchBuffer) and each piece carved from it (Carver).  cuBLASLt offers its Hopper INT8
/// kernels only for operands aligned to 256 bytes (the benchmarks diary in docs/history/,
/// "INT8 kernels, cuBLASLt, pass widths").
constexpr std::size_t scratch_alignment = 256;

template <class ExecSpace>
class ScratchBuffer {
 public:
  using memory_space = typename ExecSpace::memory_space;

  /// The buffer starts at a multiple of scratch_alignment although Kokkos puts a 128-byte
  /// header in front of a View's data: it is allocated base_alignment - 1 bytes longer.
  static constexpr std::size_t base_alignment = scratch_alignment;

  std::size_t bytes() const { return bytes_; }
  unsigned char* data() const {
    const auto address = reinterpret_cast<std::uintptr_t>(buffer_.data());
    return buffer_.data() + (base_alignment - address % base_alignment) % base_alignment;
  }
  /// How many times the buffer was (re)allocated.
  std::int64_t allocations() const { return allocations_; }

  /// Makes the buffer at least `needed` bytes and returns it; growing loses the contents.
  unsigned char* reserve(std::size_t needed) {
    if (bytes() >= needed) return data();
    // Poisoned before it is freed too: a view into the old buffer still in use after growing
    // then reads 0xA5 bytes, not the values it happened to hold.
    if (poison_new_scratch() && bytes() > 0)
      Kokkos::deep_copy(buffer_, static_cast<unsigned char>(0xA5));
    buffer_ = Buffer();  // free first: old and new need not both fit
    bytes_ = 0;
    try {
      if (needed > injected_allocation_limit()) throw std::bad_alloc();
      buffer_ = Buffer(Kokkos::view_alloc("ozaki::scratch", Kokkos::WithoutInitializing),
                       needed + base_alignment - 1);
    } catch (const std::exception& e) {
      throw ScratchUnavailable("could not allocate " + std::to_string(needed) +
                               " bytes of scratch: " + e.what());
    }
    bytes_ = needed;
    ++allocations_;
    if (poison_new_scratch()) Kokkos::deep_copy(buffer_, static_cast<unsigned char>(0xA5));
    return data();
  }

  void release() {
    buffer_ = Buffer();
    bytes_ = 0;
  }

 private:
  using Buffer = Kokkos::View<unsigned char*, memory_space>;
  Buffer buffer_;
  std::size_t bytes_ = 0;  // usable bytes from data()
  std::int64_t allocations_ = 0;
};

/// Makes `scratch` hold `needed` bytes and points `base` at it.  Growing loses what the call
/// already stored there, so `redo` then computes it again (carve again, pass 1 again): `base`
/// is updated before `redo` runs, because redo carves from it.
template <class ExecSpace, class Redo>
void ensure_scratch(ScratchBuffer<ExecSpace>& scratch, std::size_t needed, unsigned char*& base,
                    const Redo& redo) {
  if (needed <= scratch.bytes()) {
    base = scratch.data();
    return;
  }
  base = scratch.reserve(needed);
  redo();
}

/// Hands out aligned, typed pieces of a byte buffer, or only counts them (null base).
class Carver {
 public:
  static constexpr std::size_t alignment = scratch_alignment;
  explicit Carver(unsigned char* base, std::size_t offset = 0) : base_(base), offset_(offset) {}
  template <class T>
  T* take(std::size_t count) {
    offset_ = (offset_ + alignment - 1) / alignment * alignment;
    T* p = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + offset_);
    offset_ += count * sizeof(T);
    return p;
  }
  std::size_t used() const { return offset_; }

 private:
  unsigned char* base_;
  std::size_t offset_;
};

/// Scale exponents: they live through the whole call.
template <class ExecSpace>
struct ExponentRegion {
  typename Views<ExecSpace>::Exponents a, b;
  static ExponentRegion carve(Carver& c, const Shape& s) {
    ExponentRegion r;
    r.a = typename Views<ExecSpace>::Exponents(c.take<int>(s.m), s.m);
    r.b = typename Views<ExecSpace>::Exponents(c.take<int>(s.n), s.n);
    return r;
  }
};

/// K-contiguous copies of the operands whose rows are copied (plan.copy_*), and per-tile
/// partial results for rows read in tiles: scheme I's tile maxima (copied or strided rows),
/// scheme II's norm tiles (plan.crt_norm_tiles: every row).  They live through the whole call.
template <class ExecSpace>
struct RowCopyRegion {
  using Rows = typename Views<ExecSpace>::Rows;
  Rows a, b;
  Rows max_a, max_b;          // per tile, each row's max |x|
  Rows squares_a, squares_b;  // scheme II: per norm tile, S2_t (scaling.hpp)
  Rows sums_a, sums_b;        // scheme II: per norm tile, S1_t
  typename Views<ExecSpace>::TileCounts layers_a, layers_b;  // scheme II: its layer bins
  static RowCopyRegion carve(Carver& c, const Shape& s, const OperandPlan& plan) {
    RowCopyRegion r;
    const bool norms = plan.crt_norm_tiles;
    const std::int64_t tiles = row_tiles(s.k);  // norm_tiles(s.k) is the same count
    auto tile_rows = [&](std::int64_t rows) {
      return Rows(c.take<double>(tiles * rows), tiles, rows);
    };
    if (plan.copy_a) r.a = Rows(c.take<double>(s.m * s.k), s.m, s.k);
    if (plan.copy_a || plan.strided_a || norms) r.max_a = tile_rows(s.m);
    auto tile_counts = [&](std::int64_t rows) {
      return
          typename Views<ExecSpace>::TileCounts(c.take<std::uint64_t>(tiles * rows), tiles, rows);
    };
    if (norms) r.squares_a = tile_rows(s.m), r.sums_a = tile_rows(s.m);
    if (norms) r.layers_a = tile_counts(s.m);
    if (plan.copy_b) r.b = Rows(c.take<double>(s.n * s.k), s.n, s.k);
    if (plan.copy_b || plan.strided_b || norms) r.max_b = tile_rows(s.n);
    if (norms) r.squares_b = tile_rows(s.n), r.sums_b = tile_rows(s.n);
    if (norms) r.layers_b = tile_counts(s.n);
    return r;
  }
};

/// Bytes of the regions every call carves first: exponents, row copies and tile partials.
template <class ExecSpace>
std::size_t row_regions_bytes(const Shape& s, const OperandPlan& ops) {
  Carver front(nullptr);
  ExponentRegion<ExecSpace>::carve(front, s);
  RowCopyRegion<ExecSpace>::carve(front, s, ops);
  return front.used();
}

}  // namespace Impl
}  // namespace ozaki
