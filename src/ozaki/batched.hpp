#pragma once
/// \file batched.hpp
/// Many products in one call: a strided batch, a list of problems of any shapes, and the two
/// groupings of mixtures of experts.
///
///   ozaki::gemm_batched(space, "N", "N", alpha, A, B, beta, C);   // A, B, C: rank 3
///   ozaki::gemm_grouped(space, problems);                          // any shapes
///   ozaki::gemm_grouped_masked(space, "N", "T", alpha, A, B, masked_m, beta, C);
///   ozaki::gemm_grouped_contiguous(space, "N", "T", alpha, A, B, m_indices, beta, C);
///
/// gemm_batched: C(i,:,:) = alpha op(A(i,:,:)) op(B(i,:,:)) + beta C(i,:,:) for every i, the
/// batch along extent 0 (KokkosBatched's BatchLayout::Left), any layouts; an A or a B with a
/// batch extent of 1 serves every product (a stride of 0, as cuBLAS's strided batch allows),
/// and where the other operand's and C's strides let their items' rows (columns) form one
/// strided matrix (both LayoutRight or both LayoutLeft, say), the batch is one GEMM of them
/// all with the shared operand.
///
/// gemm_grouped: every GemmProblem of the list, each with its own transposes, scalars and
/// shapes (cuBLAS's grouped batch is a list whose groups share a shape).
///
/// gemm_grouped_masked (DeepGEMM's masked layout): A (groups x max_m x K for "N"), B (groups,
/// or 1), C (groups x max_m x N); group g multiplies the first masked_m(g) rows of
/// op(A(g,:,:)) into the same rows of C(g,:,:), whose other rows are not touched.
///
/// gemm_grouped_contiguous (DeepGEMM's contiguous layout): op(A) and C stack the groups' rows
/// (rank 2, rows x K and rows x N), B holds one matrix per group (rank 3); row r multiplies
/// op(B(m_indices(r),:,:)), and rows whose index is -1 are not touched.
///
/// masked_m and m_indices are rank-1 Views of integers, read on the host before anything is
/// computed: in place where they are host memory, otherwise copied on `space` and waited for
/// (which a stream being captured into a graph cannot do: there they must be host memory).
///
/// Scalars as gemm takes them (double, Kokkos::complex<double>, float, Kokkos::complex<float>;
/// FP32 operands with an FP64 C).  Each product keeps gemm's componentwise promise with its
/// own count; the Report is the call's: the algorithm and counts of the largest product, the
/// largest error bound (docs/design.md §13), INT8 operations and GEMM calls summed.  Every
/// product is checked before any is computed: shapes, transposes, options, indices, and
/// aliasing within a product and between products (no C may overlap another product's A, B
/// or C); a bad one throws InvalidArgument and leaves every C untouched.  The products run
/// one after another on `space`'s scratch: `reserve_batched` and `reserve_grouped` make a
/// Workspace serve a call without growing (for a masked call, reserve for the full batch).

#include <ozaki/impl/batched/layouts.hpp>
#include <ozaki/impl/batched/products.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>
#include <ozaki/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace ozaki {

/// One product of a grouped call: C = alpha op(A) op(B) + beta C, in gemm's argument order.
template <class AViewType, class BViewType, class CViewType>
struct GemmProblem {
  using scalar_type = typename CViewType::non_const_value_type;
  const char* transA = "N";
  const char* transB = "N";
  scalar_type alpha = scalar_type(1);
  AViewType A;
  BViewType B;
  scalar_type beta = scalar_type(0);
  CViewType C;
};

