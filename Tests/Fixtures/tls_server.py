#!/usr/bin/env python3
"""TLS listeners for the TLS-option tests, with a throwaway PKI made in FOLDER (argument 1).

FOLDER gets: ca.pem (the CA that signed the server and client certificates), other-ca.pem (a
CA nobody used), client.pem / client-key.pem (CN=courier-client), client-key-encrypted.pem
(passphrase in client-passphrase.txt) and pin.txt (curl's sha256// pin of the server key).

Prints "READY <plain> <mtls> <tls12>":
- plain: the server certificate (SAN 127.0.0.1 and localhost), no client certificate asked;
- mtls: the same, and a client certificate signed by ca.pem is required;
- tls12: the same as plain, but speaking at most TLS 1.2.
Every path answers JSON {"clientCN": ..., "version": ...}. Exits when standard input closes.
"""

import base64
import hashlib
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def openssl(*arguments):
    subprocess.run(["openssl", *arguments], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_pki(folder):
    def path(name):
        return os.path.join(folder, name)

    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=courier test %s" % ca, "-keyout", path(ca + "-key.pem"),
                "-out", path(ca + ".pem"))
    with open(path("server.ext"), "w") as ext:
        ext.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, subject, extension in (("server", "/CN=127.0.0.1", ["-extfile", path("server.ext")]),
                                     ("client", "/CN=courier-client", [])):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", subject,
                "-keyout", path(name + "-key.pem"), "-out", path(name + ".csr"))
        openssl("x509", "-req", "-in", path(name + ".csr"), "-CA", path("ca.pem"),
                "-CAkey", path("ca-key.pem"), "-CAcreateserial", "-days", "1",
                "-out", path(name + ".pem"), *extension)
    passphrase = "pass-%s" % os.urandom(4).hex()
    with open(path("client-passphrase.txt"), "w") as out:
        out.write(passphrase)
    openssl("pkey", "-in", path("client-key.pem"), "-aes256", "-passout", "pass:" + passphrase,
            "-out", path("client-key-encrypted.pem"))
    der = subprocess.run(
        ["openssl", "x509", "-in", path("server.pem"), "-pubkey", "-noout"],
        check=True, capture_output=True).stdout
    spki = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=der,
                          check=True, capture_output=True).stdout
    with open(path("pin.txt"), "w") as out:
        out.write("sha256//" + base64.b64encode(hashlib.sha256(spki).digest()).decode())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *arguments):
        pass

    def do_GET(self):
        peer = self.connection.getpeercert() or {}
        subject = dict(pair[0] for pair in peer.get("subject", ()))
        body = json.dumps({"clientCN": subject.get("commonName"),
                           "version": self.connection.version()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # refused handshakes are what the tests are about


def listener(folder, require_client=False, maximum=None):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(folder, "server.pem"),
                            os.path.join(folder, "server-key.pem"))
    if require_client:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(os.path.join(folder, "ca.pem"))
        # At most TLS 1.2, so that a missing client certificate fails the handshake itself
        # (under 1.3 the refusal arrives after it, as a read error).
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    if maximum:
        context.maximum_version = maximum
    server = Server(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return server


def main():
    folder = sys.argv[1]
    make_pki(folder)
    servers = [listener(folder), listener(folder, require_client=True),
               listener(folder, maximum=ssl.TLSVersion.TLSv1_2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print("READY %d %d %d" % tuple(s.server_address[1] for s in servers), flush=True)
    sys.stdin.read()
    # The tests that read the PKI's files have gone with the parent.
    shutil.rmtree(folder, ignore_errors=True)
    os._exit(0)


if __name__ == "__main__":
    main()
