#pragma once
/// \file layouts.hpp
/// The layouts of batched.hpp as lists of products (products.hpp): a strided batch of rank-3
/// Views, a list of problems, and the two groupings of mixtures of experts (masked: a count
/// of valid rows per group; contiguous: a group index per row).

#include <ozaki/errors.hpp>
#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/batched/products.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace ozaki {
namespace Impl {

template <class ExecSpace, class AView, class BView, class CView>
struct ProductTypes {
  using T = typename AView::non_const_value_type;
  using CT = typename CView::non_const_value_type;
  static_assert(Kokkos::is_view<AView>::value && Kokkos::is_view<BView>::value &&
                    Kokkos::is_view<CView>::value,
                "ozaki batched and grouped calls: A, B and C are Views");
  static_assert(std::is_same<typename BView::non_const_value_type, T>::value,
                "ozaki batched and grouped calls: A and B hold the same scalar");
  static_assert(!std::is_const<typename CView::value_type>::value,
                "ozaki batched and grouped calls: C must be a View of non-const scalars");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename AView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename BView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecSpace, typename CView::memory_space>::accessible,
      "ozaki batched and grouped calls: A, B and C must be accessible from the "
      "execution space");
  using Item = Product<ExecSpace, T, CT>;
  using List = ProductList<ExecSpace, T, CT>;
  using ConstMatrix = typename StridedViews<ExecSpace, T>::ConstMatrix;
  using Matrix = typename StridedViews<ExecSpace, CT>::Matrix;
};

