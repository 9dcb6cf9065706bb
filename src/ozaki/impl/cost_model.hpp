#pragma once
/// \file cost_model.hpp
/// Algorithm::Auto's cost models, in units of one native FP64 GEMM of the same shape, and the
/// one rule every Auto decision applies: native FP64 GEMM runs where a scheme's modelled cost is
/// one native GEMM or more.  Plain C++ (no Kokkos): auto.hpp asks the backend for the rates.

#include <ozaki/impl/common/plan.hpp>
#include <ozaki/impl/slices/schedule.hpp>
#include <ozaki/options.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace ozaki {
namespace Impl {

/// What a device reports about itself (backend.hpp): 0 where unknown.
struct DeviceRates {
  /// INT8 (TN) over FP64 GEMM throughput.
  double int8_over_fp64 = 0;
  /// FP64 GEMM flops per byte of achievable memory bandwidth (machine balance).
  double fp64_flops_per_byte = 0;
  /// FP32 (SGEMM, not TF32) over FP64 GEMM throughput.
  double fp32_over_fp64 = 0;
};

/// What a GPU reports of its peaks: its multiprocessors and their clock, its memory clock and
/// bus width (cudaDeviceProp and device attributes; 0 where unknown).
struct GpuPeaks {
  int multiprocessors = 0;
  double clock_khz = 0;
  double memory_clock_khz = 0;
  int memory_bus_bits = 0;
  /// FP64 tensor-core flops a second: 256 per multiprocessor and clock on sm_90.
  double fp64_flops() const { return 256.0 * multiprocessors * clock_khz * 1e3; }
  /// Bytes a second: two transfers per memory clock (double data rate) across the bus.
  double memory_bytes() const { return 2 * memory_clock_khz * 1e3 * memory_bus_bits / 8; }
};

/// The H200 the sm_90 rates were measured on (docs/benchmarks.md, "Rates the cost model uses"),
/// as it reports itself: 132 multiprocessors at 1980 MHz, HBM3e at 3201 MHz on 6144 bits.
constexpr GpuPeaks h200_peaks() { return {132, 1.98e6, 3.201e6, 6144}; }

/// cublasDgemm's rate over the bandwidth streaming kernels reach, measured on that H200.
constexpr double h200_fp64_flops_per_byte = 56.6 / 4.0;

/// An sm_90 part's FP64 balance: the H200's measured balance, scaled by the part's FP64 peak
/// over its memory peak against the H200's.  DGEMM and the streaming kernels reach the same
/// fractions of their peaks on every sm_90 part (one architecture), so only the peaks move it:
/// on an H100's HBM3 the memory-bound phases of scheme II weigh about half as much again as on
/// the H200's HBM3e (docs/design.md §5.6).
inline double sm90_fp64_flops_per_byte(const GpuPeaks& part) {
  const GpuPeaks h200 = h200_peaks();
  if (!(part.fp64_flops() > 0 && part.memory_bytes() > 0)) return h200_fp64_flops_per_byte;
  return h200_fp64_flops_per_byte * (part.fp64_flops() / h200.fp64_flops()) *
         (h200.memory_bytes() / part.memory_bytes());
}

/// Scheme I: `products` INT8 GEMMs plus about 10% for split and recombination
/// (docs/benchmarks.md).  0 on a device of unknown rates: no preference for native.
inline double slices_relative_cost(const DeviceRates& rates, int products) {
  return rates.int8_over_fp64 > 0 ? 1.1 * products / rates.int8_over_fp64 : 0;
}

/// INT8 GEMMs of scheme I with S slices and a pair policy (pair count clamped to S^2).
inline int slices_products(int S, PairPolicy policy, int pair_count) {
  return selected_pair_count(S, policy, std::min(pair_count, S * S));
}

/// Residue kernels' cost per element and modulus beyond their bytes, in FP64 GEMM flops,
/// calibrated on sm_90 GPU timelines: with the bytes term, about 21 flops per element and
/// modulus account for an 8192^3 call's memory-bound phases; 30 keeps a margin
/// (docs/design.md §5.6).
constexpr double crt_residue_flops = 30;
/// A call's fixed cost (about 25 kernels and a few host synchronisations), in FP64 GEMM flops:
/// its time on sm_90 at cublasDgemm's rate there (docs/benchmarks.md, "Rates the cost model
/// uses").
constexpr double crt_fixed_flops = 1.4e10;

/// Scheme II with L moduli and `products` INT8 GEMMs (L plus the estimate's):
///     1.05 products / int8_over_fp64          the INT8 GEMMs (5% for padding and launches)
///   + balance M N (4L + 16) / 2MNK            INT32 products read back, C read and written
///   + balance (M + N) K (8 + 2L) / 2MNK       operands read, residues written and read
///   + crt_residue_flops (M + N) K L / 2MNK    residue arithmetic
///   + crt_fixed_flops / 2MNK
/// with balance = fp64_flops_per_byte.  Calibrated against the sm_90 measurements behind
/// docs/benchmarks.md (1024^3 to 16384^3 and the skinny shapes, within about 20%; docs/design.md
/// §5.6).  0 on a device of unknown rates.
inline double crt_relative_cost(const DeviceRates& rates, int products, int L, const Shape& s) {
  if (!(rates.int8_over_fp64 > 0)) return 0;
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n),
               k = static_cast<double>(s.k);
  const double flops = 2 * m * n * k;
  const double bytes = (m + n) * k * (8 + 2 * L) + m * n * (4 * L + 16);
  return 1.05 * products / rates.int8_over_fp64 + rates.fp64_flops_per_byte * bytes / flops +
         crt_residue_flops * (m + n) * k * L / flops + crt_fixed_flops / flops;
}

