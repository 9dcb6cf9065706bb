// ozaki_bench: the main job and the benchmark driver.
//
// Multiplies random FP64 matrices (entries (U - 1/2) exp(phi N), the Ozaki papers' inputs)
// with each requested configuration and with native FP64 GEMM, on the same inputs in the
// same run, and reports for each: median time, TFLOP/s, speed relative to native, INT8 TOP/s
// of the INT8 phase, the shares of split / estimate / recombination, workspace bytes, and the
// error against a double-double reference on sampled entries.
//
//   ozaki_bench                                  demo: one shape, native vs the plain call
//   ozaki_bench --suite device --csv r.csv       the H200 suite of docs/benchmarks.md
//   ozaki_bench --shapes 4096,16384x16384x1024 --configs native,int8:7:tri,crt:15:fast
//   ozaki_bench --suite wide                     phi = 4: scheme II's accurate rule
//   ozaki_bench --suite sweep --csv sweep.csv    where the plain call beats native
//   ozaki_bench --suite criteria --csv c.csv     the sweep and the other shapes of issue 9
//
// Run with --help for every option.

#include <ozaki/ozaki.hpp>
#include <ozaki/serial/reference.hpp>

#include "../unit_tests/hooks_from_environment.hpp"

#include <Kokkos_Core.hpp>
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Complex = Kokkos::complex<double>;
using ComplexFloat = Kokkos::complex<float>;
/// The benchmark's matrices: double, or Kokkos::complex<double> with --complex; float or
/// Kokkos::complex<float> with --float.
template <class T>
using MatrixOf = Kokkos::View<T**, Kokkos::LayoutLeft, Space::memory_space>;
using Matrix = MatrixOf<double>;
constexpr bool on_host =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, Space::memory_space>::accessible;

struct ShapeArg {
  std::int64_t m, n, k;
};

