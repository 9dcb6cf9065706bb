#!/usr/bin/env bash
# The main job's CLI (ozaki_bench) on a small shape, as the README's first command runs it:
#   bench_check.sh <ozaki_bench>
# - two runs with the same seed draw the same matrices: the same errors and the same choices
#   in their CSVs (only the times may differ), and another seed draws other matrices;
# - at phi = 2 (exponents spread over about 2^6) the plain call and scheme II with its
#   automatic count are no less accurate than native FP64 GEMM on the sampled entries;
# - every row's error is within its Report's componentwise bound (Report::error_bound);
# - bad arguments are refused before anything runs, with exit status 2 and one line naming
#   the option; so are empty shapes and shapes whose matrices cannot fit in memory (no
#   configuration runs: no table on stdout).
# No time is asserted (timing is not a unit test's business).
set -euo pipefail
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "bench_check: $*" >&2; exit 1; }

run() {  # run <csv name> [ozaki_bench arguments...]
  local name=$1
  shift
  "$bench" --shapes 96x80x300 --phi 2 --configs native,default,crt:auto --reps 2 --no-phases \
    --csv "$work/$name.csv" "$@" >"$work/$name.out" 2>&1 ||
    { cat "$work/$name.out" >&2; fail "$name: ozaki_bench failed"; }
}
# The columns that depend on the inputs and the choices, not on time: config, algorithm,
# moduli, err_normwise, err_relative, fallback, reason.
choices() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
           { print $col["config"], $col["algorithm"], $col["moduli"], $col["err_normwise"],
             $col["err_relative"], $col["fallback"], $col["reason"] }' "$work/$1.csv"
}
error_of() {  # error_of <csv name> <config>
  awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
                     $col["config"] == c { print $col["err_normwise"] }' "$work/$1.csv"
}

run first
run second
run other --seed 7
[ "$(wc -l <"$work/first.csv")" -eq 4 ] || fail "expected a header and 3 rows in the CSV"
# The run ends with its answer in words: one summary line per configuration beside native.
tail -n 3 "$work/first.out" | grep -q "96x80x300, phi = 2, default: .*x native, error .* (native's" ||
  { tail -n 5 "$work/first.out" >&2; fail "no summary line for default at the end"; }
tail -n 3 "$work/first.out" | grep -q "crt:auto: Int8Crt, [0-9]* moduli" ||
  { tail -n 5 "$work/first.out" >&2; fail "no summary line for crt:auto at the end"; }
choices first >"$work/first.txt"
choices second >"$work/second.txt"
choices other >"$work/other.txt"
diff "$work/first.txt" "$work/second.txt" >&2 || fail "the same seed gave different results"
if diff -q "$work/first.txt" "$work/other.txt" >/dev/null; then
  fail "--seed 7 gave the same errors as the default seed"
fi

native=$(error_of first native)
for config in default crt:auto; do
  err=$(error_of first "$config")
  [ -n "$err" ] || fail "no row for $config"
  awk -v e="$err" -v n="$native" 'BEGIN { exit !(e + 0 <= n + 0 && n + 0 > 0) }' ||
    fail "$config: error $err above native's $native at phi = 2"
  echo "$config: error $err, native $native"
done
# Every row's measured error lies within the bound its Report guarantees (native's included).
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
         { e = $col["err_normwise"]; b = $col["error_bound"]
           if (!(b + 0 > 0) || e + 0 > b + 0) { print $col["config"] ": error " e ", bound " b; bad = 1 } }
         END { exit bad }' "$work/first.csv" >&2 || fail "an error above its Report's bound"

refused() {  # refused <expected text> [arguments...]: exit status 2 and the text on stderr
  local text=$1 status=0
  shift
  "$bench" "$@" >"$work/refused.out" 2>"$work/refused.err" || status=$?
  [ "$status" -eq 2 ] || fail "'$*' exited with $status, expected 2"
  grep -q -- "$text" "$work/refused.err" || { cat "$work/refused.err" >&2; fail "'$*': no '$text'"; }
}
refused "criteria sets its own phi" --suite criteria --phi 1
refused "sweep sets its own phi" --suite sweep --phi 1
refused "unknown suite" --suite nosuch
refused "min-seconds" --min-seconds soon
refused "'0' is not a positive integer" --shapes 0
refused "'0' is not a positive integer" --shapes 64x0x64
refused "'-5' is not a positive integer" --shapes -5
refused "shape 100000000x100000000x100000000 does not fit in memory" --shapes 100000000
# One message (Kokkos may add its own warnings), and no row of any configuration.
[ "$(grep -c '^ozaki_bench:' "$work/refused.err")" -eq 1 ] ||
  { cat "$work/refused.err" >&2; fail "--shapes 100000000: not one message"; }
if grep -q "phi =" "$work/refused.out"; then
  cat "$work/refused.out" >&2
  fail "--shapes 100000000 ran configurations"
fi
echo "bench_check: passed"
