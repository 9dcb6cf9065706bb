#pragma once
/// \file options.hpp
/// What the caller can ask of ozaki::gemm, and what it reports back.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace ozaki {

/// Which multiplication produces C.
enum class Algorithm {
  /// The accuracy Options::accuracy names (native GEMM's in C's precision by default), or the
  /// slice or moduli count given, by the fastest method on this device: Int8Crt, Int8Slices or
  /// native GEMM, from a cost model of the device's INT8, FP64 and FP32 rates (docs/design.md
  /// §5.6, §9).  On host spaces that is native GEMM (the portable INT8 kernel is slower than
  /// the BLAS there); to check a GPU result on the host by equality, pass the GPU call's
  /// Report::options instead.
  Auto,
  /// Ozaki scheme I: FP64 split into int8 slices, INT8 x INT8 -> INT32 products, FP64 sum.
  Int8Slices,
  /// Ozaki scheme II: rows of op(A) and columns of op(B) scaled to integers, reduced to int8
  /// residues modulo Options::moduli pairwise coprime moduli, one INT8 x INT8 -> INT32
  /// product per modulus, and the Chinese remainder theorem back to FP64 (docs/design.md).
  Int8Crt,
  /// Plain FP64 GEMM through KokkosBlas::gemm.
  Native,
  /// cuBLAS's own FP64 emulation (cublasDgemm in CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH, eager
  /// strategy): min(8S, 55) mantissa bits for a given S, cuBLAS's dynamic choice for an
  /// automatic S.  CUDA only; elsewhere, or when its workspace cannot be had, Int8Slices runs
  /// and the Report says why.
  CublasEmulation,
  /// Only ever reported: no product was needed (M, N or K is 0, or alpha is 0).
  None,
};

/// Which slice pairs (i, j), 0 <= i, j < S, are multiplied.  Slice i of A has weight
/// 2^(-8i) relative to slice 0, so pair (i, j) has weight 2^(-8(i+j)).
enum class PairPolicy {
  /// i + j < S: S(S+1)/2 pairs.  The dropped pairs are below the split's own rounding error.
  Triangular,
  /// All S^2 pairs: the exact product of the two split matrices.
  Full,
  /// The first Options::pair_count pairs in order of weight (by i+j, then by i).
  Count,
};

/// How Int8Crt chooses the integer scaling of each row of op(A) and column of op(B).  The
/// product of the scaled integers must stay below half the moduli's product; the tighter the
/// bound on it, the more bits each element keeps.
enum class CrtScaling {
  /// From a cheap test on the row norms (peaked rows: 2-norm far above the 1-norm over
  /// sqrt(K), wide exponent ranges).  With a fixed moduli count: Accurate for peaked rows, Fast
  /// elsewhere.  With an automatic count: Fast, and for wide ranges the count from an INT8
  /// lower bound of |A||B| (the counted fast rule, docs/design.md §5.5); Accurate only where
  /// that bound cannot see some entry.
  Auto,
  /// Cauchy-Schwarz: |C'_mn| <= ||a'_m||_2 ||b'_n||_2, from row norms alone.
  Fast,
  /// A per-entry bound of |A||B| from one extra INT8 product of 7-bit magnitudes rounded up:
  /// wide-range inputs keep far more bits than under Cauchy-Schwarz.
  Accurate,
};

/// The componentwise accuracy a call promises, relative to |A||B|: native GEMM's bound in
/// that precision, |C - AB|_ij <= gamma_(K+2) (|A||B|)_ij with gamma_n = n u / (1 - n u)
/// (docs/design.md §3a).  Automatic counts take as few slices or moduli as the promise allows.
enum class Accuracy {
  /// Native GEMM's in C's precision: FP64 GEMM's (u = 2^-53) for double and
  /// Kokkos::complex<double> C, FP32 GEMM's (u = 2^-24) for float and Kokkos::complex<float>.
  MatchNative,
  /// Native FP64 GEMM's whatever C's precision: float data multiplied to FP64 accuracy (for
  /// mixed-precision refinement), the result rounded once to C's precision.
  Fp64,
  /// Native FP32 GEMM's whatever C's precision: double data multiplied with the counts FP32
  /// accuracy needs (about half the moduli), the result kept in double.
  Fp32,
};

