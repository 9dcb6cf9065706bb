#!/bin/bash
# kernel_sass_size.sh: scheme II's CUDA kernels at one moduli count, counted on a host without
# a GPU (no cuobjdump needed): per kernel its SASS instructions (the .text section's bytes / 16:
# every sm_90 instruction is 16 bytes), registers, stack frame (arrays ptxas put in local
# memory) and spills (ptxas -v), for the kernels whose
# mangled names match a regular expression.  The count to take before a device call: it is how
# the residue-tile reconstruction's instructions were counted (docs/benchmarks.md, 2026-12-03,
# fourth part).  Static sizes: a kernel's unexecuted branches (ldexp's slow paths) count too.
#
#   perf_tests/kernel_sass_size.sh BUILD_DIR [MODULI] [REGEX]
#
# BUILD_DIR is a configured CUDA build (cmake/dev.sh test makes build-cuda); MODULI defaults to
# 14, REGEX to every kernel; MODULI "common" takes the kernels that do not depend on it (pass 1,
# the norm tiles, the scaling rules, scheme I).  Examples:
#   perf_tests/kernel_sass_size.sh build-cuda 14 reconstruct_tiles
#   perf_tests/kernel_sass_size.sh build-cuda common norm_tile_partials
set -euo pipefail
build=$(cd "${1:?usage: kernel_sass_size.sh BUILD_DIR [MODULI] [REGEX]}" && pwd)
moduli=${2:-14}
pattern=${3:-.}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The Kokkos the build uses: its include directory, from the build's cache.
kokkos_dir=$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
kokkos_include=$(cd "$kokkos_dir/../../.." && pwd)/include
[ -f "$kokkos_include/Kokkos_Core.hpp" ] || {
  echo "no Kokkos headers at $kokkos_include (from $build/CMakeCache.txt)" >&2
  exit 1
}

# One translation unit with the kernels of this moduli count (instances.hpp's macro), compiled
# as the library compiles them (backends/cuda/CMakeLists.txt: no FMA contraction, sm_90).
if [ "$moduli" = common ]; then
  cat >"$work/kernels.cu" <<EOF
#include <ozaki/gemm.hpp>
namespace ozaki {
namespace Impl {
OZAKI_IMPL_KERNEL_INSTANCES(OZAKI_IMPL_NO_PREFIX, Kokkos::Cuda, ::ozaki::Impl::Views<Kokkos::Cuda>)
}
}
EOF
else
  cat >"$work/kernels.cu" <<EOF
#include <ozaki/gemm.hpp>
OZAKI_IMPL_CRT_KERNELS_AT(OZAKI_IMPL_NO_PREFIX, Kokkos::Cuda, $moduli)
EOF
fi
nvcc -x cu -DKOKKOS_DEPENDENCE -I"$repo/src" -I"$build/include" -I"$repo/backends/cuda" \
  -I"$repo/backends/onednn" -I"$repo/backends/serial" -isystem "$kokkos_include" -O3 -DNDEBUG \
  --fmad=false -extended-lambda -arch=sm_90 -std=c++17 -Xptxas -v -cubin \
  -o "$work/kernels.cubin" "$work/kernels.cu" 2>"$work/ptxas.txt" || {
  cat "$work/ptxas.txt" >&2
  exit 1
}

# ptxas -v: "Compiling entry function 'NAME'" then "Used R registers" and the spill line.
awk '/Compiling entry function/ { name = $0; sub(/.*function .?/, "", name); sub(/.? for .*/, "", name) }
     /bytes spill stores/ { spill[name] = $0 }
     /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); regs[name] = substr($0, RSTART + 5, RLENGTH - 15) }
     END { for (n in regs) print n "\t" regs[n] "\t" spill[n] }' "$work/ptxas.txt" |
  sort >"$work/registers.txt"
# Section sizes: .text.NAME, hexadecimal size in readelf's sixth column.
readelf -S -W "$work/kernels.cubin" 2>/dev/null | awk '$2 ~ /^\.text\./ { sub(/^\.text\./, "", $2); print $2, $6 }' |
  while read -r name hex; do printf '%s\t%d\n' "$name" $((16#$hex / 16)); done | sort >"$work/sizes.txt"

# One line per kernel: its size, registers, stack frame, spills, and the library function whose lambda it
# runs (the first ozaki::Impl::detail function of the demangled name).
printf '%-6s %-5s %-6s %-22s %s\n' "SASS" "regs" "stack" "spill stores/loads" "launched by"
join -t $'\t' "$work/sizes.txt" "$work/registers.txt" | grep -E -- "$pattern" |
  while IFS=$'\t' read -r name size regs spills; do
    function=$(echo "$name" | c++filt | grep -o 'ozaki::Impl::detail::[A-Za-z_]*<[0-9]*' | head -n 1 || true)
    frame=$(echo "$spills" | grep -o '[0-9]* bytes stack frame' | grep -o '^[0-9]*' || true)
    stores=$(echo "$spills" | grep -o '[0-9]* bytes spill stores' | grep -o '^[0-9]*' || true)
    loads=$(echo "$spills" | grep -o '[0-9]* bytes spill loads' | grep -o '^[0-9]*' || true)
    policy=$(echo "$name" | c++filt | grep -o 'RangePolicy\|TeamPolicy' | head -n 1 || true)
    label=${function:+$function>, $policy}
    printf '%-6d %-5s %-6s %-22s %s\n' "$size" "$regs" "${frame:-?}" "${stores:-?}/${loads:-?}" \
      "${label:-(a Kokkos kernel)}"
  done | sort -k5
