#!/usr/bin/env bash
# Every C, C++ and CUDA source of the repository is formatted by its .clang-format: runs
# `clang-format --dry-run --Werror` on the sources under src/, backends/, unit_tests/,
# perf_tests/ and docs/example/ (.h .hpp .c .cpp .cu .cuh; the .in templates are not C++ until
# CMake fills them in), prints each file that is not formatted, and exits 1 if there is one.
# The reference is Debian bookworm's clang-format 14, which `cmake/dev.sh test` installs:
# another major version can break lines differently.  Without clang-format it exits 77, which
# ctest reports as skipped.
#
#   cmake/check_format.sh [--fix] [REPOSITORY_ROOT]   (default: the directory above this script)
#
# --fix formats the same files in place (clang-format -i).  OZAKI_CLANG_FORMAT names another
# clang-format binary.
set -euo pipefail

fix=0
if [ "${1:-}" = --fix ]; then
  fix=1
  shift
fi
root=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"}
cd "$root"

tool=${OZAKI_CLANG_FORMAT:-clang-format}
if ! command -v "$tool" >/dev/null 2>&1; then
  echo "check_format: $tool not found: not checked (Debian package clang-format)" >&2
  exit 77
fi
version=$("$tool" --version)

files=()
while IFS= read -r -d '' f; do
  files+=("${f#./}")
done < <(find ./src ./backends ./unit_tests ./perf_tests ./docs/example -type f \
  \( -name '*.h' -o -name '*.hpp' -o -name '*.c' -o -name '*.cpp' -o -name '*.cu' \
  -o -name '*.cuh' \) -print0 2>/dev/null | sort -z)
[ ${#files[@]} -gt 0 ] || { echo "check_format: no sources under $root" >&2; exit 1; }

if [ "$fix" = 1 ]; then
  "$tool" -i --style=file "${files[@]}"
  echo "check_format: formatted ${#files[@]} files ($version)"
  exit 0
fi

status=0
out=$("$tool" --dry-run --Werror --style=file "${files[@]}" 2>&1) || status=$?
if [ "$status" -eq 0 ]; then
  echo "check_format: ${#files[@]} files formatted by .clang-format ($version)"
  exit 0
fi
# clang-format's diagnostics name each line it would change: "file:line:col: error: ...".
bad=$(sed -nE 's/^([^:]+):[0-9]+:[0-9]+: (warning|error): .*/\1/p' <<<"$out" | sort -u)
if [ -z "$bad" ]; then
  echo "$out" >&2
  echo "check_format: $tool failed (status $status)" >&2
  exit 1
fi
echo "$out" | head -n 40
echo "check_format: not formatted by .clang-format ($version):" >&2
# shellcheck disable=SC2001 # one line per file, indented
sed 's/^/  /' <<<"$bad" >&2
echo "check_format: run cmake/check_format.sh --fix (clang-format -i), or clang-format -i on" \
  "these files" >&2
case $version in
*"version 14."*) ;;
*) echo "check_format: the reference is clang-format 14 (Debian bookworm); other versions can" \
  "format differently" >&2 ;;
esac
exit 1
