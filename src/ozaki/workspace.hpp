#pragma once
/// \file workspace.hpp
/// ozaki::Workspace: the device memory one gemm call needs, owned by the caller so that
/// repeated calls allocate nothing.
///
///   ozaki::Workspace<Kokkos::Cuda> ws(space, M, N, K, options);   // reserve once
///   for (...) ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C, options, ws);
///
/// The workspace is a plain buffer: it holds no results between calls and is keyed on
/// nothing, so changing A or B in place and calling again always gives the new product.
/// A call grows the buffer when it needs more (bytes() and allocations() tell), never shrinks
/// it.  One workspace serves one call at a time: give each concurrent stream its own.
///
/// What a call needs (docs/design.md, "Memory"), with kpad = K rounded up to 16 and
/// G = number of INT8 GEMMs of the schedule:
///   scale exponents      4 (M + N)
///   K-contiguous copies  8 M K and/or 8 N K, GPU spaces only, for operands whose rows are
///                        strided (op(A) of a column-major A, for one) when an automatic S
///                        is estimated; other strided operands are read in place, with
///                        per-tile partials of 16 (M or N) ceil(K/32) bytes
///   slices               (M + N) S kpad
///   INT32 products       batch * 4 N mpad, mpad = M rounded up to 16,
///                        batch = min(G, what fits options.workspace_limit)
///   weights              8 G
///   automatic S only     3 (M + N) kpad + 8 (M + N) + 8 M N + chunks * 4 N mpad, overlapping the
///                        slices and products (it is used before them)
/// and for Int8Crt with L moduli (an automatic count is assumed to come out at 16):
///   exponents, partials  as above (no copies: pass 1 reads strided rows in place)
///   bits and norms       12 (M + N) + 4 M + 16 (M + N)
///   residues             (mpad + width) L kpad: op(A)'s, and those of one pass's rows of op(B)^T
///   INT32 products       4 L chunks mpad width, width = the columns of C per pass (as many
///                        as fit options.workspace_limit, at least 1024, at most 2048 where
///                        M and K are both >= 8192, evened out over the passes)
///   accurate scaling     (mpad + npad) kpad + 4 chunks npad mpad, overlapping the residues,
///                        plus, when the count is automatic, the automatic-S estimate above
///                        and the K-contiguous copies of strided operands (GPU spaces)

#include <ozaki/errors.hpp>
#include <ozaki/impl/workspace_layout.hpp>
#include <ozaki/options.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ozaki {

namespace Impl {
template <class ExecSpace>
struct WorkspaceAccess;
}  // namespace Impl

template <class ExecSpace = Kokkos::DefaultExecutionSpace>
class Workspace {
 public:
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;

  Workspace() = default;
  explicit Workspace(const ExecSpace& space) : space_(space) {}
  /// Reserves what a call of this shape and these options needs (an automatic S is assumed to
  /// come out at `assumed_auto_slices`; a call that needs more grows the buffer once).
  Workspace(const ExecSpace& space, std::int64_t m, std::int64_t n, std::int64_t k,
            const Options& options = Options{})
      : space_(space) {
    reserve(m, n, k, options);
  }

  /// Bytes one call of this shape and these options needs (docs/design.md, "Memory").
  static std::size_t required_bytes(std::int64_t m, std::int64_t n, std::int64_t k,
                                    const Options& options = Options{});

  void reserve(std::int64_t m, std::int64_t n, std::int64_t k, const Options& options = Options{}) {
    grow(required_bytes(m, n, k, options));
  }

  /// Bytes held now.
  std::size_t bytes() const { return buffer_.extent(0); }
  /// How many times the buffer was (re)allocated: equal before and after a call that reused it.
  std::int64_t allocations() const { return allocations_; }
  /// Frees the buffer.
  void release() { buffer_ = Buffer(); }

 private:
  friend struct Impl::WorkspaceAccess<ExecSpace>;
  using Buffer = Kokkos::View<unsigned char*, memory_space>;

  /// Makes the buffer at least `needed` bytes; the old contents are not kept.
  void grow(std::size_t needed) {
    if (bytes() >= needed) return;
    buffer_ = Buffer();  // free first: old and new need not both fit
    try {
      buffer_ = Buffer(Kokkos::view_alloc("ozaki::Workspace", Kokkos::WithoutInitializing), needed);
    } catch (const std::exception& e) {
      throw BackendError("could not allocate a workspace of " + std::to_string(needed) +
                         " bytes: " + e.what());
    }
    ++allocations_;
  }

  ExecSpace space_{};
  Buffer buffer_;
  std::int64_t allocations_ = 0;
};

namespace Impl {

/// The driver's access to a Workspace's buffer.
template <class ExecSpace>
struct WorkspaceAccess {
  /// The buffer, grown to at least `bytes` (its contents are lost when it grows).
  static unsigned char* reserve(Workspace<ExecSpace>& w, std::size_t bytes) {
    w.grow(bytes);
    return w.buffer_.data();
  }
};

}  // namespace Impl

template <class ExecSpace>
std::size_t Workspace<ExecSpace>::required_bytes(std::int64_t m, std::int64_t n, std::int64_t k,
                                                 const Options& options) {
  if (m == 0 || n == 0 || k == 0) return 0;
  const bool automatic = options.slices == auto_slices;
  const int S = automatic ? Impl::assumed_auto_slices : options.slices;
  // Upper bound over layouts: on GPU spaces, both operands may need a K-contiguous copy.
  constexpr bool copies = Impl::copies_strided_rows<ExecSpace>();
  Impl::OperandPlan plan;
  plan.copy_a = plan.copy_b = copies;
  plan.strided_a = plan.strided_b = true;
  const Impl::Shape3 shape{m, n, k};
  std::size_t bytes = 0;
  if (options.algorithm != Algorithm::Int8Crt) {
    bytes = Impl::int8_slices_bytes<ExecSpace>(shape, S, options, automatic, plan);
  }
  // Scheme II where it is asked for, or where Auto may choose it.
  if (options.algorithm == Algorithm::Int8Crt ||
      (options.algorithm == Algorithm::Auto && automatic)) {
    const int L = options.moduli == auto_moduli ? Impl::assumed_auto_moduli : options.moduli;
    const bool accurate = options.crt_scaling != CrtScaling::Fast;
    const bool automatic_l = options.moduli == auto_moduli;
    const Impl::OperandPlan crt_plan =
        Impl::crt_operand_plan<ExecSpace>(true, true, accurate && automatic_l);
    bytes = std::max(
        bytes, Impl::crt_bytes<ExecSpace>(shape, L, options, accurate, automatic_l, crt_plan));
  }
  return bytes;
}

}  // namespace ozaki
