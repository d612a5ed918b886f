#!/usr/bin/env bash
# Soak: TASKS tasks (1,000,000) at 256 in flight against nginx on a free loopback port, with
# about 1 % of the URLs faulty (0.5 % drop the connection unanswered, 0.5 % answer 503), on
# each backend. Checks that every task has exactly one final line in the log, that peak RSS
# stays under 150 MiB, and that the open file descriptors do not grow.
# Usage: Tests/Soak/run.sh   (make soak; TASKS=N and BACKENDS="curl" shorten it)
set -euo pipefail
cd "$(dirname "$0")/../.."
TASKS=${TASKS:-1000000}
BACKENDS=${BACKENDS:-"curl urlsession"}
COURIER=.build/release/courier
work=$(mktemp -d)
chmod 755 "$work"
trap 'kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/www" "$work/logs"
printf '{"id":42,"login":"courier","name":"A small JSON response","active":true}\n' > "$work/www/small.json"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log crit;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  default_type application/json;
  # The fault a URL gets is fixed by its n, so a retry meets the same fault: those tasks fail.
  split_clients "\${arg_n}" \$fault { 0.5% drop; 0.5% unavailable; * ""; }
  server {
    listen 127.0.0.1:$port;
    root $work/www;
    location /items/ {
      if (\$fault = drop) { return 444; }
      if (\$fault = unavailable) { return 503; }
      try_files /small.json =404;
    }
  }
}
CONF
nginx -c "$work/nginx.conf" -p "$work" -e "$work/logs/error.log"
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/items/x?n=0" && break; sleep 0.1; done

cat > "$work/soak.json" <<JOB
{"version": 1, "name": "soak", "baseURL": "http://127.0.0.1:$port", "concurrency": 256,
 "retry": {"maxAttempts": 2, "initialDelay": 0.01, "maxDelay": 0.05},
 "tasks": [{"id": "t{n}", "path": "/items/{n}", "query": {"n": "{n}"},
            "foreach": {"n": {"range": [1, $TASKS]}}}]}
JOB

echo "== soak: $TASKS tasks, 256 in flight, ~1 % faulty URLs (nginx on 127.0.0.1:$port)"
python3 - "$COURIER" "$work" "$TASKS" $BACKENDS <<'PY'
import glob, json, os, subprocess, sys, threading, time
courier, work, tasks, backends = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
problems = []
print(f"{'backend':<12}{'seconds':>9}{'tasks/s':>9}{'ok':>10}{'failed':>8}{'peak RSS':>10}"
      f"{'fds 10%':>9}{'fds 90%':>9}{'fds max':>9}")
for backend in backends:
    logs = f"{work}/logs-{backend}"
    start = time.time()
    process = subprocess.Popen([courier, "run", f"{work}/soak.json", "--log-dir", logs,
                                "--backend", backend, "--no-progress", "--quiet"])
    samples = []  # (seconds, open descriptors)
    peaks = [0]  # VmHWM, the kernel's high-water mark of the process's RSS, in KiB
    def watch():
        while process.poll() is None:
            try:
                samples.append((time.time() - start, len(os.listdir(f"/proc/{process.pid}/fd"))))
                with open(f"/proc/{process.pid}/status") as status:
                    for line in status:
                        if line.startswith("VmHWM:"):
                            peaks.append(int(line.split()[1]))
            except (OSError, ValueError):
                pass
            time.sleep(0.5)
    watcher = threading.Thread(target=watch)
    watcher.start()
    status = process.wait()
    watcher.join()
    seconds = time.time() - start
    peak = max(peaks) // 1024
    # Every task exactly once with a final outcome (retry lines come before it).
    final, events = {}, {}
    log = glob.glob(f"{logs}/soak/*.jsonl")[0]
    with open(log, "rb") as lines:
        for raw in lines:
            line = json.loads(raw)
            events[line["event"]] = events.get(line["event"], 0) + 1
            if line["event"] == "request" and line["outcome"] in ("ok", "failed"):
                final[line["task"]] = final.get(line["task"], 0) + 1
    end = json.loads(open(log, "rb").read().rstrip(b"\n").rsplit(b"\n", 1)[-1])
    counts = end.get("tasks", {})
    if end.get("event") != "run.end":
        problems.append(f"{backend}: the log does not end with run.end")
    if len(final) != tasks or any(count != 1 for count in final.values()):
        twice = sum(1 for count in final.values() if count != 1)
        problems.append(f"{backend}: {len(final)} tasks with a final line of {tasks}, {twice} more than once")
    if counts.get("total") != tasks or counts.get("ok", 0) + counts.get("failed", 0) != tasks:
        problems.append(f"{backend}: run.end counts {counts}")
    if not 0.005 * tasks <= counts.get("failed", 0) <= 0.02 * tasks:
        problems.append(f"{backend}: {counts.get('failed')} failed, expected about 1 %")
    if status != 1:
        problems.append(f"{backend}: exit status {status}, expected 1 (some tasks failed)")
    if peak >= 150:
        why = (" (FoundationNetworking itself grows about 145 bytes a request:"
               " Tests/Soak/PlainURLSession.swift, docs/benchmarks.md)") if backend == "urlsession" else ""
        problems.append(f"{backend}: peak RSS {peak} MiB, over 150 MiB{why}")
    def at(fraction):
        chosen = [fds for when, fds in samples if when >= fraction * seconds]
        return chosen[0] if chosen else 0
    early, late = at(0.1), at(0.9)
    most = max((fds for _, fds in samples), default=0)
    # Descriptors: a connection per task in flight and a few files; a leak grows with tasks.
    if late > early + 32 or most > 256 + 64:
        problems.append(f"{backend}: open descriptors grew ({early} at 10 %, {late} at 90 %, {most} at most)")
    print(f"{backend:<12}{seconds:>9.1f}{tasks / seconds:>9.0f}{counts.get('ok', 0):>10}"
          f"{counts.get('failed', 0):>8}{peak:>7} MiB{early:>9}{late:>9}{most:>9}")
print("peak RSS: the kernel's high-water mark (VmHWM), read every half second")
if problems:
    print("\n".join("FAILED: " + problem for problem in problems))
    sys.exit(1)
print("soak: every task logged once with its outcome; memory and descriptors bounded")
PY