std::string shape_name(const ShapeArg& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

struct Config {
  std::string name;
  ozaki::Options options;
  /// `default`: ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C) as a user writes it, with no
  /// Options and no Workspace (the library allocates its own scratch in every call).
  bool plain = false;
};

/// One shape, the exponent spread of its inputs, and the configurations measured on it.
struct Run {
  ShapeArg shape;
  double phi;
  std::vector<Config> configs;
};

struct Settings {
  std::vector<Run> runs;
  double phi = 0.5;  // of the runs whose suite does not set theirs
  bool phi_given = false;
  int reps = 5;
  double budget = 10;      // seconds of timed runs per configuration, after which they stop
  double min_seconds = 0;  // timed runs continue past --reps until their total reaches this
  bool min_seconds_given = false;
  int samples = 128;
  std::uint64_t seed = 2026;
  std::string csv, json;
  bool phases = true;
  bool phases_given = false;
  std::int64_t workspace_limit = 0;  // bytes; 0: the library's default
  bool workspace_given = false;
  bool complex = false;  // --complex: Kokkos::complex<double> matrices, native is ZGEMM
  bool single = false;   // --float: float (with --complex Kokkos::complex<float>) matrices
  std::string suite;     // as given, "custom:..." where --shapes or --configs replace its runs
};

/// The sweep's grid (suites sweep and criteria): M = N against K at phi = 0.5.
constexpr std::int64_t sweep_sides[] = {2048, 4096, 8192, 12288, 16384, 24576, 32768};
constexpr std::int64_t sweep_depths[] = {1024, 4096, 16384};

[[noreturn]] void usage(int code) {
  std::cout <<
      R"(ozaki_bench: ozaki::gemm against native FP64 GEMM on random matrices.

Each shape gets fresh inputs (entries (U - 1/2) exp(phi N)) and a double-double reference on
sampled entries; native runs first, then every configuration: a warm-up, timed runs (their
median is reported; paired with native runs, the mean of the medians of the runs that went
first and second in their pairs), and a run that times the phases.  A row is printed as soon
as its configuration has finished; progress goes to stderr.  A legend of the columns follows
the tables.

  --shapes LIST     comma-separated; N (cube) or MxNxK, positive integers; shapes whose
                    matrices do not fit in free memory are refused  (default: demo shape,
                    1024 on host spaces, 8192 on GPUs)
  --configs LIST    comma-separated, each one of                     (default: native,default;
                                                                      on host spaces also crt:auto)
                      native             Algorithm::Native: cuBLAS DGEMM on the stream on
                                         CUDA, KokkosBlas::gemm on host spaces
                      default            ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C): the
                                         plain call, no Options, no Workspace (the library's
                                         scratch, allocated by the first call and reused)
                      auto               Options{} with a Workspace kept across the calls
                      int8[:S[:POLICY]]  Int8Slices with S = 1..16 slices or auto (default);
                                         POLICY tri (default), full, or a pair count 1..S^2
                      crt[:L[:SCALING[:wCOLUMNS][:serial|:overlap][:p4]]]
                                         Int8Crt with L = 2..24 moduli or auto (default);
                                         SCALING auto (default), fast or accurate; wCOLUMNS
                                         columns of C per pass
                                         (Options::experimental.crt_pass_columns);
                                         serial / overlap: Options::experimental.overlap off
                                         (the default) / on;
                                         p4: complex data by the real embedding, 4 INT8
                                         products per modulus
                                         (Options::experimental.complex_products; default
                                         Karatsuba, 3)
                      emu[:S]            cuBLAS FP64 emulation with min(8S, 55) bits, S = 1..16,
                                         or auto (default: cuBLAS's dynamic choice); elsewhere
                                         the library falls back to Int8Slices (see the notes)
  --suite NAME      demo      the default: --shapes and --configs, or their defaults
                    device    every algorithm at the shapes of docs/benchmarks.md
                    wide      phi = 4 unless --phi is given: scheme II's accurate rule
                    sweep     default against native at M = N in {2048, 4096, 8192, 12288,
                              16384, 24576, 32768} x K in {1024, 4096, 16384}, phi = 0.5,
                              and 8192^3 at phi = 1, 2, 4; 9 reps and no phase-timing run
                              unless --reps or --phases is given; --phi is refused
                    criteria  the sweep, then 8192^3, 10000^3, 20000x3000x12000 and
                              32768^3 at phi = 0.5: every shape of issue 9's Done-when in
                              one run, each criterion checked against the run's rows at
                              the end
                    (--shapes or --configs replace a suite's runs; its workspace limit stays)
  --complex         complex<double> matrices (Kokkos::complex): ozaki's complex GEMM against
                    native ZGEMM (cuBLAS ZGEMM on CUDA, KokkosBlas::gemm on hosts); TFLOP/s count
                    8 M N K; each part of an entry is (U - 1/2) exp(phi N)
  --float           FP32 matrices: float (with --complex, Kokkos::complex<float>) against
                    native FP32 GEMM (cuBLAS SGEMM or CGEMM on CUDA), entries rounded to FP32
  --phi X           exponent spread of the inputs, finite, >= 0      (default 0.5)
  --reps N          timed runs, N >= 1; the median is reported      (default 5)
  --min-seconds S   timed runs continue past --reps until their total (native included)
                    reaches S seconds, at most 100000 runs: short calls then get enough
                    runs that their medians settle    (default 0; 1 in sweep and criteria)
  --budget SECONDS  timed runs of a configuration stop once their total passes this (there
                    is always one at least); the phase-timing run is then skipped too
                                                                     (default 10)
  --samples N       entries checked against double-double, N >= 1   (default 128)
  --workspace-gib X workspace limit per call, X >= 0 (0: the library's 8 GiB).  Default:
                    the library's in the demo; 40 GiB in the suites, except for `auto`.
                    `default` passes no Options, so no limit but the library's
  --no-phases       skip the run that times the phases (INT8TOP/s, split, est, recomb)
  --phases          do that run even where the suite skips it (sweep)
  --csv FILE        write the results as CSV, one row per configuration and shape
  --json FILE       write the results as JSON
  --seed N          random seed, 0 <= N < 2^64                       (default 2026)
  --kokkos-...      passed to Kokkos
  --help            this text

Exit status: 0 when every configuration ran, 1 when one failed (its row says why), 2 for a
bad argument (one line on stderr, before anything runs).

  ozaki_bench                                  demo: native and the plain call
  ozaki_bench --shapes 4096,16384x16384x1024 --configs native,default,int8:7:tri,crt:15:fast
  ozaki_bench --suite sweep --csv sweep.csv && python3 perf_tests/plot.py --heatmap sweep.csv
)";
  std::exit(code);
}

/// A usage error: reported as one line, exit code 2, before Kokkos starts.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

[[noreturn]] void usage_error(const std::string& what) { throw UsageError(what); }

/// The fields of s between separators, empty ones included ("1x2x" has three).
std::vector<std::string> split_fields(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (const char c : s) {
    if (c == sep)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

/// The non-empty items of a comma-separated list (a trailing comma is harmless).
std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  for (auto& item : split_fields(s, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

/// s as a whole, a non-negative decimal integer no larger than max; false otherwise.
bool to_count(const std::string& s, std::uint64_t max, std::uint64_t& out) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE || v > max) return false;
  out = v;
  return true;
}

/// s as a whole, a finite real number >= 0; false otherwise ("nan", "inf", "1e999", "2x").
bool to_nonnegative_real(const std::string& s, double& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(v) || v < 0) return false;
  out = v;
  return true;
}

ShapeArg parse_shape(const std::string& s) {
  const auto parts = split_fields(s, 'x');
  const std::string expected = " (expected N or MxNxK, e.g. 4096 or 16384x16384x1024)";
  if (parts.size() != 1 && parts.size() != 3) {
    usage_error("bad shape '" + s + "' in --shapes: " + std::to_string(parts.size()) +
                " dimensions" + expected);
  }
  std::int64_t dims[3];
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::uint64_t v = 0;
    // An empty product measures nothing: its times and ratios would be noise.
    if (!to_count(parts[i], std::numeric_limits<std::int64_t>::max(), v) || v == 0) {
      usage_error("bad shape '" + s + "' in --shapes: '" + parts[i] +
                  "' is not a positive integer" + expected);
    }
    dims[i] = static_cast<std::int64_t>(v);
  }
  if (parts.size() == 1) return {dims[0], dims[0], dims[0]};
  return {dims[0], dims[1], dims[2]};
}

[[noreturn]] void bad_config(const std::string& s, const std::string& why) {
  usage_error("bad config '" + s + "' in --configs: " + why);
}

/// A slice count of a config: 1..max_slices, or auto (empty).
std::optional<int> parse_slices(const std::string& s, const std::string& field) {
  if (field == "auto") return ozaki::auto_slices;
  std::uint64_t v = 0;
  if (!to_count(field, ozaki::max_slices, v) || v < 1) {
    bad_config(s, "slices must be 1.." + std::to_string(ozaki::max_slices) + " or auto, not '" +
                      field + "'");
  }
  return static_cast<int>(v);
}

Config parse_config(const std::string& s) {
  Config c;
  c.name = s;
  const auto f = split_fields(s, ':');
  for (const auto& field : f)
    if (field.empty()) bad_config(s, "empty field");
  const std::string& name = f[0];
  auto at_most = [&](std::size_t fields, const char* form) {
    if (f.size() > fields) bad_config(s, std::string("too many fields (expected ") + form + ")");
  };
  if (name == "default") {
    at_most(1, "default");
    c.plain = true;
  } else if (name == "native") {
    at_most(1, "native");
    c.options.algorithm = ozaki::Algorithm::Native;
  } else if (name == "auto") {
    at_most(1, "auto");
    c.options.algorithm = ozaki::Algorithm::Auto;
  } else if (name == "int8") {
    at_most(3, "int8[:S[:POLICY]]");
    c.options.algorithm = ozaki::Algorithm::Int8Slices;
    if (f.size() > 1) c.options.slices = parse_slices(s, f[1]);
    if (f.size() > 2) {
      const int S = c.options.slices.value_or(ozaki::max_slices);
      std::uint64_t count = 0;
      if (f[2] == "tri") {
        c.options.pairs = ozaki::PairPolicy::Triangular;
      } else if (f[2] == "full") {
        c.options.pairs = ozaki::PairPolicy::Full;
      } else if (to_count(f[2], static_cast<std::uint64_t>(S) * S, count) && count >= 1) {
        c.options.pairs = ozaki::PairPolicy::Count;
        c.options.pair_count = static_cast<int>(count);
      } else {
        bad_config(s, "pair policy '" + f[2] + "' is not tri, full or a pair count 1.." +
                          std::to_string(S * S) + " (S^2)");
      }
    }
  } else if (name == "crt") {
    at_most(6, "crt[:L[:SCALING[:wCOLUMNS][:serial|:overlap][:p4]]]");
    c.options.algorithm = ozaki::Algorithm::Int8Crt;
    if (f.size() > 1 && f[1] != "auto") {
      std::uint64_t L = 0;
      if (!to_count(f[1], ozaki::max_moduli, L) ||
          L < static_cast<std::uint64_t>(ozaki::min_moduli)) {
        bad_config(s, "moduli must be " + std::to_string(ozaki::min_moduli) + ".." +
                          std::to_string(ozaki::max_moduli) + " or auto, not '" + f[1] + "'");
      }
      c.options.moduli = static_cast<int>(L);
    }
    if (f.size() > 2) {
      if (f[2] == "fast") {
        c.options.crt_scaling = ozaki::CrtScaling::Fast;
      } else if (f[2] == "accurate") {
        c.options.crt_scaling = ozaki::CrtScaling::Accurate;
      } else if (f[2] != "auto") {
        bad_config(s, "scaling '" + f[2] + "' is not auto, fast or accurate");
      }
    }
    // Modifiers: wCOLUMNS (Options::experimental.crt_pass_columns), serial / overlap
    // (Options::experimental.overlap off / on), p4 (Options::experimental.complex_products).
    for (std::size_t i = 3; i < f.size(); ++i) {
      std::uint64_t columns = 0;
      if (f[i] == "serial") {
        c.options.experimental.overlap = false;
      } else if (f[i] == "overlap") {
        c.options.experimental.overlap = true;
      } else if (f[i] == "p4") {
        c.options.experimental.complex_products = ozaki::Experimental::ComplexProducts::Embedding;
      } else if (f[i].size() >= 2 && f[i][0] == 'w' &&
                 to_count(f[i].substr(1), std::uint64_t(1) << 31, columns) && columns >= 1) {
        c.options.experimental.crt_pass_columns = static_cast<std::int64_t>(columns);
      } else {
        bad_config(s, "modifier '" + f[i] +
                          "' is not w<columns of C per pass> (e.g. w2048), serial, overlap or p4");
      }
    }
  } else if (name == "emu") {
    at_most(2, "emu[:S]");
    c.options.algorithm = ozaki::Algorithm::CublasEmulation;
    if (f.size() > 1) c.options.slices = parse_slices(s, f[1]);
  } else {
    bad_config(s, "unknown name '" + name +
                      "' (expected native, default, auto, int8[:S[:POLICY]], "
                      "crt[:L[:SCALING[:wCOLUMNS][:serial|:overlap][:p4]]] or emu[:S])");
  }
  return c;
}

Settings parse(int argc, char* argv[]) {
  Settings st;
  std::string suite = "demo", shapes, configs;
  bool reps_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value (see --help)");
      return argv[++i];
    };
    auto real = [&](const char* what) {
      const std::string v = value();
      double x = 0;
      if (!to_nonnegative_real(v, x))
        usage_error(a + " must be a finite number >= 0 (" + what + "), not '" + v + "'");
      return x;
    };
    auto count = [&](std::uint64_t lo, std::uint64_t hi) {
      const std::string v = value();
      std::uint64_t x = 0;
      if (!to_count(v, hi, x) || x < lo) {
        usage_error(a + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                    ", not '" + v + "'");
      }
      return x;
    };
    if (a == "--help" || a == "-h") {
      usage(0);
    } else if (a == "--shapes") {
      shapes = value();
      if (split_list(shapes).empty()) usage_error("--shapes lists no shape");
    } else if (a == "--configs") {
      configs = value();
      if (split_list(configs).empty()) usage_error("--configs lists no configuration");
    } else if (a == "--suite") {
      suite = value();
    } else if (a == "--phi") {
      st.phi = real("the exponent spread");
      st.phi_given = true;
    } else if (a == "--reps") {
      st.reps = static_cast<int>(count(1, 1000000));
      reps_given = true;
    } else if (a == "--samples") {
      st.samples = static_cast<int>(count(1, 1000000));
    } else if (a == "--workspace-gib") {
      const double gib = real("GiB");
      if (gib >= 8e9) usage_error(a + " must be below 8e9 GiB");
      st.workspace_limit = static_cast<std::int64_t>(gib * (1ll << 30));
      st.workspace_given = true;
    } else if (a == "--budget") {
      st.budget = real("seconds");
    } else if (a == "--min-seconds") {
      st.min_seconds = real("seconds");
      st.min_seconds_given = true;
    } else if (a == "--complex") {
      st.complex = true;
    } else if (a == "--float") {
      st.single = true;
    } else if (a == "--no-phases") {
      st.phases = false;
      st.phases_given = true;
    } else if (a == "--phases") {
      st.phases = true;
      st.phases_given = true;
    } else if (a == "--csv") {
      st.csv = value();
    } else if (a == "--json") {
      st.json = value();
    } else if (a == "--seed") {
      st.seed = count(0, std::numeric_limits<std::uint64_t>::max());
    } else if (a.rfind("--kokkos", 0) == 0) {
      continue;  // Kokkos' own options
    } else {
      usage_error("unknown option '" + a + "' (see --help)");
    }
  }
  auto add_runs = [&](const std::string& shape_list, const std::string& config_list, double phi) {
    std::vector<Config> cs;
    for (const auto& c : split_list(config_list)) cs.push_back(parse_config(c));
    for (const auto& sh : split_list(shape_list)) st.runs.push_back({parse_shape(sh), phi, cs});
  };
  if (!shapes.empty() || !configs.empty()) suite = "custom:" + suite;
  st.suite = suite;
  if (suite == "demo" || suite.rfind("custom:", 0) == 0) {
    // The demo, and any run given --shapes or --configs: what is not given is the demo's.
    // On host spaces the default call runs native FP64 (the fastest there), so the demo adds
    // scheme II with its automatic count, to show the Ozaki scheme's accuracy and cost.
    add_runs(shapes.empty() ? (on_host ? "1024" : "8192") : shapes,
             configs.empty() ? (on_host ? "native,default,crt:auto" : "native,default") : configs,
             st.phi);
  } else if (suite == "device") {
    // Every algorithm at every shape of the issues; the scheme I sweep (S = 2..8, both pair
    // policies) at 8192^3, where the issues' criteria are.
    const std::string core =
        "native,default,auto,int8:auto:tri,int8:3:tri,int8:7:tri,emu:auto,emu:7,crt:auto,"
        "crt:13:fast,crt:14:fast,crt:15:fast,crt:16:fast";
    std::string sweep = core;
    for (int S = 2; S <= 8; ++S) {
      if (S != 3 && S != 7) sweep += ",int8:" + std::to_string(S) + ":tri";
      sweep += ",int8:" + std::to_string(S) + ":full";
    }
    add_runs("1024,2048,4096", core, st.phi);
    add_runs("8192", sweep, st.phi);
    add_runs("16384,16384x16384x1024,1024x1024x65536,32768x32768x1024", core, st.phi);
    // Scheme II around where it starts to pay (10000^3, a shape that is not a power of two),
    // and at the largest cube.
    add_runs("10000,32768,20000x3000x12000", "native,default,auto,crt:auto,crt:14:fast,crt:15:fast",
             st.phi);
  } else if (suite == "wide") {
    // Wide exponent ranges: scheme II's accurate rule against native, scheme I and cuBLAS.
    add_runs("8192",
             "native,default,auto,crt:auto,crt:auto:accurate,crt:16:accurate,crt:17:accurate,"
             "crt:18:accurate,crt:19:accurate,crt:20:accurate,crt:22:accurate,crt:18:fast,"
             "int8:auto:tri,emu:auto",
             st.phi_given ? st.phi : 4);
  } else if (suite == "sweep" || suite == "criteria") {
    // Where the plain call beats native: M = N against K at phi = 0.5, and the exponent
    // spread at 8192^3.  The phis are the suite's own, so --phi would only blur it.
    if (st.phi_given) usage_error("--suite " + suite + " sets its own phi values: drop --phi");
    for (const std::int64_t mn : sweep_sides)
      for (const std::int64_t k : sweep_depths)
        add_runs(shape_name({mn, mn, k}), "native,default", 0.5);
    for (const double phi : {1.0, 2.0, 4.0}) add_runs("8192", "native,default", phi);
    if (suite == "criteria") {
      // Issue 9's Done-when in one run: the sweep and the other shapes it names.
      add_runs("8192,10000,20000x3000x12000,32768", "native,default", 0.5);
    }
    if (!reps_given) st.reps = 9;  // paired with native: small cells need several
    // and short calls many more: 9 pairs of 0.17 ms calls moved by 2-3% between runs
    // (docs/benchmarks.md, 2026-12-03).
    if (!st.min_seconds_given) st.min_seconds = 1;
    if (!st.phases_given) st.phases = false;
  } else {
    usage_error("unknown suite '" + suite + "' (expected demo, device, wide, sweep or criteria)");
  }
  // cuBLAS's emulation needs ~15 GB at 16384^3, the largest INT8 schedules ~20 GB: the
  // suites give the explicit configs 40 GiB.  `auto` keeps the library's default limit
  // (Options{} as a user passes it) unless --workspace-gib is given; `default` passes no
  // Options at all.
  if (suite != "demo" && suite != "custom:demo" && !st.workspace_given)
    st.workspace_limit = std::int64_t(40) << 30;
  for (auto& run : st.runs)
    for (auto& c : run.configs)
      if (!c.plain && (c.name != "auto" || st.workspace_given) && st.workspace_limit > 0)
        c.options.workspace_limit = st.workspace_limit;  // (0: the library's choice)
  return st;
}

