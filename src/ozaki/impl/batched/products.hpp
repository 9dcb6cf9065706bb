#pragma once
/// \file products.hpp
/// Batched and grouped calls (batched.hpp) as one list of products: every layout (a strided
/// batch, a list of problems, the masked and contiguous groupings) becomes a list of rank-2
/// products, all checked before any is computed, so that a bad item leaves every C untouched.

#include <ozaki/errors.hpp>
#include <ozaki/impl/batched/crt_batch.hpp>
#include <ozaki/impl/common/arguments.hpp>
#include <ozaki/impl/common/bounds.hpp>
#include <ozaki/impl/common/column_major.hpp>
#include <ozaki/impl/common/native.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/gemm_parts.hpp>
#include <ozaki/options.hpp>
#include <ozaki/report.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ozaki {
namespace Impl {

/// One product of a batched or grouped call, C = alpha op(A) op(B) + beta C: A and B hold
/// scalars T, C holds CT (T, or T's FP64 type for FP32 operands), each a strided view of the
/// caller's memory.
template <class ExecSpace, class T, class CT>
struct Product {
  using Operand = T;
  using Scalar = CT;
  BlasOp op_a, op_b;
  CT alpha{}, beta{};
  typename StridedViews<ExecSpace, T>::ConstMatrix A, B;
  typename StridedViews<ExecSpace, CT>::Matrix C;
};

/// A transpose argument ('N', 'T' or 'C', either case) as the operation on the stored operand.
inline BlasOp parse_product_op(const char* arg, const char* which) {
  const bool transpose = parse_trans(arg, which);
  return {transpose, transpose && (arg[0] == 'C' || arg[0] == 'c')};
}

/// Item i of a rank-3 View whose extent 0 is the batch, as a strided rank-2 view: item 0 for
/// every i where the batch extent is 1 (one operand for every product).
template <class Strided, class View>
Strided item_view(const View& X, std::int64_t i) {
  const std::int64_t at = X.extent(0) == 1 ? 0 : i;
  return Strided(X.data() + at * static_cast<std::int64_t>(X.stride(0)),
                 Kokkos::LayoutStride(X.extent(1), X.stride(1), X.extent(2), X.stride(2)));
}

/// Rows [r0, r0 + count) of op(X) for X as stored: rows of X, or its columns where op
/// transposes.
template <class Strided>
Strided op_rows(const Strided& X, bool transpose, std::int64_t r0, std::int64_t count) {
  if (!transpose) return block(X, r0, r0 + count, 0, X.extent(1));
  return block(X, 0, X.extent(0), r0, r0 + count);
}

/// The products of one call, and whether their Cs are known not to overlap (distinct items
/// or rows of one View whose index map is one to one: injective), which spares the pairwise
/// check of many interleaved items.
template <class ExecSpace, class T, class CT>
struct ProductList {
  std::vector<Product<ExecSpace, T, CT>> items;
  bool outputs_disjoint = false;
};

/// Whether no two indices of the View name one element: Kokkos's LayoutLeft and LayoutRight
/// are; a LayoutStride View is where its strides, sorted, nest (each at least the span of the
/// dimensions below it).
template <class View>
bool injective(const View& x) {
  using Layout = typename View::array_layout;
  if (std::is_same<Layout, Kokkos::LayoutLeft>::value ||
      std::is_same<Layout, Kokkos::LayoutRight>::value) {
    return true;
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, extent), extents > 1
  for (unsigned r = 0; r < View::rank; ++r) {
    if (x.extent(r) > 1) dims.emplace_back(static_cast<std::int64_t>(x.stride(r)), x.extent(r));
  }
  std::sort(dims.begin(), dims.end());
  std::int64_t span = 1;
  for (const auto& d : dims) {
    if (d.first < span) return false;
    span = d.first * d.second;
  }
  return true;
}

/// One operand's address range, for the search for overlaps between products.
struct Extent {
  const char* begin = nullptr;
  const char* end = nullptr;
  std::size_t product = 0;
  int operand = 0;  // 0: A, 1: B, 2: C
};

template <class V>
Extent extent_of(const V& x, std::size_t product, int operand) {
  const auto* begin = reinterpret_cast<const char*>(x.data());
  return {begin, reinterpret_cast<const char*>(x.data() + elements_spanned(x)), product, operand};
}

/// f(X) for the product's operand X named by `operand` (0: A, 1: B, 2: C).
template <class ExecSpace, class T, class CT, class F>
bool with_operand(const Product<ExecSpace, T, CT>& p, int operand, F&& f) {
  if (operand == 0) return f(p.A);
  if (operand == 1) return f(p.B);
  return f(p.C);
}

/// Throws where the two operands may share an element (overlaps).
template <class ExecSpace, class T, class CT>
void check_apart(const std::vector<Product<ExecSpace, T, CT>>& products, const Extent& out,
                 const Extent& other) {
  if (out.product == other.product || !(out.begin < other.end && other.begin < out.end)) return;
  const bool overlap = with_operand(products[out.product], out.operand, [&](const auto& u) {
    return with_operand(products[other.product], other.operand,
                        [&](const auto& v) { return overlaps(u, v); });
  });
  if (!overlap) return;
  static const char* const names[] = {"A", "B", "C"};
  throw InvalidArgument("C of product " + std::to_string(out.product) + " overlaps " +
                        names[other.operand] + " of product " + std::to_string(other.product) +
                        " in memory (no product may write what another reads or writes)");
}

/// Checks every product's shapes and aliasing (check_operands), and that no product's C
/// overlaps another product's A, B or C: the products then give the same result in any order
/// and none reads what another writes.  Products that share an A or a B are fine.
template <class ExecSpace, class T, class CT>
void check_products(const ProductList<ExecSpace, T, CT>& list) {
  const auto& products = list.items;
  std::vector<Extent> outputs, inputs;
  for (std::size_t i = 0; i < products.size(); ++i) {
    const auto& p = products[i];
    try {
      check_operands(transposed_if(p.A, p.op_a.transpose), transposed_if(p.B, p.op_b.transpose),
                     p.C);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("product " + std::to_string(i) + ": " + e.what());
    }
    if (p.C.size() == 0) continue;
    outputs.push_back(extent_of(p.C, i, 2));
    if (p.A.size() != 0) inputs.push_back(extent_of(p.A, i, 0));
    if (p.B.size() != 0) inputs.push_back(extent_of(p.B, i, 1));
  }
  const auto by_begin = [](const Extent& x, const Extent& y) { return x.begin < y.begin; };
  std::sort(outputs.begin(), outputs.end(), by_begin);
  std::sort(inputs.begin(), inputs.end(), by_begin);
  // The inputs' address ranges merged into disjoint covers (usually one per allocation): an
  // output can meet only the inputs of the covers it meets.
  struct Cover {
    const char* begin;
    const char* end;
    std::size_t first, last;  // inputs[first, last)
  };
  std::vector<Cover> covers;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (covers.empty() || inputs[i].begin >= covers.back().end) {
      covers.push_back({inputs[i].begin, inputs[i].end, i, i + 1});
    } else {
      covers.back().end = std::max(covers.back().end, inputs[i].end);
      covers.back().last = i + 1;
    }
  }
  for (const Extent& out : outputs) {
    auto cover = std::upper_bound(covers.begin(), covers.end(), out.begin,
                                  [](const char* at, const Cover& c) { return at < c.end; });
    for (; cover != covers.end() && cover->begin < out.end; ++cover) {
      for (std::size_t j = cover->first; j < cover->last; ++j)
        check_apart(products, out, inputs[j]);
    }
  }
  if (list.outputs_disjoint) return;
  for (std::size_t a = 0; a < outputs.size(); ++a) {
    for (std::size_t b = a + 1; b < outputs.size() && outputs[b].begin < outputs[a].end; ++b) {
      check_apart(products, outputs[a], outputs[b]);
    }
  }
}