namespace Impl {

/// Reserves in `workspace` what one product of this shape needs (Workspace's reserve for its
/// scalars: FP64, complex, FP32 staged).
template <class T, class ExecSpace>
void reserve_product(Workspace<ExecSpace>& workspace, std::int64_t m, std::int64_t n,
                     std::int64_t k, const Options& options) {
  if constexpr (std::is_same<T, double>::value) {
    workspace.reserve(m, n, k, options);
  } else if constexpr (std::is_same<T, Kokkos::complex<double>>::value) {
    workspace.reserve_complex(m, n, k, options);
  } else if constexpr (std::is_same<T, float>::value) {
    workspace.reserve_float(m, n, k, options);
  } else {
    static_assert(std::is_same<T, Kokkos::complex<float>>::value,
                  "ozaki::reserve_batched, reserve_grouped: A and B hold double, float, "
                  "Kokkos::complex<double> or Kokkos::complex<float>");
    workspace.reserve_complex_float(m, n, k, options);
  }
}

/// The shape (M, N, K) of a product given its operands as stored and the transposes.
template <class AView, class CView>
std::int64_t inner_length(const char* transA, const AView& A, unsigned rows_extent) {
  return parse_trans(transA, "transA") ? A.extent(rows_extent) : A.extent(rows_extent + 1);
}

/// A grouped call's problems as a list of products.
template <class ExecSpace, class AView, class BView, class CView>
typename ProductTypes<ExecSpace, AView, BView, CView>::List grouped_products(
    const std::vector<GemmProblem<AView, BView, CView>>& problems) {
  using Types = ProductTypes<ExecSpace, AView, BView, CView>;
  static_assert(AView::rank == 2 && BView::rank == 2 && CView::rank == 2,
                "ozaki::gemm_grouped: every problem's A, B and C are rank-2 Views");
  typename Types::List products;
  products.items.reserve(problems.size());
  for (const auto& q : problems) {
    auto p = product_head<typename Types::Item>(q.transA, q.transB, q.alpha, q.beta);
    p.A = strided_view<typename Types::ConstMatrix>(q.A);
    p.B = strided_view<typename Types::ConstMatrix>(q.B);
    p.C = strided_view<typename Types::Matrix>(q.C);
    products.items.push_back(p);
  }
  return products;
}

}  // namespace Impl

/// C(i,:,:) = alpha op(A(i,:,:)) op(B(i,:,:)) + beta C(i,:,:) for every i, on `space`, with
/// scratch from `workspace`.
template <class ExecSpace, class AViewType, class BViewType, class CViewType>
Report gemm_batched(const ExecSpace& space, const char transA[], const char transB[],
                    const typename CViewType::non_const_value_type& alpha, const AViewType& A,
                    const BViewType& B, const typename CViewType::non_const_value_type& beta,
                    const CViewType& C, const Options& options, Workspace<ExecSpace>& workspace) {
  auto products = Impl::strided_batch_products<ExecSpace>(transA, transB, alpha, A, B, beta, C);
  Impl::stack_shared_operand(products, A, B, C);
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::run_products(space, products, options, scratch);
  });
}

/// The same with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class BViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report gemm_batched(const ExecSpace& space, const char transA[], const char transB[],
                    const typename CViewType::non_const_value_type& alpha, const AViewType& A,
                    const BViewType& B, const typename CViewType::non_const_value_type& beta,
                    const CViewType& C, const Options& options = Options{}) {
  auto products = Impl::strided_batch_products<ExecSpace>(transA, transB, alpha, A, B, beta, C);
  Impl::stack_shared_operand(products, A, B, C);
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::run_products(space, products, options, scratch);
  });
}

/// The same on a default-constructed instance of C's execution space.
template <class AViewType, class BViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_view<CViewType>::value>>
Report gemm_batched(const char transA[], const char transB[],
                    const typename CViewType::non_const_value_type& alpha, const AViewType& A,
                    const BViewType& B, const typename CViewType::non_const_value_type& beta,
                    const CViewType& C, const Options& options = Options{}) {
  return gemm_batched(typename CViewType::execution_space(), transA, transB, alpha, A, B, beta, C,
                      options);
}

