#pragma once
/// \file plan.hpp
/// The options of one call resolved once against its shape (CallPlan), and the padded sizes
/// every INT8 product uses.  The dispatch makes the plan; the drivers and the workspace
/// layouts read it instead of decoding Options again.

#include <ozaki/impl/common/bounds.hpp>
#include <ozaki/options.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>

namespace ozaki {
namespace Impl {

/// C (M x N) = op(A) (M x K) op(B) (K x N).
struct Shape {
  std::int64_t m = 0, n = 0, k = 0;
};

/// Rows of int8 storage and of INT32 products as stored: M (or N) rounded up to `pad` (16 by
/// default).  With K padded likewise, every INT8 GEMM has m, n, k, lda, ldb, ldc multiples of
/// 16 and 16-byte aligned operands, the form cuBLAS's INT8 tensor-core kernels require (lda,
/// ldb multiples of 4, aligned pointers).  Padding rows and columns hold zeros.
inline std::int64_t padded_rows(std::int64_t m, std::int64_t pad = 16) {
  return (m + pad - 1) / pad * pad;
}

/// K rounded up to the padding (16 bytes by default: the alignment INT8 tensor-core GEMMs
/// need; scheme II pads to what its backend runs fastest with, CallPlan::pad).
inline std::int64_t padded_k(std::int64_t K, std::int64_t pad = 16) {
  return (K + pad - 1) / pad * pad;
}

/// The K block in force: the option (or max_k_block) rounded down to a multiple of 16, so that
/// every chunk of an INT8 GEMM starts 16-byte aligned (cuBLAS's INT8 kernels require 4 and
/// run fastest at 16).
inline std::int64_t resolved_k_block(std::optional<std::int64_t> k_block) {
  return k_block.value_or(max_k_block) / 16 * 16;
}

/// Number of K chunks of an INT8 product of inner length K (padded or not: the K block is a
/// multiple of 16, so ceil(K / block) = ceil(kpad / block)).
inline std::int64_t k_chunks(std::int64_t K, std::optional<std::int64_t> k_block) {
  const std::int64_t block = resolved_k_block(k_block);
  return (K + block - 1) / block;
}

/// Which entries of C a call writes: all of them, or one triangle of a square C, whose other
/// entries it neither reads nor writes (syrk's: level3/syrk.hpp).  Lower: the entries with
/// row >= column; Upper: row <= column.
enum class Triangle { Full, Lower, Upper };

/// The triangle of C^T that holds the same entries.
inline Triangle transposed(Triangle t) {
  return t == Triangle::Lower ? Triangle::Upper : t == Triangle::Upper ? Triangle::Lower : t;
}

/// Workspace limit used when Options::workspace_limit is empty.
constexpr std::int64_t default_workspace_limit = std::int64_t(8) << 30;
inline std::int64_t resolved_workspace_limit(const Options& o) {
  return o.workspace_limit.value_or(default_workspace_limit);
}

/// Slice count assumed when sizing a workspace for an automatic S.
constexpr int assumed_auto_slices = 8;
/// Moduli assumed when sizing a workspace for an automatic moduli count.
constexpr int assumed_auto_moduli = 16;

/// One call's options resolved against its shape.
struct CallPlan {
  /// M, N, K as the driver computes them (N and M swapped for a row-major C, which is
  /// computed as C^T).
  Shape shape;
  /// M, N and K padded to `pad` (a multiple of 16): what the INT8 products run on.
  std::int64_t pad = 16;
  std::int64_t mpad = 0, npad = 0, kpad = 0;
  /// Most terms one INT8 GEMM sums (multiple of 16), and the chunks of a K-long product.
  std::int64_t k_block = 0;
  std::int64_t k_chunks = 0;
  /// Bytes of scratch the call may use (resolved Options::workspace_limit).
  std::int64_t workspace_limit = 0;
  /// The limit is the library's (Options::workspace_limit empty), not the caller's: scheme II
  /// may then exceed it for passes of its fastest width on large M and K (crt/layout.hpp),
  /// and falls back to its narrowest passes when that much scratch cannot be had.
  bool library_limit = false;
  /// What was asked for: Auto may still take native FP64 GEMM.
  Algorithm requested = Algorithm::Auto;
  /// Scheme I: whether S is chosen from the data, and the S given or expected.
  bool auto_slices = true;
  int slices = assumed_auto_slices;
  PairPolicy pairs = PairPolicy::Triangular;
  int pair_count = 0;
  /// Scheme II: whether the moduli count is chosen from the data, and the count given or
  /// expected.
  bool auto_moduli = true;
  int moduli = assumed_auto_moduli;
  CrtScaling crt_scaling = CrtScaling::Auto;
  /// Scheme II: columns of C per pass asked for (multiple of 16), 0 for the library's choice.
  std::int64_t pass_columns = 0;
  /// Scheme II: overlap consecutive passes where the space has a side instance (not while
  /// phases are timed: the phase clock needs them in order).
  bool overlap = false;
  bool time_phases = false;
  /// Scheme II on complex data by Karatsuba (complex/driver.hpp): the operands are rows of
  /// 2K interleaved (real, imaginary) parts, shape.k = 2K for the scaling and its models, and
  /// each modulus takes 3 INT8 products of inner length K (crt/layout.hpp, CrtProducts).
  bool complex_karatsuba = false;
  /// Auto's test of sampled rows ran before the call reached the pipeline (complex data:
  /// before the embedding), so the pipeline does not repeat it.
  bool peaks_sampled = false;
  /// The unit roundoff of the accuracy promised (Options::accuracy): the target of every
  /// count model, and the u of the promise.
  double unit_roundoff = fp64_unit_roundoff;
  /// The componentwise bound an automatic count must keep (docs/design.md §3a): native GEMM's
  /// gamma_(K+2) in that precision, or for complex data (Karatsuba, the embedding) native
  /// complex GEMM's.
  double promise = 0;
  /// Scheme II: the entries of C the call writes (of C as computed, after the transpose of a
  /// row-major C); each pass's INT8 products cover only the rows that meet them.
  Triangle triangle = Triangle::Full;

