#pragma once
/// \file gemm.hpp
/// ozaki::gemm: C = alpha op(A) op(B) + beta C in FP64, computed with INT8 products (the Ozaki
/// schemes) or native FP64 GEMM, whichever is fastest at the accuracy asked for, with the
/// signature of KokkosBlas::gemm plus an Options argument.
///
///   ozaki::Report r = ozaki::gemm(space, "N", "T", alpha, A, B, beta, C);
///   ozaki::Report r = ozaki::gemm("N", "N", alpha, A, B, beta, C, options);
///
/// A, B: rank-2 Views of (const) double, C: rank-2 View of double, each LayoutLeft,
/// LayoutRight or LayoutStride (subviews), accessible from the execution space; or all three
/// of Kokkos::complex<double>, with complex alpha and beta and "C" the conjugate transpose
/// (impl/complex/driver.hpp); or float, or Kokkos::complex<float>, at FP32 GEMM's accuracy
/// (Options::accuracy asks for more), and float A and B with a double C (complex likewise)
/// at FP64 GEMM's (impl/single/driver.hpp).  alpha and beta have C's value type.  The call is
/// asynchronous like any Kokkos kernel on `space`, except where the Report needs a value from
/// the device (the NaN/Inf check and the automatic counts read back a few bytes).
///
/// Errors: ozaki::InvalidArgument for shapes, aliasing of C with A or B, transpose characters
/// and options, thrown before C is touched.  NaN or Inf in A or B is not an error: the result
/// is FP64 GEMM's, and the Report says so.

#include <ozaki/errors.hpp>
#include <ozaki/impl/complex/driver.hpp>
#include <ozaki/impl/dispatch.hpp>
#include <ozaki/impl/single/driver.hpp>
#include <ozaki/options.hpp>
#include <ozaki/prepared.hpp>
#include <ozaki/report.hpp>
#include <ozaki/scratch.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ozaki {
namespace Impl {

/// X as a strided view of the same memory (double or Kokkos::complex<double>).
template <class Strided, class View>
Strided strided_view(const View& X) {
  const Kokkos::LayoutStride layout(X.extent(0), X.stride(0), X.extent(1), X.stride(1));
  return Strided(X.data(), layout);
}

template <class ExecSpace, class View>
typename Views<ExecSpace>::ConstMatrix as_const_strided(const View& X) {
  return strided_view<typename Views<ExecSpace>::ConstMatrix>(X);
}

template <class ExecSpace, class View>
typename Views<ExecSpace>::Matrix as_strided(const View& X) {
  return strided_view<typename Views<ExecSpace>::Matrix>(X);
}

template <class T>
struct is_complex_double : std::is_same<std::remove_cv_t<T>, Kokkos::complex<double>> {};

/// An operand as the driver takes it: a strided view of X as stored, or, for a prepared
/// operand, the shape of X as stored for transpose 'N' (no data) and its slices.
template <class ExecSpace>
struct OperandArg {
  typename Views<ExecSpace>::ConstMatrix view;
  const SliceStorage<ExecSpace>* prepared = nullptr;
};

template <class ExecSpace, class View>
OperandArg<ExecSpace> operand_arg(const View& X, Side) {
  static_assert(Kokkos::is_view<View>::value && View::rank == 2 &&
                    std::is_same<typename View::non_const_value_type, double>::value,
                "ozaki::gemm: A and B must be rank-2 Views of (const) double or PreparedOperands");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "ozaki::gemm: A and B must be accessible from the execution space");
  return {as_const_strided<ExecSpace>(X), nullptr};
}

template <class ExecSpace>
OperandArg<ExecSpace> operand_arg(const PreparedOperand<ExecSpace>& X, Side side) {
  if (X.side() != side) {
    throw InvalidArgument(std::string("an operand prepared for ") +
                          (X.side() == Side::A ? "A" : "B") + " was passed as " +
                          (side == Side::A ? "A" : "B"));
  }
  // X as stored for 'N': op(A) is rows x K; op(B) is K x rows.
  const std::int64_t r = X.rows(), k = X.k();
  const Kokkos::LayoutStride shape =
      side == Side::A ? Kokkos::LayoutStride(r, 1, k, r) : Kokkos::LayoutStride(k, 1, r, k);
  return {typename Views<ExecSpace>::ConstMatrix(nullptr, shape), &X.storage()};
}

