#!/usr/bin/env bash
# Runs `swift test` with the given arguments, keeping its whole output in .build/test-logs/.
# On a failure it ends with a short summary (the crash's reason and first frames, the tests
# that failed, the tests still running when it stopped): a CI page shows only the last lines of
# a run, and after a crash those are the backtracer's register dump and image list.
# Usage: Tests/Harness/swift-test.sh NAME [swift test arguments...]
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$1
shift
mkdir -p .build/test-logs
log=.build/test-logs/$name.log
"${SWIFT:-swift}" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  python3 Tests/Harness/summarize_failure.py "$log" "$status"
fi
exit "$status"
