#!/usr/bin/env bash
# The project's own commands; the README's two commands are the first two.
#
#   cmake/dev.sh demo [ozaki_bench options]   set up, build, run the main job (ozaki_bench)
#   cmake/dev.sh test                         set up, build, run every test
#   cmake/dev.sh device [ozaki_bench options] on the GPU machine: CUDA build, CUDA tests and the
#                                             benchmark suite, logs under $OUT (docs/building.md);
#                                             OZAKI_NCU=0 skips the Nsight Compute step
#   cmake/dev.sh clients                      on the GPU machine: the interposer's real clients
#                                             (call overhead, torch.linalg, graphs, 2 MPI ranks)
#   cmake/dev.sh pair DIR                     on the GPU machine, carried binaries: two builds'
#                                             ozaki_bench alternated, torch clients (cmd_pair)
#   cmake/dev.sh pair-here DIR                the same with bench_b and the interposer built there
#   cmake/dev.sh capture-check                on the GPU machine: the graph-capture tests and clients
#   cmake/dev.sh breadth                      on the GPU machine: level-3 and batched tests and benchmarks
#   cmake/dev.sh fp32                         on the GPU machine: the FP32 tests, benchmarks and torch
#   cmake/dev.sh pack                         here: the GPU steps' binaries for sm_90, packed to carry
#   cmake/dev.sh carried [STEP...]            on the GPU machine: those steps on a carried pack
#                                             (tests pair clients breadth fp32 declines profile
#                                             kernel quantized standings)
#   cmake/dev.sh prebuild | interposer | cross-replay | device-test   (docs/building.md)
#
# Everything the commands need is installed here: Debian packages through apt-get (when
# missing), Kokkos + Kokkos Kernels 3.4.01 through cmake/deps/kokkos.sh (cached under .deps/).
# Set Kokkos_ROOT and KokkosKernels_ROOT to use your own Kokkos instead.
#
# The CUDA build: where nvcc exists, `test` also compiles the CUDA backend and its tests
# (build-cuda/), and runs them when a GPU answers.  Without a GPU that compile only checks that
# the CUDA code builds (about 11-12 minutes on 2 cores); `test` announces it.
#
# Variables:
#   OZAKI_JOBS=N          build jobs (default: the number of cores)
#   OZAKI_CUDA_BUILD=0    `test` skips the CUDA build and its tests (default 1: built where
#                         nvcc exists, as CI does)
#   OZAKI_PROGRESS=S      a build prints a progress line every S seconds (default 30); the
#                         build's full output is in <build dir>/build.log
#
# `test` ends with the GoogleTest totals of each ctest test and one summary line:
#   [ozaki] summary: 47 of 47 ctest tests passed (host; GoogleTest cases: 1453 passed, 0 failed,
#   in 33 of the tests); CUDA: ...
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
jobs=${OZAKI_JOBS:-$(nproc 2>/dev/null || echo 2)}
deps=$here/deps/kokkos.sh

say() { echo "[ozaki] $*" >&2; }

# Where the GPU machine's commands find their binaries: the CUDA build by default, or a pack
# built here and carried (`cmake/dev.sh pack`, then `cmake/dev.sh carried` there: no build on
# the GPU machine).
perf_bin=$repo/build-cuda/perf_tests
test_bin=$repo/build-cuda/unit_tests
interposer_lib=$repo/build-cuda/backends/cuda/interposer/libozaki_cublas.so

# step <name> <command...>: runs one step, announcing it and then how long it took.
step() {
  local name=$1 t0=$SECONDS
  shift
  say "$name ..."
  "$@"
  say "$name: done in $((SECONDS - t0)) s"
}

have_nvcc() { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; }
have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }

# The Debian packages the build and the tests need (libgtest-dev: GoogleTest), and for a
# host build libdnnl-dev (oneDNN: exact INT8 products on CPUs with VNNI or AMX,
# backends/onednn) and clang-format (test `format`, cmake/check_format.sh); the GPU machine
# has no package registry and builds the CUDA variant.
system_packages() {
  # shellcheck source=deps/kokkos.sh
  OZAKI_DEPS_ONLY_FUNCTIONS=1 source "$deps"
  ensure_build_tools
  if [ ! -f /usr/include/gtest/gtest.h ] && [ ! -f /usr/local/include/gtest/gtest.h ]; then
    ensure_debian_packages libgtest-dev
  fi
  if [ "${1:-host}" = host ]; then
    ensure_debian_packages libdnnl-dev
    command -v clang-format >/dev/null 2>&1 || ensure_debian_packages clang-format
  fi
}

# Prints the prefix of a Kokkos install of the given variant (host|cuda): the user's own
# (Kokkos_ROOT) or ours, built on first use.
kokkos_prefix() {
  if [ -n "${Kokkos_ROOT:-}" ]; then echo "$Kokkos_ROOT"; else "$deps" "$1" | tail -n 1; fi
}

# Fetches and builds our Kokkos of the given variant unless the user brings their own (a no-op
# once built: cmake/deps/kokkos.sh keeps stamps).
ensure_kokkos() {
  [ -n "${Kokkos_ROOT:-}" ] && return 0
  "$deps" "$1" >/dev/null
}

# configure_and_build <variant> <build dir> <"target ..."|all> [extra cmake args...]
configure_and_build() {
  local variant=$1 build=$2 target=$3
  shift 3
  step "Kokkos and Kokkos Kernels ($variant)" ensure_kokkos "$variant"
  local prefix
  prefix=$(kokkos_prefix "$variant")
  local args=(-S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release
    -DKokkos_ROOT="$prefix" -DKokkosKernels_ROOT="${KokkosKernels_ROOT:-$prefix}")
  # Kokkos Kernels' own gemm test runs with ozaki::gemm where its source is ours (unit_tests/).
  if [ -z "${Kokkos_ROOT:-}" ] && [ -d "$repo/.deps/src/kokkos-kernels/unit_test" ]; then
    args+=(-DOZAKI_KOKKOS_KERNELS_SOURCE="$repo/.deps/src/kokkos-kernels")
  fi
  if [ "$variant" = cuda ]; then
    export PATH=$PATH:/usr/local/cuda/bin
    local wrapper=$prefix/bin/nvcc_wrapper
    [ -x "$wrapper" ] || wrapper=$repo/.deps/src/kokkos/bin/nvcc_wrapper
    args+=(-DCMAKE_CXX_COMPILER="$wrapper")
  fi
  # Logs go inside the build folder: nothing a build writes lands in the source tree.
  mkdir -p "$build"
  # An existing build keeps the generator it was made with.
  local generator=${CMAKE_GENERATOR:-}
  [ -f "$build/CMakeCache.txt" ] && generator=
  step "configuring ozaki in $build ($variant)" configure_ozaki "$build" "$generator" "${args[@]}" "$@"
  local target_args=() names
  if [ "$target" != all ]; then
    read -ra names <<<"$target"
    target_args=(--target "${names[@]}")
  fi
  step "building ozaki in $build ($target, $jobs jobs)" build_ozaki "$build" "${target_args[@]}"
}

# The CUDA build of TARGETS (space-separated, or all) with the CUDA tests configured, its
# output appended to LOG; "build failed" there and status 1 if it fails.
build_cuda_logged() {
  local log=$1 targets=$2
  configure_and_build cuda "$repo/build-cuda" "$targets" -DOZAKI_ENABLE_TESTS=ON \
    -DOZAKI_TEST_SPACES=cuda >>"$log" 2>&1 || { echo "build failed" >>"$log"; return 1; }
}

configure_ozaki() {
  local build=$1 generator=$2
  shift 2
  CMAKE_GENERATOR=$generator cmake "$@" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; return 1; }
}

# How far a build is, from the last progress line of its log: Make's "[ 35%] ..." or
# Ninja's "[35/120] ...".  Make prints a step as it starts, Ninja (writing to a file) as it
# ends: so the step named is the one running for Make, the last one done for Ninja.
build_progress() {
  local last
  last=$(grep -E '^\[ *[0-9]+(%|/[0-9]+)\] ' "$1" 2>/dev/null | tail -n 1) || true
  if [ -z "$last" ]; then
    echo "starting"
    return
  fi
  local counter=${last%%]*} what=${last#*] }
  counter=${counter#[}
  counter=${counter// /}
  # "Building CXX object unit_tests/CMakeFiles/gemm_serial.dir/test_gemm.cpp.o" -> "gemm_serial:
  # test_gemm.cpp"
  what=$(sed -E 's#^Building [A-Za-z]+ object .*/([^/]+)\.dir/(.*)\.o$#\1: \2#' <<<"$what")
  case $counter in
  *%) echo "$counter done (now: $what)" ;;
  *) echo "${counter%/*} of ${counter#*/} steps done (last: $what)" ;;
  esac
}

# The build writes its output to build.log; every OZAKI_PROGRESS seconds a line says how far
# it is (a CUDA build takes minutes on a small machine).  The build runs in the foreground, so
# that Ctrl-C stops it; the reporter in the background ends with the build, or with this
# script.
build_ozaki() {
  local build=$1
  shift
  local t0=$SECONDS every=${OZAKI_PROGRESS:-30} status=0 shell=$$
  : >"$build/build.log"
  (
    next=$((SECONDS + every))
    while sleep 1 && kill -0 "$shell" 2>/dev/null; do
      if [ "$SECONDS" -ge "$next" ]; then
        say "building in ${build##*/}: $(build_progress "$build/build.log"), $((SECONDS - t0)) s"
        next=$((SECONDS + every))
      fi
    done
  ) &
  local reporter=$!
  cmake --build "$build" -j "$jobs" "$@" >"$build/build.log" 2>&1 || status=$?
  kill "$reporter" 2>/dev/null || true
  wait "$reporter" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    grep -E -A5 "error" "$build/build.log" | head -n 80 >&2 || true
    say "build failed: $build/build.log"
    return 1
  fi
}

