#pragma once
/// \file common.hpp
/// What ozaki's level-3 routines (triangular.hpp, syrk.hpp, symmetric.hpp) share: their arguments,
/// their scratch, the blocks their recursion splits a matrix into, the GEMM calls it makes and the
/// Report that sums them (docs/design.md §12).

#include <ozaki/errors.hpp>
#include <ozaki/gemm.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/bounds.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/scratch.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/library_scratch.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// A one-letter argument, upper-cased, that must be one of `allowed`; throws InvalidArgument
/// naming `which` otherwise.
inline char argument_letter(const char* arg, const char* which, const std::string& allowed) {
  const char c = arg == nullptr ? '\0' : arg[0];
  const char u = c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c;
  if (u == '\0' || allowed.find(u) == std::string::npos) {
    throw InvalidArgument(std::string(which) + " = '" +
                          (c == '\0' ? std::string("(empty)") : std::string(1, c)) +
                          "': expected one of '" + allowed + "'");
  }
  return u;
}

/// A one-letter argument that must be `yes` or `no`: whether it is `yes`.
inline bool parse_choice(const char* arg, const char* which, char yes, char no) {
  return argument_letter(arg, which, std::string{yes, no}) == yes;
}

/// A transpose argument of a level-3 routine: op(X) = X, X^T or X^H.
enum class Op { None, Transpose, ConjugateTranspose };

/// 'N', 'T' or 'C' (either case); 'C' on real data is 'T'.  `allowed` lists the letters the
/// routine takes (herk: "NC", syrk on complex data: "NT").
template <class T>
Op parse_op(const char* arg, const char* which, const char* allowed) {
  const char u = argument_letter(arg, which, allowed);
  if (u == 'N') return Op::None;
  if (u == 'T' || std::is_same<T, double>::value) return Op::Transpose;
  return Op::ConjugateTranspose;
}

inline const char* op_letters(Op op) {
  return op == Op::None ? "N" : op == Op::Transpose ? "T" : "C";
}

/// x, or its conjugate where `conjugate` (complex data).
KOKKOS_INLINE_FUNCTION double conj_if(double x, bool) { return x; }
KOKKOS_INLINE_FUNCTION Kokkos::complex<double> conj_if(const Kokkos::complex<double>& x,
                                                       bool conjugate) {
  return conjugate ? Kokkos::conj(x) : x;
}

/// The real part of x.
KOKKOS_INLINE_FUNCTION double real_part(double x) { return x; }
KOKKOS_INLINE_FUNCTION double real_part(const Kokkos::complex<double>& x) { return x.real(); }

/// The scratch of one level-3 call: the GEMM calls' three buffers and the routine's own
/// (syrk and herk's diagonal blocks, symm and hemm's filled-in operand).
template <class ExecSpace>
struct Level3Scratch {
  ScratchBuffer<ExecSpace>& buffer;
  ScratchBuffer<ExecSpace>& operands;
  ScratchBuffer<ExecSpace>& staged;
  ScratchBuffer<ExecSpace>& blocks;
};

/// f(scratch) with a Workspace's buffers.
template <class ExecSpace, class F>
Report with_workspace(Workspace<ExecSpace>& workspace, F&& f) {
  using Access = WorkspaceAccess<ExecSpace>;
  Level3Scratch<ExecSpace> scratch{Access::buffer(workspace), Access::operands(workspace),
                                   Access::staged(workspace), Access::blocks(workspace)};
  return f(scratch);
}

/// f(scratch) with the library's buffers of `space`'s instance, held for the call.
template <class ExecSpace, class F>
Report with_library_scratch(const ExecSpace& space, F&& f) {
  auto lease = LibraryScratch<ExecSpace>::lease(space);
  Level3Scratch<ExecSpace> scratch{lease.buffer(), lease.operands(), lease.staged(),
                                   lease.blocks()};
  return f(scratch);
}

/// A rank-2 View as the strided view of the same memory the routines work on (Strided:
/// StridedViews<ExecSpace, T>::Matrix or ::ConstMatrix).
template <class ExecSpace, class Strided, class View>
Strided level3_view(const View& X) {
  using T = typename Strided::non_const_value_type;
  static_assert(Kokkos::is_view<View>::value && View::rank == 2,
                "ozaki level-3 routines take rank-2 Views");
  static_assert(std::is_same<typename View::non_const_value_type, T>::value,
                "ozaki level-3 routines: every View holds the same scalar, double or "
                "Kokkos::complex<double>");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "ozaki level-3 routines: the Views must be accessible from the execution space");
  return Strided(X.data(),
                 Kokkos::LayoutStride(X.extent(0), X.stride(0), X.extent(1), X.stride(1)));
}

/// Rows [r0, r1) and columns [c0, c1) of a strided matrix (a view of the same memory).
template <class Matrix>
Matrix block(const Matrix& X, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  const Kokkos::LayoutStride layout(r1 - r0, X.stride(0), c1 - c0, X.stride(1));
  return Matrix(X.data() + r0 * X.stride(0) + c0 * X.stride(1), layout);
}

