#pragma once
/// \file workspace.hpp
/// ozaki::Workspace: the device memory one gemm call needs, owned by the caller so that
/// repeated calls allocate nothing.
///
///   ozaki::Workspace<Kokkos::Cuda> ws(space, M, N, K, options);   // reserve once
///   for (...) ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C, options, ws);
///
/// For complex calls reserve with `ws.reserve_complex(M, N, K, options)`: a second buffer holds
/// the embedded operands (docs/design.md §8.5).  For FP32 data, `ws.reserve_float(...)` or
/// `ws.reserve_complex_float(...)`: a third holds the operands and result staged to FP64
/// (docs/design.md §9).
///
/// The workspace is a plain buffer: it holds no results between calls and is keyed on
/// nothing, so changing A or B in place and calling again always gives the new product.
/// A call grows the buffer when it needs more (bytes() and allocations() tell), never shrinks
/// it.  One workspace serves one call at a time: give each concurrent stream its own.
///
/// What a call needs (docs/design.md §6, "Memory"), with kpad = K rounded up to 16 and
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
///                        M and K are both >= 8192, and there at least 2048 under the
///                        library's limit (workspace_limit = 0), evened out over the passes)
///   accurate scaling     (mpad + npad) kpad + 4 chunks npad mpad, overlapping the residues,
///                        plus, when the count is automatic, the automatic-S estimate above
///                        and the K-contiguous copies of strided operands (GPU spaces)

#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/crt/layout.hpp>
#include <ozaki/impl/slices/layout.hpp>
#include <ozaki/options.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

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
    buffer_.reserve(required_bytes(m, n, k, options));
  }

  /// Bytes one complex call (Kokkos::complex<double> Views, C m x n, inner length k) needs:
  /// the real embedding's operands, 8 (4 m k + 2 n k) + 16 m n, plus the real GEMM of shape
  /// 2m x n x 2k (docs/design.md §8).
  static std::size_t required_bytes_complex(std::int64_t m, std::int64_t n, std::int64_t k,
                                            const Options& options = Options{});
  void reserve_complex(std::int64_t m, std::int64_t n, std::int64_t k,
                       const Options& options = Options{}) {
    if (m == 0 || n == 0 || k == 0) return;
    buffer_.reserve(real_bytes_of_complex(m, n, k, options));
    operands_.reserve(required_bytes_complex(m, n, k, options) -
                      real_bytes_of_complex(m, n, k, options));
  }
  /// Bytes one call on float Views (C m x n, inner length k) needs beyond the FP64 call's on
  /// the staged data: the staged operands and result, 8 (m k + k n + m n).
  static std::size_t staged_bytes_float(std::int64_t m, std::int64_t n, std::int64_t k) {
    return 8 * static_cast<std::size_t>(m * k + k * n + m * n) + 3 * Impl::Carver::alignment;
  }
  void reserve_float(std::int64_t m, std::int64_t n, std::int64_t k,
                     const Options& options = Options{}) {
    if (m == 0 || n == 0 || k == 0) return;
    reserve(m, n, k, options);
    staged_.reserve(staged_bytes_float(m, n, k));
  }
  /// The same for Kokkos::complex<float> Views: twice the staged bytes, and the complex call's
  /// buffers.
  void reserve_complex_float(std::int64_t m, std::int64_t n, std::int64_t k,
                             const Options& options = Options{}) {
    if (m == 0 || n == 0 || k == 0) return;
    reserve_complex(m, n, k, options);
    staged_.reserve(2 * staged_bytes_float(m, n, k));
  }
  /// Bytes held now.
  std::size_t bytes() const {
    return buffer_.bytes() + operands_.bytes() + staged_.bytes() + blocks_.bytes();
  }
  /// How many times the buffers were (re)allocated: equal before and after a call that reused
  /// them.
  std::int64_t allocations() const {
    return buffer_.allocations() + operands_.allocations() + staged_.allocations() +
           blocks_.allocations();
  }
  /// Frees the buffers.
  void release() {
    buffer_.release();
    operands_.release();
    staged_.release();
    blocks_.release();
  }

 private:
  /// The real GEMM's part of required_bytes_complex: 2m x n x 2k, or 2n x m x 2k for a
  /// row-major C.
  static std::size_t real_bytes_of_complex(std::int64_t m, std::int64_t n, std::int64_t k,
                                           const Options& options) {
    return std::max({required_bytes(2 * m, n, 2 * k, options),
                     required_bytes(2 * n, m, 2 * k, options), karatsuba_bytes(m, n, k, options),
                     karatsuba_bytes(n, m, k, options)});
  }
  /// Scheme II by Karatsuba on the undoubled embedding (m x n x 2k, three products per
  /// modulus), where it may run.
  static std::size_t karatsuba_bytes(std::int64_t m, std::int64_t n, std::int64_t k,
                                     const Options& options) {
    const bool crt =
        options.algorithm == Algorithm::Int8Crt || options.algorithm == Algorithm::Auto;
    if (!crt || options.experimental.complex_products != Experimental::ComplexProducts::Karatsuba ||
        options.crt_scaling == CrtScaling::Accurate) {
      return 0;
    }
    Impl::CallPlan plan =
        Impl::make_plan(Impl::Shape{m, n, 2 * k}, options, 0, Impl::Int8Gemm<ExecSpace>::padding);
    plan.complex_karatsuba = true;
    const Impl::OperandPlan ops = Impl::crt_operand_plan<ExecSpace>(plan, false, false);
    return Impl::crt_bytes<ExecSpace>(plan, plan.moduli, false, plan.auto_moduli, ops);
  }
  friend struct Impl::WorkspaceAccess<ExecSpace>;
  ExecSpace space_{};
  Impl::ScratchBuffer<ExecSpace> buffer_;
  Impl::ScratchBuffer<ExecSpace> operands_;  // complex calls' real embedding
  Impl::ScratchBuffer<ExecSpace> staged_;    // FP32 calls' data in FP64
  Impl::ScratchBuffer<ExecSpace> blocks_;    // level-3 routines' own (level3/)
};

