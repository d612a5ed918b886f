#!/usr/bin/env bash
# `make test-loaded`: the whole of `make test` as a slower, busier machine runs it.
#
# The builds come first, on a quiet machine (they decide nothing). Then stress-ng keeps every
# core busy at normal priority (LOAD_WORKERS CPU workers, one a core by default) while
# `make test` runs at nice TEST_NICE (2 by default), so the test processes, the fixture servers
# they start and the courier binaries they run get less than half of each core. A test that
# holds only on a fast, quiet machine fails here; one that waits for events passes.
# The run's time and its outcome are printed last, and kept in .build/test-logs/loaded.txt.
# Usage: Tests/Harness/loaded.sh  (LOAD_WORKERS=N TEST_NICE=N SWIFT=swift MAKE=make)
set -uo pipefail
cd "$(dirname "$0")/../.."
workers=${LOAD_WORKERS:-$(nproc)}
niceness=${TEST_NICE:-2}
make=${MAKE:-make}
swift=${SWIFT:-swift}

command -v stress-ng >/dev/null || { echo "loaded.sh: stress-ng is missing (make test-loaded installs it)"; exit 2; }

echo "== test-loaded: building first, without the load"
"$swift" build --build-tests || exit $?
COURIER_PACKAGE_SCOPE=transport "$swift" build --build-tests --sanitize=thread --scratch-path .build-tsan || exit $?

echo "== test-loaded: $workers CPU workers of stress-ng at nice 0; make test at nice $niceness"
stress-ng --cpu "$workers" --cpu-method matrixprod --timeout 2h --quiet &
load=$!
trap 'kill "$load" 2>/dev/null; wait "$load" 2>/dev/null' EXIT
started=$(date +%s)
nice -n "$niceness" "$make" --no-print-directory test SWIFT="$swift"
status=$?
seconds=$(($(date +%s) - started))
mkdir -p .build/test-logs
verdict=$([ "$status" -eq 0 ] && echo passed || echo "FAILED (exit $status)")
line="test-loaded: $verdict in ${seconds} s ($workers stress-ng CPU workers, tests at nice $niceness, $(git rev-parse --short HEAD 2>/dev/null))"
echo "$line" | tee -a .build/test-logs/loaded.txt
exit "$status"
