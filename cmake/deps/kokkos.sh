#!/usr/bin/env bash
# Builds the Kokkos and Kokkos Kernels that ozaki needs when the machine has none.
#
#   cmake/deps/kokkos.sh sources      fetch + extract + patch the 3.4.01 sources only
#   cmake/deps/kokkos.sh host         ... and build Serial+OpenMP into $OZAKI_DEPS_DIR/install/host
#   cmake/deps/kokkos.sh cuda         ... and build Cuda(sm_90)+Serial into $OZAKI_DEPS_DIR/install/cuda
#   cmake/deps/kokkos.sh openmp       ... Serial+OpenMP without the BLAS TPL (no packages to
#                                     install: the GPU machine, which has no network, builds it
#                                     to replay CUDA calls on OpenMP, cmake/dev.sh device)
#
# The last line printed on stdout is the install prefix (for `sources`, the source folder).
#
# Why not Debian's binary package: libtrilinos-kokkos-dev is Serial only, its CMake config
# points at /usr/lib/include, and its targets are called trilinos_*.  So the sources come
# from Debian's `trilinos` source package (13.2.0, which vendors Kokkos 3.4.01), fetched with
# `apt-get source` through a deb-src list derived from this machine's own apt sources.
# Only packages/kokkos and packages/kokkos-kernels are kept (27 MB instead of 166 MB).
#
# Every step is skipped when its stamp file exists, so a second call costs nothing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
deps_dir=${OZAKI_DEPS_DIR:-$repo/.deps}
src_dir=$deps_dir/src
jobs=${OZAKI_JOBS:-$(nproc 2>/dev/null || echo 2)}
cuda_arch=${OZAKI_CUDA_ARCH:-HOPPER90}

log() { echo "[ozaki-deps] $*" >&2; }
die() { echo "[ozaki-deps] error: $*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root (or sudo) to run: $*"; fi
}

# Installs the Debian packages that the build needs and the machine lacks.
ensure_debian_packages() {
  command -v dpkg-query >/dev/null 2>&1 || return 0  # not Debian-like: the user provides them
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
}

