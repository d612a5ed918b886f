#!/usr/bin/env python3
"""Runs Debian's httpbin under gunicorn on a free loopback port.

Binds 127.0.0.1:0 itself and hands the socket to gunicorn (fd://), prints "READY <port>",
and stops gunicorn when standard input closes, so it never outlives the test process.

Idle connections are kept for 300 s, not gunicorn's 2 s: on a slow machine (the sanitizer
pass) two requests of one test can be 2 s apart, and gunicorn then closes the pooled
connection just as URLSession reuses it for a POST, which URLSession on Linux cannot resend
(docs/transports.md). That race has its own test against the fixture's /stale; these tests
are about what httpbin parses.
"""

import shutil
import socket
import subprocess

from fixture_support import run_until_stdin_closes

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(1024)
sock.set_inheritable(True)
gunicorn = shutil.which("gunicorn") or "/usr/bin/gunicorn"
child = subprocess.Popen(
    [gunicorn, "--bind", "fd://%d" % sock.fileno(), "--workers", "2",
     "--worker-class", "gthread", "--threads", "16", "--keep-alive", "300",
     "--log-level", "warning",
     "httpbin:app"],
    pass_fds=[sock.fileno()],
    stdin=subprocess.DEVNULL,
)
print("READY %d" % sock.getsockname()[1], flush=True)
run_until_stdin_closes(child)
