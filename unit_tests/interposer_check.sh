#!/usr/bin/env bash
# The cuBLAS interposer on an unmodified cuBLAS program (cublas_client.c):
#   interposer_check.sh <cublas_client> <libozaki_cublas.so> [<client linked against it>]
# runs the client five times: plain cuBLAS, and under LD_PRELOAD with OZAKI_CUBLAS=off, auto,
# force, and force with OZAKI_CUBLAS_GRAPHS=1.  Each run must keep every case within its bound (the client's exit status);
# `off` must give plain cuBLAS's bits everywhere, auto and force on the "pass_" cases; force
# must have taken the FP64 cases through ozaki (its log) and say so in its summary.  The
# linked client (libozaki_cublas.so ahead of libcublas, no LD_PRELOAD) must do the same as
# force without the preload.
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

[ "$(hashes off)" = "$(hashes plain)" ] || fail "OZAKI_CUBLAS=off changed some bits"
for mode in auto force; do
  [ "$(pass_hashes $mode)" = "$(pass_hashes plain)" ] || fail "$mode changed a pass-through case"
done
# force: every FP64 call of at least 512 in each dimension went through ozaki: 5 real and 3
# complex single calls, 3 products of the batch, the two captures' warm-up calls (the captured
# calls pass through), the moved handle's 2 calls, 2 threads.
through=$(grep -c -- "-> Int8" "$work/force.err" || true)
[ "$through" -ge 17 ] || fail "force: $through calls through ozaki, expected 17"
grep -q "stream capture" "$work/force.err" || fail "force: the captured calls were not passed through"
grep -q "through ozaki" "$work/force.err" || fail "force: no summary at exit"
# force with OZAKI_CUBLAS_GRAPHS=1 (experimental): the captured calls run scheme II inside the
# graph (their eager warm-up calls made the library's streams for graphs), within their bounds.
run graphs LD_PRELOAD="$lib" OZAKI_CUBLAS=force OZAKI_CUBLAS_GRAPHS=1 OZAKI_CUBLAS_LOG=1
grep -q -- "-> Int8Crt L=[0-9]*.*(captured into a graph)" "$work/graphs.err" ||
  fail "graphs: no captured call ran scheme II inside its graph"
grep -q "cuBLAS (below OZAKI_CUBLAS_MIN)" "$work/force.err" || fail "force: the small call was not passed through"
if [ -n "${3:-}" ]; then
  env OZAKI_CUBLAS=force OZAKI_CUBLAS_LOG=1 "$3" >"$work/linked.out" 2>"$work/linked.err" ||
    { cat "$work/linked.out" "$work/linked.err" >&2; fail "linked: cases outside their bound"; }
  linked=$(grep -c -- "-> Int8" "$work/linked.err" || true)
  [ "$linked" -ge 17 ] || fail "linked: $linked calls through ozaki, expected 17"
  sort "$work/linked.out" >"$work/linked.sorted"
  [ "$(pass_hashes linked)" = "$(pass_hashes plain)" ] || fail "linked changed a pass-through case"
  echo "interposer_check: the linked client took $linked calls through ozaki"
fi
echo "interposer_check: passed ($through calls through ozaki under force)"