/// Every problem of the list, on `space`, with scratch from `workspace`.
template <class ExecSpace, class AViewType, class BViewType, class CViewType>
Report gemm_grouped(const ExecSpace& space,
                    const std::vector<GemmProblem<AViewType, BViewType, CViewType>>& problems,
                    const Options& options, Workspace<ExecSpace>& workspace) {
  const auto products = Impl::grouped_products<ExecSpace>(problems);
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::run_products(space, products, options, scratch);
  });
}

/// The same with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class BViewType, class CViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report gemm_grouped(const ExecSpace& space,
                    const std::vector<GemmProblem<AViewType, BViewType, CViewType>>& problems,
                    const Options& options = Options{}) {
  const auto products = Impl::grouped_products<ExecSpace>(problems);
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::run_products(space, products, options, scratch);
  });
}

/// The same on a default-constructed instance of C's execution space.
template <class AViewType, class BViewType, class CViewType>
Report gemm_grouped(const std::vector<GemmProblem<AViewType, BViewType, CViewType>>& problems,
                    const Options& options = Options{}) {
  return gemm_grouped(typename CViewType::execution_space(), problems, options);
}

/// The masked grouping on `space`, with scratch from `workspace`.
template <class ExecSpace, class AViewType, class BViewType, class CountView, class CViewType>
Report gemm_grouped_masked(const ExecSpace& space, const char transA[], const char transB[],
                           const typename CViewType::non_const_value_type& alpha,
                           const AViewType& A, const BViewType& B, const CountView& masked_m,
                           const typename CViewType::non_const_value_type& beta, const CViewType& C,
                           const Options& options, Workspace<ExecSpace>& workspace) {
  const auto products = Impl::masked_products<ExecSpace>(
      transA, transB, alpha, A, B, Impl::host_values(space, masked_m, "masked_m"), beta, C);
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::run_products(space, products, options, scratch);
  });
}

/// The same with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class BViewType, class CountView, class CViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report gemm_grouped_masked(const ExecSpace& space, const char transA[], const char transB[],
                           const typename CViewType::non_const_value_type& alpha,
                           const AViewType& A, const BViewType& B, const CountView& masked_m,
                           const typename CViewType::non_const_value_type& beta, const CViewType& C,
                           const Options& options = Options{}) {
  const auto products = Impl::masked_products<ExecSpace>(
      transA, transB, alpha, A, B, Impl::host_values(space, masked_m, "masked_m"), beta, C);
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::run_products(space, products, options, scratch);
  });
}

/// The contiguous grouping on `space`, with scratch from `workspace`.
template <class ExecSpace, class AViewType, class BViewType, class IndexView, class CViewType>
Report gemm_grouped_contiguous(const ExecSpace& space, const char transA[], const char transB[],
                               const typename CViewType::non_const_value_type& alpha,
                               const AViewType& A, const BViewType& B, const IndexView& m_indices,
                               const typename CViewType::non_const_value_type& beta,
                               const CViewType& C, const Options& options,
                               Workspace<ExecSpace>& workspace) {
  const auto products = Impl::contiguous_products<ExecSpace>(
      transA, transB, alpha, A, B, Impl::host_values(space, m_indices, "m_indices"), beta, C);
  return Impl::with_workspace(workspace, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::run_products(space, products, options, scratch);
  });
}

/// The same with the library's scratch for `space`'s instance.
template <class ExecSpace, class AViewType, class BViewType, class IndexView, class CViewType,
          class = std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value>>
Report gemm_grouped_contiguous(const ExecSpace& space, const char transA[], const char transB[],
                               const typename CViewType::non_const_value_type& alpha,
                               const AViewType& A, const BViewType& B, const IndexView& m_indices,
                               const typename CViewType::non_const_value_type& beta,
                               const CViewType& C, const Options& options = Options{}) {
  const auto products = Impl::contiguous_products<ExecSpace>(
      transA, transB, alpha, A, B, Impl::host_values(space, m_indices, "m_indices"), beta, C);
  return Impl::with_library_scratch(space, [&](Impl::PartsScratch<ExecSpace>& scratch) {
    return Impl::run_products(space, products, options, scratch);
  });
}

