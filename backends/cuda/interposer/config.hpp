#pragma once
/// \file config.hpp
/// The interposer's settings, read once from the environment (README, "Using ozaki without
/// changing your code"):
///
///   OZAKI_CUBLAS=auto|force|off   auto (default): ozaki::gemm with Algorithm::Auto, which runs
///                                 INT8 products only where they are faster at FP64-equivalent
///                                 accuracy; force: Int8Crt (or Int8Slices with
///                                 OZAKI_CUBLAS_SLICES) whatever the cost model says; off:
///                                 every call passes through.
///   OZAKI_CUBLAS_MIN=512          calls with min(m, n, k) below this pass through.
///   OZAKI_CUBLAS_MODULI=L         Int8Crt with L moduli (force), else an automatic count.
///   OZAKI_CUBLAS_SLICES=S         Int8Slices with S slices (force).
///   OZAKI_CUBLAS_RULE=auto|fast|accurate   Int8Crt's scaling rule.
///   OZAKI_CUBLAS_WORKSPACE_GIB=G  Options::workspace_limit (default: the library's choice,
///                                 Options::workspace_limit empty).
///   OZAKI_CUBLAS_FP32=1           FP32 calls (SGEMM, CGEMM, GemmEx in FP32) go through ozaki
///                                 too, at native FP32 GEMM's accuracy (default 0: they pass
///                                 through until a GPU has run them end to end), except on
///                                 handles whose math mode allows TF32.
///   OZAKI_CUBLAS_LOG=0|1          1: one line per call on stderr (shape, what ran, time: the
///                                 call is timed with events, which waits for it); 0: silent.
///                                 Unset: the summary at exit only.
///
/// It also sets its ozaki's test hooks (ozaki/test_hooks.hpp) from the variables the test
/// executables read (OZAKI_POISON_SCRATCH, OZAKI_CUBLAS_INT8, ...: docs/building.md, "Test
/// hooks"): its copy of ozaki is hidden, so the program's own settings do not reach it.

#include <ozaki/options.hpp>

#include <cstdint>

namespace ozaki_cublas {

enum class Mode { Off, Auto, Force };

struct Config {
  Mode mode = Mode::Auto;
  std::int64_t min_dimension = 512;
  ozaki::Options options;  // what ozaki::gemm is called with
  int log = -1;            // -1: summary only, 0: silent, 1: per call
  bool fp32 = false;       // OZAKI_CUBLAS_FP32
};

/// The settings (parsed on first use; bad values are reported once and the default kept).
const Config& config();

}  // namespace ozaki_cublas
