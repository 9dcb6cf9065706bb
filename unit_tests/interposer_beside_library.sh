#!/usr/bin/env bash
# The library and the interposer in one process:
#   interposer_beside_library.sh <cuda_backend_cuda> <libozaki_cublas.so>
# runs Cuda.LibraryAndCublasCallsInOneProcess (ozaki::gemm on the program's own Kokkos, and
# cublasDgemm) under LD_PRELOAD with OZAKI_CUBLAS=force: the test asserts every C against
# double-double; here, that the cublasDgemm calls went through the interposer's ozaki.
set -euo pipefail
binary=$1
lib=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
LD_PRELOAD="$lib" OZAKI_CUBLAS=force OZAKI_CUBLAS_LOG=1 OZAKI_POISON_SCRATCH=1 \
  "$binary" --gtest_filter=Cuda.LibraryAndCublasCallsInOneProcess 2>"$err" ||
  { cat "$err" >&2; echo "interposer_beside_library: the test failed" >&2; exit 1; }
through=$(grep -c -- "cublasDgemm_v2 NN 640x576x1024 -> Int8" "$err" || true)
[ "$through" -ge 2 ] ||
  { cat "$err" >&2; echo "interposer_beside_library: $through cublasDgemm calls through the interposer, expected 2" >&2; exit 1; }
echo "interposer_beside_library: passed ($through cublasDgemm calls through the interposer beside the library's own)"