/// An entry from its parts (the imaginary one dropped for real data), and back.  (Overloads,
/// not `if constexpr`: nvcc's device lambdas cannot first capture inside one.)
KOKKOS_INLINE_FUNCTION void assign(double& x, double re, double) { x = re; }
KOKKOS_INLINE_FUNCTION void assign(Complex& x, double re, double im) { x = Complex(re, im); }
KOKKOS_INLINE_FUNCTION void assign(float& x, double re, double) { x = static_cast<float>(re); }
KOKKOS_INLINE_FUNCTION void assign(ComplexFloat& x, double re, double im) {
  x = ComplexFloat(static_cast<float>(re), static_cast<float>(im));
}
KOKKOS_INLINE_FUNCTION double real_part(double x) { return x; }
KOKKOS_INLINE_FUNCTION double real_part(const Complex& x) { return x.real(); }
KOKKOS_INLINE_FUNCTION double real_part(float x) { return x; }
KOKKOS_INLINE_FUNCTION double real_part(const ComplexFloat& x) { return x.real(); }
KOKKOS_INLINE_FUNCTION double imag_part(double) { return 0; }
KOKKOS_INLINE_FUNCTION double imag_part(const Complex& x) { return x.imag(); }
KOKKOS_INLINE_FUNCTION double imag_part(float) { return 0; }
KOKKOS_INLINE_FUNCTION double imag_part(const ComplexFloat& x) { return x.imag(); }

template <class T>
constexpr bool is_complex_scalar =
    std::is_same<T, Complex>::value || std::is_same<T, ComplexFloat>::value;

/// A uniform double in [0, 1) from draw j of entry idx: splitmix64's finalizer over
/// (seed, 4 idx + j).  A counter-based generator, so that every run and every backend draws
/// the same matrices from a seed (Kokkos' random pools hand out states in the order threads
/// ask for them: the same seed gave different inputs on every run).
KOKKOS_INLINE_FUNCTION double uniform01(std::uint64_t seed, std::int64_t idx, int j) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (4 * static_cast<std::uint64_t>(idx) + j + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1p-53;
}