  /// The pair count for S slices, clamped to S^2 (sizing before S is known).
  int pair_count_for(int S) const { return std::min(pair_count, S * S); }
};

/// The unit roundoff of the accuracy a call on double data promises: FP64's unless FP32's is
/// asked for (float data reaches the pipeline staged to double, single/driver.hpp, with its
/// Options::accuracy resolved to Fp64 or Fp32).
inline double unit_roundoff_of(const Options& o) {
  return o.accuracy == Accuracy::Fp32 ? fp32_unit_roundoff : fp64_unit_roundoff;
}

/// The plan of a call of this shape with these options.  `prepared_slices` > 0: a prepared
/// operand fixes S.  `pad` (a multiple of 16): M, N and K are padded to it.
inline CallPlan make_plan(const Shape& s, const Options& o, int prepared_slices = 0,
                          std::int64_t pad = 16) {
  CallPlan p;
  p.shape = s;
  p.unit_roundoff = unit_roundoff_of(o);
  p.promise = native_componentwise_bound(s.k, p.unit_roundoff);
  p.pad = pad;
  p.mpad = padded_rows(s.m, pad);
  p.npad = padded_rows(s.n, pad);
  p.kpad = padded_k(s.k, pad);
  p.k_block = resolved_k_block(o.experimental.k_block);
  p.k_chunks = k_chunks(p.kpad, o.experimental.k_block);
  p.workspace_limit = resolved_workspace_limit(o);
  p.library_limit = !o.workspace_limit.has_value();
  p.requested = o.algorithm;
  p.auto_slices = !o.slices.has_value() && prepared_slices == 0;
  p.slices = prepared_slices > 0 ? prepared_slices : o.slices.value_or(assumed_auto_slices);
  p.pairs = o.pairs;
  p.pair_count = o.pair_count.value_or(0);  // read under PairPolicy::Count only
  p.auto_moduli = !o.moduli.has_value();
  p.moduli = o.moduli.value_or(assumed_auto_moduli);
  p.crt_scaling = o.crt_scaling;
  // Passes are whole padded blocks; 0: the library's choice.
  p.pass_columns = padded_rows(o.experimental.crt_pass_columns.value_or(0), pad);
  p.overlap = o.experimental.overlap && !o.time_phases;
  p.time_phases = o.time_phases;
  return p;
}

/// How a call reads each operand's rows: through a K-contiguous FP64 copy (GPU spaces, and
/// only where the INT8 estimate reads the rows: copy_to_k_contiguous), strided in place (rows
/// not K-contiguous: tile kernels, for_each_quad), or plainly; and which operands it splits
/// (a prepared operand is neither).
struct OperandPlan {
  bool copy_a = false, copy_b = false;
  bool strided_a = false, strided_b = false;
  bool split_a = true, split_b = true;
  /// Scheme II: K-contiguous copies made for its automatic count's estimate only, in phase-1
  /// scratch (its pass 1 reads strided rows in place; copy_* stay false).
  bool estimate_copy_a = false, estimate_copy_b = false;
  /// Scheme II: pass 1 and the row norms per norm tile of every row (kernels.hpp, norm_tiles;
  /// three partial results per tile instead of scheme I's tile maxima).
  bool crt_norm_tiles = false;
  /// Scheme II: op(B)^T is op(A) itself, the same elements read the same way (A A^T, syrk), so
  /// every quantity of a row (exponent, norms, coverage, and where the bits are the same, the
  /// residues) is op(A)'s: made once and read for both sides.
  bool same_rows = false;
};

}  // namespace Impl
}  // namespace ozaki