/// Complex scheme II by Karatsuba (crt/karatsuba.hpp) with L moduli and `products`
/// INT8 GEMMs of M x N x K (3 L), relative to native ZGEMM (8 MNK flops at the FP64 GEMM rate);
/// `s` is the plan's shape, whose k is 2K (the embedded rows):
///     1.05 products 2MNK / (8MNK int8_over_fp64)  the INT8 GEMMs
///   + balance M N (12 L + 32) / 8MNK             three INT32 products per modulus, C read and
///                                                written (16 bytes each)
///   + balance (M + N) K (48 + 6 L) / 8MNK        operands read, embedded and read again;
///                                                three residues written and read
///   + crt_residue_flops (M + N) 2K L / 8MNK      residue arithmetic of both parts
///   + crt_fixed_flops / 8MNK
inline double crt_karatsuba_relative_cost(const DeviceRates& rates, int products, int L,
                                          const Shape& s) {
  if (!(rates.int8_over_fp64 > 0)) return 0;
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n),
               k = static_cast<double>(s.k) / 2;
  const double flops = 8 * m * n * k;
  const double bytes = m * n * (12.0 * L + 32) + (m + n) * k * (48 + 6.0 * L);
  return 1.05 * products / (4 * rates.int8_over_fp64) + rates.fp64_flops_per_byte * bytes / flops +
         crt_residue_flops * (m + n) * 2 * k * L / flops + crt_fixed_flops / flops;
}

/// Scheme II's cost for a plan: Karatsuba's on complex plans (3 products per modulus),
/// crt_relative_cost's otherwise.  `moduli_products`: INT8 GEMMs of the moduli (L), plus
/// `extra` of the estimate.
inline double crt_plan_cost(const DeviceRates& rates, const CallPlan& plan, int L, int extra = 0) {
  return plan.complex_karatsuba ? crt_karatsuba_relative_cost(rates, 3 * L + extra, L, plan.shape)
                                : crt_relative_cost(rates, L + extra, L, plan.shape);
}