template <class ExecSpace, class CViewType>
constexpr void check_types() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "ozaki::gemm: the first argument must be a Kokkos execution space instance");
  static_assert(Kokkos::is_view<CViewType>::value && CViewType::rank == 2 &&
                    (std::is_same<typename CViewType::value_type, double>::value ||
                     std::is_same<typename CViewType::value_type, Kokkos::complex<double>>::value ||
                     is_fp32_scalar<typename CViewType::value_type>::value),
                "ozaki::gemm: C must be a rank-2 View of non-const double, float, "
                "Kokkos::complex<double> or Kokkos::complex<float>");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename CViewType::memory_space>::accessible,
                "ozaki::gemm: C must be accessible from the execution space");
}

/// A complex operand: a rank-2 View of (const) Kokkos::complex<double>.
template <class ExecSpace, class View>
typename Views<ExecSpace>::ConstComplexMatrix complex_operand(const View& X) {
  static_assert(Kokkos::is_view<View>::value,
                "ozaki::gemm: complex operands must be Views (prepared operands hold real "
                "slices only)");
  static_assert(View::rank == 2 && is_complex_double<typename View::value_type>::value,
                "ozaki::gemm: with a complex C, A and B must be rank-2 Views of (const) "
                "Kokkos::complex<double>");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "ozaki::gemm: A and B must be accessible from the execution space");
  return strided_view<typename Views<ExecSpace>::ConstComplexMatrix>(X);
}

/// The operands' scalar where they are FP32 Views (float or Kokkos::complex<float>), void
/// otherwise.
template <class View, bool = Kokkos::is_view<View>::value>
struct fp32_operand {
  using type = void;
};
template <class View>
struct fp32_operand<View, true> {
  using type = std::conditional_t<is_fp32_scalar<typename View::non_const_value_type>::value,
                                  typename View::non_const_value_type, void>;
};

/// FP32 operands (single/driver.hpp): A and B of one FP32 scalar, C of it or of its FP64 type.
template <class ExecSpace, class AType, class BType, class CViewType, class Scalar>
Report gemm_fp32(const ExecSpace& space, const char transA[], const char transB[],
                 const Scalar& alpha, const AType& A, const BType& B, const Scalar& beta,
                 const CViewType& C, const Options& options, ScratchBuffer<ExecSpace>& scratch,
                 ScratchBuffer<ExecSpace>& operands, ScratchBuffer<ExecSpace>& staged) {
  using T = typename fp32_operand<AType>::type;
  using CT = typename CViewType::non_const_value_type;
  static_assert(std::is_same<typename fp32_operand<BType>::type, T>::value,
                "ozaki::gemm: A and B must be Views of the same scalar type");
  static_assert(std::is_same<CT, T>::value || std::is_same<CT, staged_scalar_t<T>>::value,
                "ozaki::gemm: with FP32 operands C holds the same scalar, or its FP64 type "
                "(double for float, Kokkos::complex<double> for Kokkos::complex<float>)");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename AType::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename BType::memory_space>::accessible,
                "ozaki::gemm: A and B must be accessible from the execution space");
  using In = StridedViews<ExecSpace, T>;
  using Out = StridedViews<ExecSpace, CT>;
  return SingleGemm<ExecSpace, T, CT>(
             space, transA, transB, alpha, strided_view<typename In::ConstMatrix>(A),
             strided_view<typename In::ConstMatrix>(B), beta, strided_view<typename Out::Matrix>(C),
             options, scratch, operands, staged)
      .run();
}

/// Every public overload ends here: Views made strided, prepared operands unpacked; complex
/// C goes to the complex driver, which uses `operands` for its real embedding; FP32 operands
/// go to the FP32 driver, which stages them in `staged`.
template <class ExecSpace, class AType, class BType, class CViewType, class Scalar>
Report gemm_with_scratch(const ExecSpace& space, const char transA[], const char transB[],
                         const Scalar& alpha, const AType& A, const BType& B, const Scalar& beta,
                         const CViewType& C, const Options& options,
                         ScratchBuffer<ExecSpace>& scratch, ScratchBuffer<ExecSpace>& operands,
                         ScratchBuffer<ExecSpace>& staged) {
  check_types<ExecSpace, CViewType>();
  if constexpr (!std::is_void<typename fp32_operand<AType>::type>::value) {
    return gemm_fp32(space, transA, transB, alpha, A, B, beta, C, options, scratch, operands,
                     staged);
  } else if constexpr (is_complex_double<typename CViewType::value_type>::value) {
    return gemm_complex_strided<ExecSpace>(
        space, transA, transB, alpha, complex_operand<ExecSpace>(A), complex_operand<ExecSpace>(B),
        beta, strided_view<typename Views<ExecSpace>::ComplexMatrix>(C), options, scratch,
        operands);
  } else {
    (void)operands;
    (void)staged;
    const OperandArg<ExecSpace> a = operand_arg<ExecSpace>(A, Side::A);
    const OperandArg<ExecSpace> b = operand_arg<ExecSpace>(B, Side::B);
    return gemm_strided<ExecSpace>(space, transA, transB, alpha, a.view, b.view, beta,
                                   as_strided<ExecSpace>(C), options, scratch, a.prepared,
                                   b.prepared);
  }
}

}  // namespace Impl

