#!/usr/bin/env python3
"""Runs localstripe (PyPI, installed by `make test` into .build/pyvenv), a fake but stateful
Stripe API, on a free loopback port, for the write tests against a server nobody here wrote.

Prints "READY <port>" once it answers, and stops it when standard input closes. Any secret
key of the form sk_test_… is accepted (Basic auth, the key as the user); its state lives in
memory (--from-scratch) and in a folder of its own.
"""

import os
import subprocess
import tempfile

from fixture_support import free_port, run_until_stdin_closes, venv_program, wait_until_answers

LOCALSTRIPE = venv_program("localstripe")

folder = tempfile.mkdtemp(prefix="courier-localstripe-")
# localstripe saves its state to this fixed path whatever its working folder; the tests left
# it behind. It is removed at the end unless it was there before (someone else's).
PICKLE = "/tmp/localstripe.pickle"
pickle_was_there = os.path.exists(PICKLE)
port = free_port()
child = subprocess.Popen(
    [LOCALSTRIPE, "--port", str(port), "--from-scratch"],
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    cwd=folder)
# Its Stripe.js page needs no key: it answers once the server is up.
wait_until_answers("http://127.0.0.1:%d/js.stripe.com/v3/" % port, child, "localstripe", 300)
print("READY %d" % port, flush=True)
try:
    run_until_stdin_closes(child, folder)
finally:
    if not pickle_was_there:
        try:
            os.remove(PICKLE)
        except FileNotFoundError:
            pass
