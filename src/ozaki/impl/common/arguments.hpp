#pragma once
/// \file arguments.hpp
/// Argument checks and operand views for ozaki::gemm.  Every check here runs before any
/// kernel, so a throw leaves C untouched.

#include <ozaki/errors.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/options.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

namespace ozaki {
namespace Impl {

/// 'N' (or 'n') -> false, 'T'/'t'/'C'/'c' -> true (real data: conjugate = transpose).
inline bool parse_trans(const char* trans, const char* which) {
  const char c = trans == nullptr ? '\0' : trans[0];
  switch (c) {
    case 'N':
    case 'n': return false;
    case 'T':
    case 't':
    case 'C':
    case 'c': return true;
    default: break;
  }
  std::ostringstream os;
  os << which << " = '" << (c == '\0' ? std::string("(empty)") : std::string(1, c))
     << "': expected 'N', 'T' or 'C'";
  throw InvalidArgument(os.str());
}

/// Floor of a / b for b > 0.
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - (a % b != 0 && a < 0 ? 1 : 0);
}

/// True when x and y are provably disjoint blocks of one matrix: rank-2 views with the same
/// strides (in either order, a transposed view's), whose fast extents fit the slow stride, so
/// that an address names one (row, column) of the matrix.  Then y's element (i2, j2) is x's
/// (i2 + r + t L, j2 + q - t) for the offset d = q L + r (0 <= r < L) and t in {-1, 0} (the
/// row difference lies in (-L, L)), and the blocks meet only where one of those ranges is
/// non-empty.  False where any of that does not hold (the span test then decides): the
/// blocks of a blocked factorization (A22 -= A21 A12) pass, true aliases never do.
template <class V1, class V2>
bool disjoint_blocks(const V1& x, const V2& y) {
  // Views of different element sizes (FP32 operands, an FP64 C) are never proven disjoint.
  if (sizeof(typename V1::value_type) != sizeof(typename V2::value_type)) return false;
  std::int64_t xs[2] = {static_cast<std::int64_t>(x.stride(0)),
                        static_cast<std::int64_t>(x.stride(1))};
  std::int64_t xe[2] = {static_cast<std::int64_t>(x.extent(0)),
                        static_cast<std::int64_t>(x.extent(1))};
  std::int64_t ys[2] = {static_cast<std::int64_t>(y.stride(0)),
                        static_cast<std::int64_t>(y.stride(1))};
  std::int64_t ye[2] = {static_cast<std::int64_t>(y.extent(0)),
                        static_cast<std::int64_t>(y.extent(1))};
  if (ys[0] != xs[0] || ys[1] != xs[1]) {
    if (ys[0] != xs[1] || ys[1] != xs[0]) return false;
    std::swap(ys[0], ys[1]);
    std::swap(ye[0], ye[1]);
  }
  const int f = xs[0] <= xs[1] ? 0 : 1;  // the fast dimension
  const std::int64_t p = xs[f], L = p > 0 ? xs[1 - f] / p : 0;
  if (p <= 0 || L <= 0 || xs[1 - f] % p != 0 || xe[f] > L || ye[f] > L) return false;
  const std::int64_t unit = static_cast<std::int64_t>(sizeof(typename V1::value_type)) * p;
  const std::int64_t bytes =
      reinterpret_cast<const char*>(y.data()) - reinterpret_cast<const char*>(x.data());
  if (bytes % unit != 0) return false;
  const std::int64_t d = bytes / unit, q = floor_div(d, L), r = d - q * L;
  for (std::int64_t t = -1; t <= 0; ++t) {
    const std::int64_t di = r + t * L, dj = q - t;  // x index minus y index
    const bool rows_meet = std::max<std::int64_t>(0, -di) < std::min(ye[f], xe[f] - di);
    const bool columns_meet = std::max<std::int64_t>(0, -dj) < std::min(ye[1 - f], xe[1 - f] - dj);
    if (rows_meet && columns_meet) return false;
  }
  return true;
}

/// One past the offset of a non-empty rank-2 view's last element: (e0 - 1) s0 + (e1 - 1) s1 + 1.
/// Not View::span(), which for LayoutStride is the largest extent times stride and can reach
/// past the end of the allocation a block lies in, into a neighbouring one.
template <class V>
std::int64_t elements_spanned(const V& x) {
  return (static_cast<std::int64_t>(x.extent(0)) - 1) * static_cast<std::int64_t>(x.stride(0)) +
         (static_cast<std::int64_t>(x.extent(1)) - 1) * static_cast<std::int64_t>(x.stride(1)) + 1;
}

/// True when the two views may share an element: their address ranges overlap and they are
/// not provably disjoint blocks of one matrix.
template <class V1, class V2>
bool overlaps(const V1& x, const V2& y) {
  if (x.size() == 0 || y.size() == 0 || x.data() == nullptr || y.data() == nullptr) {
    return false;  // empty, or the shape of a prepared operand (no FP64 data)
  }
  const auto* x0 = reinterpret_cast<const char*>(x.data());
  const auto* x1 = reinterpret_cast<const char*>(x.data() + elements_spanned(x));
  const auto* y0 = reinterpret_cast<const char*>(y.data());
  const auto* y1 = reinterpret_cast<const char*>(y.data() + elements_spanned(y));
  return x0 < y1 && y0 < x1 && !disjoint_blocks(x, y);
}

/// Checks shapes and aliasing of (op(A), op(B), C); returns M, N, K.
template <class ConstMatrix, class Matrix>
Shape check_operands(const ConstMatrix& opA, const ConstMatrix& opB, const Matrix& C) {
  const Shape s{static_cast<std::int64_t>(opA.extent(0)), static_cast<std::int64_t>(opB.extent(1)),
                static_cast<std::int64_t>(opA.extent(1))};
  if (static_cast<std::int64_t>(opB.extent(0)) != s.k ||
      static_cast<std::int64_t>(C.extent(0)) != s.m ||
      static_cast<std::int64_t>(C.extent(1)) != s.n) {
    std::ostringstream os;
    os << "shapes do not match: op(A) is " << opA.extent(0) << " x " << opA.extent(1)
       << ", op(B) is " << opB.extent(0) << " x " << opB.extent(1) << ", C is " << C.extent(0)
       << " x " << C.extent(1);
    throw InvalidArgument(os.str());
  }
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  if (s.m > int_max || s.n > int_max) {
    throw InvalidArgument("M and N must be below 2^31 (one Kokkos team per row)");
  }
  if (overlaps(C, opA)) throw InvalidArgument("C overlaps A in memory (C must not alias A)");
  if (overlaps(C, opB)) throw InvalidArgument("C overlaps B in memory (C must not alias B)");
  return s;
}

/// Checks Options::experimental (Experimental::Tuning).
inline void check_tuning(const Experimental::Tuning& t) {
  using Experimental::ComplexProducts;
  if (t.complex_products != ComplexProducts::Karatsuba &&
      t.complex_products != ComplexProducts::Embedding) {
    throw InvalidArgument("options.experimental.complex_products = " +
                          std::to_string(static_cast<int>(t.complex_products)) +
                          ": expected Karatsuba (3) or Embedding (4, the real embedding)");
  }
  if (t.crt_pass_columns && *t.crt_pass_columns < 1) {
    throw InvalidArgument(
        "options.experimental.crt_pass_columns = " + std::to_string(*t.crt_pass_columns) +
        ": expected at least 1, or empty for the library's choice");
  }
  if (t.k_block && (*t.k_block < 16 || *t.k_block > max_k_block)) {
    throw InvalidArgument("options.experimental.k_block = " + std::to_string(*t.k_block) +
                          ": expected 16.." + std::to_string(max_k_block) +
                          " (INT32 safety), or empty for max_k_block");
  }
}

/// Checks the options that do not depend on the data (the slice count may still be auto).
inline void check_options(const Options& o) {
  switch (o.algorithm) {
    case Algorithm::Auto:
    case Algorithm::Int8Slices:
    case Algorithm::Int8Crt:
    case Algorithm::Native:
    case Algorithm::CublasEmulation: break;
    default:
      throw InvalidArgument(
          "options.algorithm must be Auto, Int8Slices, Int8Crt, Native or CublasEmulation");
  }
  if (o.slices && (*o.slices < 1 || *o.slices > max_slices)) {
    throw InvalidArgument("options.slices = " + std::to_string(*o.slices) + ": expected 1.." +
                          std::to_string(max_slices) + " or ozaki::auto_slices");
  }
  switch (o.pairs) {
    case PairPolicy::Triangular:
    case PairPolicy::Full: break;
    case PairPolicy::Count:
      if (!o.pair_count) {
        throw InvalidArgument(
            "options.pair_count is empty: PairPolicy::Count needs a count 1..S^2");
      }
      if (*o.pair_count < 1 || (o.slices && *o.pair_count > *o.slices * *o.slices)) {
        throw InvalidArgument("options.pair_count = " + std::to_string(*o.pair_count) +
                              ": expected 1..S^2 with PairPolicy::Count");
      }
      break;
    default: throw InvalidArgument("options.pairs is not a PairPolicy");
  }
  if (o.moduli && (*o.moduli < min_moduli || *o.moduli > max_moduli)) {
    throw InvalidArgument("options.moduli = " + std::to_string(*o.moduli) + ": expected " +
                          std::to_string(min_moduli) + ".." + std::to_string(max_moduli) +
                          " or ozaki::auto_moduli");
  }
  switch (o.crt_scaling) {
    case CrtScaling::Auto:
    case CrtScaling::Fast:
    case CrtScaling::Accurate: break;
    default: throw InvalidArgument("options.crt_scaling is not a CrtScaling");
  }
  if (o.workspace_limit && *o.workspace_limit < 1) {
    throw InvalidArgument("options.workspace_limit = " + std::to_string(*o.workspace_limit) +
                          ": expected at least 1 byte, or empty for the library's choice");
  }
  check_tuning(o.experimental);
}

/// Checks what depends on the resolved slice count.
inline void check_pair_count(const CallPlan& plan, int S) {
  if (plan.pairs == PairPolicy::Count && plan.pair_count > S * S) {
    throw InvalidArgument("options.pair_count = " + std::to_string(plan.pair_count) +
                          " exceeds S^2 = " + std::to_string(S * S) + " for the chosen S");
  }
}

}  // namespace Impl
}  // namespace ozaki
