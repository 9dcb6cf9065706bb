#!/usr/bin/env bash
# The cuBLAS interposer on an unmodified cuBLAS program (cublas_client.c):
#   interposer_check.sh <cublas_client> <libozaki_cublas.so> [<client linked against it>]
# runs the client five times: plain cuBLAS, and under LD_PRELOAD with OZAKI_CUBLAS=off, auto,
# force, and force with OZAKI_CUBLAS_GRAPHS=0.  Each run must keep every case within its bound
# (the client's exit status); `off` must give plain cuBLAS's bits everywhere, auto and force on
# the "pass_" cases, and force without graphs on the captured cases too; force must have taken
# the FP64 cases through ozaki (cublasLtMatmul's among them, a bias added by the interposer),
# the captured ones inside their graphs (its log), and say so in its summary; of the batched
# and grouped calls it must take every product of at least 512 one by one, keep a grouped
# call's small group as a grouped call of its own, and pass a batch of small products whole.
# The level-3 calls (syrk, herk, trsm, trmm, symm, hemm) must go through ozaki under force, and
# under auto trsm and trmm below m = n = 16384 (dtrmm always) and syrk and herk below
# n = k = 8192 must pass with plain cuBLAS's bits.
# A sixth run,
# force with OZAKI_CUBLAS_FP32=1, must take the FP32 SGEMM and cublasLtMatmul-with-bias cases
# and still pass the TF32 and GELU cublasLtMatmul cases through whole (plain cuBLAS's bits).
# The linked client (libozaki_cublas.so ahead of libcublas, no LD_PRELOAD) must do the same as
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
run nographs LD_PRELOAD="$lib" OZAKI_CUBLAS=force OZAKI_CUBLAS_GRAPHS=0 OZAKI_CUBLAS_LOG=1

[ "$(hashes off)" = "$(hashes plain)" ] || fail "OZAKI_CUBLAS=off changed some bits"
for mode in auto force nographs; do
  [ "$(pass_hashes $mode)" = "$(pass_hashes plain)" ] || fail "$mode changed a pass-through case"
done
capture_hashes() { hashes "$1" | grep '^graph_capture' || true; }
[ "$(capture_hashes nographs)" = "$(capture_hashes plain)" ] ||
  fail "nographs: a captured call did not pass through"
grep -q "stream capture" "$work/nographs.err" || fail "nographs: the captured calls were not passed through"
# force: every FP64 call of at least 512 in each dimension went through ozaki, one log line
# each: 5 real and 3 complex single calls, the strided batch of 3 as one batch, 3
# cublasLtMatmul calls (real, real with a bias, complex), the two captures' warm-up calls, the
# moved handle's 2 calls, 2 threads, 11 lines of batched and grouped calls and 12 level-3
# calls (below); and the two captured calls ran scheme II inside their graphs (the warm-up
# calls made the library's streams for graphs).
through=$(grep -- "-> Int8" "$work/force.err" | grep -vc "(captured into a graph)" || true)
[ "$through" -ge 41 ] || fail "force: $through eager calls through ozaki, expected 41"
# The real FP64 strided batches as one batch each (gemm_batched: one plan for the batch).
for expected in "cublasDgemmStridedBatched" "cublasGemmStridedBatchedEx TN 704x640x576"; do
  grep -q -- "$expected.* -> Int8Crt L=[0-9]*, a batch of [23]," "$work/force.err" ||
    fail "force: $expected did not go through ozaki as one batch"
done
# The other batched and grouped calls' products, one by one: cublasDgemmBatched 3 (device
# scalars), cublasZgemmBatched 2, cublasGemmBatchedEx 2 (device scalars),
# cublasDgemmGroupedBatched 2 + 1 of its two large groups.
for expected in "3 cublasDgemmBatched NT 640x576x704" "2 cublasZgemmBatched CN 576x640x608" \
  "1 cublasGemmStridedBatchedEx TN 704x640x576" "2 cublasGemmBatchedEx NN 576x704x640" \
  "2 cublasDgemmGroupedBatched NN 640x576x704" "1 cublasDgemmGroupedBatched TT 768x544x608"; do
  products=$(grep -c -- "${expected#* } -> Int8" "$work/force.err" || true)
  [ "$products" -eq "${expected%% *}" ] ||
    fail "force: $products products of ${expected#* } through ozaki, expected ${expected%% *}"
done
grep -q -- "cublasDgemmGroupedBatched NT 48x40x56 -> cuBLAS (below OZAKI_CUBLAS_MIN), a group of 1 as a grouped call of its own" \
  "$work/force.err" || fail "force: the grouped call's small group was not kept as a grouped call of its own"
grep -q -- "cublasDgemmBatched NN 32x32x32 -> cuBLAS (below OZAKI_CUBLAS_MIN), the whole batch of 16" \
  "$work/force.err" || fail "force: the batch of small products did not pass whole"
