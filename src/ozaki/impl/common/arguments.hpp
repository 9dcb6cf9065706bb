#pragma once
/// \file arguments.hpp
/// Argument checks and operand views for ozaki::gemm.  Every check here runs before any
/// kernel, so a throw leaves C untouched.

#include <ozaki/errors.hpp>
#include <ozaki/impl/common/plan.hpp>
#include <ozaki/options.hpp>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

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

/// True when the element ranges of the two views overlap.
template <class V1, class V2>
bool overlaps(const V1& x, const V2& y) {
  if (x.size() == 0 || y.size() == 0 || x.data() == nullptr || y.data() == nullptr) {
    return false;  // empty, or the shape of a prepared operand (no FP64 data)
  }
  const auto* x0 = reinterpret_cast<const char*>(x.data());
  const auto* x1 = reinterpret_cast<const char*>(x.data() + x.span());
  const auto* y0 = reinterpret_cast<const char*>(y.data());
  const auto* y1 = reinterpret_cast<const char*>(y.data() + y.span());
  return x0 < y1 && y0 < x1;
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