/// Where the recursion splits n rows: about half, the first part a multiple of 16 (the INT8
/// GEMMs' padding) where that leaves both parts non-empty.
inline std::int64_t split_point(std::int64_t n) {
  const std::int64_t half = (n / 2 + 15) / 16 * 16;
  return half > 0 && half < n ? half : n / 2;
}

/// The checks every level-3 call makes before it writes anything, beside its own arguments':
/// the options, and whether the execution space can run here.
template <class ExecSpace>
void check_call(const ExecSpace& space, const Options& options) {
  check_options(options);
  check_tuning(options.experimental);
  if (const char* why = compat::unusable_here(space)) throw BackendError(why);
}

/// Rows of the diagonal blocks the recursion stops at: Options::experimental.level3_leaf, or
/// `host` on host spaces and `device` on GPU spaces.
template <class ExecSpace>
std::int64_t leaf_rows(const Options& options, std::int64_t host, std::int64_t device) {
  if (options.experimental.level3_leaf) {
    if (*options.experimental.level3_leaf < 1) {
      throw InvalidArgument("options.experimental.level3_leaf = " +
                            std::to_string(*options.experimental.level3_leaf) +
                            ": expected at least 1, or empty for the library's choice");
    }
    return *options.experimental.level3_leaf;
  }
  return is_host_space<ExecSpace>() ? host : device;
}

/// The Report of a level-3 call, summed over its GEMM calls: the algorithm, options and counts
/// of the largest (by 2MNK), the largest error bound, any fallback with the first reason,
/// operations and scratch summed or maximized.
class ReportSum {
 public:
  void add(const Report& part, double flops) {
    if (flops > largest_) {
      const Report kept = total_;
      total_ = part;
      total_.fallback = kept.fallback;
      total_.reason = kept.reason;
      total_.error_bound = kept.error_bound;
      total_.int8_operations = kept.int8_operations;
      total_.int8_gemms = kept.int8_gemms;
      total_.workspace_bytes = kept.workspace_bytes;
      total_.scratch_allocated = kept.scratch_allocated;
      total_.seconds_decision = kept.seconds_decision;
      largest_ = flops;
    }
    if (part.fallback && !total_.fallback) {
      total_.fallback = true;
      total_.reason = part.reason;
    }
    total_.error_bound = std::max(total_.error_bound, part.error_bound);
    // A product without a bound (an explicit slice count) leaves the sum without one.
    if (part.algorithm != Algorithm::None && part.error_bound == 0) bounded_ = false;
    total_.int8_operations += part.int8_operations;
    total_.int8_gemms += part.int8_gemms;
    total_.workspace_bytes = std::max(total_.workspace_bytes, part.workspace_bytes);
    total_.scratch_allocated = total_.scratch_allocated || part.scratch_allocated;
    total_.seconds_decision += part.seconds_decision;
  }
  Report& report() { return total_; }
  /// Whether every GEMM with a product stated its bound.
  bool bounded() const { return bounded_; }

 private:
  bool bounded_ = true;
  Report total_;
  double largest_ = -1;
};

/// C = alpha op(A) op(B) + beta C as one of a level-3 call's GEMMs, added to `sum`; returns
/// its Report's error bound.
template <class ExecSpace, class ConstMatrix, class Matrix, class T>
double level3_gemm(const ExecSpace& space, Op opA, const ConstMatrix& A, Op opB,
                   const ConstMatrix& B, const T& alpha, const T& beta, const Matrix& C,
                   const Options& options, Level3Scratch<ExecSpace>& scratch, ReportSum& sum) {
  Report part;
  try {
    part = gemm_with_scratch(space, op_letters(opA), op_letters(opB), alpha, A, B, beta, C, options,
                             scratch.buffer, scratch.operands, scratch.staged);
  } catch (const ScratchUnavailable& e) {
    // The GEMM threw before writing C; half of the routine's output may be written already,
    // so this update runs native (no scratch) rather than leave it half done.
    Options native = options;
    native.algorithm = Algorithm::Native;
    part = gemm_with_scratch(space, op_letters(opA), op_letters(opB), alpha, A, B, beta, C, native,
                             scratch.buffer, scratch.operands, scratch.staged);
    part.fallback = true;
    part.reason = std::string(e.what()) + ": this update ran native GEMM";
  }
  const double k = static_cast<double>(opA == Op::None ? A.extent(1) : A.extent(0));
  sum.add(part, 2.0 * static_cast<double>(C.extent(0)) * static_cast<double>(C.extent(1)) * k);
  return part.error_bound;
}

/// The element types the level-3 routines take.
template <class T>
struct is_level3_scalar
    : std::integral_constant<bool, std::is_same<T, double>::value ||
                                       std::is_same<T, Kokkos::complex<double>>::value> {};

}  // namespace Impl
}  // namespace ozaki
