#pragma once
/// \file crt.hpp
/// The serial oracle of Ozaki scheme II (Algorithm::Int8Crt), every step the plainest way:
///   - crt_row_norms(): scale exponents and the exact row norms the fast rule uses;
///   - crt_scale(): the bits each row of op(A) and column of op(B) keeps (fast or accurate
///     rule of ozaki/impl/crt/rules.hpp), to be matched exactly under both rules (the fast
///     rule's row norms are exact integer sums: no order of summation enters);
///   - crt_residues(): the int8 residues, to be matched bit for bit given the same bits;
///   - crt_gemm(): scaled integers, exact residue products, and a reconstruction by Garner's
///     mixed-radix algorithm in long double (the Kokkos path uses weighted sums instead);
///   - crt_error_bound(): the documented bound (docs/design.md §5) against the exact result.
/// Plain C++: the scaled integers are __int128, reductions are exact integer arithmetic.

#include <ozaki/options.hpp>
#include <ozaki/serial/reference.hpp>

#include <cstdint>
#include <vector>

namespace ozaki {
namespace serial {

/// Bits kept per row of op(A) (a) and per column of op(B) (b), and the rule that chose them.
struct CrtScale {
  CrtScaling scaling = CrtScaling::Fast;
  std::vector<int> a, b;
};

/// The scaling of scheme II for L moduli: `scaling` Fast or Accurate (Auto resolves by the
/// peak test of ozaki/impl/crt/rules.hpp).  opA is M x K, opB is K x N; both finite.  Throws
/// std::invalid_argument when a row would keep fewer than crt_min_bits bits.
CrtScale crt_scale(const ConstMatrixRef& opA, const ConstMatrixRef& opB, int L, CrtScaling scaling);

/// The exact row norms of ozaki/impl/crt/rules.hpp ("Row norms") of every row of X (finite):
/// the row's scale exponent, n_r and l1_r, to be matched bit for bit by the Kokkos kernels.
struct CrtRowNorms {
  std::vector<int> exponent;
  std::vector<double> l2, l1;
};
CrtRowNorms crt_row_norms(const ConstMatrixRef& X);

/// q = max_r n_r / l1_r over the nonzero rows (0 for none): the peak ratio of the scaling
/// rules' tests (rules.hpp, crt_peak_class).
double crt_peak_ratio(const CrtRowNorms& norms);

/// The counted fast rule's G = max_mn n_m n_n 2^(s_m+s_n) / Plo_mn (rules.hpp,
/// crt_counted_model) with the window magnitudes p(x) = min(127, floor(|x| 2^(7+s-e))): +Inf
/// where some Plo_mn = 0 under nonzero norms, 0 when every product is an exact zero.  To be matched
/// bit for bit by the Kokkos kernels (opA M x K, opB K x N, finite).
double crt_counted_ratio(const ConstMatrixRef& opA, const ConstMatrixRef& opB);

/// The coverage certificate of ozaki/impl/crt/coverage.hpp for op(A) (M x K) and op(B)
/// (K x N), finite, to be matched bit for bit by the Kokkos kernels: per row of op(A) and of
/// op(B)^T its counts (row-major, coverage_row_counts per row), each operand's G on the grid,
/// the rows' lambdas, and what row_summary takes of them: max l1 / (K lambda), max n / lambda
/// and max 1 / lambda over nonzero rows (+Inf where some such lambda is 0).
struct CrtCoverage {
  std::vector<std::uint32_t> counts_a, counts_b;
  std::vector<double> grid_a, grid_b, lambda_a, lambda_b;
  double factor_a = 0, factor_b = 0, split_a = 0, split_b = 0, inverse_a = 0, inverse_b = 0;
};
CrtCoverage crt_coverage(const ConstMatrixRef& opA, const ConstMatrixRef& opB);

/// round(x 2^(bits - e)), to nearest with ties to even, exactly (|result| < 2^95).
__int128 crt_scaled_integer(double x, int e, int bits);

/// Residues of the rows of X (rows x K): values[r * L * kpad + l * kpad + k] is the symmetric
/// residue of crt_scaled_integer(X(r,k), e_r, bits[r]) modulo crt_moduli[l]; columns
/// [K, kpad) are zero.
struct CrtResidues {
  int moduli = 0;
  std::int64_t rows = 0, k = 0, kpad = 0;
  std::vector<std::int8_t> values;
  std::vector<int> exponents;
  std::int8_t residue(std::int64_t row, int l, std::int64_t col) const {
    return values[(row * moduli + l) * kpad + col];
  }
};

CrtResidues crt_residues(const ConstMatrixRef& X, int L, const std::vector<int>& bits);

/// C = alpha op(A) op(B) + beta C by scheme II with L moduli and the given scaling rule
/// (Fast or Accurate).  Returns the scaling used.  A and B must be finite.
CrtScale crt_gemm(char transA, char transB, double alpha, const ConstMatrixRef& A,
                  const ConstMatrixRef& B, double beta, const MatrixRef& C, int L,
                  CrtScaling scaling);

/// Per-element bound on |C_scheme_II - (alpha op(A) op(B) + beta C0)| for the given bits,
/// each lowered by `slack_bits` (a result computed with bits up to that many higher or lower
/// per row is then covered: the fast rule's bits may differ by one).  M x N, column-major.
std::vector<double> crt_error_bound(char transA, char transB, double alpha, const ConstMatrixRef& A,
                                    const ConstMatrixRef& B, double beta, const ConstMatrixRef& C0,
                                    const CrtScale& scale, int slack_bits);

}  // namespace serial
}  // namespace ozaki