/// Options::moduli value meaning "as many as the accuracy asked for needs" (an empty count;
/// `o.moduli = auto_moduli` and `o.moduli == auto_moduli` read as before).
inline constexpr std::nullopt_t auto_moduli = std::nullopt;
/// Most moduli Int8Crt accepts (about 184 bits of integer range).
constexpr int max_moduli = 24;
/// Fewest moduli Int8Crt accepts.
constexpr int min_moduli = 2;
/// The moduli of Int8Crt, largest first; Options::moduli = L uses the first L.  Pairwise
/// coprime (256 = 2^8, 255 = 3*5*17, 253 = 11*23, 247 = 13*19, the rest prime) and at most
/// 256, so that every residue has a symmetric representative in int8: [-128, 127] for 256,
/// [-(m-1)/2, (m-1)/2] for the odd ones.  A product of two residues is then at most 2^14 in
/// magnitude, and INT32 sums of up to max_k_block of them cannot overflow.
constexpr int crt_moduli[max_moduli] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 211,
                                        199, 197, 193, 191, 181, 179, 173, 167, 163, 157, 151, 149};

/// Options::slices value meaning "as many as the accuracy asked for needs" (an empty count).
inline constexpr std::nullopt_t auto_slices = std::nullopt;
/// Largest slice count ozaki accepts: 8S-1 = 127 bits, far beyond any FP64 need.
constexpr int max_slices = 16;
/// Most int8 x int8 products one INT32 accumulator may sum: every product has magnitude
/// at most 128*128 = 2^14, and 2^14 * 131071 < 2^31.
constexpr std::int64_t max_k_block = 131071;

namespace Experimental {

/// Complex Int8Crt: how the INT8 products of one modulus are formed (the value is their count).
enum class ComplexProducts {
  /// Karatsuba on the residues, Re = ArBr - AiBi and Im = (Ar + Ai)(Br + Bi) - ArBr - AiBi,
  /// each product exact modulo the modulus; it takes the fast scaling rule (a call whose data
  /// needs the accurate rule takes the embedding).
  Karatsuba = 3,
  /// The real GEMM of the complex embedding, [Ar -Ai; Ai Ar] [Br; Bi], under either rule.
  Embedding = 4,
};

/// Knobs for tuning, the tests and the cuBLAS interposer: NOT part of the stable API.  They
/// may change or go away in any release; a user's call needs none of them (the defaults are
/// the library's choices, and every setting gives the same bits).
struct Tuning {
  /// Most terms one INT8 GEMM sums into INT32 (its inner length, slices stacked along K
  /// counted), in [16, max_k_block]; rounded down to a multiple of 16.  Empty: max_k_block.
  std::optional<std::int64_t> k_block;
  /// Int8Crt: columns of C per pass of INT8 products, at least 1 (rounded up to the backend's
  /// padding: 16, or 128 on cuBLAS).  Empty: the library's choice (docs/design.md §6).  A pass
  /// wider than the workspace limit allows is narrowed to what fits.
  std::optional<std::int64_t> crt_pass_columns;
  /// Int8Crt: overlap each pass's INT8 products with the next pass's residues and the previous
  /// pass's reconstruction, on a second stream of the library's own (CUDA; elsewhere the
  /// passes run in order).  The same bits either way.  Off by default: it gains nothing
  /// measurable where the INT8 products run at the card's power limit, since concurrent
  /// memory-bound kernels take from the same power budget (the benchmarks diary in
  /// docs/history/ has the measurement), and it takes two sets of pass scratch (where they do
  /// not fit the workspace limit, the passes run in order).  Off while Options::time_phases
  /// is on.
  bool overlap = false;
  /// Complex Int8Crt: INT8 products per modulus.  Both forms give the same bits where both
  /// apply (docs/design.md §8).
  ComplexProducts complex_products = ComplexProducts::Karatsuba;
  /// A call on a stream being captured into a CUDA graph runs scheme II inside the graph, its
  /// count from the shape and its verdict on the device (docs/design.md §7, "Scheme II inside
  /// a graph"), where Auto or Int8Crt would take it; off: such calls run native FP64 GEMM on
  /// the stream.  On CUDA the first eager INT8 call on a device then makes what a captured
  /// call cannot make during its capture (two streams and two cuBLAS handles with 32 MiB
  /// workspaces each, kept for the process's life).  Host spaces' emulation of a capture
  /// follows it too.
  bool graph_products = true;
  /// trsm, trmm, syrk and herk: the rows of the diagonal blocks their recursion stops at (at least
  /// 1).  Empty: the library's choice (level3/common.hpp).  The same bound either way; other
  /// bits.
  std::optional<std::int64_t> level3_leaf;
  /// Where set, what "native FP64 GEMM" means for this call: called instead of
  /// KokkosBlas::gemm whenever the call runs native (Algorithm::Native, Auto's choice, the
  /// NaN/Inf and out-of-memory fallbacks), and it must compute exactly this call's
  /// alpha op(A) op(B) + beta C on the call's execution space instance.  The cuBLAS
  /// interposer passes the caller's own cublasDgemm here, so that a call Auto sends to native
  /// is the caller's call unchanged.  Not kept in Report::options.
  std::function<void()> native_gemm;
};

}  // namespace Experimental