/// Scheme II for `items` real products of one plan planned as one batch (batched/crt_batch.hpp):
/// each product's INT8 GEMMs and memory-bound work as crt_relative_cost counts them, the fixed
/// cost (the wait after pass 1 and the host's work around it) once for the whole batch, in
/// units of one native GEMM of the product's shape.
inline double crt_batch_cost(const DeviceRates& rates, const CallPlan& plan, int L,
                             std::int64_t items) {
  const double per_call = crt_relative_cost(rates, L, L, plan.shape);
  if (!(per_call > 0) || items < 2) return per_call;
  const double flops = 2.0 * static_cast<double>(plan.shape.m) * static_cast<double>(plan.shape.n) *
                       static_cast<double>(plan.shape.k);
  return per_call - (1 - 1.0 / static_cast<double>(items)) * crt_fixed_flops / flops;
}

/// The rule: native FP64 GEMM is the faster choice where a modelled cost is 1 or more.
inline bool native_is_faster(double relative_cost) { return relative_cost >= 1; }

/// Appends the decimal digits of v to `text`, from a buffer on the stack: no temporary string.
inline std::string& append_integer(std::string& text, long long v) {
  char digits[24];
  int n = 0;
  unsigned long long u =
      v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) text.push_back('-');
  while (n > 0) text.push_back(digits[--n]);
  return text;
}

/// Appends x with two decimals (x >= 0), formatted from integers: std::to_string(double) goes
/// through printf's "%f" (multi-precision digit generation), which perf showed as the largest
/// part of Auto's host time where it ends in native FP64 GEMM (call_overhead; the benchmarks
/// diary in docs/history/, "native FP64 GEMM on the caller's stream, Auto's host time").
inline std::string& append_two_decimals(std::string& text, double x) {
  if (!(x >= 0 && x < 1e15)) return text.append(std::to_string(x));  // Inf, NaN, huge
  const auto hundredths = static_cast<long long>(x * 100 + 0.5);
  const long long fraction = hundredths % 100;
  append_integer(text, hundredths / 100).append(fraction < 10 ? ".0" : ".");
  return append_integer(text, fraction);
}

/// x with two decimals (append_two_decimals).
inline std::string two_decimals(double x) {
  std::string text;
  return append_two_decimals(text, x);
}

/// The Report's reason when Auto runs native: what the scheme would need and its modelled cost
/// (`precision`: the native GEMM's, FP64 unless FP32 data compared with native FP32 GEMM).
/// `what` is what_prefix, then `count` where it is not negative, then what_suffix.  Built in
/// one allocation: a declined call's host time is mostly its decision, and every temporary
/// string was an allocation of its own.
inline std::string native_faster_reason(const char* what_prefix, int count, const char* what_suffix,
                                        double relative_cost, const char* precision = "FP64") {
  std::string reason;
  reason.reserve(96 + std::strlen(what_prefix) + std::strlen(what_suffix) + std::strlen(precision));
  reason.append("Auto: native ").append(precision).append(" GEMM is faster here (");
  reason.append(what_prefix);
  if (count >= 0) append_integer(reason, count);
  reason.append(what_suffix).append(": modelled at ");
  append_two_decimals(reason, relative_cost).append(" native GEMMs)");
  return reason;
}
inline std::string native_faster_reason(const char* what, double relative_cost,
                                        const char* precision = "FP64") {
  return native_faster_reason(what, -1, "", relative_cost, precision);
}
inline std::string native_faster_reason(const std::string& what, double relative_cost,
                                        const char* precision = "FP64") {
  return native_faster_reason(what.c_str(), relative_cost, precision);
}

/// The native GEMM Auto compares with: FP64 GEMM, or for FP32 data FP32 GEMM, whose time is
/// `time` native FP64 GEMMs of the same shape (1 / DeviceRates::fp32_over_fp64).
struct NativeYardstick {
  double time = 1;
  const char* precision = "FP64";
};

}  // namespace Impl
}  // namespace ozaki