/// C = alpha op(A) op(B) + beta C on the execution space instance `space`, with scratch from
/// `workspace` (reused across calls: nothing is allocated once it is large enough).  A and B
/// are Views, or PreparedOperands (prepared.hpp) with transpose "N".
template <class ExecSpace, class AType, class BType, class CViewType>
Report gemm(const ExecSpace& space, const char transA[], const char transB[],
            const typename CViewType::non_const_value_type& alpha, const AType& A, const BType& B,
            const typename CViewType::non_const_value_type& beta, const CViewType& C,
            const Options& options, Workspace<ExecSpace>& workspace) {
  return Impl::gemm_with_scratch(space, transA, transB, alpha, A, B, beta, C, options,
                                 Impl::WorkspaceAccess<ExecSpace>::buffer(workspace),
                                 Impl::WorkspaceAccess<ExecSpace>::operands(workspace),
                                 Impl::WorkspaceAccess<ExecSpace>::staged(workspace));
}

/// The same with the library's scratch for this execution space instance (scratch.hpp): the
/// first call allocates it, later calls reuse it.
template <class ExecSpace, class AType, class BType, class CViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report gemm(const ExecSpace& space, const char transA[], const char transB[],
            const typename CViewType::non_const_value_type& alpha, const AType& A, const BType& B,
            const typename CViewType::non_const_value_type& beta, const CViewType& C,
            const Options& options = Options{}) {
  auto lease = Impl::LibraryScratch<ExecSpace>::lease(space);
  return Impl::gemm_with_scratch(space, transA, transB, alpha, A, B, beta, C, options,
                                 lease.buffer(), lease.operands(), lease.staged());
}

/// The same on a default-constructed instance of C's execution space.
template <class AViewType, class BViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_view<CViewType>::value>>
Report gemm(const char transA[], const char transB[],
            const typename CViewType::non_const_value_type& alpha, const AViewType& A,
            const BViewType& B, const typename CViewType::non_const_value_type& beta,
            const CViewType& C, const Options& options = Options{}) {
  return gemm(typename CViewType::execution_space(), transA, transB, alpha, A, B, beta, C, options);
}

/// What a gemm call of this shape on `space` starts with, decided from the shape, the options
/// and the device alone: nothing is read, allocated or launched.  `Scalar` is the value type of
/// A, B and C (double, float, Kokkos::complex<double> or Kokkos::complex<float>); C is taken as
/// column-major.
///   - an explicit options.algorithm: that algorithm (the call runs it, or reports why not);
///   - Algorithm::None where M, N or K is 0 (no product);
///   - Algorithm::Native where no INT8 scheme can be faster on this shape at the accuracy
///     asked for, or the device has no INT8 GEMM: the call would run native GEMM, so a caller
///     that dispatches many products itself (the cuBLAS interposer, say) may run its own;
///   - otherwise the scheme Auto starts with, which may still hand the call to native once it
///     has seen the data (Report::reason then says why).
/// `why`, where given, receives the reason for Native.
template <class Scalar = double, class ExecSpace>
Algorithm auto_choice(const ExecSpace& space, std::int64_t m, std::int64_t n, std::int64_t k,
                      const Options& options = Options{}, std::string* why = nullptr) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "ozaki::auto_choice: the first argument must be an execution space instance");
  constexpr bool fp32 = Impl::is_fp32_scalar<Scalar>::value;
  static_assert(
      std::is_same<Scalar, double>::value || Impl::is_complex_double<Scalar>::value || fp32,
      "ozaki::auto_choice: Scalar is double, float, Kokkos::complex<double> or "
      "Kokkos::complex<float>");
  if (options.algorithm != Algorithm::Auto) return options.algorithm;
  if (m <= 0 || n <= 0 || k <= 0) return Algorithm::None;
  constexpr bool complex =
      !std::is_same<Scalar, double>::value && !std::is_same<Scalar, float>::value;
  std::string reason;
  const Impl::Shape shape{m, n, k};
  const Algorithm choice = fp32 ? Impl::fp32_first_choice(space, shape, options, complex, reason)
                                : Impl::auto_first_choice(space, shape, options, complex,
                                                          Impl::NativeYardstick{}, reason);
  if (why != nullptr) *why = choice == Algorithm::Native ? reason : std::string();
  return choice;
}

}  // namespace ozaki

#include <ozaki/impl/instances.hpp>