/// The bound of native GEMM in the products' precision (Report::error_bound).
template <class T, class CT>
double native_bound(std::int64_t k) {
  constexpr bool complex = !std::is_same<T, double>::value && !std::is_same<T, float>::value;
  if constexpr (is_fp32_scalar<CT>::value) {
    return native_fp32_bound(k, complex);
  } else if constexpr (complex) {
    return native_complex_componentwise_bound(k);
  } else {
    return native_componentwise_bound(k);
  }
}

/// Where every product runs native GEMM whatever its data (Algorithm::Native, or Auto's choice
/// from their one shape: auto_choice) and they form one strided batch in column-major form
/// (one operation, shape and leading dimensions; X, Y and C each a constant number of elements
/// apart from one product to the next), runs them as one vendor call into `report` and
/// returns true: a batch that ozaki declines costs what the vendor's batch costs, not one call
/// per product.  False, with nothing run, otherwise.
template <class ExecSpace, class T, class CT>
bool native_strided_batch(const ExecSpace& space, const ProductList<ExecSpace, T, CT>& list,
                          const Options& options, Report& report) {
  if constexpr (!std::is_same<T, CT>::value ||
                !runs_strided_batches<NativeBackend<ExecSpace>>::value) {
    (void)space, (void)list, (void)options, (void)report;
    return false;
  } else {
    const auto& items = list.items;
    if (items.size() < 2) return false;
    const auto& first = items[0];
    const std::int64_t m = first.C.extent(0), n = first.C.extent(1);
    const std::int64_t k = transposed_if(first.A, first.op_a.transpose).extent(1);
    if (m == 0 || n == 0 || k == 0) return false;
    std::string why;
    const Algorithm choice = options.algorithm == Algorithm::Native
                                 ? Algorithm::Native
                                 : auto_choice<T>(space, m, n, k, options, &why);
    if (choice != Algorithm::Native) return false;
    std::vector<ColumnMajorProduct<T>> forms(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      const auto& p = items[i];
      if (p.op_a != first.op_a || p.op_b != first.op_b || !(p.alpha == first.alpha) ||
          !(p.beta == first.beta) || static_cast<std::int64_t>(p.C.extent(0)) != m ||
          static_cast<std::int64_t>(p.C.extent(1)) != n ||
          static_cast<std::int64_t>(transposed_if(p.A, p.op_a.transpose).extent(1)) != k ||
          !as_column_major(p.op_a, p.op_b, p.A, p.B, p.C, forms[i])) {
        return false;
      }
    }
    const ColumnMajorProduct<T>& g = forms[0];
    StridedBatch batch;
    batch.count = static_cast<std::int64_t>(forms.size());
    batch.stride_x = forms[1].x - g.x;
    batch.stride_y = forms[1].y - g.y;
    batch.stride_c = forms[1].c - g.c;
    for (std::size_t i = 1; i < forms.size(); ++i) {
      const ColumnMajorProduct<T>& f = forms[i];
      const std::int64_t at = static_cast<std::int64_t>(i);
      if (f.op_x != g.op_x || f.op_y != g.op_y || f.m != g.m || f.n != g.n || f.k != g.k ||
          f.ldx != g.ldx || f.ldy != g.ldy || f.ldc != g.ldc || f.x != g.x + at * batch.stride_x ||
          f.y != g.y + at * batch.stride_y || f.c != g.c + at * batch.stride_c) {
        return false;
      }
    }
    if (!NativeGemm<ExecSpace>::run_strided_batch(space, g, first.alpha, first.beta, batch)) {
      return false;
    }
    report.algorithm = Algorithm::Native;
    report.backend = NativeGemm<ExecSpace>::name();
    report.options = options;
    report.options.algorithm = Algorithm::Native;
    report.reason = options.algorithm == Algorithm::Native
                        ? std::string()
                        : why + " (the products as one strided-batched call)";
    report.error_bound = native_bound<T, CT>(k);
    return true;
  }
}

