// The interposer's settings from the environment (config.hpp).
#include "config.hpp"

// The test hooks' variables (docs/building.md): the interposer's ozaki is its own hidden copy,
// whose hooks only the interposer can set.
#include "../../../unit_tests/hooks_from_environment.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ozaki_cublas {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool parse_int(const char* name, long long low, long long high, long long& out) {
  const char* v = env(name);
  if (!v) return false;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (*end != '\0' || x < low || x > high) {
    std::fprintf(stderr, "ozaki_cublas: %s=%s ignored (expected an integer in %lld..%lld)\n", name,
                 v, low, high);
    return false;
  }
  out = x;
  return true;
}

Config read() {
  Config c;
  if (const char* mode = env("OZAKI_CUBLAS")) {
    if (!std::strcmp(mode, "off") || !std::strcmp(mode, "0")) {
      c.mode = Mode::Off;
    } else if (!std::strcmp(mode, "force")) {
      c.mode = Mode::Force;
    } else if (std::strcmp(mode, "auto") != 0) {
      std::fprintf(stderr, "ozaki_cublas: OZAKI_CUBLAS=%s ignored (auto, force or off)\n", mode);
    }
  }
  long long x = 0;
  if (parse_int("OZAKI_CUBLAS_MIN", 0, 1LL << 31, x)) c.min_dimension = x;
  if (c.mode == Mode::Force) c.options.algorithm = ozaki::Algorithm::Int8Crt;
  if (parse_int("OZAKI_CUBLAS_MODULI", ozaki::min_moduli, ozaki::max_moduli, x)) {
    c.options.moduli = static_cast<int>(x);
  }
  if (parse_int("OZAKI_CUBLAS_SLICES", 1, ozaki::max_slices, x)) {
    c.options.slices = static_cast<int>(x);
    if (c.mode == Mode::Force) c.options.algorithm = ozaki::Algorithm::Int8Slices;
  }
  if (const char* rule = env("OZAKI_CUBLAS_RULE")) {
    if (!std::strcmp(rule, "fast")) {
      c.options.crt_scaling = ozaki::CrtScaling::Fast;
    } else if (!std::strcmp(rule, "accurate")) {
      c.options.crt_scaling = ozaki::CrtScaling::Accurate;
    } else if (std::strcmp(rule, "auto") != 0) {
      std::fprintf(stderr, "ozaki_cublas: OZAKI_CUBLAS_RULE=%s ignored (auto, fast, accurate)\n",
                   rule);
    }
  }
  if (parse_int("OZAKI_CUBLAS_WORKSPACE_GIB", 1, 1 << 20, x)) {
    c.options.workspace_limit = static_cast<std::int64_t>(x) << 30;
  }
  if (parse_int("OZAKI_CUBLAS_LOG", 0, 1, x)) c.log = static_cast<int>(x);
  if (parse_int("OZAKI_CUBLAS_GRAPHS", 0, 1, x)) c.options.experimental.graph_products = x == 1;
  if (parse_int("OZAKI_CUBLAS_FP32", 0, 1, x)) c.fp32 = x == 1;
  // Before the first call through ozaki: config() is read first (ozaki_cublas.cpp).
  ozaki_test::set_test_hooks_from_environment();
  return c;
}

}  // namespace

const Config& config() {
  static const Config* c = new Config(read());  // never destroyed: used during exit
  return *c;
}

}  // namespace ozaki_cublas