# The level-3 calls, each through its ozaki routine (the log: entry point, side, uplo, trans and
# diag letters where it has them, shape).
for expected in "cublasDsyrk_v2 LT 576x640" "cublasZsyrk_v2 UN 544x608" \
  "cublasZherk_v2 LC 608x576" "cublasDtrsm_v2 LLNN 576x544" "cublasDtrsm_v2 RLTU 608x576" \
  "cublasZtrsm_v2 RUCU 544x608" "cublasDtrmm_v2 LUTU 608x544" "cublasZtrmm_v2 RLNN 576x640" \
  "cublasZtrmm_v2 LLCN 544x576" "cublasDsymm_v2 RU 544x576" "cublasZsymm_v2 LL 576x544" \
  "cublasZhemm_v2 LU 608x576"; do
  grep -q -- "$expected -> Int8" "$work/force.err" || fail "force: $expected did not go through ozaki"
done
# auto: trsm and trmm pass (trsm and ztrmm below m = n = 16384, dtrmm always), and syrk and herk
# below n = k = 8192, with plain cuBLAS's bits.
level3_passed() { hashes "$1" | grep -E '^([dz]tr[sm]m|[dz]syrk|zherk)_' || true; }
[ "$(level3_passed plain | wc -l)" -eq 9 ] || fail "plain: expected 9 trsm, trmm, syrk and herk cases"
[ "$(level3_passed auto)" = "$(level3_passed plain)" ] ||
  fail "auto: a trsm, trmm, syrk or herk call did not pass with plain cuBLAS's bits"
grep -q -- "cublasDtrsm_v2 LLNN 576x544 -> cuBLAS (trsm or ztrmm below m = n = 16384, or dtrmm" \
  "$work/auto.err" || fail "auto: the trsm call did not pass for its routine"
grep -q -- "cublasZherk_v2 LC 608x576 -> cuBLAS (syrk or herk below n = k = 8192" "$work/auto.err" ||
  fail "auto: the herk call did not pass for its size"
captured=$(grep -c -- "-> Int8Crt L=[0-9]*.*(captured into a graph)" "$work/force.err" || true)
[ "$captured" -eq 2 ] || fail "force: $captured captured calls ran scheme II inside their graph, expected 2"
grep -q "through ozaki" "$work/force.err" || fail "force: no summary at exit"
grep -q "cuBLAS (below OZAKI_CUBLAS_MIN)" "$work/force.err" || fail "force: the small call was not passed through"
lt=$(grep -c -- "cublasLtMatmul [NTC][NTC] [0-9x]* -> Int8" "$work/force.err" || true)
[ "$lt" -eq 3 ] || fail "force: $lt cublasLtMatmul calls through ozaki, expected 3"
grep -q -- "cublasLtMatmul NT 1536x1024x1024 -> Int8.* + bias" "$work/force.err" ||
  fail "force: the FP64 cublasLtMatmul with a bias did not have its bias added after ozaki"
# FP32 through ozaki (OZAKI_CUBLAS_FP32=1): the SGEMM case runs ozaki's FP32 path, within its
# bound; without it (every run above) it passed through with plain cuBLAS's bits.
run fp32 LD_PRELOAD="$lib" OZAKI_CUBLAS=force OZAKI_CUBLAS_FP32=1 OZAKI_CUBLAS_LOG=1
grep -q -- "cublasSgemm_v2 NN 1024x1024x1024 -> Int8" "$work/fp32.err" ||
  fail "fp32: the SGEMM call did not go through ozaki"
# cublasLtMatmul in FP32 with a bias (torch's nn.Linear at precision "highest") through ozaki,
# its bias added after; a TF32 compute type and a GELU epilogue passed through whole, with
# plain cuBLAS's bits.
grep -q -- "cublasLtMatmul TN 1024x1024x1024 -> Int8.* + bias" "$work/fp32.err" ||
  fail "fp32: the FP32 cublasLtMatmul with a bias did not go through ozaki"
grep -q -- "cublasLtMatmul TN 1024x1024x1024 -> cuBLAS (cublasLtMatmul in other types" \
  "$work/fp32.err" || fail "fp32: the TF32 cublasLtMatmul was not passed through for its type"
grep -q -- "cublasLtMatmul TN 1024x1024x1024 -> cuBLAS (cublasLtMatmul with an epilogue" \
  "$work/fp32.err" || fail "fp32: the GELU cublasLtMatmul was not passed through for its epilogue"
lt_pass_hashes() { hashes "$1" | grep -e '^pass_lt_tf32' -e '^pass_lt_gelu' || true; }
[ -n "$(lt_pass_hashes plain)" ] || fail "plain: no TF32 or GELU cublasLtMatmul case ran"
[ "$(lt_pass_hashes fp32)" = "$(lt_pass_hashes plain)" ] ||
  fail "fp32: a TF32 or GELU cublasLtMatmul case changed"
if [ -n "${3:-}" ]; then
  env OZAKI_CUBLAS=force OZAKI_CUBLAS_LOG=1 "$3" >"$work/linked.out" 2>"$work/linked.err" ||
    { cat "$work/linked.out" "$work/linked.err" >&2; fail "linked: cases outside their bound"; }
  linked=$(grep -c -- "-> Int8" "$work/linked.err" || true)
  [ "$linked" -ge 43 ] || fail "linked: $linked calls through ozaki, expected 43"
  sort "$work/linked.out" >"$work/linked.sorted"
  [ "$(pass_hashes linked)" = "$(pass_hashes plain)" ] || fail "linked changed a pass-through case"
  echo "interposer_check: the linked client took $linked calls through ozaki"
fi
echo "interposer_check: passed ($through eager and $captured captured calls through ozaki under force)"
