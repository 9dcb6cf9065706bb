#pragma once
/// \file int8_gemm_onednn.hpp
/// The oneDNN backend (backends/onednn): INT8 products on host execution spaces through
/// oneDNN's s8 x s8 -> s32 GEMM, where this CPU computes it exactly; the portable kernels of
/// backend.hpp elsewhere.
///
/// Exactness.  oneDNN's s8s8s32 GEMM multiplies u8 x s8 pairs (it shifts A by 128 and
/// subtracts 128 times B's column sums).  With VNNI (vpdpbusd, AVX-512 or AVX2) or AMX the
/// four-term dot products accumulate straight into INT32 lanes, wrapping modulo 2^32, so the
/// result is the exact integer product whenever that fits in INT32, which the caller
/// guarantees (length <= max_k_block: |sum| <= 2^14 131071 < 2^31).  Without VNNI its AVX2
/// and AVX-512 paths sum pairs of u8 x s8 products in saturating 16-bit lanes (vpmaddubsw):
/// 255 * 127 * 2 > 2^15, so a product can come out wrong.  The backend asks oneDNN which
/// instruction set it dispatches to and takes the portable kernel unless it has VNNI; the
/// tests compare both paths with the oracle bit for bit, extreme operands and the longest
/// chunk included.

#include <ozaki/impl/backend.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace ozaki {
namespace Impl {
namespace onednn {

/// Whether oneDNN's s8s8s32 GEMM is exact on this CPU (VNNI or AMX: see above), decided once,
/// and not turned off by Experimental::TestHooks::onednn_off (the portable kernel then runs,
/// for comparisons).
bool exact_int8_here();

/// exact_int8_here(), and the process is not yet tearing oneDNN down at exit.
bool usable_now();

/// oneDNN's name of the instruction set it dispatches to, e.g. "avx512_core_amx".
std::string instruction_set();

/// c[m + n ldc] = sum_l a[m lda + l] b[n ldb + l] through dnnl_gemm_s8s8s32 (usable_now()
/// must hold).  Throws BackendError on a oneDNN error status.
void int8_gemm(const Int8GemmProblem& p);

}  // namespace onednn

/// Host spaces: oneDNN where it is exact, the portable path of backend.hpp otherwise.
template <class HostSpace>
struct OnednnInt8Gemm {
  using Portable = Int8Gemm<HostSpace, false>;
  static const char* name() { return onednn::usable_now() ? "oneDNN" : Portable::name(); }
  static constexpr std::int64_t padding = 16;
  static constexpr bool batched = false;
  static void run(const HostSpace& space, const Int8GemmProblem& p) {
    if (p.rows_a == 0 || p.rows_b == 0) return;
    if (!onednn::usable_now()) {
      Portable::run(space, p);
      return;
    }
    space.fence();  // the operands were written by kernels on `space`
    onednn::int8_gemm(p);
  }
  static bool supported(const HostSpace&, std::string&) { return true; }
  static bool torn_down(std::string&) { return false; }
  /// INT8 over FP64 GEMM throughput: oneDNN's INT8 rate over OpenBLAS's DGEMM rate at 2048^3,
  /// as measured on the 2-core host with AMX (docs/benchmarks.md, "CPUs").  The ratio is below
  /// scheme II's 14 products, so they alone cost more than one DGEMM and Auto runs native FP64
  /// on host spaces, the faster method there (the split kernels only add to the INT8 path).
  static double int8_over_fp64_throughput(const HostSpace& space) {
    return onednn::usable_now() ? 2.3 / 0.182 : Portable::int8_over_fp64_throughput(space);
  }
  static double fp64_flops_per_byte(const HostSpace& space) {
    return Portable::fp64_flops_per_byte(space);
  }
};

#if defined(KOKKOS_ENABLE_SERIAL)
template <>
struct Int8GemmBackendAvail<Kokkos::Serial> : std::true_type {};
template <>
struct Int8Gemm<Kokkos::Serial, true> : OnednnInt8Gemm<Kokkos::Serial> {};
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
template <>
struct Int8GemmBackendAvail<Kokkos::OpenMP> : std::true_type {};
template <>
struct Int8Gemm<Kokkos::OpenMP, true> : OnednnInt8Gemm<Kokkos::OpenMP> {};
#endif

}  // namespace Impl
}  // namespace ozaki
