#pragma once
/// \file report.hpp
/// ozaki::Report: what one ozaki::gemm call did.

#include <ozaki/options.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace ozaki {

/// What one ozaki::gemm call did.
struct Report {
  /// The algorithm that produced C; never Auto.
  Algorithm algorithm = Algorithm::None;
  /// The options that replay this computation: the caller's, with the algorithm, the counts
  /// and the scaling rule this call chose made explicit.  The same inputs with these options
  /// give bitwise the same C on every backend (Serial, OpenMP, Cuda; docs/design.md §7,
  /// "Same bits on every backend"), except for CublasEmulation, which only cuBLAS runs.
  Options options;
  /// Where the products ran: "portable" (ozaki's Kokkos kernel) or "cuBLAS"; for native FP64
  /// GEMM "cuBLAS" (the CUDA backend's cublasDgemm on the caller's stream) or "KokkosBlas"
  /// (every other space).
  std::string backend;
  /// Slice count used (Int8Slices), 0 otherwise.
  int slices = 0;
  /// Moduli used (Int8Crt), 0 otherwise.
  int moduli = 0;
  /// Int8Crt: the scaling used (Fast or Accurate; never Auto).
  CrtScaling crt_scaling = CrtScaling::Auto;
  /// Int8Crt: the fewest bits any row of op(A) or column of op(B) kept below its largest
  /// element (the split's worst relative resolution is 2^-crt_bits of that element).
  int crt_bits = 0;
  /// Complex Int8Crt: INT8 products per modulus (3: Karatsuba, 4: the real embedding); 0
  /// otherwise.
  int complex_products = 0;
  /// Slice pairs (i, j) whose product was computed.
  int slice_pairs = 0;
  /// INT8 GEMM calls: pairs of equal weight are stacked along K into one call, and a call
  /// is cut into K chunks of at most k_block.
  int int8_gemms = 0;
  /// FP64 passes over C: more than 1 when the INT32 products do not all fit the workspace
  /// limit at once.
  int recombine_passes = 0;
  /// Int8Crt: whether consecutive passes overlapped (Options::experimental.overlap, on a space with
  /// a side instance, with at least 2 passes).
  bool overlapped = false;
  /// Int8Crt: whether the backend reduced the INT8 products modulo the moduli in the GEMM
  /// itself (CUDA on compute capability 9.0: 1 byte per entry and modulus for the
  /// reconstruction instead of an INT32 product; the same bits).
  bool residue_products = false;
  /// Int8Crt: op(B)^T was op(A) itself (A A^T, syrk; or its conjugate, A A^H, herk): its rows'
  /// scaling was made once for both operands, and under the fast rules (not for herk) their
  /// residues as well.  The same bits as two separate operands holding the same values.
  bool shared_operand = false;
  /// Batched and grouped calls: how many products were planned as one batch (scheme II: one
  /// wait for all their scaling and one moduli count, docs/design.md §13); 0 where each
  /// product ran as its own call.
  int batched_products = 0;
  /// Inner length of the longest INT8 GEMM call.
  std::int64_t k_chunk = 0;
  /// With an automatic slice count (or moduli count): the modelled typical error relative to
  /// |A||B| at the chosen S (docs/design.md, "Choosing S"); 0 when S was given.
  double modeled_error = 0;
  /// The componentwise bound this call guarantees, relative to |alpha| |op(A)||op(B)|:
  ///     |C - (alpha op(A) op(B) + beta C0)|_mn
  ///         <= error_bound |alpha| (|op(A)||op(B)|)_mn + gamma_2 |beta C0|_mn
  /// (plus a few units of 2^-1074 where C is subnormal), docs/design.md §3a.  Native FP64 GEMM's
  /// own is gamma_(K+2) = (K+2) u / (1 - (K+2) u); every automatic count keeps error_bound at
  /// or below it (or the call runs native FP64 GEMM and says why).  0 where no bound was
  /// computed: an explicit slice count, CublasEmulation, or no product.
  double error_bound = 0;
  /// With an automatic slice count: INT8 GEMM calls spent estimating it (1 for data of one
  /// magnitude, up to 9 for very wide exponent ranges).  Int8Crt: the accurate rule's bound
  /// product and estimate, or the counted fast rule's window product (one per K chunk; none
  /// where Auto took the count of sampled entries).
  int estimate_int8_gemms = 0;
  /// True when the requested algorithm was replaced by another one (see reason).
  bool fallback = false;
  /// Why the fallback happened, why no product was needed, or why scheme II's passes are
  /// narrower than the library's choice (its scratch could not be allocated); empty otherwise.
  std::string reason;
  /// INT8 multiply-adds x 2 of all INT8 GEMM calls (the estimate's included).
  double int8_operations = 0;
  /// Bytes of scratch the call used (the largest of its phases): a Workspace of this size
  /// serves the same call without growing.  The buffer it came from (the Workspace's, or the
  /// library's for a call without one) may hold more.
  std::size_t workspace_bytes = 0;
  /// True when this call allocated scratch: a Workspace or the library's buffer had to grow.
  bool scratch_allocated = false;
  /// Host seconds from the call's start until its algorithm and count were fixed: Auto's
  /// choice, and the automatic count's estimate where one ran (Auto's decision cost when it
  /// then took native FP64 GEMM).  The device work is not waited for, except where a value
  /// is read back (the estimates read back a few bytes).
  double seconds_decision = 0;
  /// With Options::time_phases: seconds in each phase (estimate = choosing S automatically;
  /// split = scale exponents and slices; int8 = INT8 GEMMs; recombine = FP64 passes over C).
  double seconds_estimate = 0, seconds_split = 0, seconds_int8 = 0, seconds_recombine = 0;
};

}  // namespace ozaki
