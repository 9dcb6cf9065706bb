#!/usr/bin/env bash
# The cuBLAS interposer on an unmodified cuBLAS program (cublas_client.c):
#   interposer_check.sh <cublas_client> <libozaki_cublas.so> [<client linked against it>]
# runs the client five times: plain cuBLAS, and under LD_PRELOAD with OZAKI_CUBLAS=off, auto,
# force, and force with OZAKI_CUBLAS_GRAPHS=0.  Each run must keep every case within its bound
# (the client's exit status); `off` must give plain cuBLAS's bits everywhere, auto and force on
# the "pass_" cases, and force without graphs on the captured cases too; force must have taken
# the FP64 cases through ozaki, the captured ones inside their graphs (its log), and say so in
# its summary.  The linked client (libozaki_cublas.so ahead of libcublas, no LD_PRELOAD) must
# do the same as force without the preload.
set -euo pipefail
client=$1
lib=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "interposer_check: $*" >&2; exit 1; }

run() {  # run <name> [env assignments...]
  local name=$1
  shift
  env "$@" "$client" >"$work/$name.out" 2>"$work/$name.err" ||
    { cat "$work/$name.out" "$work/$name.err" >&2; fail "$name: cases outside their bound"; }
  sort "$work/$name.out" >"$work/$name.sorted"
  echo "== $name" && cat "$work/$name.sorted" && grep -h "ozaki_cublas:" "$work/$name.err" | tail -n 30 || true
}
hashes() { awk '$1 == "case" { print $2, $6 }' "$work/$1.sorted"; }
pass_hashes() { hashes "$1" | grep '^pass_' || true; }

run plain
run off LD_PRELOAD="$lib" OZAKI_CUBLAS=off
run auto LD_PRELOAD="$lib" OZAKI_CUBLAS_LOG=1
run force LD_PRELOAD="$lib" OZAKI_CUBLAS=force OZAKI_CUBLAS_LOG=1
run nographs LD_PRELOAD="$lib" OZAKI_CUBLAS=force OZAKI_CUBLAS_GRAPHS=0 OZAKI_CUBLAS_LOG=1

[ "$(hashes off)" = "$(hashes plain)" ] || fail "OZAKI_CUBLAS=off changed some bits"
for mode in auto force nographs; do
  [ "$(pass_hashes $mode)" = "$(pass_hashes plain)" ] || fail "$mode changed a pass-through case"
done
capture_hashes() { hashes "$1" | grep '^graph_capture' || true; }
[ "$(capture_hashes nographs)" = "$(capture_hashes plain)" ] ||
  fail "nographs: a captured call did not pass through"
grep -q "stream capture" "$work/nographs.err" || fail "nographs: the captured calls were not passed through"
# force: every FP64 call of at least 512 in each dimension went through ozaki: 5 real and 3
# complex single calls, 3 products of the batch, the two captures' warm-up calls, the moved
# handle's 2 calls, 2 threads; and the two captured calls ran scheme II inside their graphs
# (the warm-up calls made the library's streams for graphs).
through=$(grep -- "-> Int8" "$work/force.err" | grep -vc "(captured into a graph)" || true)
[ "$through" -ge 17 ] || fail "force: $through eager calls through ozaki, expected 17"
captured=$(grep -c -- "-> Int8Crt L=[0-9]*.*(captured into a graph)" "$work/force.err" || true)
[ "$captured" -eq 2 ] || fail "force: $captured captured calls ran scheme II inside their graph, expected 2"
grep -q "through ozaki" "$work/force.err" || fail "force: no summary at exit"
grep -q "cuBLAS (below OZAKI_CUBLAS_MIN)" "$work/force.err" || fail "force: the small call was not passed through"
# FP32 through ozaki (OZAKI_CUBLAS_FP32=1): the SGEMM case runs ozaki's FP32 path, within its
# bound; without it (every run above) it passed through with plain cuBLAS's bits.
run fp32 LD_PRELOAD="$lib" OZAKI_CUBLAS=force OZAKI_CUBLAS_FP32=1 OZAKI_CUBLAS_LOG=1
grep -q -- "cublasSgemm_v2 NN 1024x1024x1024 -> Int8" "$work/fp32.err" ||
  fail "fp32: the SGEMM call did not go through ozaki"
if [ -n "${3:-}" ]; then
  env OZAKI_CUBLAS=force OZAKI_CUBLAS_LOG=1 "$3" >"$work/linked.out" 2>"$work/linked.err" ||
    { cat "$work/linked.out" "$work/linked.err" >&2; fail "linked: cases outside their bound"; }
  linked=$(grep -c -- "-> Int8" "$work/linked.err" || true)
  [ "$linked" -ge 17 ] || fail "linked: $linked calls through ozaki, expected 17"
  sort "$work/linked.out" >"$work/linked.sorted"
  [ "$(pass_hashes linked)" = "$(pass_hashes plain)" ] || fail "linked changed a pass-through case"
  echo "interposer_check: the linked client took $linked calls through ozaki"
fi
echo "interposer_check: passed ($through eager and $captured captured calls through ozaki under force)"