/// The products' transposes and scalars.
template <class Item>
Item product_head(const char* transA, const char* transB, const typename Item::Scalar& alpha,
                  const typename Item::Scalar& beta) {
  Item p;
  p.op_a = parse_product_op(transA, "transA");
  p.op_b = parse_product_op(transB, "transB");
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

/// Checks that a rank-3 operand's batch extent is the batch's, or 1 (one operand for all).
template <class View>
void check_batch_extent(const View& X, std::int64_t batch, const char* which) {
  const std::int64_t e = X.extent(0);
  if (e != batch && e != 1) {
    throw InvalidArgument(std::string(which) + " holds " + std::to_string(e) +
                          " matrices along extent 0 and C holds " + std::to_string(batch) +
                          ": expected " + std::to_string(batch) + ", or 1 for one " + which +
                          " for every product");
  }
}

/// Product i of a strided batch: C(i,:,:) = alpha op(A(i,:,:)) op(B(i,:,:)) + beta C(i,:,:).
template <class ExecSpace, class AView, class BView, class CView>
typename ProductTypes<ExecSpace, AView, BView, CView>::List strided_batch_products(
    const char* transA, const char* transB, const typename CView::non_const_value_type& alpha,
    const AView& A, const BView& B, const typename CView::non_const_value_type& beta,
    const CView& C) {
  using Types = ProductTypes<ExecSpace, AView, BView, CView>;
  static_assert(AView::rank == 3 && BView::rank == 3 && CView::rank == 3,
                "ozaki::gemm_batched: A, B and C are rank-3 Views, the batch along extent 0");
  const auto head = product_head<typename Types::Item>(transA, transB, alpha, beta);
  const std::int64_t batch = C.extent(0);
  check_batch_extent(A, batch, "A");
  check_batch_extent(B, batch, "B");
  typename Types::List products;
  products.items.assign(batch, head);
  for (std::int64_t i = 0; i < batch; ++i) {
    products.items[i].A = item_view<typename Types::ConstMatrix>(A, i);
    products.items[i].B = item_view<typename Types::ConstMatrix>(B, i);
    products.items[i].C = item_view<typename Types::Matrix>(C, i);
  }
  products.outputs_disjoint = injective(C);
  return products;
}

/// A rank-1 View of group indices or counts on the host: read in place where it is host
/// memory, otherwise copied on `space` and waited for (the caller's instance only).  A stream
/// being captured into a graph cannot wait, so there the View must be host memory.
template <class ExecSpace, class IndexView>
std::vector<std::int64_t> host_values(const ExecSpace& space, const IndexView& x,
                                      const char* which) {
  static_assert(Kokkos::is_view<IndexView>::value && IndexView::rank == 1 &&
                    std::is_integral<typename IndexView::non_const_value_type>::value,
                "ozaki grouped calls: group counts and indices are rank-1 Views of integers");
  std::vector<std::int64_t> values(x.extent(0));
  using Memory = typename IndexView::memory_space;
  if constexpr (std::is_same<Memory, Kokkos::HostSpace>::value) {
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = x(i);
  } else {
    if (captured(space)) {
      throw InvalidArgument(std::string(which) +
                            " is in device memory and the stream is being captured into a "
                            "graph, where its values cannot be read: pass a HostSpace View");
    }
    const auto mirror = Kokkos::create_mirror_view(x);
    Kokkos::deep_copy(space, mirror, x);
    space.fence();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = mirror(i);
  }
  return values;
}

/// Extents 0 (the batch) and d of a rank-3 View as one strided index: batch-major (item i's
/// index j at i e_d + j, where s_0 = e_d s_d, stride s_d) or batch-minor (at j batch + i,
/// where s_d = batch s_0, stride s_0); order 0 where neither holds.
struct MergedIndex {
  int order = 0;  // 1: batch-major, 2: batch-minor
  std::int64_t extent = 0, stride = 0;
};
template <class View>
MergedIndex merged_index(const View& X, int d) {
  const std::int64_t batch = X.extent(0), e = X.extent(d);
  const std::int64_t s0 = X.stride(0), sd = X.stride(d);
  MergedIndex m;
  m.extent = batch * e;
  if (s0 == e * sd) {
    m.order = 1;
    m.stride = sd;
  } else if (sd == batch * s0) {
    m.order = 2;
    m.stride = s0;
  }
  return m;
}

/// A batch whose A or B has a batch extent of 1 as one product (gemm_batched only): where B is
/// shared, every item's rows of op(A) and of C merged along the batch into one strided index,
/// in the same order for both, multiply op(B) in one GEMM; where A is shared, op(B)'s and C's
/// columns likewise.  Each entry keeps gemm's promise, and one large GEMM replaces many small
/// ones.  Returns false, the list unchanged, where the strides allow no common order.
template <class List, class AView, class BView, class CView>
bool stack_shared_operand(List& products, const AView& A, const BView& B, const CView& C) {
  using Item = typename std::decay_t<decltype(products.items)>::value_type;
  using ConstMatrix = decltype(Item{}.A);
  using Matrix = decltype(Item{}.C);
  const std::int64_t batch = C.extent(0);
  if (batch < 2 || products.items.empty() || (A.extent(0) == 1) == (B.extent(0) == 1)) {
    return false;
  }
  Item p = products.items[0];
  if (B.extent(0) == 1) {  // rows of op(A) and C
    const bool t = p.op_a.transpose;
    const MergedIndex a = merged_index(A, t ? 2 : 1), c = merged_index(C, 1);
    if (a.order == 0 || a.order != c.order) return false;
    const std::int64_t k = A.extent(t ? 1 : 2), ks = A.stride(t ? 1 : 2);
    p.A = t ? ConstMatrix(A.data(), Kokkos::LayoutStride(k, ks, a.extent, a.stride))
            : ConstMatrix(A.data(), Kokkos::LayoutStride(a.extent, a.stride, k, ks));
    p.C = Matrix(C.data(), Kokkos::LayoutStride(c.extent, c.stride, C.extent(2), C.stride(2)));
  } else {  // columns of op(B) and C
    const bool t = p.op_b.transpose;
    const MergedIndex b = merged_index(B, t ? 1 : 2), c = merged_index(C, 2);
    if (b.order == 0 || b.order != c.order) return false;
    const std::int64_t k = B.extent(t ? 2 : 1), ks = B.stride(t ? 2 : 1);
    p.B = t ? ConstMatrix(B.data(), Kokkos::LayoutStride(b.extent, b.stride, k, ks))
            : ConstMatrix(B.data(), Kokkos::LayoutStride(k, ks, b.extent, b.stride));
    p.C = Matrix(C.data(), Kokkos::LayoutStride(C.extent(1), C.stride(1), c.extent, c.stride));
  }
  products.items.assign(1, p);
  products.outputs_disjoint = true;
  return true;
}

/// The masked grouping: group g multiplies the first masked_m[g] rows of op(A(g,:,:)) by
/// op(B(g,:,:)) into the same rows of C(g,:,:); C's other rows are not touched.
template <class ExecSpace, class AView, class BView, class CView>
typename ProductTypes<ExecSpace, AView, BView, CView>::List masked_products(
    const char* transA, const char* transB, const typename CView::non_const_value_type& alpha,
    const AView& A, const BView& B, const std::vector<std::int64_t>& masked_m,
    const typename CView::non_const_value_type& beta, const CView& C) {
  static_assert(AView::rank == 3 && BView::rank == 3 && CView::rank == 3,
                "ozaki::gemm_grouped_masked: A, B and C are rank-3 Views, the groups along "
                "extent 0");
  typename ProductTypes<ExecSpace, AView, BView, CView>::List products =
      strided_batch_products<ExecSpace>(transA, transB, alpha, A, B, beta, C);
  if (masked_m.size() != products.items.size()) {
    throw InvalidArgument("masked_m holds " + std::to_string(masked_m.size()) +
                          " counts and C holds " + std::to_string(products.items.size()) +
                          " groups: expected one count per group");
  }
  const std::int64_t rows = C.extent(1);
  for (std::size_t g = 0; g < products.items.size(); ++g) {
    const std::int64_t m = masked_m[g];
    if (m < 0 || m > rows) {
      throw InvalidArgument("masked_m(" + std::to_string(g) + ") = " + std::to_string(m) +
                            ": expected 0.." + std::to_string(rows) + " (the rows of C)");
    }
    auto& p = products.items[g];
    if (static_cast<std::int64_t>(transposed_if(p.A, p.op_a.transpose).extent(0)) != rows) continue;
    p.A = op_rows(p.A, p.op_a.transpose, 0, m);
    p.C = block(p.C, 0, m, 0, p.C.extent(1));
  }
  return products;
}

/// Rows [r0, r1) of one group of a grouped call.
struct GroupRun {
  std::int64_t group, r0, r1;
};

/// The contiguous grouping's runs: maximal runs of consecutive rows with one group index
/// (m_indices[r] in 0..groups-1; -1: no group, the row is in no run).  `call` names the call
/// in the errors.
inline std::vector<GroupRun> contiguous_runs(const std::vector<std::int64_t>& m_indices,
                                             std::int64_t groups, std::int64_t rows,
                                             const char* call) {
  if (static_cast<std::int64_t>(m_indices.size()) != rows) {
    throw InvalidArgument(std::string(call) + ": m_indices holds " +
                          std::to_string(m_indices.size()) + " indices for " +
                          std::to_string(rows) + " rows: expected one per row");
  }
  std::vector<GroupRun> runs;
  for (std::int64_t r0 = 0; r0 < rows;) {
    const std::int64_t g = m_indices[r0];
    if (g < -1 || g >= groups) {
      throw InvalidArgument(std::string(call) + ": m_indices(" + std::to_string(r0) +
                            ") = " + std::to_string(g) + ": expected -1 (no group) or 0.." +
                            std::to_string(groups - 1));
    }
    std::int64_t r1 = r0 + 1;
    while (r1 < rows && m_indices[r1] == g) ++r1;
    if (g >= 0) runs.push_back({g, r0, r1});
    r0 = r1;
  }
  return runs;
}

/// The contiguous grouping: row r of op(A) and C belongs to group m_indices[r] (-1: to none,
/// C's row not touched), and each run of consecutive rows of one group is one product with
/// op(B(g,:,:)).
template <class ExecSpace, class AView, class BView, class CView>
typename ProductTypes<ExecSpace, AView, BView, CView>::List contiguous_products(
    const char* transA, const char* transB, const typename CView::non_const_value_type& alpha,
    const AView& A, const BView& B, const std::vector<std::int64_t>& m_indices,
    const typename CView::non_const_value_type& beta, const CView& C) {
  using Types = ProductTypes<ExecSpace, AView, BView, CView>;
  static_assert(AView::rank == 2 && BView::rank == 3 && CView::rank == 2,
                "ozaki::gemm_grouped_contiguous: A and C are rank-2 Views (the groups' rows "
                "stacked), B a rank-3 View (the groups along extent 0)");
  const auto head = product_head<typename Types::Item>(transA, transB, alpha, beta);
  const auto a = strided_view<typename Types::ConstMatrix>(A);
  const auto c = strided_view<typename Types::Matrix>(C);
  const std::int64_t rows = C.extent(0);
  const std::int64_t op_a_rows = transposed_if(a, head.op_a.transpose).extent(0);
  if (op_a_rows != rows) {
    throw InvalidArgument("ozaki::gemm_grouped_contiguous: op(A) has " + std::to_string(op_a_rows) +
                          " rows and C " + std::to_string(rows) +
                          ": expected the same rows (m_indices gives each its group)");
  }
  // contiguous_runs checks m_indices: one index per row, each a group or -1.
  typename Types::List products;
  products.outputs_disjoint = injective(C);
  for (const GroupRun& run :
       contiguous_runs(m_indices, B.extent(0), rows, "ozaki::gemm_grouped_contiguous")) {
    auto p = head;
    p.A = op_rows(a, p.op_a.transpose, run.r0, run.r1 - run.r0);
    p.B = item_view<typename Types::ConstMatrix>(B, run.group);
    p.C = block(c, run.r0, run.r1, 0, c.extent(1));
    products.items.push_back(p);
  }
  return products;
}

}  // namespace Impl
}  // namespace ozaki