namespace Impl {

/// The dispatch's access to a Workspace's buffer.
template <class ExecSpace>
struct WorkspaceAccess {
  static ScratchBuffer<ExecSpace>& buffer(Workspace<ExecSpace>& w) { return w.buffer_; }
  static ScratchBuffer<ExecSpace>& operands(Workspace<ExecSpace>& w) { return w.operands_; }
  static ScratchBuffer<ExecSpace>& staged(Workspace<ExecSpace>& w) { return w.staged_; }
  static ScratchBuffer<ExecSpace>& blocks(Workspace<ExecSpace>& w) { return w.blocks_; }
};

}  // namespace Impl

template <class ExecSpace>
std::size_t Workspace<ExecSpace>::required_bytes(std::int64_t m, std::int64_t n, std::int64_t k,
                                                 const Options& options) {
  if (m == 0 || n == 0 || k == 0) return 0;
  const Impl::CallPlan plan = Impl::make_plan(Impl::Shape{m, n, k}, options);
  // Upper bound over layouts: on GPU spaces, both operands may need a K-contiguous copy.
  constexpr bool copies = Impl::copies_strided_rows<ExecSpace>();
  Impl::OperandPlan ops;
  ops.copy_a = ops.copy_b = copies;
  ops.strided_a = ops.strided_b = true;
  std::size_t bytes = 0;
  if (options.algorithm != Algorithm::Int8Crt) {
    bytes = Impl::int8_slices_bytes<ExecSpace>(plan, plan.slices, plan.auto_slices, ops);
  }
  // Scheme II where it is asked for, or where Auto may choose it.
  if (options.algorithm == Algorithm::Int8Crt ||
      (options.algorithm == Algorithm::Auto && plan.auto_slices)) {
    const Impl::CallPlan crt_plan =
        Impl::make_plan(Impl::Shape{m, n, k}, options, 0, Impl::Int8Gemm<ExecSpace>::padding);
    const Impl::OperandPlan crt_ops = Impl::crt_operand_plan<ExecSpace>(crt_plan, true, true);
    bytes = std::max(bytes, Impl::crt_bytes<ExecSpace>(crt_plan, crt_plan.moduli,
                                                       Impl::crt_may_take_bound(crt_plan),
                                                       crt_plan.auto_moduli, crt_ops));
  }
  return bytes;
}

template <class ExecSpace>
std::size_t Workspace<ExecSpace>::required_bytes_complex(std::int64_t m, std::int64_t n,
                                                         std::int64_t k, const Options& options) {
  if (m == 0 || n == 0 || k == 0) return 0;
  // Upper bound over layouts and scalars: the doubled side the larger of m and n (a row-major
  // C doubles n), C_e in scratch (complex alpha or beta, strided C).
  const std::int64_t doubled = std::max(m, n), single = std::min(m, n);
  const std::size_t embedding =
      8 * static_cast<std::size_t>(4 * doubled * k + 2 * single * k + 2 * m * n) +
      3 * Impl::Carver::alignment;
  return embedding + real_bytes_of_complex(m, n, k, options);
}

}  // namespace ozaki
