#!/usr/bin/env python3
"""Runs Kinto (PyPI, installed by `make test` into .build/pyvenv) on a free loopback port with
its memory backends, for the tests against a server nobody here wrote.

Prints "READY <port>" once Kinto answers, and stops it when standard input closes. Anyone may
make an account of Kinto's own (its accounts plugin), and any account may make buckets
(kinto.bucket_create_principals = system.Authenticated): each test makes an account and a
bucket of its own, and owns what is in it.
"""

import os
import subprocess
import sys
import tempfile

from fixture_support import free_port, run_until_stdin_closes, venv_program, wait_until_answers

KINTO = venv_program("kinto")

folder = tempfile.mkdtemp(prefix="courier-kinto-")
ini = os.path.join(folder, "kinto.ini")
made = subprocess.run(
    [KINTO, "init", "--ini", ini, "--backend", "memory", "--cache-backend", "memory"],
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if made.returncode != 0:
    print("kinto init failed: %s" % made.stderr.decode(errors="replace")[-300:], flush=True)
    sys.exit(1)
with open(ini) as handle:
    settings = handle.read()
settings = settings.replace(
    "kinto.bucket_create_principals = account:admin",
    "kinto.bucket_create_principals = system.Authenticated")
with open(ini, "w") as handle:
    handle.write(settings)
port = free_port()
child = subprocess.Popen(
    [KINTO, "start", "--ini", ini, "--port", str(port)],
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    cwd=folder)
wait_until_answers("http://127.0.0.1:%d/v1/" % port, child, "kinto", 300)
print("READY %d" % port, flush=True)
run_until_stdin_closes(child, folder)