/// (U - 1/2) exp(phi N) from draws j0 .. j0 + 2 of entry idx, N by Box-Muller.
KOKKOS_INLINE_FUNCTION double ozaki_entry(std::uint64_t seed, std::int64_t idx, int j0,
                                          double phi) {
  const double u = uniform01(seed, idx, j0) - 0.5;
  const double radius = sqrt(-2 * log(1 - uniform01(seed, idx, j0 + 1)));  // 1 - U in (0, 1]
  const double normal = radius * cos(6.283185307179586 * uniform01(seed, idx, j0 + 2));
  return u * exp(phi * normal);
}

/// Fills X with (U - 1/2) exp(phi N) on the device (each part of a complex entry so), the
/// same values from the same seed in every run.
template <class T>
void fill(const MatrixOf<T>& X, double phi, std::uint64_t seed) {
  const std::int64_t rows = X.extent(0);
  Kokkos::parallel_for(
      "ozaki_bench::fill", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, X.size()),
      KOKKOS_LAMBDA(const std::int64_t idx) {
        const double re = ozaki_entry(seed, idx, 0, phi);
        // The imaginary part from the complemented seed: a stream of its own.
        const double im = is_complex_scalar<T> ? ozaki_entry(~seed, idx, 0, phi) : 0.0;
        assign(X(idx % rows, idx / rows), re, im);
      });
}

template <class T>
struct Inputs {
  std::vector<MatrixOf<T>> A, B;  // rotated sets, so that timed runs do not reuse L2
  MatrixOf<T> C;
  std::vector<T> hostA, hostB;  // set 0, column-major, for the reference
};

/// How many sets of A and B a shape's inputs rotate through: enough to cycle through
/// 4 x 64 MB (a GPU's L2 several times over), at most 8.
int input_sets(const ShapeArg& s, std::size_t element_bytes) {
  const double bytes =
      element_bytes * (static_cast<double>(s.m) * s.k + static_cast<double>(s.k) * s.n);
  return bytes > 4 * 64e6 / 8 ? std::max(1, static_cast<int>(std::ceil(4 * 64e6 / bytes))) : 8;
}

template <class T>
Inputs<T> make_inputs(const ShapeArg& s, double phi, std::uint64_t seed) {
  Inputs<T> in;
  const int sets = input_sets(s, sizeof(T));
  for (int i = 0; i < sets; ++i) {
    in.A.emplace_back(Kokkos::view_alloc("A", Kokkos::WithoutInitializing), s.m, s.k);
    in.B.emplace_back(Kokkos::view_alloc("B", Kokkos::WithoutInitializing), s.k, s.n);
    fill<T>(in.A.back(), phi, seed + 2 * i);
    fill<T>(in.B.back(), phi, seed + 2 * i + 1);
  }
  in.C = MatrixOf<T>(Kokkos::view_alloc("C", Kokkos::WithoutInitializing), s.m, s.n);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in.A[0]);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in.B[0]);
  in.hostA.assign(ha.data(), ha.data() + ha.size());
  in.hostB.assign(hb.data(), hb.data() + hb.size());
  return in;
}

/// Bytes of memory the host can still give: MemAvailable of /proc/meminfo, else all of its
/// physical memory; 0 where unknown.
double free_host_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    double kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %lf kB", &kib) == 1) return kib * 1024;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * page : 0;
}

/// Bytes free in the memory space of the benchmark's matrices; 0 where unknown.
double free_space_bytes() {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same<Space::memory_space, Kokkos::CudaSpace>::value) {
    std::size_t free = 0, total = 0;
    return cudaMemGetInfo(&free, &total) == cudaSuccess ? static_cast<double>(free) : 0;
  }
#endif
  return free_host_bytes();
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB", bytes / 1e9);
  return text;
}

/// Why some run's inputs cannot fit in free memory, or "" where every run's can.  Checked
/// before anything runs: an impossible shape is refused once, instead of each configuration
/// reporting the failed allocation.  (The configurations' scratch comes on top; a call that
/// cannot get it says so in its row, or Auto runs native.)
std::string memory_shortfall(const Settings& st) {
  const double element = (st.complex ? 2 : 1) * (st.single ? sizeof(float) : sizeof(double));
  const double space_free = free_space_bytes(), host_free = free_host_bytes();
  for (const auto& run : st.runs) {
    const ShapeArg& s = run.shape;
    const double mk = static_cast<double>(s.m) * s.k, kn = static_cast<double>(s.k) * s.n;
    const double mn = static_cast<double>(s.m) * s.n;
    // A and B in every set, and C, in the matrices' space; the host keeps a copy of A and B
    // for the reference (and on a GPU it first copies them into mirrors).
    const double in_space = element * (input_sets(s, element) * (mk + kn) + mn);
    const double on_host_too = element * (on_host ? 1 : 2) * (mk + kn);
    const std::string what = "shape " + shape_name(s) + " does not fit in memory: ";
    if (on_host && space_free > 0 && in_space + on_host_too > space_free) {
      return what + "its matrices and their reference copy need " +
             gigabytes(in_space + on_host_too) + ", the host has " + gigabytes(space_free) +
             " free";
    }
    if (!on_host && space_free > 0 && in_space > space_free) {
      return what + "its matrices need " + gigabytes(in_space) + " on the device, which has " +
             gigabytes(space_free) + " free";
    }
    if (!on_host && host_free > 0 && on_host_too > host_free) {
      return what + "the host copies of A and B for the reference need " + gigabytes(on_host_too) +
             ", the host has " + gigabytes(host_free) + " free";
    }
  }
  return "";
}

/// Inputs that could not be allocated although they seemed to fit: the run stops there.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Sample {
  std::int64_t m, n;
  double reference, reference_im;  // (A B)_mn in double-double, rounded (imaginary part: 0
                                   // for real data)
  double abs_product;              // (|A||B|)_mn, complex moduli for complex data
};

/// Sampled entries of C and their double-double reference: none when C is empty.
struct Samples {
  std::vector<Sample> host;
  Kokkos::View<std::int64_t*, Space::memory_space> rows, cols;  // the entries, on the device
  Kokkos::View<double*, Space::memory_space> values;            // C at them, gathered there
  Kokkos::View<double*, Space::memory_space> values_im;         // imaginary parts
};

/// sum_k x_k y_k in double-double for two vectors of one length (serial::dd_dot).
double dd_sum(const std::vector<double>& x, const std::vector<double>& y) {
  const std::int64_t n = x.size();
  const ozaki::serial::ConstMatrixRef a{x.data(), 1, n, n, 1}, b{y.data(), n, 1, 1, n};
  const auto dd = ozaki::serial::dd_dot(a, b, 0, 0);
  return dd.hi + dd.lo;
}

template <class T>
Samples reference_samples(const Inputs<T>& in, const ShapeArg& s, int requested,
                          std::uint64_t seed) {
  const int count = s.m > 0 && s.n > 0 ? requested : 0;
  std::mt19937_64 rng(seed);
  Samples samples;
  std::vector<Sample>& out = samples.host;
  out.resize(count);
  samples.rows = decltype(samples.rows)("ozaki_bench::sample_rows", count);
  samples.cols = decltype(samples.cols)("ozaki_bench::sample_cols", count);
  samples.values = decltype(samples.values)("ozaki_bench::sample_values", count);
  samples.values_im = decltype(samples.values_im)("ozaki_bench::sample_values_im", count);
  auto rows = Kokkos::create_mirror_view(samples.rows);
  auto cols = Kokkos::create_mirror_view(samples.cols);
  for (int i = 0; i < count; ++i) {
    out[i].m = rows(i) = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.m));
    out[i].n = cols(i) = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.n));
  }
  Kokkos::deep_copy(samples.rows, rows);
  Kokkos::deep_copy(samples.cols, cols);
  Kokkos::parallel_for("ozaki_bench::reference",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, count),
                       [&](const int i) {
                         const std::int64_t m = out[i].m, n = out[i].n;
                         double abs = 0;
                         if constexpr (is_complex_scalar<T>) {
                           // Re and Im as real dot products of length 2K (the embedding of
                           // docs/design.md §8).
                           std::vector<double> re_x, im_x, y;
                           for (std::int64_t k = 0; k < s.k; ++k) {
                             const Complex a(in.hostA[m + k * s.m]), b(in.hostB[k + n * s.k]);
                             re_x.insert(re_x.end(), {a.real(), -a.imag()});
                             im_x.insert(im_x.end(), {a.imag(), a.real()});
                             y.insert(y.end(), {b.real(), b.imag()});
                             abs += Kokkos::abs(a) * Kokkos::abs(b);
                           }
                           out[i].reference = dd_sum(re_x, y);
                           out[i].reference_im = dd_sum(im_x, y);
                         } else {
                           // FP32 data: row m of A and column n of B in double (exact).
                           std::vector<double> a(s.k), b(s.k);
                           for (std::int64_t k = 0; k < s.k; ++k) {
                             a[k] = in.hostA[m + k * s.m];
                             b[k] = in.hostB[k + n * s.k];
                           }
                           const ozaki::serial::ConstMatrixRef A{a.data(), 1, s.k, 1, 1};
                           const ozaki::serial::ConstMatrixRef B{b.data(), s.k, 1, 1, s.k};
                           const auto dd = ozaki::serial::dd_dot(A, B, 0, 0);
                           out[i].reference = dd.hi + dd.lo;
                           out[i].reference_im = 0;
                           for (std::int64_t k = 0; k < s.k; ++k) abs += std::fabs(a[k] * b[k]);
                         }
                         out[i].abs_product = abs;
                       });
  return samples;
}

