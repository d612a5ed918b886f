#!/usr/bin/env python3
"""Runs the Prometheus Pushgateway (Debian's prometheus-pushgateway, installed by `make test`)
on a free loopback port, its pushed groups in memory, for the tests of `--metrics-push`
against a gateway nobody here wrote: it parses every push strictly and refuses (400) a text
that breaks the format or disagrees with what it holds.

Prints "READY <port>" once it answers, and stops it when standard input closes.
"""

import shutil
import subprocess
import sys

from fixture_support import free_port, run_until_stdin_closes, wait_until_answers

program = shutil.which("prometheus-pushgateway") or shutil.which("pushgateway")
if program is None:
    print("prometheus-pushgateway is not installed (make test-deps installs it)", flush=True)
    sys.exit(1)
port = free_port()
child = subprocess.Popen(
    # No persistence file: Debian's default (/var/lib/prometheus/pushgateway.data) would share
    # the groups of every test run on the machine, and keep them.
    [program, "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn",
     "--persistence.file="],
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wait_until_answers("http://127.0.0.1:%d/-/ready" % port, child, "pushgateway", 300)
print("READY %d" % port, flush=True)
run_until_stdin_closes(child)
