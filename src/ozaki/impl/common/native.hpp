#pragma once
/// \file native.hpp
/// Native FP64 (and complex FP64) GEMM, used for Algorithm::Native and for the reported
/// fallbacks (NaN/Inf inputs).
///
/// Operands reach ozaki as strided views, re-expressed in column-major form
/// (column_major.hpp).  A backend with a vendor BLAS of its own (NativeBackend, backend.hpp:
/// cuBLAS on the handle bound to the instance's stream) runs that form; otherwise
/// KokkosBlas::gemm does, on LayoutLeft views of it (Kokkos Kernels hands only
/// LayoutLeft/LayoutRight views to a vendor BLAS).  Only truly strided operands take Kokkos
/// Kernels' generic kernel.

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/common/column_major.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/views.hpp>

#include <cstdint>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// Whether a NativeBackend runs a strided batch in one call (`strided_batches` and
/// run_strided_batch, backend.hpp).
template <class Backend, class = void>
struct runs_strided_batches : std::false_type {};
template <class Backend>
struct runs_strided_batches<Backend, std::void_t<decltype(Backend::strided_batches)>>
    : std::integral_constant<bool, Backend::strided_batches> {};

/// x, or its complex conjugate where `conjugate` (real x: itself).
KOKKOS_INLINE_FUNCTION double conjugate_if(bool, double x) { return x; }
KOKKOS_INLINE_FUNCTION float conjugate_if(bool, float x) { return x; }
template <class R>
KOKKOS_INLINE_FUNCTION Kokkos::complex<R> conjugate_if(bool conjugate,
                                                       const Kokkos::complex<R>& x) {
  return conjugate ? Kokkos::complex<R>(x.real(), -x.imag()) : x;
}

/// C = alpha op(A) op(B) + beta C on truly strided views, one sequential dot product per entry
/// of C, enqueued on `space`'s instance and nothing else.  For the one case where Kokkos
/// Kernels' generic kernel cannot serve: a stream being captured into a graph with a Kokkos
/// Kernels that has no instance overload of gemm (3.4), whose other overload fences the
/// default instance, which a capture forbids.  Sums in order along K keep native GEMM's own
/// bound (gamma_K); beta = 0 does not read C, as BLAS.
template <class ExecSpace, class ConstMatrix, class Matrix, class Scalar>
void strided_gemm_on_instance(const ExecSpace& space, BlasOp op_a, BlasOp op_b, Scalar alpha,
                              const ConstMatrix& A, const ConstMatrix& B, Scalar beta,
                              const Matrix& C) {
  using T = typename Matrix::non_const_value_type;
  const std::int64_t M = C.extent(0), N = C.extent(1);
  const std::int64_t K = op_a.transpose ? A.extent(0) : A.extent(1);
  const T a_scale = alpha, c_scale = beta;
  const bool read_c = !(beta == Scalar(0));
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "ozaki::native_gemm[strided]", Policy(space, {0, 0}, {M, N}),
      KOKKOS_LAMBDA(const std::int64_t m, const std::int64_t n) {
        T sum = T(0);
        for (std::int64_t k = 0; k < K; ++k) {
          const T a = conjugate_if(op_a.conjugate, op_a.transpose ? A(k, m) : A(m, k));
          const T b = conjugate_if(op_b.conjugate, op_b.transpose ? B(n, k) : B(k, n));
          sum += a * b;
        }
        C(m, n) = read_c ? a_scale * sum + c_scale * C(m, n) : a_scale * sum;
      });
}

/// Native GEMM on strided views of double or Kokkos::complex<double>.
template <class ExecSpace>
struct NativeGemm {
  using V = Views<ExecSpace>;
  using Vendor = NativeBackend<ExecSpace>;

  /// What runs it, for Report::backend.
  static const char* name() {
    if constexpr (Vendor::available) {
      return Vendor::name();
    } else {
      return "KokkosBlas";
    }
  }

  /// rows x cols column-major matrix with leading dimension ld.
  template <class LeftView, class Pointer>
  static auto left(Pointer p, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    return Kokkos::subview(LeftView(p, ld, cols), Kokkos::make_pair<std::int64_t>(0, rows),
                           Kokkos::ALL());
  }

  /// C = alpha op(A) op(B) + beta C, A and B as stored, op given by the flags (conjugation
  /// only matters for complex data).
  template <class ConstMatrix, class Matrix, class Scalar>
  static void run(const ExecSpace& space, BlasOp op_a, BlasOp op_b, Scalar alpha,
                  const ConstMatrix& A, const ConstMatrix& B, Scalar beta, const Matrix& C) {
    using T = typename Matrix::non_const_value_type;
    using ConstLeft =
        Kokkos::View<const T**, Kokkos::LayoutLeft, typename V::device_type, typename V::unmanaged>;
    using Left =
        Kokkos::View<T**, Kokkos::LayoutLeft, typename V::device_type, typename V::unmanaged>;
    ColumnMajorProduct<T> g;
    if (!as_column_major(op_a, op_b, A, B, C, g)) {
      // Truly strided operands (or conjugation BLAS cannot express after re-expression): Kokkos
      // Kernels' own kernel on the views as given, or inside a capture where that kernel would
      // fence, ours on the instance.
      if (!compat::HasSpaceGemm<ExecSpace, ConstMatrix, ConstMatrix, Matrix>::value &&
          captured(space)) {
        strided_gemm_on_instance(space, op_a, op_b, alpha, A, B, beta, C);
      } else {
        compat::native_gemm(space, op_a.blas_char(), op_b.blas_char(), alpha, A, B, beta, C);
      }
      return;
    }
    if constexpr (Vendor::available) {
      Vendor::run(space, g, alpha, beta);
    } else {
      const bool tx = g.op_x.transpose, ty = g.op_y.transpose;
      const auto X = left<ConstLeft>(g.x, tx ? g.k : g.m, tx ? g.m : g.k, g.ldx);
      const auto Y = left<ConstLeft>(g.y, ty ? g.n : g.k, ty ? g.k : g.n, g.ldy);
      const auto Cl = left<Left>(g.c, g.m, g.n, g.ldc);
      compat::native_gemm(space, g.op_x.blas_char(), g.op_y.blas_char(), alpha, X, Y, beta, Cl);
    }
  }

  /// `batch.count` products of g's form at the batch's strides in one vendor call, where the
  /// backend has one; false, with nothing run, elsewhere.
  template <class T>
  static bool run_strided_batch(const ExecSpace& space, const ColumnMajorProduct<T>& g, T alpha,
                                T beta, const StridedBatch& batch) {
    if constexpr (runs_strided_batches<Vendor>::value) {
      Vendor::run_strided_batch(space, g, alpha, beta, batch);
      return true;
    } else {
      (void)space, (void)g, (void)alpha, (void)beta, (void)batch;
      return false;
    }
  }

  /// Real data: transpose flags only.
  static void run(const ExecSpace& space, bool trans_a, bool trans_b, double alpha,
                  const typename V::ConstMatrix& A, const typename V::ConstMatrix& B, double beta,
                  const typename V::Matrix& C) {
    run(space, BlasOp{trans_a, false}, BlasOp{trans_b, false}, alpha, A, B, beta, C);
  }
};

}  // namespace Impl
}  // namespace ozaki