struct Errors {
  bool measured = false;  // false: no sampled entries (C is empty)
  double normwise = 0;    // max |c - ref| / (|A||B|)_mn
  double relative = 0;    // sqrt(sum |c - ref|^2 / sum |ref|^2) over the samples
};

/// The errors of C at the sampled entries, which are gathered on the device (C itself is
/// not copied).  Where (|A||B|)_mn = 0 the exact entry is 0: a nonzero c there counts as an
/// infinite normwise error; likewise for err_rel when every sampled reference is 0.
template <class T>
Errors measure_errors(const MatrixOf<T>& C, const Samples& samples) {
  Errors e;
  const int count = static_cast<int>(samples.host.size());
  if (count == 0) return e;
  e.measured = true;
  const auto rows = samples.rows;
  const auto cols = samples.cols;
  const auto values = samples.values;
  const auto values_im = samples.values_im;
  Kokkos::parallel_for(
      "ozaki_bench::gather", Kokkos::RangePolicy<Space>(0, count), KOKKOS_LAMBDA(const int i) {
        const T c = C(rows(i), cols(i));
        values(i) = real_part(c);
        values_im(i) = imag_part(c);
      });
  const auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
  const auto c_im = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values_im);
  double num = 0, den = 0;
  for (int i = 0; i < count; ++i) {
    const Sample& s = samples.host[i];
    const double d = std::hypot(c(i) - s.reference, c_im(i) - s.reference_im);
    if (std::isnan(d)) return {true, NAN, NAN};
    const double scaled = s.abs_product > 0 ? d / s.abs_product : d == 0 ? 0.0 : HUGE_VAL;
    e.normwise = std::max(e.normwise, scaled);
    num += d * d;
    den += s.reference * s.reference + s.reference_im * s.reference_im;
  }
  e.relative = den > 0 ? std::sqrt(num / den) : num == 0 ? 0.0 : HUGE_VAL;
  return e;
}

struct Result {
  ShapeArg shape;
  double phi = 0;
  std::string config;
  int runs = 0;  // timed runs
  ozaki::Report report;
  ozaki::Report phases;  // from the run with time_phases
  double seconds = 0;    // median
  double native_seconds = 0;
  Errors errors;
  std::string error_message;
  double flops_per_mnk = 2;  // 8 for complex products
};

double median(std::vector<double> v);

