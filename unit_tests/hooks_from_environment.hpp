#pragma once
// The test hooks (ozaki/test_hooks.hpp) from the environment variables of docs/building.md,
// for the mains of the test executables and the perf tools: the library itself reads none.
// ctest's ENVIRONMENT (OZAKI_POISON_SCRATCH=1 for every test) and the documented benchmark
// commands (OZAKI_CUBLAS_INT8=lt ozaki_bench ...) set them this way.
#include <ozaki/test_hooks.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ozaki_test {

/// The hooks in force, changed where a variable is set:
///   OZAKI_POISON_SCRATCH=1                       poison_scratch
///   OZAKI_FAIL_SCRATCH_ABOVE=BYTES               fail_scratch_above
///   OZAKI_ONEDNN=off (or 0)                      onednn_off
///   OZAKI_CUBLAS_INT8=gemmex|lt|log|batched|ltbatched   cublas_int8_path
///   OZAKI_RESIDUE_PRODUCTS=0                     residue_products_off
///   OZAKI_FUSED_QUANTIZED=0                      fused_quantized_off
///   OZAKI_PRODUCT_PAIRS=0                        product_pairs_off
///   OZAKI_FP8_KERNELS=0                          fp8_kernels_off
/// A value not understood is reported on stderr and ignored.
inline ozaki::Experimental::TestHooks hooks_from_environment() {
  using ozaki::Experimental::CublasInt8Path;
  ozaki::Experimental::TestHooks h = ozaki::Experimental::test_hooks();
  auto value = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v != nullptr && v[0] != '\0' ? v : nullptr;
  };
  auto ignored = [](const char* name, const std::string& v, const char* expected) {
    std::fprintf(stderr, "%s=%s ignored (expected %s)\n", name, v.c_str(), expected);
  };
  if (const char* v = value("OZAKI_POISON_SCRATCH")) h.poison_scratch = v[0] == '1';
  if (const char* v = value("OZAKI_FAIL_SCRATCH_ABOVE")) {
    char* end = nullptr;
    const long long bytes = std::strtoll(v, &end, 10);
    if (*end == '\0' && bytes >= 0) {
      h.fail_scratch_above = static_cast<std::int64_t>(bytes);
    } else {
      ignored("OZAKI_FAIL_SCRATCH_ABOVE", v, "a byte count");
    }
  }
  if (const char* v = value("OZAKI_ONEDNN")) {
    const std::string s = v;
    h.onednn_off = s == "off" || s == "0";
  }
  if (const char* v = value("OZAKI_CUBLAS_INT8")) {
    const std::string s = v;
    if (s == "gemmex") {
      h.cublas_int8_path = CublasInt8Path::GemmEx;
    } else if (s == "lt") {
      h.cublas_int8_path = CublasInt8Path::Lt;
    } else if (s == "log") {
      h.cublas_int8_path = CublasInt8Path::LtLogged;
    } else if (s == "batched") {
      h.cublas_int8_path = CublasInt8Path::Batched;
    } else if (s == "ltbatched") {
      h.cublas_int8_path = CublasInt8Path::LtBatched;
    } else {
      ignored("OZAKI_CUBLAS_INT8", s, "gemmex, lt, log, batched or ltbatched");
    }
  }
  if (const char* v = value("OZAKI_RESIDUE_PRODUCTS")) {
    h.residue_products_off = std::string(v) == "0";
  }
  if (const char* v = value("OZAKI_FUSED_QUANTIZED")) {
    h.fused_quantized_off = std::string(v) == "0";
  }
  if (const char* v = value("OZAKI_PRODUCT_PAIRS")) {
    h.product_pairs_off = std::string(v) == "0";
  }
  if (const char* v = value("OZAKI_FP8_KERNELS")) {
    h.fp8_kernels_off = std::string(v) == "0";
  }
  return h;
}

/// Sets the test hooks from the environment (call first thing in main).
inline void set_test_hooks_from_environment() {
  ozaki::Experimental::set_test_hooks(hooks_from_environment());
}

}  // namespace ozaki_test