# The counts of the last run_ctest, for the summary line: ctest tests passed and run, the
# gtest cases passed and failed, and how many tests printed gtest totals.
ctest_passed=0 ctest_total=0 gtest_passed=0 gtest_failed=0 gtest_tests=0

# run_ctest <build dir> [ctest arguments...]: runs ctest (the output of failing tests only),
# then prints each test's GoogleTest totals from ctest's own log, which keeps every test's
# output (Testing/Temporary/LastTest.log), and sets the counts above.  Fails where a test
# fails.
run_ctest() {
  local build=$1 status=0
  shift
  rm -f "$build/Testing/Temporary/LastTest.log"
  (cd "$build" && ctest --output-on-failure --no-tests=error "$@" 2>&1 | tee "$build/ctest.log") ||
    status=$?
  # "100% tests passed, 0 tests failed out of 24"
  local counts
  counts=$(sed -nE 's/^[0-9]+% tests passed, ([0-9]+) tests? failed out of ([0-9]+)$/\1 \2/p' \
    "$build/ctest.log" | tail -n 1)
  local failed=${counts% *}
  ctest_total=${counts#* }
  [ -n "$counts" ] || failed=0 ctest_total=0
  ctest_passed=$((ctest_total - failed))
  # One block per test, "N/M Testing: name", holding the test's output; gtest ends it with
  # "[  PASSED  ] K tests." and, where some failed, "[  FAILED  ] F tests, listed below:".
  local totals
  totals=$(awk '
    /^[0-9]+\/[0-9]+ Testing: / { name = $3; seen[name] = 1; next }
    name != "" && /^\[  PASSED  \] [0-9]+ tests?\.$/ { passed[name] += $4; gtest[name] = 1 }
    name != "" && /^\[  FAILED  \] [0-9]+ tests?, listed below:$/ { failed[name] += $4; gtest[name] = 1 }
    END {
      for (n in seen) {
        if (gtest[n]) printf "  %-28s %5d passed%s\n", n, passed[n], failed[n] ? ", " failed[n] " FAILED" : ""
        else printf "  %-28s     - (no GoogleTest totals)\n", n
      }
    }' "$build/Testing/Temporary/LastTest.log" 2>/dev/null | sort)
  say "gtest totals per test (${build##*/}):"
  echo "$totals" >&2
  gtest_passed=$(awk '$3 == "passed" || $3 == "passed," { s += $2 } END { print s + 0 }' <<<"$totals")
  gtest_failed=$(awk '$5 == "FAILED" { s += $4 } END { print s + 0 }' <<<"$totals")
  gtest_tests=$(awk '$3 == "passed" || $3 == "passed," { n++ } END { print n + 0 }' <<<"$totals")
  return "$status"
}

# "47 of 47 ctest tests passed (host; GoogleTest cases: 1453 passed, 0 failed, in 33 of the
# tests)", from run_ctest's counts.
ctest_summary() {
  echo "$ctest_passed of $ctest_total ctest tests passed ($1; GoogleTest cases: $gtest_passed" \
    "passed, $gtest_failed failed, in $gtest_tests of the tests)"
}

# run_ctest for the test command: where a test fails, the summary line (the host's counts in
# $summary once known) before failing.
ctest_step() {  # ctest_step <label> <build dir> [ctest arguments...]
  local label=$1
  shift
  run_ctest "$@" && return 0
  say "summary: ${summary:+$summary; CUDA: }$(ctest_summary "$label"); tests FAILED (output" \
    "above; every test's output in ${1##*/}/Testing/Temporary/LastTest.log)"
  return 1
}

cmd_test() {
  step "system packages" system_packages host
  configure_and_build host "$repo/build-host" all -DOZAKI_ENABLE_TESTS=ON
  local summary='' cuda=''
  step "host tests" ctest_step host "$repo/build-host" -j "$jobs"
  summary=$(ctest_summary host)
  if ! have_nvcc; then
    cuda="not built (no nvcc)"
  elif [ "${OZAKI_CUDA_BUILD:-1}" = 0 ]; then
    cuda="not built (OZAKI_CUDA_BUILD=0)"
  else
    if ! have_gpu; then
      say "CUDA build next: no GPU here, so it only checks that the CUDA backend and its tests" \
        "compile; about 11-12 minutes on 2 cores (OZAKI_CUDA_BUILD=0 skips it)"
    fi
    configure_and_build cuda "$repo/build-cuda" all -DOZAKI_ENABLE_TESTS=ON -DOZAKI_TEST_SPACES=cuda
    if have_gpu; then
      step "CUDA tests" ctest_step cuda "$repo/build-cuda"
      cuda=$(ctest_summary cuda)
    else
      # What needs no GPU: the oracle, and the interposer's exported symbols.
      step "CUDA build, tests without a GPU" ctest_step "cuda, no GPU" "$repo/build-cuda" -L host
      say "no GPU here: the CUDA backend and its device tests were compiled, not run"
      cuda="compiled, not run (no GPU); $ctest_passed of $ctest_total tests that need no GPU passed"
    fi
  fi
  say "all tests passed"
  say "summary: $summary; CUDA: $cuda"
}

cmd_demo() {
  local variant=host build=$repo/build-host
  if have_gpu && have_nvcc; then variant=cuda build=$repo/build-cuda; fi
  step "system packages" system_packages "$variant"
  configure_and_build "$variant" "$build" ozaki_bench
  # No thread binding, passive waits: OpenBLAS (Debian's pthreads build) starts its own threads,
  # which inherit the calling thread's binding (spread put them all on one core: DGEMM at half
  # speed), and spinning OpenMP threads would take their cores.
  export OMP_PROC_BIND=${OMP_PROC_BIND:-false} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
  "$build/perf_tests/ozaki_bench" "$@"
}

# On the GPU machine, in one call: CUDA build, CUDA tests, benchmark suites; results to $OUT,
# with the defaults in 8 files (what the device tool returns): device.log (environment, build,
# tests), bench.log (every suite's tables), <suite>.csv per suite (device, wide, sweep),
# device.png (the device suite by S), sweep.png (the sweep's heatmap; criteria.png likewise),
# ncu.log.  The optional steps below add sass.txt, sanitize.log, timeline.log, tools.log and
# run<i>.csv.
#   OZAKI_SUITES  suites to run, in order (default "device wide sweep"; "" runs none)
#   OZAKI_TESTS=0 skips the CUDA tests (and, without OZAKI_SANITIZE, builds only ozaki_bench
#                 and the timeline tool; OZAKI_BUILD_TARGETS="..." names other targets);
#   OZAKI_NCU=0 skips the Nsight Compute step
#   OZAKI_NCU_RUNS="ARGS; ARGS" the ozaki_bench runs Nsight Compute times per kernel
#   OZAKI_NCU_ARGS="..."        what ncu collects instead of the per-kernel times
#   OZAKI_NCU_KERNELS=N         kernels ncu profiles per run without OZAKI_NCU_ARGS (400)
#   OZAKI_CROSS_REPLAY=0        skips the replay of fuzz_cuda's calls on OpenMP
#   OZAKI_DEVICE_FUZZ_CASES=N   fuzz_cuda's cases in the CUDA tests (1000)
#   OZAKI_CTEST_ARGS="..."      extra ctest arguments for the CUDA tests (e.g. -E interposer)
#   OZAKI_SASS="regex"          the SASS of the library's kernels whose mangled names match,
#                               with opcode counts, to sass.txt (cuobjdump)
#   OZAKI_TIMELINE_RUNS="ARGS; ARGS" ozaki_bench runs under the GPU timeline tool (timeline.log)
#   OZAKI_BENCH_RUNS="ARGS; ARGS" further ozaki_bench runs (run<i>.csv), e.g. --complex ones
#   OZAKI_TOOL_RUNS="TOOL ARGS; ..." other perf_tests tools, e.g. int8_algos (tools.log)
#   OZAKI_SANITIZE="exit_cuda ..." runs compute-sanitizer's three tools on those test binaries
#                                  ("all": every CUDA test binary; OZAKI_SANITIZE_TOOLS picks
#                                  tools) (sanitize.log)
# Arguments after `device` go to every suite's ozaki_bench (e.g. --shapes 8192 --configs ...).
cmd_device() {
  local out=${OUT:-$repo/build-cuda/out}
  mkdir -p "$out"
  local log=$out/device.log
  {
    date -u
    nvidia-smi || true
    nvcc --version || true
    cmake --version | head -n 1
    echo "commit: ${OZAKI_COMMIT:-$(git -C "$repo" rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}"
  } >"$log" 2>&1
  local t0=$SECONDS
  # Without tests or sanitizer runs only the benchmark driver and the timeline tool are built;
  # OZAKI_BUILD_TARGETS overrides.  (On the GPU machine's 16 cores on 2026-12-01 the library's
  # build took 147-157 s, bench-only or full alike: gemm_cuda.cpp's one unit was most of it;
  # since its per-moduli kernels compile in units of their own, design.md §7.)
  local targets=all
  if [ "${OZAKI_TESTS:-1}" = 0 ] && [ -z "${OZAKI_SANITIZE:-}" ]; then
    targets="ozaki_bench ozaki_gpu_timeline"
  fi
  local bench=$repo/build-cuda/perf_tests/ozaki_bench
  if [ "${OZAKI_PREBUILT:-0}" = 1 ]; then
    # The benchmark binaries were built on the host (`cmake/dev.sh prebuild`) and carried: no
    # build here, so no tests either (their binaries are too large to carry).
    if [ "${OZAKI_TESTS:-1}" != 0 ] || [ -n "${OZAKI_SANITIZE:-}" ] || [ ! -x "$bench" ]; then
      echo "OZAKI_PREBUILT=1 needs OZAKI_TESTS=0, no OZAKI_SANITIZE and a carried $bench" >>"$log"
      return 1
    fi
    echo "build: none (OZAKI_PREBUILT=1: carried binaries)" >>"$log"
    # cuBLAS and the CUDA runtime wherever this machine's toolkit keeps them (the binary
    # names no run path).
    export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  else
    build_cuda_logged "$log" "${OZAKI_BUILD_TARGETS:-$targets}" || return 1
    echo "build: $((SECONDS - t0)) s" >>"$log"
  fi
  if [ -n "${OZAKI_SASS:-}" ]; then
    # Each matching kernel's SASS, then its opcodes by count (static: both branches of a
    # kernel count), to read instruction-bound kernels instruction by instruction.  Every
    # object of the CUDA backend: the per-moduli kernels are in the generated crt_kernels_cuda
    # units, the rest in gemm_cuda.cpp's.
    # (With OZAKI_PREBUILT=1, the carried benchmark binary: its kernels are the library's.)
    local objdump object objects=("$repo"/build-cuda/CMakeFiles/ozaki.dir/backends/cuda/*.o)
    [ "${OZAKI_PREBUILT:-0}" = 1 ] && objects=("$bench")
    objdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
    for object in "${objects[@]}"; do
      "$objdump" -sass "$object" 2>>"$log"
    done |
      awk -v pat="$OZAKI_SASS" -v counts="$out/sass-counts.txt" '
        function flush(o) {
          if (name == "") return
          print "== opcodes of " name > counts
          for (o in cnt) printf "%7d %s\n", cnt[o], o > counts
          delete cnt
          name = ""
        }
        /Function :/ { flush(); keep = ($0 ~ pat); if (keep) name = $3 }
        keep {
          print
          if (match($0, /^ +\/\*[0-9a-f]+\*\/ +(@!?U?P[0-9T] +)?[A-Z0-9_]+/)) {
            n = split(substr($0, RSTART, RLENGTH), f, " ")
            cnt[f[n]]++
          }
        }
        END { flush() }' >"$out/sass.txt" || true
    cat "$out/sass-counts.txt" >>"$out/sass.txt" 2>/dev/null || true
    rm -f "$out/sass-counts.txt"
  fi
  if [ "${OZAKI_TESTS:-1}" != 0 ]; then
    t0=$SECONDS
    # fuzz_cuda records its INT8 calls on the way (for the cross replay below), over
    # OZAKI_DEVICE_FUZZ_CASES cases (1000: about half of the cases are INT8 calls, the rest
    # native FP64, errors or empty products, and the replay must compare at least 500).
    local calls=$repo/build-cuda/fuzz_cuda_calls.txt
    rm -f "$calls"
    (cd "$repo/build-cuda" && OZAKI_FUZZ_RECORD=$calls OZAKI_FUZZ_CASES=${OZAKI_DEVICE_FUZZ_CASES:-1000} \
      ctest --output-on-failure --no-tests=error --timeout 300 ${OZAKI_CTEST_ARGS:-} 2>&1) >>"$log" || true
    echo "tests: $((SECONDS - t0)) s" >>"$log"
    # OZAKI_CROSS_REPLAY=0 skips the replay (cmake/dev.sh cross-replay runs it later).
    [ "${OZAKI_CROSS_REPLAY:-1}" = 0 ] || cross_replay "$log"
  fi
  # compute-sanitizer's memcheck, racecheck and synccheck on the test binaries named in
  # OZAKI_SANITIZE ("all": every CUDA test binary), OZAKI_SANITIZE_JOBS runs at once, each
  # under OZAKI_SANITIZE_TIMEOUT seconds; the fuzz test takes its first OZAKI_FUZZ_CASES (40)
  # cases there.  Each run's summary goes to sanitize.log, then one line per run:
  # "tool binary rc errors".
  if [ -n "${OZAKI_SANITIZE:-}" ] && command -v compute-sanitizer >/dev/null 2>&1; then
    t0=$SECONDS
    local binaries=$OZAKI_SANITIZE
    if [ "$binaries" = all ]; then
      binaries=$(cd "$repo/build-cuda/unit_tests" && ls -- *_cuda 2>/dev/null | tr '\n' ' ')
    fi
    local runs=$out/sanitize.d
    mkdir -p "$runs"
    # (synccheck's table of cuda::barrier objects overflows on cuBLAS's emulation kernels and
    # the run aborts; --num-cuda-barriers 65536 made things worse: allocation failures and
    # spurious errors under 16 parallel runs.  So synccheck leaves the tests of cuBLAS's
    # emulation out, OZAKI_SYNCCHECK_ARGS (default --gtest_filter=-*Emulation*).  racecheck
    # fails on the same kernel ("failed to handle a hardware exception", after which every
    # later test of the binary fails), and under two to four host threads it loses track of
    # launches or runs past any timeout; it checks hazards inside each kernel, and the same
    # kernels run in the single-threaded tests: OZAKI_RACECHECK_ARGS (default
    # --gtest_filter=-*Emulation*:*Threads*:*TwoStreams*).
    # OZAKI_SANITIZE_ARGS passes extra arguments to every run.)
    # racecheck instruments the kernels whose (mangled) names contain OZAKI_RACECHECK_KERNELS
    # ("ozaki": every kernel of the library, Kokkos' launches of its lambdas included; "" for
    # all).  cuBLAS's INT8 GEMMs under racecheck made three binaries run past 230 s, and its
    # FP64-emulation kernel reports hazards of its own that are not ours to fix
    # (docs/benchmarks.md); memcheck and synccheck check every kernel.
    local racecheck_filter=${OZAKI_RACECHECK_KERNELS-ozaki}
    compute-sanitizer --help 2>&1 | grep -E -A2 -- "--kernel-name" >"$out/sanitizer-help.txt" || true
    local binary tool
    for binary in $binaries; do
      for tool in ${OZAKI_SANITIZE_TOOLS:-memcheck racecheck synccheck}; do echo "$tool $binary"; done
    done | OZAKI_POISON_SCRATCH=1 OZAKI_FUZZ_CASES=${OZAKI_FUZZ_CASES:-40} \
      OZAKI_RACECHECK_FILTER=${racecheck_filter:+--kernel-name kns=$racecheck_filter} \
      OZAKI_SYNCCHECK_ARGS=${OZAKI_SYNCCHECK_ARGS---gtest_filter=-*Emulation*} \
      OZAKI_RACECHECK_ARGS=${OZAKI_RACECHECK_ARGS---gtest_filter=-*Emulation*:*Threads*:*TwoStreams*} \
      xargs -P "${OZAKI_SANITIZE_JOBS:-10}" -L 1 \
      sh -c 'cd "$0" && filter= && args= &&
        { [ "$3" != racecheck ] || [ "$4" = exit_cuda ] || args=$OZAKI_RACECHECK_ARGS; } &&
        { [ "$3" != racecheck ] || filter=$OZAKI_RACECHECK_FILTER; } &&
        { [ "$3" != synccheck ] || [ "$4" = exit_cuda ] || args=$OZAKI_SYNCCHECK_ARGS; } &&
        timeout "$1" compute-sanitizer --tool "$3" $filter --error-exitcode 3 \
        "unit_tests/$4" $args $OZAKI_SANITIZE_ARGS >"$2/$3.$4.log" 2>&1; echo "$3 $4 rc=$?" >>"$2/$3.$4.log"' \
      "$repo/build-cuda" "${OZAKI_SANITIZE_TIMEOUT:-300}" "$runs"
    local f
    for f in "$runs"/*.log; do
      echo "== $(basename "$f" .log)"
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|rc=|FAILED|PASSED" "$f" | tail -n 6 || true
      # Why a test failed under the tool: gtest's failure lines and what follows them.
      grep -E -A4 ": Failure$" "$f" | cut -c1-300 | head -n 40 || true
      # Where the reports are: each distinct kind and kernel, with its count.
      grep -E "^========= +(Error|Warning|Invalid|Barrier|Race)|^========= +(Read|Write|and) " "$f" |
        sed -E 's/0x[0-9a-f]+/0x./g; s/\(instance [0-9]+\)//g' | cut -c1-400 | sort | uniq -c |
        sort -rn | head -n 12 || true
    done >"$out/sanitize.log" 2>&1
    cat "$out/sanitizer-help.txt" >>"$out/sanitize.log" 2>/dev/null || true
    rm -rf "$runs" "$out/sanitizer-help.txt"
    echo "sanitizers: $((SECONDS - t0)) s" >>"$log"
  fi
  local suite
  for suite in ${OZAKI_SUITES-device wide sweep}; do
    t0=$SECONDS
    "$bench" --suite "$suite" --csv "$out/$suite.csv" "$@" >>"$out/bench.log" 2>&1 || true
    echo "suite $suite: $((SECONDS - t0)) s" >>"$log"
    case $suite in
    device) python3 "$repo/perf_tests/plot.py" "$out/device.csv" "$out/device.png" >>"$log" 2>&1 || true ;;
    sweep | criteria) python3 "$repo/perf_tests/plot.py" --heatmap "$out/$suite.csv" "$out/$suite.png" >>"$log" 2>&1 || true ;;
    esac
  done
  # OZAKI_TIMELINE_RUNS="ARGS; ARGS": ozaki_bench runs (one timed call each) under the GPU
  # timeline tool (perf_tests/gpu_timeline.cpp: CUDA events at every kernel and region, no
  # fences), all into timeline.log: where the GPU waits between kernels.
  local timeline_runs args tool=$repo/build-cuda/perf_tests/libozaki_gpu_timeline.so
  IFS=';' read -ra timeline_runs <<<"${OZAKI_TIMELINE_RUNS:-}"
  for args in "${timeline_runs[@]}"; do
    [ -n "${args// /}" ] && [ -f "$tool" ] || continue
    echo "== timeline: ozaki_bench $args --reps 1 --no-phases" >>"$out/timeline.log"
    # shellcheck disable=SC2086 # ARGS is a list of words
    KOKKOS_PROFILE_LIBRARY=$tool OZAKI_TIMELINE_FILE=$repo/build-cuda/timeline.txt \
      "$bench" $args --reps 1 --no-phases >/dev/null 2>&1 || echo "(run failed)" >>"$out/timeline.log"
    cat "$repo/build-cuda/timeline.txt" >>"$out/timeline.log" 2>/dev/null || true
    # The last ozaki::gemm call of the run (the timed one) in sums per kernel or region name
    # (E lines: a kernel's duration; ] lines: a region's), and its span on the GPU.
    awk '$4 == "[" && $5 ~ /^ozaki::gemm\[/ { delete t; delete c; start = $1; inside = 1; next }
         inside && $4 == "]" && $5 ~ /^ozaki::gemm\[/ { span = $1 - start; inside = 0; next }
         inside && ($4 == "E" || $4 == "]") { t[$5] += $3; c[$5]++ }
         END {
           if (span == "") exit
           print "== per name, the last ozaki::gemm call (ms, count); GPU span " span " ms"
           fflush()
           for (n in t) printf "%10.3f %4d %s\n", t[n], c[n], n | "sort -k1,1nr"
         }' "$repo/build-cuda/timeline.txt" >>"$out/timeline.log" 2>/dev/null || true
  done
  # OZAKI_TOOL_RUNS="[VAR=VALUE ...] TOOL ARGS; ...": perf_tests tools (built through
  # OZAKI_BUILD_TARGETS), e.g. "int8_algos --shapes 16384x2048x16384" or
  # "OZAKI_CUBLAS_INT8=gemmex ozaki_bench --shapes 16384", output to tools.log.
  local tool_runs
  IFS=';' read -ra tool_runs <<<"${OZAKI_TOOL_RUNS:-}"
  for args in "${tool_runs[@]}"; do
    [ -n "${args// /}" ] || continue
    t0=$SECONDS
    echo "== $args" >>"$out/tools.log"
    # shellcheck disable=SC2086 # ARGS is a list of words
    (cd "$repo/build-cuda/perf_tests" && env PATH="$PWD:$PATH" $args) >>"$out/tools.log" 2>&1 ||
      echo "(failed)" >>"$out/tools.log"
    echo "tool ($args): $((SECONDS - t0)) s" >>"$log"
  done
  # OZAKI_BENCH_RUNS="ARGS; ARGS; ...": further ozaki_bench runs after the suites, each with its
  # own arguments (e.g. "--complex --shapes 8192,16384 --configs native,default"), tables to
  # bench.log, CSV to run<i>.csv.
  local runs i=0 args
  IFS=';' read -ra runs <<<"${OZAKI_BENCH_RUNS:-}"
  for args in "${runs[@]}"; do
    [ -n "${args// /}" ] || continue
    i=$((i + 1))
    t0=$SECONDS
    # shellcheck disable=SC2086 # ARGS is a list of words
    "$bench" $args --csv "$out/run$i.csv" >>"$out/bench.log" 2>&1 || true
    echo "run $i ($args): $((SECONDS - t0)) s" >>"$log"
  done
  # Per-kernel times of the 8192^3 schedules the issues track (Nsight Compute, clocks as found).
  if [ "${OZAKI_NCU:-1}" != 0 ] && command -v ncu >/dev/null 2>&1; then
    # OZAKI_NCU_RUNS="ARGS; ARGS": the ozaki_bench runs to profile (default: the schedules above).
    local ncu_runs
    IFS=';' read -ra ncu_runs <<<"${OZAKI_NCU_RUNS:---shapes 8192 --configs int8:7:tri,int8:3:tri,crt:15:fast,crt:18:accurate}"
    for args in "${ncu_runs[@]}"; do
      [ -n "${args// /}" ] || continue
      echo "== ncu: ozaki_bench $args" >>"$out/ncu.log"
      # shellcheck disable=SC2086 # ARGS is a list of words
      # OZAKI_NCU_ARGS replaces what ncu collects (e.g. "--kernel-name-base demangled -k
      # regex:crt_residues -c 4 --section SpeedOfLight --section Occupancy --section
      # MemoryWorkloadAnalysis" to see why a kernel is slow; without the kernel-name base, -k
      # sees every Kokkos kernel as cuda_parallel_launch_local_memory); the default times
      # every kernel.
      # shellcheck disable=SC2086 # OZAKI_NCU_ARGS is a list of words
      ncu --clock-control none ${OZAKI_NCU_ARGS:---print-summary per-kernel --metrics gpu__time_duration.sum -c ${OZAKI_NCU_KERNELS:-400}} \
        "$bench" $args --reps 1 --samples 4 --no-phases >>"$out/ncu.log" 2>&1 || true
    done
  fi
  echo "done: $(date -u)" >>"$log"
}

# The same bits on Cuda and OpenMP across binaries (the CUDA Kokkos build has no OpenMP
# space): a Serial+OpenMP build's fuzz_openmp replays the calls fuzz_cuda recorded in the CUDA
# tests (build-cuda/fuzz_cuda_calls.txt) with their options (test_fuzz.cpp); log to $1.
cross_replay() {
  local log=$1 t0=$SECONDS calls=$repo/build-cuda/fuzz_cuda_calls.txt
  {
    [ -s "$calls" ] &&
      configure_and_build openmp "$repo/build-openmp" fuzz_openmp -DOZAKI_ENABLE_TESTS=ON \
        -DOZAKI_TEST_SPACES=openmp -DOZAKI_ENABLE_ONEDNN=AUTO &&
      OZAKI_FUZZ_REPLAY=$calls "$repo/build-openmp/unit_tests/fuzz_openmp" \
        --gtest_filter=Fuzz.CallsRecordedElsewhereReplayBitwise &&
      # at least 500 device calls compared bit for bit
      [ "$(wc -l <"$calls")" -ge 500 ]
  } >>"$log" 2>&1 && echo "cross replay (Cuda -> OpenMP, $(wc -l <"$calls") calls): passed" >>"$log" ||
    echo "cross replay (Cuda -> OpenMP): FAILED" >>"$log"
  echo "cross replay: $((SECONDS - t0)) s" >>"$log"
}

# On the GPU machine: the cuBLAS interposer on unmodified programs (issue 12), results to $OUT:
# interposer.log (build, the C client's check, logs) and interposer.csv (label,n,ms,tflops,
# error per run).  Each client runs without and with LD_PRELOAD, alternating, twice.
#   OZAKI_INTERPOSER_SIZES  torch sizes (default 4096,8192,16384; "" skips the float64 runs)
#   OZAKI_INTERPOSER_COMPLEX_SIZES  torch complex128 sizes (cublasZgemm_v2; default none)
#   OZAKI_KOKKOS_SIZES=""   skips the KokkosBlas client
#   OZAKI_KOKKOS_SIZES      KokkosBlas client sizes (default 16384)
#   OZAKI_RANKS=2           also two MPI ranks, one GPU each (nvidia-h200-x2)
cmd_interposer() {
  local out=${OUT:-$repo/build-cuda/out}
  mkdir -p "$out"
  local log=$out/interposer.log csv=$out/interposer.csv
  echo "commit: ${OZAKI_COMMIT:-unknown}; $(date -u)" >"$log"
  nvidia-smi -L >>"$log" 2>&1 || true
  build_cuda_logged "$log" all || return 1
  local lib=$repo/build-cuda/backends/cuda/interposer/libozaki_cublas.so
  (cd "$repo/build-cuda" && ctest --output-on-failure -R interposer 2>&1) >>"$log" || true
  echo "label,n,ms,tflops,error" >"$csv"
  local sizes=${OZAKI_INTERPOSER_SIZES-4096,8192,16384} round kind
  # Round 1 logs every call (timed with events: it waits for each), round 2 only the summary.
  for kind in float64 complex128; do
    local flag= label=torch
    if [ "$kind" = complex128 ]; then
      sizes=${OZAKI_INTERPOSER_COMPLEX_SIZES:-} flag=--complex label=torch-z
    fi
    [ -n "$sizes" ] || continue
    for round in 1 2; do
      local logging=1
      [ "$round" = 2 ] && logging=
      python3 "$repo/perf_tests/torch_matmul.py" $flag --sizes "$sizes" --label "$label" \
        >>"$csv" 2>>"$log" || echo "$label run failed" >>"$log"
      LD_PRELOAD=$lib OZAKI_CUBLAS_LOG=$logging python3 "$repo/perf_tests/torch_matmul.py" $flag \
        --sizes "$sizes" --label "$label+ozaki${logging:+ (log)}" >>"$csv" 2>>"$log" ||
        echo "$label+ozaki run failed" >>"$log"
    done
  done
  local client=$repo/build-cuda/perf_tests/kokkos_blas_client
  [ -n "${OZAKI_KOKKOS_SIZES-16384}" ] || { echo "done: $(date -u)" >>"$log"; return 0; }
  for round in 1 2; do
    local logging=1
    [ "$round" = 2 ] && logging=
    CLIENT_LABEL=kokkos "$client" ${OZAKI_KOKKOS_SIZES:-16384} >>"$csv" 2>>"$log" || true
    CLIENT_LABEL="kokkos+ozaki${logging:+ (log)}" LD_PRELOAD=$lib OZAKI_CUBLAS_LOG=$logging \
      "$client" ${OZAKI_KOKKOS_SIZES:-16384} >>"$csv" 2>>"$log" || true
  done
  if [ "${OZAKI_RANKS:-1}" -gt 1 ] && command -v mpirun >/dev/null 2>&1; then
    # Each rank sees one GPU; the client is the unmodified KokkosBlas program.
    local rank_cmd='export CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK; '
    mpirun --allow-run-as-root --oversubscribe -np "$OZAKI_RANKS" bash -c \
      "$rank_cmd CLIENT_LABEL=rank\$OMPI_COMM_WORLD_RANK $client ${OZAKI_KOKKOS_SIZES:-16384}" \
      >>"$csv" 2>>"$log" || echo "mpirun (plain) failed" >>"$log"
    mpirun --allow-run-as-root --oversubscribe -np "$OZAKI_RANKS" -x LD_PRELOAD=$lib bash -c \
      "$rank_cmd CLIENT_LABEL=rank\$OMPI_COMM_WORLD_RANK+ozaki $client ${OZAKI_KOKKOS_SIZES:-16384}" \
      >>"$csv" 2>>"$log" || echo "mpirun (ozaki) failed" >>"$log"
  fi
  echo "done: $(date -u)" >>"$log"
}

# On the GPU machine: unmodified clients under the interposer (issue 39), results to $OUT:
# clients.log (build, logs, the MPI runs) and clients.csv.  Plain and interposed runs
# alternate, two rounds each:
#   1. cublas_call_overhead: a cuBLAS program's host time per call where the interposer
#      declines (label,shape,host_us_median,host_us_p90,wall_us_per_call,max_error);
#   2. perf_tests/torch_clients.py: torch.linalg solvers, bmm, and CUDA graph capture and
#      replay of float64 and complex128 matmul (label,op,n,ms,check), then its graph capture
#      under OZAKI_CUBLAS=force; perf_tests/torch_matmul.py (float64 matmul); and one
#      interposed run of the solvers with the per-call log (which calls reached the
#      interposer, and what ran);
#   3. two MPI ranks sharing the one GPU, each running cublas_client under the interposer
#      (auto and force): each rank's cases within their bounds and bitwise a one-process run's.
#   OZAKI_CLIENTS_N    the solvers' n (8192)        OZAKI_CLIENTS_REPS  timed runs (5)
#   OZAKI_CLIENTS_MATMUL  torch_matmul's sizes (16384)
#   OZAKI_OVERHEAD_ROUNDS rounds of step 1, each plain then interposed (8)
cmd_clients() {
  local out=${OUT:-$repo/build-cuda/out}
  mkdir -p "$out"
  local log=$out/clients.log csv=$out/clients.csv
  echo "commit: ${OZAKI_COMMIT:-unknown}; $(date -u)" >>"$log"
  nvidia-smi -L >>"$log" 2>&1 || true
  build_cuda_logged "$log" "ozaki_cublas cublas_client cublas_call_overhead" || return 1
  run_clients
}

# The steps of cmd_clients on binaries already built (perf_bin, test_bin, interposer_lib).
run_clients() {
  local out=${OUT:-$repo/build-cuda/out}
  local log=$out/clients.log csv=$out/clients.csv
  local lib=$interposer_lib overhead=$perf_bin/cublas_call_overhead client=$test_bin/cublas_client
  local torch_args=(--n "${OZAKI_CLIENTS_N:-8192}" --reps "${OZAKI_CLIENTS_REPS:-5}")
  local round rounds=${OZAKI_OVERHEAD_ROUNDS:-8}
  [ -x "$overhead" ] || rounds=0
  echo "== cublas_call_overhead: label,shape,host_us_median,host_us_p90,wall_us_per_call,max_error" >>"$csv"
  # Rounds alternate plain and interposed; perf_tests/overhead_pairs.py takes each pair's
  # difference (the rounds' drift cancels) and their median.
  for round in $(seq "$rounds"); do
    "$overhead" plain >>"$csv" 2>>"$log" || echo "overhead (plain) failed" >>"$log"
    LD_PRELOAD=$lib OZAKI_CUBLAS_LOG=0 "$overhead" ozaki >>"$csv" 2>>"$log" ||
      echo "overhead (ozaki) failed" >>"$log"
  done
  python3 "$repo/perf_tests/overhead_pairs.py" "$csv" >>"$log" 2>&1 || true
  echo "== torch_clients: label,op,n,ms,check" >>"$csv"
  for round in 1 2; do
    python3 "$repo/perf_tests/torch_clients.py" --label plain "${torch_args[@]}" >>"$csv" \
      2>>"$log" || echo "torch_clients (plain) failed" >>"$log"
    LD_PRELOAD=$lib python3 "$repo/perf_tests/torch_clients.py" --label ozaki "${torch_args[@]}" \
      >>"$csv" 2>>"$log" || echo "torch_clients (ozaki) failed" >>"$log"
  done
  # (logged: the log shows the calls whose products ran inside the graph)
  LD_PRELOAD=$lib OZAKI_CUBLAS=force OZAKI_CUBLAS_LOG=1 python3 "$repo/perf_tests/torch_clients.py" \
    --label ozaki-force --ops graph "${torch_args[@]}" >>"$csv" 2>>"$log" ||
    echo "torch_clients (force) failed" >>"$log"
  echo "== torch_matmul: label,n,ms,tflops,error" >>"$csv"
  for round in 1 2; do
    python3 "$repo/perf_tests/torch_matmul.py" --sizes "${OZAKI_CLIENTS_MATMUL:-16384}" --label plain \
      >>"$csv" 2>>"$log"
    LD_PRELOAD=$lib python3 "$repo/perf_tests/torch_matmul.py" --sizes "${OZAKI_CLIENTS_MATMUL:-16384}" \
      --label ozaki >>"$csv" 2>>"$log"
  done
  echo "== the interposer's log of one run of the solvers (reps 1)" >>"$log"
  LD_PRELOAD=$lib OZAKI_CUBLAS_LOG=1 python3 "$repo/perf_tests/torch_clients.py" \
    --label ozaki-log --ops cholesky,solve,qr,eigh,lstsq,bmm --n "${OZAKI_CLIENTS_N:-8192}" \
    --reps 1 >>"$csv" 2>>"$log" || echo "torch_clients (log) failed" >>"$log"
  if command -v mpirun >/dev/null 2>&1 && [ -x "$client" ]; then
    local mode ranks=$repo/build-cuda/ranks
    mkdir -p "$ranks"
    for mode in auto force; do
      OZAKI_CUBLAS=$mode LD_PRELOAD=$lib "$client" >"$ranks/one-$mode.out" 2>>"$log" ||
        echo "one process ($mode): FAILED" >>"$log"
      # Both ranks on the one GPU; each writes its own output.
      mpirun --allow-run-as-root --oversubscribe -np 2 -x LD_PRELOAD="$lib" -x OZAKI_CUBLAS=$mode \
        bash -c "\"$client\" > \"$ranks/rank-$mode-\$OMPI_COMM_WORLD_RANK.out\"" >>"$log" 2>&1 &&
        cmp -s <(sort "$ranks/one-$mode.out") <(sort "$ranks/rank-$mode-0.out") &&
        cmp -s <(sort "$ranks/one-$mode.out") <(sort "$ranks/rank-$mode-1.out") &&
        echo "mpirun -np 2 ($mode): both ranks within their bounds, bitwise the one-process run" >>"$log" ||
        { echo "mpirun -np 2 ($mode): FAILED" >>"$log"; cat "$ranks"/rank-$mode-*.out >>"$log" 2>/dev/null; }
    done
  else
    echo "mpirun: not found" >>"$log"
  fi
  echo "done: $(date -u)" >>"$log"
}

# On the host: the CUDA build's benchmark driver and timeline tool (sm_90, as `device` builds
# them), for `OZAKI_PREBUILT=1 cmake/dev.sh device` on the GPU machine, which then needs no
# build (about 150 s of device time saved per call); prints the device tool's carry list.
cmd_prebuild() {
  have_nvcc || { say "prebuild needs nvcc"; return 1; }
  system_packages cuda
  configure_and_build cuda "$repo/build-cuda" "ozaki_bench ozaki_gpu_timeline" \
    -DOZAKI_ENABLE_TESTS=ON -DOZAKI_TEST_SPACES=cuda
  echo 'carry: ["build-cuda/perf_tests/ozaki_bench", "build-cuda/perf_tests/libozaki_gpu_timeline.so"]'
}

# On the GPU machine: the level-3 routines' and the batched calls' tests (docs/design.md §12,
# §13), and with OZAKI_LEVEL3_SIZES (e.g. "8192,16384") and OZAKI_BATCHED_CASES (e.g.
# "strided:64x2048,grouped:8") their benchmarks against cuBLAS (level3.csv, batched.csv), then
# torch's solve_triangular and bmm plain and interposed (run_breadth_benches, with the
# interposer built here).
cmd_breadth() {
  local out=${OUT:-$repo/build-cuda/out}
  mkdir -p "$out"
  local log=$out/breadth.log logs=$repo/build-cuda/logs test
  mkdir -p "$logs"
  echo "commit: ${OZAKI_COMMIT:-unknown}; $(date -u)" >"$log"
  nvidia-smi -L >>"$log" 2>&1 || true
  build_cuda_logged "$log" "level3_cuda batched_cuda level3_bench batched_bench ozaki_cublas" ||
    return 1
  run_tests "$log" level3_cuda batched_cuda
  run_breadth_benches "$log"
  echo "done: $(date -u)" >>"$log"
}

# run_tests <log> <test binary...>: each test binary of test_bin (OZAKI_TEST_TIMEOUT seconds at
# most, 300), its whole output in build-cuda/logs/<name>.log; to LOG its verdict, gtest's
# totals and its failures.
run_tests() {
  local log=$1 test logs=$repo/build-cuda/logs
  shift
  mkdir -p "$logs"
  for test in "$@"; do
    echo "== $test" >>"$log"
    timeout "${OZAKI_TEST_TIMEOUT:-300}" "$test_bin/$test" >"$logs/$test.log" 2>&1 &&
      echo "$test: passed" >>"$log" ||
      { echo "$test: FAILED" >>"$log"; { grep -E "Failure|FAILED|Which is|Expected|exception" -A3 "$logs/$test.log" || true; } | head -60 >>"$log"; }
    grep -E "^\[  (PASSED|FAILED)" "$logs/$test.log" >>"$log" || true
  done
}

# The interposer's client checks (the ctest interposer_client and interposer_beside_library)
# on binaries already built, to LOG.
run_interposer_checks() {
  local log=$1
  "$repo/unit_tests/interposer_check.sh" "$test_bin/cublas_client" "$interposer_lib" \
    "$test_bin/cublas_client_linked" >"$repo/build-cuda/logs/interposer_client.log" 2>&1 &&
    echo "interposer_client: passed" >>"$log" ||
    { echo "interposer_client: FAILED" >>"$log"; tail -n 40 "$repo/build-cuda/logs/interposer_client.log" >>"$log"; }
  if [ -x "$test_bin/cuda_backend_cuda" ]; then
    "$repo/unit_tests/interposer_beside_library.sh" "$test_bin/cuda_backend_cuda" "$interposer_lib" \
      >>"$log" 2>&1 || echo "interposer_beside_library: FAILED" >>"$log"
  fi
}

# level3_bench at OZAKI_LEVEL3_SIZES (of OZAKI_LEVEL3_ROUTINES, default all) and batched_bench
# on OZAKI_BATCHED_CASES (each skipped where unset), tables to LOG, CSVs to $OUT/level3.csv and $OUT/batched.csv.
run_breadth_benches() {
  local log=$1 out=${OUT:-$repo/build-cuda/out}
  if [ -n "${OZAKI_LEVEL3_SIZES:-}" ]; then
    "$perf_bin/level3_bench" --sizes "$OZAKI_LEVEL3_SIZES" \
      ${OZAKI_LEVEL3_ROUTINES:+--routines "$OZAKI_LEVEL3_ROUTINES"} \
      --csv "$out/level3.csv" >>"$log" 2>&1 || echo "level3_bench failed" >>"$log"
  fi
  if [ -n "${OZAKI_BATCHED_CASES:-}" ]; then
    "$perf_bin/batched_bench" --cases "$OZAKI_BATCHED_CASES" \
      --csv "$out/batched.csv" >>"$log" 2>&1 || echo "batched_bench failed" >>"$log"
  fi
  # torch.linalg.solve_triangular (cublasDtrsm) at OZAKI_BREADTH_TRSM ("" skips it), plain,
  # interposed and interposed in force mode, twice.
  local trsm=${OZAKI_BREADTH_TRSM-16384} round
  if [ -n "$trsm" ]; then
    for round in 1 2; do
      python3 "$repo/perf_tests/torch_clients.py" --label plain --ops trsm --n "$trsm" >>"$out/trsm.csv" 2>>"$log"
      LD_PRELOAD=$interposer_lib python3 "$repo/perf_tests/torch_clients.py" --label ozaki --ops trsm \
        --n "$trsm" >>"$out/trsm.csv" 2>>"$log"
      LD_PRELOAD=$interposer_lib OZAKI_CUBLAS=force python3 "$repo/perf_tests/torch_clients.py" \
        --label ozaki-force --ops trsm --n "$trsm" >>"$out/trsm.csv" 2>>"$log"
    done
    cat "$out/trsm.csv" >>"$log"
  fi
  # torch.bmm of OZAKI_BREADTH_BMM (batch x n, "" skips it), plain and interposed, twice.
  local bmm=${OZAKI_BREADTH_BMM-16x4096}
  [ -n "$bmm" ] || return 0
  for round in 1 2; do
    python3 "$repo/perf_tests/torch_clients.py" --label plain --ops bmm --bmm-batch "${bmm%x*}" \
      --bmm-n "${bmm#*x}" >>"$out/bmm.csv" 2>>"$log"
    LD_PRELOAD=$interposer_lib python3 "$repo/perf_tests/torch_clients.py" --label ozaki --ops bmm \
      --bmm-batch "${bmm%x*}" --bmm-n "${bmm#*x}" >>"$out/bmm.csv" 2>>"$log"
  done
}

# run_declines <log>: where Auto declines, the plain call against native FP64 GEMM, paired in
# one process, OZAKI_DECLINES_ROUNDS (3) fresh processes of OZAKI_DECLINES_REPS (201) pairs each
# on OZAKI_DECLINES_SHAPES (2048x2048x1024): issue 39's ">= 0.98x native", from enough pairs
# that the card's drift (about 5 %) cancels.  Tables to LOG, CSVs to $OUT/declines-<round>.csv.
# Then call_overhead (where packed): the host time of a declined call over Algorithm::Native's,
# and its steps (issue 39's "at most 1 us over plain cuBLAS").
run_declines() {
  local log=$1 out=${OUT:-$repo/build-cuda/out} round
  for round in $(seq "${OZAKI_DECLINES_ROUNDS:-3}"); do
    echo "== declines (round $round)" >>"$log"
    "$perf_bin/ozaki_bench" --shapes "${OZAKI_DECLINES_SHAPES:-2048x2048x1024}" \
      --configs native,default --reps "${OZAKI_DECLINES_REPS:-201}" --no-phases \
      --csv "$out/declines-$round.csv" >>"$log" 2>&1 || echo "declines: ozaki_bench failed" >>"$log"
  done
  if [ -x "$perf_bin/call_overhead" ]; then
    echo "== call_overhead" >>"$log"
    "$perf_bin/call_overhead" --shapes 2048x2048x1024,64x64x64 --reps 201 >>"$log" 2>&1 ||
      echo "declines: call_overhead failed" >>"$log"
  fi
}

# run_standings <log>: the plain call against native DGEMM (ZGEMM with complex shapes) in one run
# at the shapes of the standings (OZAKI_STANDINGS_SHAPES, default 8192,16384,32768, 5 timed runs
# each), and at phi = 4 (8192^3) with scheme II's accurate rule at 18 moduli beside it; CSVs to
# $OUT/standings*.csv.
run_standings() {
  local log=$1 out=${OUT:-$repo/build-cuda/out} reps=${OZAKI_STANDINGS_REPS:-5}
  echo "== standings" >>"$log"
  "$perf_bin/ozaki_bench" --shapes "${OZAKI_STANDINGS_SHAPES:-8192,16384,32768}" \
    --configs native,default --reps "$reps" --no-phases --csv "$out/standings.csv" >>"$log" 2>&1 ||
    echo "standings: ozaki_bench failed" >>"$log"
  "$perf_bin/ozaki_bench" --phi 4 --shapes 8192 --configs native,default,crt:18:accurate \
    --reps "$reps" --no-phases --csv "$out/standings-phi4.csv" >>"$log" 2>&1 ||
    echo "standings: ozaki_bench --phi 4 failed" >>"$log"
  "$perf_bin/ozaki_bench" --complex --shapes 8192,16384 --configs native,default --reps "$reps" \
    --no-phases --csv "$out/standings-complex.csv" >>"$log" 2>&1 ||
    echo "standings: ozaki_bench --complex failed" >>"$log"
}

# run_kernel_profiles <log>: Nsight Compute's full set of sections on one launch of a kernel
# per run ("TOOL ARGS; TOOL ARGS" in OZAKI_KERNEL_PROFILE_RUNS, the pack's tools; default W8A8
# at 4096 x 7168 x 2048), the launch after the first of those whose name matches
# OZAKI_KERNEL_PROFILE_NAME (default products_kernel, the library's INT8 product kernel);
# reports to $OUT/kernel-profile-<i>.txt, their headline rows in the log, and the kernels' SASS
# to $OUT/kernel-sass.txt.
run_kernel_profiles() {
  local log=$1 out=${OUT:-$repo/build-cuda/out} runs args words i=0 ncu candidate
  ncu=$(command -v ncu || true)
  for candidate in /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
    [ -n "$ncu" ] || [ ! -x "$candidate" ] || ncu=$candidate
  done
  [ -n "$ncu" ] || { echo "kernel profile: no Nsight Compute here" >>"$log"; return 0; }
  local default_runs="quantized_bench --m 4096 --nk 7168x2048 --reps 1 --groups none"
  IFS=';' read -ra runs <<<"${OZAKI_KERNEL_PROFILE_RUNS:-$default_runs}"
  for args in "${runs[@]}"; do
    read -ra words <<<"$args"
    [ ${#words[@]} -gt 0 ] || continue
    i=$((i + 1))
    echo "== kernel profile $i: $args" >>"$log"
    timeout 300 "$ncu" --clock-control none --set full --launch-skip 1 --launch-count 1 \
      --kernel-name "regex:${OZAKI_KERNEL_PROFILE_NAME:-products_kernel}" \
      "$perf_bin/${words[0]}" "${words[@]:1}" >"$out/kernel-profile-$i.txt" 2>&1 ||
      echo "kernel profile $i: ncu failed" >>"$log"
    # A failed profile has none of these rows: the steps after this one still run.
    { grep -E "Duration|Issued Ipc|Issue Slots Busy|Warp Cycles Per Issued|Eligible Warps|Throughput" \
      "$out/kernel-profile-$i.txt" || true; } | head -30 >>"$log"
  done
  # The profiled kernels' SASS (the first run's tool), for the instructions the report counts.
  read -ra words <<<"${runs[0]}"
  if command -v cuobjdump >/dev/null 2>&1 && [ ${#words[@]} -gt 0 ]; then
    cuobjdump -sass "$perf_bin/${words[0]}" 2>/dev/null |
      awk -v name="${OZAKI_KERNEL_PROFILE_NAME:-products_kernel}" \
        '/Function : / { keep = index($0, name) > 0 } keep' >"$out/kernel-sass.txt" || true
  fi
}

# run_profiles <log>: level3_bench runs ("ARGS; ARGS" in OZAKI_PROFILE_RUNS, default dtrsm at
# 16384 with the plain call's GEMMs and with native ones) under the GPU timeline tool, each
# summarised by perf_tests/timeline_runs.py --region: where its last timed ozaki call's GPU
# time went (diagonal blocks, GEMMs by algorithm, gaps).  Summaries to LOG, timelines to
# $OUT/profile-<i>.txt.
run_profiles() {
  local log=$1 out=${OUT:-$repo/build-cuda/out} runs args i=0 tool=$perf_bin/libozaki_gpu_timeline.so
  local default_runs="--routines dtrsm --sizes 16384 --reps 1; --routines dtrsm --sizes 16384 --reps 1 --algorithm native"
  [ -f "$tool" ] || { echo "profile: no timeline tool in the pack" >>"$log"; return 0; }
  IFS=';' read -ra runs <<<"${OZAKI_PROFILE_RUNS:-$default_runs}"
  for args in "${runs[@]}"; do
    [ -n "${args// /}" ] || continue
    i=$((i + 1))
    echo "== profile $i: level3_bench $args" >>"$log"
    # shellcheck disable=SC2086 # ARGS is a list of words
    KOKKOS_PROFILE_LIBRARY=$tool OZAKI_TIMELINE_FILE=$out/profile-$i.txt \
      "$perf_bin/level3_bench" $args >>"$log" 2>&1 || echo "(run failed)" >>"$log"
    python3 "$repo/perf_tests/timeline_runs.py" --region "paired_run[ozaki]" "$out/profile-$i.txt" \
      >>"$log" 2>&1 || true
    python3 "$repo/perf_tests/timeline_runs.py" --region "paired_run[native]" "$out/profile-$i.txt" \
      >>"$log" 2>&1 || true
  done
}

# On the GPU machine: FP32 data (docs/design.md §9): builds and runs single_cuda (the FP32
# tests), Kokkos Kernels' own gemm test with ozaki::gemm substituted, and the interposer's
# client checks (its fp32 run), then ozaki_bench --float at 8192^3
# and 16384^3 (phi = 0.5) and 8192^3 at phi = 2, complex float at 8192^3, each paired with
# cuBLAS SGEMM or CGEMM, and torch.matmul and nn.Linear with a bias (cublasLtMatmul with a bias
# epilogue) in float32, plain and under the interposer with OZAKI_CUBLAS_FP32=1, alternating
# (one more nn.Linear run logged: its calls in fp32.log).  Output to $OUT/fp32.log,
# $OUT/fp32-bench.csv and $OUT/fp32.csv.
cmd_fp32() {
  local out=${OUT:-$repo/build-cuda/out}
  mkdir -p "$out"
  local log=$out/fp32.log
  echo "commit: ${OZAKI_COMMIT:-unknown}; $(date -u)" >"$log"
  nvidia-smi -L >>"$log" 2>&1 || true
  build_cuda_logged "$log" "single_cuda ozaki_bench ozaki_cublas cublas_client cublas_client_linked" ||
    return 1
  # Per-binary logs stay in the build folder ($OUT brings back only a few files); their
  # summaries and failures go to the log.
  local logs=$repo/build-cuda/logs
  mkdir -p "$logs"
  # Kokkos Kernels' own gemm test with ozaki::gemm (float, complex<float>, double, complex<double>)
  if (cd "$repo/build-cuda" && cmake --build . --target kokkos_kernels_gemm_cuda >>"$log" 2>&1); then
    (cd "$repo/build-cuda" && ctest --output-on-failure -R "kokkos_kernels_gemm" 2>&1) >>"$log" || true
  fi
  run_tests "$log" single_cuda
  run_interposer_checks "$log"
  run_fp32_benches "$log"
  echo "done: $(date -u)" >>"$log"
}

# The FP32 benchmarks of cmd_fp32 on binaries already built: tables to LOG, CSVs to
# $OUT/fp32-bench.csv and $OUT/fp32.csv.
run_fp32_benches() {
  local log=$1 out=${OUT:-$repo/build-cuda/out} logs=$repo/build-cuda/logs
  local csv=$out/fp32.csv bench=$perf_bin/ozaki_bench reps=${OZAKI_FP32_REPS:-5}
  mkdir -p "$logs"
  "$bench" --float --shapes 8192,16384 --configs native,default,crt:auto --reps "$reps" \
    --no-phases --csv "$logs/fp32-real.csv" >>"$log" 2>&1 || echo "bench --float failed" >>"$log"
  "$bench" --float --phi 2 --shapes 8192 --configs native,default,crt:auto --reps "$reps" \
    --no-phases --csv "$logs/fp32-phi2.csv" >>"$log" 2>&1 || echo "bench --float --phi 2 failed" >>"$log"
  "$bench" --float --complex --shapes 8192 --configs native,default,crt:auto --reps "$reps" \
    --no-phases --csv "$logs/fp32-complex.csv" >>"$log" 2>&1 || echo "bench --float --complex failed" >>"$log"
  # The three benchmark tables in one file, each with its header.
  cat "$logs/fp32-real.csv" "$logs/fp32-phi2.csv" "$logs/fp32-complex.csv" >"$out/fp32-bench.csv" 2>/dev/null || true
  local lib=$interposer_lib round
  echo "== torch_matmul float32: label,n,ms,tflops,error" >"$csv"
  for round in 1 2; do
    python3 "$repo/perf_tests/torch_matmul.py" --float32 --sizes 8192,16384 --label plain \
      >>"$csv" 2>>"$log"
    LD_PRELOAD=$lib OZAKI_CUBLAS_FP32=1 python3 "$repo/perf_tests/torch_matmul.py" --float32 \
      --sizes 8192,16384 --label ozaki >>"$csv" 2>>"$log"
  done
  echo "== torch_matmul float32 nn.Linear with a bias: label,n,ms,tflops,error" >>"$csv"
  for round in 1 2; do
    python3 "$repo/perf_tests/torch_matmul.py" --float32 --linear --sizes 8192,16384 \
      --label plain-linear >>"$csv" 2>>"$log"
    LD_PRELOAD=$lib OZAKI_CUBLAS_FP32=1 python3 "$repo/perf_tests/torch_matmul.py" --float32 \
      --linear --sizes 8192,16384 --label ozaki-linear >>"$csv" 2>>"$log"
  done
  LD_PRELOAD=$lib OZAKI_CUBLAS_FP32=1 OZAKI_CUBLAS_LOG=1 python3 "$repo/perf_tests/torch_matmul.py" \
    --float32 --linear --sizes 8192 --reps 1 --label ozaki-linear-logged >>"$csv" 2>>"$log"
}

# On the GPU machine: calls captured into CUDA graphs (docs/design.md §7, "Scheme II inside a
# graph"): builds and runs captured_cuda, cuda_backend_cuda (its capture test among the rest),
# componentwise_cuda (the captured configuration among the families), the interposer's client
# checks, and torch.cuda.graph float64 and complex128 matmul plain and under the interposer
# (default, force, and force with OZAKI_CUBLAS_GRAPHS=0, logged: the log shows the calls that
# ran scheme II inside the graph).
# Output to $OUT/capture.log and $OUT/capture.csv.
cmd_capture_check() {
  local out=${OUT:-$repo/build-cuda/out}
  mkdir -p "$out"
  local log=$out/capture.log csv=$out/capture.csv
  echo "commit: ${OZAKI_COMMIT:-unknown}; $(date -u)" >"$log"
  nvidia-smi -L >>"$log" 2>&1 || true
  build_cuda_logged "$log" \
    "captured_cuda cuda_backend_cuda componentwise_cuda ozaki_cublas cublas_client cublas_client_linked" ||
    return 1
  run_tests "$log" captured_cuda cuda_backend_cuda componentwise_cuda
  run_interposer_checks "$log"
  local lib=$interposer_lib
  echo "== torch_clients: label,op,n,ms,check" >"$csv"
  python3 "$repo/perf_tests/torch_clients.py" --label plain --ops graph >>"$csv" 2>>"$log"
  LD_PRELOAD=$lib OZAKI_CUBLAS_LOG=1 python3 "$repo/perf_tests/torch_clients.py" --label ozaki \
    --ops graph >>"$csv" 2>>"$log"
  LD_PRELOAD=$lib OZAKI_CUBLAS=force OZAKI_CUBLAS_LOG=1 python3 "$repo/perf_tests/torch_clients.py" \
    --label ozaki-force --ops graph >>"$csv" 2>>"$log"
  LD_PRELOAD=$lib OZAKI_CUBLAS=force OZAKI_CUBLAS_GRAPHS=0 OZAKI_CUBLAS_LOG=1 \
    python3 "$repo/perf_tests/torch_clients.py" --label ozaki-force-nographs --ops graph >>"$csv" 2>>"$log"
  echo "done: $(date -u)" >>"$log"
}

# On the GPU machine, one test binary only (a quick look at one failure): builds its target and
# runs it with the given arguments; output to $OUT/device.log.
cmd_device_test() {
  local out=${OUT:-$repo/build-cuda/out} target=$1
  shift
  mkdir -p "$out"
  : >"$out/device.log"
  build_cuda_logged "$out/device.log" "$target" || return 1
  "$repo/build-cuda/unit_tests/$target" "$@" >>"$out/device.log" 2>&1 || true
}

# run_bench_pair <bench a> <bench b>: two builds' ozaki_bench alternated (a, b, a, b) on
# OZAKI_PAIR_SHAPES, each run with native in it; tables to $OUT/pair.log, CSVs to
# $OUT/bench_{a,b}-<round>.csv.
run_bench_pair() {
  local out=${OUT:-$repo/build-cuda/out} round name
  local -A bench=([bench_a]=$1 [bench_b]=$2)
  local shapes=${OZAKI_PAIR_SHAPES:-2048x2048x1024,8192,16384}
  { echo "pair: $(date -u)"; nvidia-smi -L; } >>"$out/pair.log" 2>&1 || true
  for round in 1 2; do
    for name in bench_a bench_b; do
      echo "== $name (round $round)" >>"$out/pair.log"
      "${bench[$name]}" --shapes "$shapes" --configs native,default --reps "${OZAKI_PAIR_REPS:-5}" \
        --no-phases --csv "$out/$name-$round.csv" >>"$out/pair.log" 2>&1 || echo "$name failed" >>"$out/pair.log"
    done
  done
}

# On the GPU machine with binaries carried from here, no build (docs/building.md, "Carried
# binaries"): DIR/bench_a and DIR/bench_b (ozaki_bench of two commits) alternated twice, then
# run_clients with DIR/libozaki_cublas.so (the binaries it finds; torch needs none).
cmd_pair() {
  local dir=${1:?usage: cmake/dev.sh pair DIR}
  mkdir -p "${OUT:-$repo/build-cuda/out}"
  if [ -x "$dir/bench_a" ] && [ -x "$dir/bench_b" ]; then
    run_bench_pair "$dir/bench_a" "$dir/bench_b"
  fi
  [ -f "$dir/libozaki_cublas.so" ] || return 0
  interposer_lib=$dir/libozaki_cublas.so run_clients
}

# On the GPU machine: builds this tree's ozaki_bench, interposer and clients there, puts the
# first two in DIR as bench_b and libozaki_cublas.so beside a carried DIR/bench_a (another
# commit's ozaki_bench, `cmake/dev.sh prebuild` in its worktree), then runs cmd_pair DIR.
cmd_pair_here() {
  local dir=${1:?usage: cmake/dev.sh pair-here DIR} out=${OUT:-$repo/build-cuda/out}
  mkdir -p "$out" "$dir"
  : >"$out/pair-build.log"
  build_cuda_logged "$out/pair-build.log" "ozaki_bench ozaki_cublas cublas_client cublas_call_overhead" ||
    return 1
  cp "$perf_bin/ozaki_bench" "$dir/bench_b"
  cp "$interposer_lib" "$dir/libozaki_cublas.so"
  cmd_pair "$dir"
}

# The binaries a pack holds: what `cmake/dev.sh carried` runs on the GPU machine.
pack_tests="captured_cuda cuda_backend_cuda componentwise_cuda level3_cuda batched_cuda single_cuda quantized_cuda fp8_cuda"
pack_tools="ozaki_bench level3_bench batched_bench cublas_call_overhead call_overhead quantized_bench"
pack_clients="cublas_client cublas_client_linked"

# On the host: builds the pack's binaries for sm_90 and packs them, stripped, with the shared
# libraries the GPU machine lacks (oneDNN's, OpenCL's, libgomp), the interposer, the timeline
# tool and the commit, into build-cuda/pack.tar.xz (well under the device tool's 64 MiB), with
# OZAKI_PACK_BENCH_A (another commit's ozaki_bench) as bench_a.
# Then one call runs the GPU steps with no build there: `cmake/dev.sh carried STEP...`.
cmd_pack() {
  have_nvcc || { say "pack needs nvcc"; return 1; }
  # OZAKI_PACK_BUILT=1: pack what build-cuda holds, without building first.
  if [ "${OZAKI_PACK_BUILT:-0}" != 1 ]; then
    system_packages cuda
    configure_and_build cuda "$repo/build-cuda" "$pack_tests $pack_tools $pack_clients ozaki_cublas ozaki_gpu_timeline" \
      -DOZAKI_ENABLE_TESTS=ON -DOZAKI_TEST_SPACES=cuda
  fi
  local pack=$repo/build-cuda/pack name
  rm -rf "$pack"
  mkdir -p "$pack/lib"
  for name in $pack_tests; do cp "$test_bin/$name" "$pack/"; done
  for name in $pack_clients; do cp "$test_bin/$name" "$pack/"; done
  for name in $pack_tools; do cp "$perf_bin/$name" "$pack/"; done
  cp "$interposer_lib" "$pack/"
  cp "$perf_bin/libozaki_gpu_timeline.so" "$pack/"
  [ -z "${OZAKI_PACK_BENCH_A:-}" ] || cp "$OZAKI_PACK_BENCH_A" "$pack/bench_a"
  strip "$pack"/* 2>/dev/null || true
  # Host libraries the binaries link that the GPU machine has no package for.
  { ldd "$pack"/* 2>/dev/null || true; } | awk '/=> \// && /dnnl|OpenCL|gomp/ { print $3 }' | sort -u |
    xargs -r -I{} cp -L {} "$pack/lib/"
  git -C "$repo" rev-parse --short HEAD >"$pack/COMMIT" 2>/dev/null || echo unknown >"$pack/COMMIT"
  XZ_OPT=-T0 tar -C "$pack" -cJf "$repo/build-cuda/pack.tar.xz" .
  say "pack: $(du -h "$repo/build-cuda/pack.tar.xz" | cut -f1) ($(cat "$pack/COMMIT"))"
  echo 'carry: ["build-cuda/pack.tar.xz"]'
}

# On the GPU machine: unpacks build-cuda/pack.tar.xz (cmake/dev.sh pack) and runs the steps
# named (default: tests pair clients breadth fp32) on its binaries, log to $OUT/carried.log:
#   tests    the pack's CUDA test binaries and the interposer's client checks
#            (OZAKI_CARRIED_TESTS="a_cuda b_cuda": those binaries only)
#   pair     bench_a (if packed) against this pack's ozaki_bench (run_bench_pair)
#   clients  the interposer's real clients (run_clients: overhead, torch, graphs, 2 MPI ranks)
#   breadth  level3_bench and batched_bench (OZAKI_LEVEL3_SIZES, OZAKI_BATCHED_CASES)
#   fp32     the FP32 benchmarks and torch float32 (run_fp32_benches)
#   quantized  quantized_bench (W8A8 and FP8 against cuBLAS's BF16 GEMM, the grouped forms
#              against a batch of normal calls; OZAKI_QUANTIZED_ARGS)
#   declines where Auto declines, the plain call paired with native, and call_overhead's host
#            times (run_declines)
#   profile  level3_bench under the GPU timeline tool, summarised (run_profiles)
#   kernel   Nsight Compute on one launch of the INT8 product kernel (run_kernel_profiles)
#   standings  the DGEMM and ZGEMM rows of the standings (run_standings)
cmd_carried() {
  local out=${OUT:-$repo/build-cuda/out} pack=$repo/build-cuda/pack step t0
  mkdir -p "$out" "$repo/build-cuda/logs"
  rm -rf "$pack"
  mkdir -p "$pack"
  tar -C "$pack" -xJf "$repo/build-cuda/pack.tar.xz"
  perf_bin=$pack test_bin=$pack interposer_lib=$pack/libozaki_cublas.so
  export LD_LIBRARY_PATH=$pack:$pack/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local log=$out/carried.log
  { echo "pack of $(cat "$pack/COMMIT"); $(date -u)"; nvidia-smi -L; } >>"$log" 2>&1 || true
  local steps=("$@")
  [ $# -gt 0 ] || steps=(tests pair clients breadth fp32)
  for step in "${steps[@]}"; do
    t0=$SECONDS
    case $step in
    tests)
      # OZAKI_CARRIED_TESTS: only these test binaries, and not the interposer's checks.
      # shellcheck disable=SC2086 # a list of names
      run_tests "$log" ${OZAKI_CARRIED_TESTS:-$pack_tests}
      [ -n "${OZAKI_CARRIED_TESTS:-}" ] || run_interposer_checks "$log" ;;
    pair) if [ -x "$pack/bench_a" ]; then run_bench_pair "$pack/bench_a" "$pack/ozaki_bench"; fi ;;
    clients) run_clients ;;
    breadth) run_breadth_benches "$log" ;;
    fp32) run_fp32_benches "$log" ;;
    declines) run_declines "$log" ;;
    standings) run_standings "$log" ;;
    profile) run_profiles "$log" ;;
    kernel) run_kernel_profiles "$log" ;;
    quantized)
      # shellcheck disable=SC2086 # a list of arguments
      "$perf_bin/quantized_bench" ${OZAKI_QUANTIZED_ARGS:-} --csv "$out/quantized.csv" \
        --grouped-csv "$out/quantized-grouped.csv" >>"$log" 2>&1 ||
        echo "quantized_bench failed" >>"$log" ;;
    *) echo "unknown step $step" >>"$log" ;;
    esac
    echo "step $step: $((SECONDS - t0)) s" >>"$log"
    # The device tool returns only a few files: each step's files go into one archive as the
    # step ends (so a call stopped at its limit still returns the steps done).
    (cd "$out" && find . -mindepth 1 -maxdepth 1 ! -name results.tar ! -name carried.log -print0 |
      xargs -0 -r tar -rf results.tar && find . -mindepth 1 -maxdepth 1 ! -name results.tar \
      ! -name carried.log -exec rm -rf {} +)
  done
}

case ${1:-} in
demo) shift; cmd_demo "$@" ;;
test) shift; cmd_test "$@" ;;
device) shift; cmd_device "$@" ;;
device-test) shift; cmd_device_test "$@" ;;
prebuild) shift; cmd_prebuild "$@" ;;
interposer) shift; cmd_interposer "$@" ;;
clients) shift; cmd_clients "$@" ;;
pair) shift; cmd_pair "$@" ;;
pair-here) shift; cmd_pair_here "$@" ;;
pack) shift; cmd_pack "$@" ;;
carried) shift; cmd_carried "$@" ;;
capture-check) shift; cmd_capture_check "$@" ;;
fp32) shift; cmd_fp32 "$@" ;;
breadth) shift; cmd_breadth "$@" ;;
cross-replay) shift; mkdir -p "${OUT:-$repo/build-cuda/out}"; cross_replay "${OUT:-$repo/build-cuda/out}/device.log" ;;
*) echo "usage: $0 demo [ozaki_bench options] | test | device [ozaki_bench options] | device-test <test target> [args] | interposer | clients | cross-replay | prebuild | pair DIR | pair-here DIR | capture-check | fp32 | breadth" >&2; exit 2 ;;
esac