/// One side of the paired runs, by place in the pair.  Its time is the mean of the medians of
/// the runs that went first and of those that went second, so that both sides weigh the two
/// places alike whatever the number of pairs: the plain median of a side whose runs split
/// unevenly between the places (an odd number of pairs) lands among the runs of one place, and
/// where the places differ by a few microseconds (L2 contents, clocks) that moves a short
/// call's ratio by a percent or more (2048^2 x 1024: 0.985x over 2727 pairs of the same
/// cuBLAS DGEMM, docs/benchmarks.md, 2026-12-03).
struct PairedTimes {
  std::vector<double> first, second;
  void add(double seconds, bool went_first) { (went_first ? first : second).push_back(seconds); }
  double seconds() const {
    if (first.empty() || second.empty()) return median(first.empty() ? second : first);
    return 0.5 * (median(first) + median(second));
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// An exception's message on one line: runs of whitespace (Kokkos' messages span several
/// lines) become one space.
std::string one_line(const std::string& what) {
  std::string out;
  for (const char c : what) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool listed(const Run& run, const std::string& config) {
  for (const auto& c : run.configs)
    if (c.name == config) return true;
  return false;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// A progress line on stderr (the tables go to stdout).
void progress(const std::string& line) { std::fprintf(stderr, "[ozaki_bench] %s\n", line.c_str()); }

/// Steps longer than this say how long they took.
constexpr double slow_step_seconds = 2;

std::string seconds_text(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", t);
  return buf;
}

/// Measures one configuration: a warm-up on input set 0 (it also sizes the workspace; its C
/// gives the errors and its Report the row's other columns, so that with automatic counts
/// the count shown is the one whose error is shown), then timed runs on rotating input sets until
/// --reps of them and --min-seconds of them, or until their time passes --budget (at least
/// one), then the phase-timing run unless it is off, the call ran no INT8 phase, or the timed
/// runs already passed the budget.
///
/// With `native` given, every timed run is paired with a native FP64 GEMM on the same inputs,
/// in alternating order, and the row's xnative compares the two sides' times (PairedTimes:
/// medians by place in the pair): native varies by about 5% over a run (the card's clocks
/// follow its power and temperature), so only interleaved times compare fairly.
template <class T>
Result run_config(const Space& space, const Run& run, Inputs<T>& in, const Config& cfg,
                  const Samples& samples, const Settings& st, const Config* native = nullptr) {
  const ShapeArg& s = run.shape;
  Result r;
  r.shape = s;
  r.phi = run.phi;
  r.config = cfg.name;
  r.flops_per_mnk = is_complex_scalar<T> ? 8 : 2;
  const std::string label = shape_name(s) + " " + cfg.name;
  progress(label + ": warm-up and " + (st.min_seconds > 0 ? "at least " : "up to ") +
           std::to_string(st.reps) + " timed run" + (st.reps == 1 ? "" : "s") +
           (native ? ", each paired with native" : ""));
  try {
    ozaki::Workspace<Space> ws(space);
    auto call = [&](const Config& c, std::size_t set, bool time_phases) {
      ozaki::Options options = c.options;
      options.time_phases = time_phases;
      const T one(1), zero(0);
      if (!c.plain)
        return ozaki::gemm(space, "N", "N", one, in.A[set], in.B[set], zero, in.C, options, ws);
      // `default`: the plain call.  Its phase-timing run needs Options for time_phases: it
      // passes Options{} with time_phases, still without a Workspace.
      if (!time_phases) return ozaki::gemm(space, "N", "N", one, in.A[set], in.B[set], zero, in.C);
      return ozaki::gemm(space, "N", "N", one, in.A[set], in.B[set], zero, in.C, options);
    };
    // Each timed run is a profiling region of its own (fences included), so that a Kokkos
    // tool such as libozaki_gpu_timeline shows what the timer sees around the library's own
    // regions: host work before the first kernel, and the wait at the end.
    auto timed_call = [&](const Config& c, std::size_t set) {
      space.fence();
      Kokkos::Profiling::pushRegion("ozaki_bench::timed_run[" + c.name + "]");
      const auto t1 = Clock::now();
      call(c, set, false);
      space.fence();
      const double seconds = seconds_since(t1);
      Kokkos::Profiling::popRegion();
      return seconds;
    };
    const auto t0 = Clock::now();
    r.report = call(cfg, 0, false);
    space.fence();
    const double warm_up = seconds_since(t0);
    r.errors = measure_errors<T>(in.C, samples);
    std::vector<double> times;
    PairedTimes paired_cfg, paired_native;
    double timed = 0;
    constexpr int most_runs = 100000;
    for (int rep = 0;
         (rep < st.reps || timed < st.min_seconds) && rep < most_runs && !(timed > st.budget);
         ++rep) {
      const std::size_t set = static_cast<std::size_t>(rep + 1) % in.A.size();
      const bool native_first = native != nullptr && rep % 2 == 0;
      const double native_before = native_first ? timed_call(*native, set) : 0;
      times.push_back(timed_call(cfg, set));
      const double native_after = native != nullptr && !native_first ? timed_call(*native, set) : 0;
      timed += times.back() + native_before + native_after;
      if (native != nullptr) {
        paired_cfg.add(times.back(), !native_first);
        paired_native.add(native_first ? native_before : native_after, native_first);
      }
    }
    r.seconds = native != nullptr ? paired_cfg.seconds() : median(times);
    r.runs = static_cast<int>(times.size());
    if (native != nullptr) r.native_seconds = paired_native.seconds();
    if (seconds_since(t0) > slow_step_seconds) {
      progress(label + ": warm-up " + seconds_text(warm_up) + ", " + std::to_string(r.runs) +
               " timed run" + (r.runs == 1 ? " " : "s ") + seconds_text(timed) +
               (timed > st.budget ? " (stopped at the budget)" : ""));
    }
    const bool int8_phase = r.report.algorithm != ozaki::Algorithm::Native &&
                            r.report.algorithm != ozaki::Algorithm::None;
    if (st.phases && int8_phase) {
      if (timed > st.budget) {
        progress(label + ": phase-timing run skipped: the timed runs took " + seconds_text(timed) +
                 ", over the budget of " + seconds_text(st.budget));
      } else {
        progress(label + ": phase-timing run");
        const auto t2 = Clock::now();
        r.phases = call(cfg, 0, true);
        space.fence();
        if (seconds_since(t2) > slow_step_seconds)
          progress(label + ": phase-timing run took " + seconds_text(seconds_since(t2)));
      }
    }
  } catch (const std::exception& e) {
    r.error_message = one_line(e.what());
  }
  return r;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Derived figures of one result; NaN where a figure is undefined (no flops, no INT8 phase
/// measured), printed as "-", empty in CSV and null in JSON.
struct Figures {
  double tflops, speedup, int8_tops, split_share, estimate_share, recombine_share;
};

Figures figures(const Result& r) {
  const double flops = r.flops_per_mnk * static_cast<double>(r.shape.m) * r.shape.n * r.shape.k;
  const auto& p = r.phases;
  const double phase_total =
      p.seconds_split + p.seconds_estimate + p.seconds_int8 + p.seconds_recombine;
  auto ratio = [](double num, double den) { return num > 0 && den > 0 ? num / den : NAN; };
  auto share = [&](double part) { return phase_total > 0 ? part / phase_total : NAN; };
  Figures f;
  f.tflops = ratio(flops, r.seconds) / 1e12;
  f.speedup = ratio(r.native_seconds, r.seconds);
  f.int8_tops = ratio(p.int8_operations, p.seconds_int8) / 1e12;
  f.split_share = share(p.seconds_split);
  f.estimate_share = share(p.seconds_estimate);
  f.recombine_share = share(p.seconds_recombine);
  return f;
}

/// v with printf format f, or "-" when v is undefined (NaN).
std::string cell(const char* f, double v) { return std::isnan(v) ? "-" : fmt(f, v); }

/// An error figure: "-" when nothing was sampled, "nan" when C held NaN there.
std::string error_cell(const Errors& e, double v) { return e.measured ? fmt("%.2e", v) : "-"; }

/// A figure for CSV: empty when undefined.
std::string csv_number(double v) {
  if (std::isnan(v)) return "";
  std::ostringstream out;
  out << v;
  return out.str();
}

/// A figure for JSON: null when undefined or not finite.
std::string json_number(double v) { return std::isfinite(v) ? fmt("%.6g", v) : "null"; }

void print_header() {
  std::printf("%-20s %-18s %-6s %3s %5s %5s %4s %10s %8s %7s %9s %6s %6s %6s %9s %9s %9s %9s\n",
              "shape", "config", "algo", "S/L", "pr/bt", "gemms", "runs", "time[ms]", "TFLOP/s",
              "xnative", "INT8TOP/s", "split", "est", "recomb", "ws[MiB]", "err|A||B|", "bound",
              "err_rel");
}

/// One row of the table, printed (and flushed) as soon as its configuration has finished.
void print_row(const Result& r) {
  if (!r.error_message.empty()) {
    std::printf("%-20s %-18s failed: %s\n", shape_name(r.shape).c_str(), r.config.c_str(),
                r.error_message.c_str());
    std::fflush(stdout);
    return;
  }
  const Figures f = figures(r);
  const auto a = r.report.algorithm;
  const char* algo = a == ozaki::Algorithm::Native            ? "native"
                     : a == ozaki::Algorithm::CublasEmulation ? "emu"
                     : a == ozaki::Algorithm::Int8Crt         ? "crt"
                     : a == ozaki::Algorithm::None            ? "none"
                                                              : "int8";
  // S/L: slices (scheme I) or moduli (scheme II); pr/bt: slice pairs or fewest bits kept.
  const int count = a == ozaki::Algorithm::Int8Crt ? r.report.moduli : r.report.slices;
  const int detail = a == ozaki::Algorithm::Int8Crt ? r.report.crt_bits : r.report.slice_pairs;
  // Milliseconds to 3 decimals; below 0.1 ms 3 significant digits.
  const double ms = r.seconds * 1e3;
  std::printf("%-20s %-18s %-6s %3s %5s %5d %4d %10s %8s %7s %9s %6s %6s %6s %9.1f %9s %9s %9s\n",
              shape_name(r.shape).c_str(), r.config.c_str(), algo,
              count > 0 ? std::to_string(count).c_str() : "-",
              detail > 0 ? std::to_string(detail).c_str() : "-", r.report.int8_gemms, r.runs,
              fmt(ms >= 0.1 ? "%.3f" : "%.3g", ms).c_str(), cell("%.3f", f.tflops).c_str(),
              cell("%.2f", f.speedup).c_str(), cell("%.3g", f.int8_tops).c_str(),
              cell("%.1f%%", 100 * f.split_share).c_str(),
              cell("%.1f%%", 100 * f.estimate_share).c_str(),
              cell("%.1f%%", 100 * f.recombine_share).c_str(), r.report.workspace_bytes / 1048576.0,
              error_cell(r.errors, r.errors.normwise).c_str(),
              r.report.error_bound > 0 ? fmt("%.2g", r.report.error_bound).c_str() : "-",
              error_cell(r.errors, r.errors.relative).c_str());
  std::fflush(stdout);
}

/// Below a shape's table: the rows whose Report gave a reason or fell back.
void print_notes(const std::vector<Result>& rows) {
  for (const auto& r : rows) {
    if (!r.error_message.empty() || (!r.report.fallback && r.report.reason.empty())) continue;
    std::printf("  note: %s: %s%s\n", r.config.c_str(), r.report.fallback ? "fallback: " : "",
                r.report.reason.c_str());
  }
}

void print_legend() {
  std::printf(
      "\n"
      "shape      M x N x K of C = A B (A is M x K, B is K x N); phi is in the line above the "
      "table\n"
      "config     the configuration as given (--help lists them)\n"
      "algo       what ran: native (FP64 GEMM), int8 (Int8Slices), crt (Int8Crt), emu (cuBLAS\n"
      "           emulation), none (nothing to multiply: M, N or K is 0)\n"
      "S/L        slices for Int8Slices, moduli for Int8Crt\n"
      "pr/bt      slice pairs multiplied for Int8Slices, fewest bits kept by a row of A or a "
      "column\n"
      "           of B for Int8Crt\n"
      "gemms      INT8 GEMM calls of one multiplication\n"
      "runs       timed runs (more than --reps until --min-seconds, fewer once they took longer\n"
      "           than --budget)\n"
      "time[ms]   median time of the timed runs (paired with native: the mean of the medians\n"
      "           of the runs that went first and of those that went second in their pair)\n"
      "TFLOP/s    2MNK / time\n"
      "xnative    native time / this time (native measured in the same run on the same inputs,\n"
      "           each timed run paired with a native one in alternating order)\n"
      "INT8TOP/s  INT8 operations of the products / time of the INT8 phase (phase-timing run)\n"
      "split      share of the phase-timing run's time spent scaling and splitting A and B\n"
      "est        share spent estimating the slice or moduli count (automatic counts)\n"
      "recomb     share spent recombining the INT32 products into C in FP64\n"
      "           (the INT8 products take the rest)\n"
      "ws[MiB]    workspace bytes the call used\n"
      "           (algo to ws and the notes are the Report of the warm-up call, on the inputs\n"
      "           whose entries are sampled for the errors)\n"
      "err|A||B|  max |c - ref| / (|A||B|)_mn over the sampled entries, ref = (AB)_mn in\n"
      "           double-double\n"
      "bound      the componentwise bound the call guarantees for every entry, relative to\n"
      "           |A||B| (Report::error_bound; native FP64 GEMM's own is gamma_(K+2))\n"
      "err_rel    sqrt(sum (c - ref)^2 / sum ref^2) over the sampled entries\n"
      "-          undefined or not measured: no flops, no entries to sample, no INT8 phase, or\n"
      "           no phase-timing run (--no-phases, or the timed runs passed --budget)\n"
      "note       a Report's reason: why a call fell back to another algorithm, why Auto chose\n"
      "           what it chose, or why nothing was multiplied\n"
      "(CSV only: residue_products, 1 where the INT8 products were reduced modulo the moduli\n"
      " in the GEMM, Report::residue_products)\n");
}

/// s as a CSV field: quoted, quotes doubled.
std::string csv_text(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

/// s as a JSON string literal.
std::string json_text(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt("\\u%04x", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out + "\"";
}

const char* scaling_name(const ozaki::Report& report) {
  return report.moduli > 0 ? ozaki::to_string(report.crt_scaling) : "";
}

void write_csv_header(std::ostream& out) {
  out << "m,n,k,phi,config,algorithm,backend,slices,pairs,moduli,crt_scaling,crt_bits,"
         "int8_gemms,estimate_gemms,runs,seconds,native_seconds,decision_seconds,tflops,"
         "speedup_vs_native,int8_tops,split_share,"
         "estimate_share,recombine_share,workspace_bytes,err_normwise,err_relative,error_bound,"
         "fallback,residue_products,reason,error\n";
}

/// One CSV row, written (and flushed) as its table row is printed: a run stopped early keeps
/// what it measured.
void write_csv_row(std::ostream& out, const Result& r) {
  const Figures f = figures(r);
  const ozaki::Report& p = r.report;
  const bool ok = r.error_message.empty();
  out << r.shape.m << ',' << r.shape.n << ',' << r.shape.k << ',' << r.phi << ',' << r.config << ','
      << (ok ? ozaki::to_string(p.algorithm) : "") << ',' << p.backend << ',' << p.slices << ','
      << p.slice_pairs << ',' << p.moduli << ',' << scaling_name(p) << ',' << p.crt_bits << ','
      << p.int8_gemms << ',' << p.estimate_int8_gemms << ',' << r.runs << ','
      << csv_number(ok ? r.seconds : NAN) << ',' << csv_number(ok ? r.native_seconds : NAN) << ','
      << csv_number(ok ? p.seconds_decision : NAN) << ',' << csv_number(f.tflops) << ','
      << csv_number(f.speedup) << ',' << csv_number(f.int8_tops) << ',' << csv_number(f.split_share)
      << ',' << csv_number(f.estimate_share) << ',' << csv_number(f.recombine_share) << ','
      << p.workspace_bytes << ',' << csv_number(r.errors.measured ? r.errors.normwise : NAN) << ','
      << csv_number(r.errors.measured ? r.errors.relative : NAN) << ',' << csv_number(p.error_bound)
      << ',' << p.fallback << ',' << p.residue_products << ',' << csv_text(p.reason) << ','
      << csv_text(r.error_message) << '\n';
  out.flush();
}

/// Issue 9's Done-when against this run's rows (suite criteria), so that a run says by itself
/// which criteria hold: the plain call's ratio to native at each named shape and phi, its
/// error against native's on the same inputs, and the smallest ratio of the sweep's grid.
void print_criteria(const std::vector<Result>& results) {
  auto find = [&](const ShapeArg& s, double phi, const std::string& config) -> const Result* {
    for (const Result& r : results) {
      if (r.shape.m == s.m && r.shape.n == s.n && r.shape.k == s.k && r.phi == phi &&
          r.config == config && r.error_message.empty())
        return &r;
    }
    return nullptr;
  };
  int holding = 0, total = 0;
  auto line = [&](const std::string& criterion, const std::string& measured, bool holds) {
    std::printf("  %-48s %-46s %s\n", criterion.c_str(), measured.c_str(), holds ? "yes" : "NO");
    ++total;
    holding += holds ? 1 : 0;
  };
  auto number = [](const char* format, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, format, v);
    return std::string(buf);
  };
  struct Speed {
    ShapeArg shape;
    double phi, at_least;
    bool error_too;  // error no worse than native's
  };
  const Speed speeds[] = {
      {{16384, 16384, 16384}, 0.5, 1.70, true}, {{8192, 8192, 8192}, 0.5, 1.45, true},
      {{32768, 32768, 32768}, 0.5, 1.75, true}, {{10000, 10000, 10000}, 0.5, 1.30, true},
      {{20000, 3000, 12000}, 0.5, 1.30, true},  {{8192, 8192, 8192}, 2.0, 1.05, true},
      {{8192, 8192, 8192}, 4.0, 0.98, false}};
  std::printf("\nIssue 9's Done-when, the plain call (`default`) against native in this run:\n");
  for (const Speed& c : speeds) {
    const bool cube = c.shape.m == c.shape.n && c.shape.n == c.shape.k;
    const std::string criterion = (cube ? std::to_string(c.shape.m) + "^3" : shape_name(c.shape)) +
                                  ", phi = " + number("%g", c.phi) +
                                  ": >= " + number("%.2f", c.at_least) + "x" +
                                  (c.error_too ? ", error <= native's" : "");
    const Result* r = find(c.shape, c.phi, "default");
    const Result* n = find(c.shape, c.phi, "native");
    if (r == nullptr || n == nullptr) {
      line(criterion, "not measured", false);
      continue;
    }
    const double speedup = figures(*r).speedup;
    const bool error_ok = !c.error_too || (r->errors.measured && n->errors.measured &&
                                           r->errors.normwise <= n->errors.normwise);
    line(criterion,
         number("%.3fx", speedup) + ", error " + number("%.2e", r->errors.normwise) + " (native " +
             number("%.2e", n->errors.normwise) + ")",
         speedup >= c.at_least && error_ok);
  }
  double lowest = HUGE_VAL;
  std::string where;
  int cells = 0;
  const int grid_cells = static_cast<int>(std::size(sweep_sides) * std::size(sweep_depths));
  for (const std::int64_t mn : sweep_sides) {
    for (const std::int64_t k : sweep_depths) {
      const Result* r = find({mn, mn, k}, 0.5, "default");
      if (r == nullptr) continue;
      const double speedup = figures(*r).speedup;
      if (!(speedup > 0)) continue;  // no ratio (a failed native run): the count falls short
      ++cells;
      if (speedup < lowest) lowest = speedup, where = shape_name(r->shape);
    }
  }
  line("sweep grid (" + std::to_string(grid_cells) + " cells, phi = 0.5): >= 0.98x",
       cells == 0 ? "not measured"
                  : "lowest " + number("%.3fx", lowest) + " at " + where + ", " +
                        std::to_string(cells) + " cells",
       cells == grid_cells && lowest >= 0.98);
  std::printf("  %d of %d hold\n", holding, total);
}

void write_json(const std::string& path, const std::vector<Result>& results, const Settings& st) {
  std::ofstream out(path);
  out << "{\n  \"space\": " << json_text(Space::name()) << ",\n  \"reps\": " << st.reps
      << ",\n  \"results\": [\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const Figures f = figures(r);
    const ozaki::Report& p = r.report;
    const bool ok = r.error_message.empty();
    out << "    {\"m\": " << r.shape.m << ", \"n\": " << r.shape.n << ", \"k\": " << r.shape.k
        << ", \"phi\": " << json_number(r.phi) << ", \"config\": " << json_text(r.config)
        << ", \"algorithm\": " << json_text(ok ? ozaki::to_string(p.algorithm) : "")
        << ", \"backend\": " << json_text(p.backend) << ", \"slices\": " << p.slices
        << ", \"pairs\": " << p.slice_pairs << ", \"moduli\": " << p.moduli
        << ", \"crt_scaling\": " << json_text(scaling_name(p)) << ", \"crt_bits\": " << p.crt_bits
        << ", \"int8_gemms\": " << p.int8_gemms << ", \"estimate_gemms\": " << p.estimate_int8_gemms
        << ", \"runs\": " << r.runs << ", \"seconds\": " << json_number(ok ? r.seconds : NAN)
        << ", \"tflops\": " << json_number(f.tflops)
        << ", \"speedup_vs_native\": " << json_number(f.speedup)
        << ", \"int8_tops\": " << json_number(f.int8_tops)
        << ", \"split_share\": " << json_number(f.split_share)
        << ", \"estimate_share\": " << json_number(f.estimate_share)
        << ", \"recombine_share\": " << json_number(f.recombine_share)
        << ", \"workspace_bytes\": " << p.workspace_bytes
        << ", \"err_normwise\": " << json_number(r.errors.measured ? r.errors.normwise : NAN)
        << ", \"err_relative\": " << json_number(r.errors.measured ? r.errors.relative : NAN)
        << ", \"fallback\": " << (p.fallback ? "true" : "false")
        << ", \"residue_products\": " << (p.residue_products ? "true" : "false")
        << ", \"reason\": " << json_text(p.reason) << ", \"error\": " << json_text(r.error_message)
        << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
}

/// One shape of the run list: inputs, reference, native, then every configuration; rows
/// printed (and written to the CSV) as they finish.
template <class T>
void measure_shape(const Space& space, const Run& run, const Settings& st, std::ofstream& csv,
                   std::vector<Result>& results, bool& any_failed) {
  const ShapeArg& shape = run.shape;
  const std::string name = shape_name(shape);
  std::printf("\n%s, phi = %g:\n", name.c_str(), run.phi);
  print_header();
  std::fflush(stdout);
  progress(name + ": inputs and double-double reference on " + std::to_string(st.samples) +
           " entries");
  const auto t0 = Clock::now();
  Inputs<T> in;
  Samples samples;
  try {
    in = make_inputs<T>(shape, run.phi, st.seed);
    samples = reference_samples(in, shape, st.samples, st.seed + 99);
  } catch (const std::exception& e) {
    // Not one row per configuration repeating the failure: the run stops here.
    throw InputError("shape " + name + ": its inputs could not be made: " + one_line(e.what()));
  }
  if (seconds_since(t0) > slow_step_seconds)
    progress(name + ": inputs and reference took " + seconds_text(seconds_since(t0)));
  // Native first: its row, and every other row's timed runs are paired with it.
  Config native{"native", {}};
  native.options.algorithm = ozaki::Algorithm::Native;
  const Result reference = run_config(space, run, in, native, samples, st);
  const bool reference_ok = reference.error_message.empty();
  for (const auto& cfg : run.configs) {
    Result r;
    if (cfg.options.algorithm == ozaki::Algorithm::Native) {
      r = reference;
      r.config = cfg.name;
    } else {
      r = run_config(space, run, in, cfg, samples, st, reference_ok ? &native : nullptr);
    }
    if (r.native_seconds == 0 && reference_ok) r.native_seconds = reference.seconds;
    any_failed = any_failed || !r.error_message.empty();
    print_row(r);
    if (csv.is_open()) write_csv_row(csv, r);
    results.push_back(r);
  }
  print_notes({results.end() - run.configs.size(), results.end()});
  if (!reference.error_message.empty() && !listed(run, "native")) {
    // Its own row would say so; without one, say it here.
    std::printf("  note: native (measured for xnative) failed: %s\n",
                reference.error_message.c_str());
    any_failed = true;
  }
  std::fflush(stdout);
}

/// The last lines: each configuration's result in words beside native's, from the table above
/// (what ran, how fast against native, its error against native's), so that a run ends with
/// its answer.
void print_summary(const std::vector<Result>& results) {
  std::printf("\nsummary:\n");
  for (const Result& r : results) {
    if (r.config == "native" || !r.error_message.empty()) continue;
    const Result* native = nullptr;
    for (const Result& n : results) {
      if (n.config == "native" && n.phi == r.phi && n.shape.m == r.shape.m &&
          n.shape.n == r.shape.n && n.shape.k == r.shape.k) {
        native = &n;
      }
    }
    const ozaki::Report& rep = r.report;
    std::string what = ozaki::to_string(rep.algorithm);
    if (rep.algorithm == ozaki::Algorithm::Int8Crt)
      what += ", " + std::to_string(rep.moduli) + " moduli";
    if (rep.algorithm == ozaki::Algorithm::Int8Slices)
      what += ", S = " + std::to_string(rep.slices);
    std::printf("  %s, phi = %g, %s: %s, %.2fx native", shape_name(r.shape).c_str(), r.phi,
                r.config.c_str(), what.c_str(), figures(r).speedup);
    if (r.errors.measured && native != nullptr && native->errors.measured) {
      std::printf(", error %.2e |A||B| (native's %.2e)", r.errors.normwise,
                  native->errors.normwise);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char* argv[]) {
  // OZAKI_CUBLAS_INT8, OZAKI_RESIDUE_PRODUCTS, OZAKI_ONEDNN ... (docs/building.md).
  ozaki_test::set_test_hooks_from_environment();
  Settings st;
  try {
    st = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ozaki_bench: " << e.what() << "\n";
    return 2;
  }
  std::ofstream csv;
  if (!st.csv.empty()) {
    csv.open(st.csv);
    if (!csv) {
      std::cerr << "ozaki_bench: cannot write --csv " << st.csv << "\n";
      return 2;
    }
    write_csv_header(csv);
  }
  if (!st.json.empty() && !std::ofstream(st.json)) {
    std::cerr << "ozaki_bench: cannot write --json " << st.json << "\n";
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  const Space space;
  const std::string shortfall = memory_shortfall(st);
  if (!shortfall.empty()) {
    std::cerr << "ozaki_bench: " << shortfall << "; nothing was run\n";
    return 2;
  }
  char until[64] = "";
  if (st.min_seconds > 0)
    std::snprintf(until, sizeof until, "more until they take %g s, ", st.min_seconds);
  std::printf(
      "ozaki_bench: C = A B on %s%s, entries of A and B (U-1/2) exp(phi N), median of %d\n"
      "timed runs (%sfewer once they take over %g s), errors against double-double on %d\n"
      "sampled entries\n",
      Space::name(),
      st.single ? (st.complex ? " in complex<float> (native: CGEMM; TFLOP/s count 8 MNK)"
                              : " in float (native: SGEMM)")
                : (st.complex ? " in complex<double> (native: ZGEMM; TFLOP/s count 8 MNK)" : ""),
      st.reps, until, st.budget, st.samples);
  // The rates Auto's cost model takes for this device (0: unknown), so that a run's decisions
  // can be read against docs/design.md §5.6.
  const ozaki::Impl::DeviceRates rates = ozaki::Impl::device_rates(space);
  std::printf("Auto's rates here: INT8 / FP64 GEMM %.1f, FP64 GEMM flops per byte %.2f\n",
              rates.int8_over_fp64, rates.fp64_flops_per_byte);
  std::fflush(stdout);
  std::vector<Result> results;
  bool any_failed = false;
  try {
    for (const auto& run : st.runs) {
      if (st.single && st.complex) {
        measure_shape<ComplexFloat>(space, run, st, csv, results, any_failed);
      } else if (st.single) {
        measure_shape<float>(space, run, st, csv, results, any_failed);
      } else if (st.complex) {
        measure_shape<Complex>(space, run, st, csv, results, any_failed);
      } else {
        measure_shape<double>(space, run, st, csv, results, any_failed);
      }
    }
  } catch (const InputError& e) {
    std::fflush(stdout);
    std::cerr << "ozaki_bench: " << e.what() << "; its configurations were not run\n";
    return 2;
  }
  print_legend();
  print_summary(results);
  if (st.suite == "criteria" && !st.complex && !st.single) print_criteria(results);

  if (!st.json.empty()) write_json(st.json, results, st);
  return any_failed ? 1 : 0;
}
