"""Helpers shared by the fixture servers (standard library only)."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def venv_program(name):
    """The path of `name` in the test servers' virtual environment (.build/pyvenv, which
    `make test-deps` fills from PyPI); exits with a READY-less line saying so when it is not
    installed."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    program = os.path.join(root, ".build", "pyvenv", "bin", name)
    if not os.path.exists(program):
        print("%s is not installed: run `make test-deps` (it installs it into .build/pyvenv)"
              % name, flush=True)
        sys.exit(1)
    return program


def wait_until_answers(url, child, name, tries):
    """Waits until `url` answers (0.1 s between `tries`); exits with a READY-less line saying
    why when `child` (the server `name`) exits first."""
    for _ in range(tries):
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except Exception:
            if child.poll() is not None:
                print("%s exited with status %d" % (name, child.returncode), flush=True)
                sys.exit(1)
            time.sleep(0.1)


def make_certificate(folder):
    """A throwaway self-signed certificate for localhost in `folder`: (cert, key), or None
    when openssl is missing or fails."""
    if not shutil.which("openssl"):
        return None
    cert, key = folder + "/cert.pem", folder + "/key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-keyout", key, "-out", cert],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (cert, key) if made.returncode == 0 else None


def run_until_stdin_closes(child, folder=None):
    """Waits for the parent to go (EOF on stdin), then stops `child` (SIGTERM, then SIGKILL)
    and removes `folder`, the server's own files (a test run left one for each server)."""
    try:
        sys.stdin.read()
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