/// The products on `space`, all checked first: real products of one shape planned as one
/// batch where CrtBatch applies (crt_batch.hpp), the others in order, each its own call; their
/// Reports summed: the Report of the largest, the largest error bound, operations summed
/// (ReportSum).
template <class ExecSpace, class T, class CT>
Report run_products(const ExecSpace& space, const ProductList<ExecSpace, T, CT>& products,
                    const Options& options, PartsScratch<ExecSpace>& scratch) {
  check_call(space, options);
  if (options.pairs == PairPolicy::Count && !options.slices) {
    // A pair count is checked against the slice count each product chooses, after earlier
    // products have been written: with a given count the check is made here, for all.
    throw InvalidArgument(
        "options.pairs = PairPolicy::Count needs an explicit options.slices in a batched or "
        "grouped call, so that every product's options are checked before any C is written");
  }
  if (options.experimental.native_gemm) {
    throw InvalidArgument(
        "options.experimental.native_gemm computes one call's native GEMM: a batched or grouped "
        "call makes many");
  }
  check_products(products);
  ReportSum sum;
  std::vector<std::size_t> rest;
  CrtBatch<ExecSpace> crt_batch(space, products, options, scratch);
  if (crt_batch.ok()) crt_batch.run(sum, rest);
  if (crt_batch.batched() == 0) {
    // No product planned as one batch (or none certified there): the vendor's batch where
    // every product runs native GEMM whatever its data, else one call per product.
    Report batch;
    if (native_strided_batch(space, products, options, batch)) return batch;
    rest.clear();
    for (std::size_t i = 0; i < products.items.size(); ++i) rest.push_back(i);
  }
  bool any = crt_batch.batched() > 0;
  for (const std::size_t i : rest) {
    const auto& p = products.items[i];
    if (p.C.size() == 0) continue;  // nothing to write (K = 0 with M N > 0 still scales C)
    gemm_part(space, p.op_a.blas_char(), p.op_b.blas_char(), p.alpha, p.A, p.B, p.beta, p.C,
              options, scratch, sum);
    any = true;
  }
  Report& report = sum.report();
  report.batched_products = crt_batch.batched();
  if (!any) report.reason = "no product: every C is empty";
  if (!sum.bounded()) report.error_bound = 0;
  return report;
}

}  // namespace Impl
}  // namespace ozaki