/// What gemm_batched of `items` products of this shape (C m x n, inner length k, distinct
/// operands) on `space` starts with, from the shape, the count, the options and the device
/// alone: auto_choice's answer for one such product, except that Auto weighs real products
/// as one batch planned together (the call's fixed cost paid once: docs/design.md §13) and may
/// take Int8Crt for a batch whose products it declines one at a time.
template <class Scalar = double, class ExecSpace>
Algorithm auto_choice_batched(const ExecSpace& space, std::int64_t m, std::int64_t n,
                              std::int64_t k, std::int64_t items,
                              const Options& options = Options{}, std::string* why = nullptr) {
  const Algorithm one = auto_choice<Scalar>(space, m, n, k, options, why);
  if constexpr (std::is_same<Scalar, double>::value) {
    if (one == Algorithm::Native && options.algorithm == Algorithm::Auto && items > 1 &&
        Impl::crt_batch_auto_pays(space, Impl::Shape{m, n, k}, items, options)) {
      if (why != nullptr) why->clear();
      return Algorithm::Int8Crt;
    }
  }
  return one;
}

/// Reserves in `workspace` what gemm_batched(space, transA, transB, alpha, A, B, beta, C,
/// options, workspace) needs, so that the call allocates nothing (also for
/// gemm_grouped_masked with the same Views: its products are at most the batch's).
template <class ExecSpace, class AViewType, class BViewType, class CViewType>
void reserve_batched(Workspace<ExecSpace>& workspace, const char transA[], const AViewType& A,
                     const BViewType& B, const CViewType& C, const Options& options = Options{}) {
  static_assert(AViewType::rank == 3 && BViewType::rank == 3 && CViewType::rank == 3,
                "ozaki::reserve_batched: A, B and C are rank-3 Views, the batch along extent 0");
  const std::int64_t k = Impl::inner_length<AViewType, CViewType>(transA, A, 1);
  // A batch sharing one operand may run as one product of all items' rows (or columns): its
  // shape, which needs at least what one item does.
  const std::int64_t batch = C.extent(0);
  const bool shared_b = batch > 1 && B.extent(0) == 1 && A.extent(0) != 1;
  const bool shared_a = batch > 1 && A.extent(0) == 1 && B.extent(0) != 1;
  Impl::reserve_product<typename AViewType::non_const_value_type>(
      workspace, (shared_b ? batch : 1) * C.extent(1), (shared_a ? batch : 1) * C.extent(2), k,
      options);
  // Real products of distinct operands may be planned as one batch (impl/batched/crt_batch.hpp),
  // whose front scratch holds every product's scaling.
  if (std::is_same<typename AViewType::non_const_value_type, double>::value && batch > 1 &&
      !shared_a && !shared_b) {
    Impl::WorkspaceAccess<ExecSpace>::blocks(workspace).reserve(
        Impl::crt_batch_front_bytes<ExecSpace>(
            Impl::Shape{static_cast<std::int64_t>(C.extent(1)),
                        static_cast<std::int64_t>(C.extent(2)), k},
            batch));
  }
}

/// Reserves in `workspace` what gemm_grouped(space, problems, options, workspace) needs: each
/// problem's, so the largest's.
template <class ExecSpace, class AViewType, class BViewType, class CViewType>
void reserve_grouped(Workspace<ExecSpace>& workspace,
                     const std::vector<GemmProblem<AViewType, BViewType, CViewType>>& problems,
                     const Options& options = Options{}) {
  for (const auto& p : problems) {
    const std::int64_t k = Impl::inner_length<AViewType, CViewType>(p.transA, p.A, 0);
    Impl::reserve_product<typename AViewType::non_const_value_type>(workspace, p.C.extent(0),
                                                                    p.C.extent(1), k, options);
  }
}

}  // namespace ozaki
