#!/usr/bin/env bash
# `make demo`: starts the fixture server on 127.0.0.1:18765, runs jobs/demo.json with the built
# courier, prints the summary and where the log is, and stops the server.
set -uo pipefail
cd "$(dirname "$0")/../.."
courier=${COURIER:-.build/debug/courier}
python3 Tests/Fixtures/fixture_server.py --port 18765 --no-stdin > /tmp/courier-demo-server.$$ 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q READY /tmp/courier-demo-server.$$ 2>/dev/null && break; sleep 0.1; done
rm -f /tmp/courier-demo-server.$$
if ! kill -0 $server 2>/dev/null; then
  echo "demo: the fixture server did not start (is port 18765 in use?)" >&2
  exit 1
fi
"$courier" run jobs/demo.json --no-progress
status=$?
log=$(ls -t jobs/logs/demo/*.jsonl 2>/dev/null | head -1)
echo
echo "demo: courier exited with $status (1 is expected: the task 'missing' fails on purpose)"
echo "demo: log: $log"
echo "demo: saved outputs: jobs/out/demo/ (a job keeps its outputs and logs in its file's folder)"
echo "demo: try: grep '\"task\":\"flaky\"' $log"
[ "$status" -eq 1 ] && exit 0 || exit "$status"
