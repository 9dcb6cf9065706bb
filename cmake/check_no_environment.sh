#!/usr/bin/env bash
# The library reads no environment variable: settings reach it through Options and the test
# hooks (src/ozaki/test_hooks.hpp), which the test executables and perf tools set from the
# environment themselves (unit_tests/hooks_from_environment.hpp).  Only the cuBLAS interposer
# (backends/cuda/interposer), a program's stand-in for cuBLAS, reads its documented variables.
# Prints file:line for each getenv (or secure_getenv, environ) under src/ and backends/
# elsewhere, and exits 1 if there is any.
#
#   cmake/check_no_environment.sh [REPOSITORY_ROOT]   (default: the directory above this script)
set -euo pipefail

root=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"}
cd "$root"
found=$(grep -rnE '\b(secure_)?getenv\b|\benviron\b' src backends \
  --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cu' --include='*.cuh' \
  --include='*.in' | grep -v '^backends/cuda/interposer/' || true)
if [ -n "$found" ]; then
  echo "$found"
  echo "check_no_environment: the library reads the environment (above); pass settings through"
  echo "Options or the test hooks instead"
  exit 1
fi
echo "check_no_environment: no environment read under src/ and backends/ outside the interposer"
