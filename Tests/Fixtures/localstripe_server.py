#!/usr/bin/env python3
"""Runs localstripe (PyPI, installed by `make test` into .build/pyvenv), a fake but stateful
Stripe API, on a free loopback port, for the write tests against a server nobody here wrote.

Prints "READY <port>" once it answers, and stops it when standard input closes. Any secret
key of the form sk_test_… is accepted (Basic auth, the key as the user); its state lives in
memory (--from-scratch) and in a folder of its own.
"""

import subprocess
import tempfile

from fixture_support import free_port, run_until_stdin_closes, venv_program, wait_until_answers

LOCALSTRIPE = venv_program("localstripe")

folder = tempfile.mkdtemp(prefix="courier-localstripe-")
port = free_port()
child = subprocess.Popen(
    [LOCALSTRIPE, "--port", str(port), "--from-scratch"],
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    cwd=folder)
# Its Stripe.js page needs no key: it answers once the server is up.
wait_until_answers("http://127.0.0.1:%d/js.stripe.com/v3/" % port, child, "localstripe", 300)
print("READY %d" % port, flush=True)
run_until_stdin_closes(child, folder)
