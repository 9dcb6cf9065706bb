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
#include <ozaki/impl/gemm_parts.hpp>
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

/// Where the recursion splits n rows: about half, the first part a multiple of 16 (the INT8
/// GEMMs' padding) where that leaves both parts non-empty.
inline std::int64_t split_point(std::int64_t n) {
  const std::int64_t half = (n / 2 + 15) / 16 * 16;
  return half > 0 && half < n ? half : n / 2;
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

/// C = alpha op(A) op(B) + beta C as one of a level-3 call's GEMMs, added to `sum`
/// (gemm_part); returns its Report's error bound.
template <class ExecSpace, class ConstMatrix, class Matrix, class T>
double level3_gemm(const ExecSpace& space, Op opA, const ConstMatrix& A, Op opB,
                   const ConstMatrix& B, const T& alpha, const T& beta, const Matrix& C,
                   const Options& options, PartsScratch<ExecSpace>& scratch, ReportSum& sum) {
  return gemm_part(space, op_letters(opA), op_letters(opB), alpha, A, B, beta, C, options, scratch,
                   sum)
      .error_bound;
}

/// The element types the level-3 routines take.
template <class T>
struct is_level3_scalar
    : std::integral_constant<bool, std::is_same<T, double>::value ||
                                       std::is_same<T, Kokkos::complex<double>>::value> {};

}  // namespace Impl
}  // namespace ozaki
