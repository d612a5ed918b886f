#!/usr/bin/env python3
"""Runs nginx with TLS and HTTP/2 on a free loopback port, for the HTTP/2 tests.

Every path answers "<protocol> <connection number>" ($server_protocol $connection), so a test
can see which HTTP version was spoken and how many connections carried its requests. Uses a
throwaway self-signed certificate for localhost. Prints "READY <port> <certificate file>" (a
job trusts it as its caBundle) and stops nginx when
standard input closes.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from fixture_support import make_certificate, run_until_stdin_closes

folder = tempfile.mkdtemp(prefix="courier-h2-")
os.chmod(folder, 0o755)  # nginx's workers run as another user
if make_certificate(folder) is None:
    sys.exit("openssl could not make a certificate")
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()  # nginx cannot take a socket; the port is free again for it to bind
with open(folder + "/nginx.conf", "w") as conf:
    conf.write("""
worker_processes 1;
pid %(f)s/nginx.pid;
error_log %(f)s/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %(f)s;
  server {
    listen 127.0.0.1:%(p)d ssl http2;
    ssl_certificate %(f)s/cert.pem;
    ssl_certificate_key %(f)s/key.pem;
    location / { default_type text/plain; return 200 "$server_protocol $connection"; }
  }
}
""" % {"f": folder, "p": port})
nginx = shutil.which("nginx") or "/usr/sbin/nginx"
child = subprocess.Popen(
    [nginx, "-c", folder + "/nginx.conf", "-p", folder, "-e", folder + "/error.log",
     "-g", "daemon off;"], stdin=subprocess.DEVNULL)
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        break
    except OSError:
        if child.poll() is not None:
            sys.exit("nginx exited: " + open(folder + "/error.log").read())
        time.sleep(0.05)
print("READY %d %s/cert.pem" % (port, folder), flush=True)
try:
    run_until_stdin_closes(child)
finally:
    shutil.rmtree(folder, ignore_errors=True)
