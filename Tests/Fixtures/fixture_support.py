"""Helpers shared by the fixture servers (standard library only)."""

import shutil
import signal
import subprocess
import sys


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


def run_until_stdin_closes(child):
    """Waits for the parent to go (EOF on stdin), then stops `child` (SIGTERM, then SIGKILL)."""
    try:
        sys.stdin.read()
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