struct Options {
  Algorithm algorithm = Algorithm::Auto;
  /// Int8Slices (and CublasEmulation): slice count S in [1, max_slices].  Empty (auto_slices):
  /// as many as FP64-equivalent accuracy needs.
  std::optional<int> slices;
  PairPolicy pairs = PairPolicy::Triangular;
  /// Number of pairs, in [1, S^2]: required with PairPolicy::Count, ignored otherwise.
  std::optional<int> pair_count;
  /// Int8Crt: number of moduli in [min_moduli, max_moduli].  Empty (auto_moduli): as many as
  /// FP64-equivalent accuracy needs.
  std::optional<int> moduli;
  /// Int8Crt: how rows and columns are scaled to integers.
  CrtScaling crt_scaling = CrtScaling::Auto;
  /// The accuracy automatic counts and Auto aim at (a fixed count gets what it gets, and the
  /// Report says what that is).
  Accuracy accuracy = Accuracy::MatchNative;
  /// Bytes of workspace a call may use, at least 1.  Empty: the library's choice, 8 GiB.  It
  /// bounds how many INT32 products are held at once; a call needs at least its slices and one
  /// product, whatever the limit.  Under the library's choice, Int8Crt on M and K of at least
  /// 8192 takes passes of 2048 columns even where they need more than 8 GiB (32768^3: 19 GiB,
  /// complex 16384^3: 25 GiB; 1024-column passes, the least an explicit limit gets, make such
  /// calls slower: docs/benchmarks.md, "DGEMM"), and 1024-column passes where that much cannot
  /// be allocated (Report::reason).
  std::optional<std::int64_t> workspace_limit;
  /// Fence between phases and report their times (Report::seconds_*).  For profiling: the
  /// fences cost a little.
  bool time_phases = false;
  /// Experimental knobs for tuning, the tests and the cuBLAS interposer: not part of the
  /// stable API, and no user's call needs them (see Experimental::Tuning).
  Experimental::Tuning experimental;
};

namespace Impl {
/// names[e] for an enum whose enumerators are 0, 1, ... in declaration order; "?" otherwise.
template <class Enum, std::size_t N>
const char* enum_name(Enum e, const char* const (&names)[N]) {
  const auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : "?";
}
}  // namespace Impl

inline const char* to_string(Algorithm a) {
  static const char* const names[] = {"Auto",   "Int8Slices",      "Int8Crt",
                                      "Native", "CublasEmulation", "None"};
  return Impl::enum_name(a, names);
}

inline const char* to_string(CrtScaling s) {
  static const char* const names[] = {"auto", "fast", "accurate"};
  return Impl::enum_name(s, names);
}

inline const char* to_string(Accuracy a) {
  static const char* const names[] = {"match-native", "fp64", "fp32"};
  return Impl::enum_name(a, names);
}

inline const char* to_string(PairPolicy p) {
  static const char* const names[] = {"triangular", "full", "count"};
  return Impl::enum_name(p, names);
}

}  // namespace ozaki