# CMake, a C++ compiler and a build tool, from Debian where the machine lacks them.  Ninja is
# used where present (the GPU machine has it and no make).
ensure_build_tools() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v ninja >/dev/null 2>&1 || command -v make >/dev/null 2>&1 || missing+=(make)
  [ ${#missing[@]} -eq 0 ] || ensure_debian_packages "${missing[@]}"
  if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null 2>&1; then export CMAKE_GENERATOR=Ninja; fi
}

# Writes an apt configuration under $1 whose entries are this machine's own `deb` entries
# turned into `deb-src`.  Nothing in the system's apt configuration is changed.
write_deb_src_config() {
  local cfg=$1
  mkdir -p "$cfg/parts" "$cfg/lists/partial" "$cfg/cache/archives/partial"
  : >"$cfg/sources.list"
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*deb[[:space:]]\+/deb-src /p' "$f" >>"$cfg/sources.list"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed 's/^Types:.*$/Types: deb-src/' "$f" >"$cfg/parts/$(basename "$f")"
  done
}

fetch_sources() {
  if [ -f "$src_dir/.complete" ]; then return 0; fi
  local t0=$SECONDS
  command -v apt-get >/dev/null 2>&1 ||
    die "no apt-get: install Kokkos >= 3.4 and Kokkos Kernels yourself and pass Kokkos_ROOT / KokkosKernels_ROOT"
  ensure_debian_packages ca-certificates tar gzip patch
  work=$(mktemp -d "${TMPDIR:-/tmp}/ozaki-deps.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  write_deb_src_config "$work/apt"
  local apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list"
    -o "Dir::Etc::SourceParts=$work/apt/parts"
    -o "Dir::State::Lists=$work/apt/lists"
    -o "Dir::Cache=$work/apt/cache"
    -o "APT::Sandbox::User=root")
  log "updating the derived deb-src index"
  # A third-party entry without sources makes `update` fail; the Debian ones are what matter,
  # and `apt-get source` below fails clearly if they are missing.
  apt-get "${apt_opts[@]}" update -qq >&2 || log "apt-get update reported errors (continuing)"
  log "downloading Debian's trilinos source package (~166 MB)"
  (cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq trilinos >&2) ||
    die "apt-get source trilinos failed: does this machine's apt configuration reach a Debian archive?"
  local tarball
  tarball=$(ls "$work"/trilinos_*.orig.tar.* 2>/dev/null | head -n 1 || true)
  [ -n "$tarball" ] || die "no trilinos orig tarball was downloaded"
  local top
  # (head closes the pipe early: tolerate the SIGPIPE under pipefail)
  top=$(tar tf "$tarball" | head -n 1 | cut -d/ -f1 || true)
  log "extracting packages/kokkos and packages/kokkos-kernels from $(basename "$tarball")"
  rm -rf "$src_dir"
  mkdir -p "$src_dir"
  tar xf "$tarball" -C "$src_dir" --strip-components=2 \
    "$top/packages/kokkos" "$top/packages/kokkos-kernels"
  local version
  version=$(sed -n 's/^set(Kokkos_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))/\2/p' \
    "$src_dir/kokkos/CMakeLists.txt" | paste -sd. -)
  log "extracted Kokkos $version"
  [ "${version%%.*}" -ge 3 ] || die "Kokkos $version is too old (need >= 3.4)"
  echo "$version" >"$src_dir/.complete"
  apply_source_patches
  log "sources fetched, extracted and patched in $((SECONDS - t0)) s"
}

# Our own changes to the 3.4.01 sources, each applied once (a stamp per patch, so that a
# source tree extracted before a patch existed gets it on the next call):
#   cuda13-sm90        builds with CUDA 13 and knows sm_90;
#   cuda-reduce-races  warp synchronisation in the scalar warp step of 3.4's CUDA reductions (a
#                      step read a slot another lane wrote in the same step) and a block sync
#                      before the final value is read.  It did not remove racecheck's reports
#                      on ozaki's tests: those came from the RangePolicy reductions' scan path,
#                      which ozaki no longer uses (flat_reduce, kernels.hpp).  Kept until a
#                      sanitizer run shows whether anything still reaches the patched code.
#   cuda-launch-mutex  launches through constant memory share one staging buffer across all
#                      instances: two host threads launching at once, each on its own
#                      instance, overwrote each other's kernel arguments (illegal addresses
#                      in ozaki's four-thread test); one launch at a time through it, as later
#                      Kokkos releases do.
#   gcc13-cstdint      #include <cstdint> in Kokkos_Macros.hpp (which every Kokkos header
#                      includes) and Kokkos_MemoryPool.cpp: GCC 13's standard headers no longer
#                      include it on the way, and the openmp variant built with the GPU
#                      machine's GCC 13.3 stopped at Kokkos_MemoryPool.cpp ("uint32_t does not
#                      name a type").  nvcc's own headers include it, so CUDA builds never saw
#                      it; it is listed before the CUDA patches so that the CUDA install's stamp
#                      (the last patch's name) stays as it was.
source_patches=(cuda13-sm90 gcc13-cstdint cuda-reduce-races cuda-launch-mutex)
apply_source_patches() {
  [ "$(cat "$src_dir/.complete")" = "3.4.01" ] || return 0
  local name
  for name in "${source_patches[@]}"; do
    [ -f "$src_dir/.patched-$name" ] && continue
    # The first patch was applied before stamps existed: --forward skips what is in place.
    patch -d "$src_dir/kokkos" -p1 --forward --quiet -r - <"$here/kokkos-3.4.01-$name.patch" >&2 ||
      [ "$name" = cuda13-sm90 ] || die "patch $name does not apply"
    touch "$src_dir/.patched-$name"
  done
}

# The CMake file that Kokkos Kernels' configure includes first: Kokkos 3.4's exported config
# refers to CUDA::cudart_static_deps, which only exists once FindCUDAToolkit has run (CMake 4).
write_cuda_toolkit_preload() {
  local f=$deps_dir/find_cudatoolkit_first.cmake
  echo 'find_package(CUDAToolkit REQUIRED)' >"$f"
  echo "$f"
}

build_variant() {
  local variant=$1
  local prefix=$deps_dir/install/$variant
  # The stamp names the configuration: an install made before the host variant took the BLAS
  # TPL is rebuilt once.
  # The CUDA install's stamp names the last source patch (each changes it).
  local stamp=$prefix/.complete
  [ "$variant" = host ] && stamp=$prefix/.complete-blas
  [ "$variant" = cuda ] && stamp=$prefix/.complete-${source_patches[${#source_patches[@]} - 1]}
  if [ -f "$stamp" ]; then
    echo "$prefix"
    return 0
  fi
  ensure_build_tools
  fetch_sources
  apply_source_patches
  local build=$deps_dir/build/$variant
  rm -rf "$build" "$prefix"
  mkdir -p "$build"
  local common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$prefix"
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5)
  local kokkos_opts kk_opts=()
  case $variant in
  host)
    kokkos_opts=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON)
    # Native FP64 GEMM on host spaces through the BLAS TPL: OpenBLAS from Debian (Kokkos
    # Kernels' own kernel ran at 15 GFLOP/s on 2 cores; docs/benchmarks.md).
    ensure_debian_packages libopenblas-dev
    kk_opts=(-DKokkosKernels_ENABLE_TPL_BLAS=ON)
    ;;
  openmp)
    kokkos_opts=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON)
    ;;
  cuda)
    command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || die "cuda variant needs nvcc"
    export PATH=$PATH:/usr/local/cuda/bin
    # Position-independent code: the cuBLAS interposer (libozaki_cublas.so) links these
    # static libraries into a shared object.
    common+=(-DCMAKE_POSITION_INDEPENDENT_CODE=ON)
    kokkos_opts=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON
      "-DKokkos_ARCH_${cuda_arch}=ON"
      -DCMAKE_CXX_COMPILER="$src_dir/kokkos/bin/nvcc_wrapper")
    kk_opts=(-DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
      -DCMAKE_CXX_COMPILER="$src_dir/kokkos/bin/nvcc_wrapper"
      -DCMAKE_PROJECT_INCLUDE="$(write_cuda_toolkit_preload)")
    # nvcc_wrapper's built-in default (sm_35) is rejected by nvcc 13.
    export NVCC_WRAPPER_DEFAULT_COMPILER=${CXX:-g++}
    ;;
  *) die "unknown variant '$variant' (host|cuda)" ;;
  esac
  local t0=$SECONDS
  log "building Kokkos ($variant) with $jobs jobs"
  cmake -S "$src_dir/kokkos" -B "$build/kokkos" "${common[@]}" "${kokkos_opts[@]}" >"$build/kokkos.log" 2>&1 ||
    { tail -n 40 "$build/kokkos.log" >&2; die "Kokkos configure failed ($build/kokkos.log)"; }
  cmake --build "$build/kokkos" -j "$jobs" >>"$build/kokkos.log" 2>&1 ||
    { tail -n 40 "$build/kokkos.log" >&2; die "Kokkos build failed ($build/kokkos.log)"; }
  cmake --install "$build/kokkos" >>"$build/kokkos.log" 2>&1
  log "Kokkos ($variant) built in $((SECONDS - t0)) s"
  t0=$SECONDS
  log "building Kokkos Kernels ($variant), explicit instantiation off"
  cmake -S "$src_dir/kokkos-kernels" -B "$build/kokkos-kernels" "${common[@]}" "${kk_opts[@]}" \
    -DKokkos_ROOT="$prefix" -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF \
    -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF \
    -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_INST_COMPLEX_FLOAT=OFF \
    -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=OFF \
    -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF \
    -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_ORDINAL_INT64_T=OFF \
    -DKokkosKernels_ADD_DEFAULT_ETI=OFF \
    >"$build/kokkos-kernels.log" 2>&1 ||
    { tail -n 40 "$build/kokkos-kernels.log" >&2; die "Kokkos Kernels configure failed"; }
  cmake --build "$build/kokkos-kernels" -j "$jobs" >>"$build/kokkos-kernels.log" 2>&1 ||
    { tail -n 40 "$build/kokkos-kernels.log" >&2; die "Kokkos Kernels build failed"; }
  cmake --install "$build/kokkos-kernels" >>"$build/kokkos-kernels.log" 2>&1
  log "Kokkos Kernels ($variant) built in $((SECONDS - t0)) s"
  rm -rf "$build"
  touch "$stamp"
  echo "$prefix"
}

# Sourced by cmake/dev.sh for its helpers only.
if [ -n "${OZAKI_DEPS_ONLY_FUNCTIONS:-}" ]; then return 0; fi

case ${1:-} in
sources) fetch_sources && apply_source_patches && echo "$src_dir" ;;
host | cuda | openmp) build_variant "$1" ;;
*) die "usage: $0 sources|host|cuda|openmp" ;;
esac
