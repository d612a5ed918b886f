#!/usr/bin/env python3
"""Courier's fixture HTTP server: the behaviours httpbin lacks, on free loopback ports.

Standard library only. It listens on two ports of 127.0.0.1 (A and B, so that a redirect from
127.0.0.1:A to localhost:B changes host and port) and, when openssl can make a throwaway
self-signed certificate, a third one with TLS (T; 0 without openssl). It prints
"READY <A> <B> <T>" and serves until its standard input closes, so it never outlives the test
process that started it.

Every request that carries ?key=K is recorded under K; GET /hits?key=K returns the record.
Routes (any method):
  /echo                       JSON of method, path, query, headers, body and the client's port
  /reset-mid-body             promises 200,000 bytes, sends 100,000, then a TCP reset
  /drip?n=N                   N bytes (at most 60), one a second
  /many-headers?n=N           N response header fields (1,000; at most 5,000)
  /huge-header?bytes=N        one header line of N bytes (1 MiB; at most 8 MiB)
  /bad-utf8                   invalid UTF-8 in a header value and in the body
  /huge-head/<how>?n=N        a header block of many short lines, raw, then "ok": folded
                              (X-Folded: a, then N obs-fold continuation lines "\tb"; 40,000,
                              about 160 KiB), many (N fields "X-A: b", 100,000, about 800 KiB);
                              N at most 1,000,000
  /endless-chunked            a chunk every 50 ms for up to 60 s
  /endless-fast[?seconds=S&encoding=gzip&id=F]
                              64 KiB chunks as fast as they are taken, for up to S s (60; 600
                              at most), or until /endless-stop?id=F; gzip: one endless gzip
                              stream of them, flushed per chunk
  /endless-stop?id=F          ends the flood F (204): a client that goes on reading a body its
                              caller gave up on (FoundationNetworking drains it, on the queue
                              every request of the process needs) stops being fed at once
  /gate?name=N[&max=S&key=K]  a chunked body: "first" at once, "last" once /toggle/on?name=N
                              was called (after max seconds, 10 by default, 300 at most)
  /digest                     JSON of the body's length and SHA-256 (read in chunks, not kept)
                              and the request headers
  /status/<code>              that status
  /headers-repeated           repeated X-Multi and Set-Cookie response fields
  /flaky?key&fail=N&status=S[&hold_until=NAME]
                              status S (503) for the first N requests of key, then 200 (with
                              hold_until, once /toggle/on?name=NAME was called)
  /wilting?key&ok=N&status=S  200 with {"token": "tok-KEY"} for the first N requests of key,
                              then status S (503): a login that works one night, not the next
  /retry-after?key&times=N&seconds=S|date=1
                              429 with Retry-After for the first N requests of key, then 200
  /slow?ms=N[&key&after=K]    answers after N ms (with after: N ms after /host-pause sent K's
                              429, 5 s at most); tracks requests in flight per key
  /host-pause?key&first=N&seconds=S[&release=NAME]
                              the first request of key waits until N requests of key have
                              come (5 s at most), then gets 429 with Retry-After S; requests 2..N
                              are answered 200 0.5 s after that 429 (with release, once
                              /toggle/on?name=NAME was called, 300 s at most); later ones 200 at
                              once.
                              GET /paused?key=K says when the 429 went ({"at": time, 0 if not})
  /quota?key&limit=L&remaining=R&window=W
                              a quota of R requests per window of W seconds (from the key's
                              first request), announced as RateLimit-Limit L, RateLimit-Remaining
                              and RateLimit-Reset (whole seconds, rounded up); a request over it
                              gets 429 with Retry-After
  /concurrency?key=K          {"max": most in flight at once, "current": in flight now}
  /drop                       closes the connection without answering
  /stale                      answers the first request on a connection; closes it unanswered
                              when a later request comes on it (a stale keep-alive)
  /truncated                  promises 100 bytes, sends 10, closes
  /cut/<how>[?whole=1&encoding=gzip|deflate|br|zstd|OTHER]
                              hostile responses, written as raw bytes, each with ETag "cut":
                              not-gzip: Content-Encoding gzip over the plain body;
                              headers: a status line and an ETag line, then a close (no blank
                              line); gzip-chunked / gzip-length: a gzip body (or deflate, br,
                              zstd as encoding says; any OTHER name labels the plain body so)
                              cut at 38 % of its bytes, in correct chunked
                              framing / with a Content-Length for the cut bytes (whole=1: the
                              whole stream, the control); length-overflow: a Content-Length of
                              26 digits, then a body and a close; chunked-bad: a chunk size
                              line that is not hex; chunked-early-close: two chunks, then a
                              close before the last (0-size) chunk
  /challenge?scheme=Basic|Digest|Bearer
                              401 with a WWW-Authenticate challenge of that scheme and a JSON
                              body ({"error": "unauthorized", "scheme", "detail"})
  /bytes?n=N[&chunked=1]      N bytes of a repeating pattern
  /redirect?to=URL&status=S[&body=TEXT]
                              redirect to URL with status S (302), with TEXT as its body
  /mirror/SEGMENT             302 to /echo?m=SEGMENT reversed: a path segment in a form of
                              the server's own (as Datasette's tilde-encoding)
  /chain?n=N                  N redirects, then 200
  /loop                       redirects to itself
  /error-json                 422 with a JSON problem body
  /empty                      204 without a body
  /echo-html                  200, text/html: a page that repeats the request line and headers
  /set-cookie?c=V[&c=V2][&to=URL]
                              one Set-Cookie field per c; a 302 to URL when given, else 200
  /toggle?name=N              503 until /toggle/on?name=N was called, then 200 (echoes the body)
  /toggle/on?name=N           switches N on
  /pages?style=S&total=T&size=Z[&loop=1][&host=URL]
                              T items in pages of Z, paginated by style: link (Link rel=next),
                              json ({"next": URL}), cursor ({"cursor": C} and ?cursor=C), page
                              (?page=P, 1-based), offset (?offset=O), header (Next-Page: URL),
                              gitlab (?page=P and X-Next-Page: P+1, empty on the last page),
                              after ({"data": [...]}, ?after=the last id seen); items are
                              {"id": i}.
                              loop=1 repeats the last page's next link forever;
                              fail_start=N&fail_until=NAME: the page starting at item N
                              answers 500 until /toggle/on?name=NAME; etag=1 sends an
                              ETag per page and a 304 for its If-None-Match; host=URL makes
                              the next link absolute on that origin
  /store/put?key=K             (POST) upserts a JSON list of records ({"id", "updated_at", …});
                              {"id": I, "_remove": true} removes record I
  /store/items?key=K[&since=S][&from=F][&before=B][&size=Z][&page=P][&fail_page=P]
              [&hang_page=P][&fail_until=N][&hang_until=N]
                              the records updated after S (and at F or later, before B: a
                              window), in updated_at order, Z a page (Link
                              rel=next); fail_page answers 500, hang_page sleeps 30 s first;
                              with fail_until / hang_until, only until /toggle/on?name=N (a
                              hang then ends when it is called, 300 s at most)
  /charges?key=K[&header=H][&hang_until=N][&fail_until=N][&status=S]
                              (POST) a write that charges once per idempotency key, as Stripe
                              documents: the key in header H (Idempotency-Key) makes a repeat
                              answer the first answer again (Idempotent-Replayed: true) without
                              a second effect; a repeat while the first is under way is 409, one
                              with another body 400. Each effect gets an id; 201 {"id", "status":
                              S (paid)}. hang_until: the effect is made, then the answer waits
                              for /toggle/on?name=N (300 s at most); fail_until: 503 (no
                              effect) until then
  /charges/effects?key=K       the effects made so far: {"count", "pending" (keys whose first
                              request is under way), "charges": [{"id", "key", "body"}]}
  /etag?v=V[&key]              a body naming V, with ETag "V" and a fixed Last-Modified; 304
                              when If-None-Match is "V" or If-Modified-Since is that date
  /v1/users[?page&per_page&q] the seed articles' user API: a Page of users, filtered by q;
  /v1/users/<id>              one user or 404; both need "Authorization: Bearer seed-token"
  /sync/login, /sync/users[/<id>]?key=K
                              a GitHub-like API behind a login (POST {"password":"hunter22"});
                              with &expire_after=N each login issues a new token, only the
                              newest is good, and the first is refused after N requests;
                              &logins=M refuses logins after the Mth, &reject_all=1 every token
  /json?v=JSON                the given JSON text as the body (application/json)
  /ping/<any>?key=K[&status=S&hang=SECONDS&hang_on=SEGMENT]
                              a dead man's switch (healthchecks.io's shape: <check>/start,
                              <check>/<exit code>): "OK" as text/plain with status S (200);
                              hang sleeps SECONDS (at most 600) before answering, on every ping
                              or only on those whose last path segment is SEGMENT
  /malformed/<how>            a malformed reply, raw: status-short (HTTP/1.1 20 OK),
                              status-long (a 22-digit code), status-letters (2OO), no-reason
                              (HTTP/1.1 200, which is well-formed), http09 (a body, no status
                              line), dup-length (two differing Content-Length), length-letters
                              (Content-Length: 12abc), trailer (a well-formed chunked body with
                              a trailer field, which traps FoundationNetworking)
  /sse?n=N[&key&gate=NAME&retry=MS&per=P&cut=1&interval_ms=I]
                              text/event-stream, chunked: a comment, "retry: MS" when given,
                              then events id 1..N (event "tick", JSON data over two data
                              lines, odd ids with CRLF endings) after the Last-Event-ID the
                              request sent; gate: the rest only once /toggle/on?name=NAME was
                              called (300 s at most: longer than any test waits); per=P: P events a connection, then the end
                              (cut=1: an unfinished event and a close without the last chunk);
                              204 when nothing is left after Last-Event-ID with per
  /ndjson?n=N[&gate=NAME&bad=L]
                              application/x-ndjson, chunked: {"id": i, "name": "item é i"} for
                              i in 1..N, a blank line after the second, CRLF on even ids; gate
                              as /sse after the first line; bad=L makes line L invalid JSON
  /echo-auth                  echoes the request's Authorization back: in X-Echo-Authorization
                              and as {"authorization": value} (a hostile, echoing server)
  /oauth/token?key=K[&expires_in=S&rotate=1&delay_ms=D&fail=F&fail_until=NAME]
                              an OAuth2 token endpoint (RFC 6749) for the client
                              OAUTH_CLIENT_ID / OAUTH_CLIENT_SECRET, by HTTP Basic (id and secret
                              form-encoded, then base64) or in the form body; grants
                              client_credentials and refresh_token (the first good refresh token
                              of K is rt-K-1-s3cr3t; rotate=1 issues a new one with each use and
                              refuses the old). Tokens are at-K-N-s3cr3t, N counting from 1, good
                              for expires_in seconds (3600). fail=invalid_client (400),
                              500 (text), nonjson (200 HTML), noaccess (200 without
                              access_token), redirect (307 to the same URL without fail);
                              fail_until=NAME: 503 until /toggle/on?name=NAME
    /oauth/api/<any>?key=K[&revoke_after=N&delay_ms=D&toggle=NAME]
                              a protected route: 200 {"token": N} for a live bearer token of K,
                              else 401; revoke_after=N: K's first token is refused after N
                              uses; toggle=NAME: 503 (after the token check) until switched on
  /search?total=N             POST: pages by the JSON body ({"offset", "limit"}, {"page", "size"}
                              or {"cursor", "limit"}): {"items", "total", "has_more", "next_cursor"}
  /graphql?total=N            POST a GraphQL request: pages by variables.after (and first):
                              {"data": {"items": {"nodes", "pageInfo": {"endCursor",
                              "hasNextPage"}}}}
  /records/...?key=K          record sets a test changes between runs (records tests):
    /records/set?key            POST {"items": [...], "fail": false, "delay_ms": 0}: K's records
                                (each a JSON object with an "id"), and whether its routes answer
                                503; each set is a new version
    /records/list?key&size=Z&page=P
                                K's records in pages of Z (default 3), {"items": [...]} with Link
                                rel=next; ETag "vN" (the set's version), 304 on If-None-Match
    /records/ids?key            {"ids": [every record's id]}
    /records/item?key&id=I      the record whose id (as text) is I, or 404
    /records/gen?count=N&size=Z&page=P&v=V&deleted_every=D
                                generated records {"id": i, "name": "user-i", "v": V} for i in
                                1..N (every Dth with "deleted": true when D > 0), pages of Z
                                (default 10,000) with Link rel=next; built as text, quickly
  /recovery/...?key=K         an API for the recovery matrix, whose outages are deterministic:
    /recovery/level?key&level=L&delay_ms=D[&hold_after=N]
                              sets K's outage level (0 none, 1 a quarter of the items fail,
                              2 half of them; level 1's are a subset of level 2's) and a delay
                              per answer; hold_after: after N requests, each later one waits
                              until the next /recovery/level call (300 s at most)
    /recovery/held?key        {"held": requests of K that were held so far}
    /recovery/item?key&id=I   {"id": I, "v": 1} with ETag "v1-I" (304 on If-None-Match), or
                              503 when I is out at the current level; 404 when I starts "gone"
    /recovery/list?key&total=T&size=Z&page=P&name=N
                              ids 1..T in pages of Z (Link rel=next); page P is out like an
                              item named "NpageP"
    /recovery/search?key&total=T&name=N
                              POST {"page": P, "size": Z}: {"items": ids of page P, "has_more"};
                              page P is out like an item named "NsearchP"
    /recovery/login?key       POST {"password":"hunter22"} gives {"token":"tok-K"}
    /recovery/private?key&id  as item, with "Authorization: Bearer tok-K" or Basic
                              user:hunter22; 401 otherwise
    /recovery/write?key&id=I  POST: a write, 201 {"written": I}, or 503 (no effect) when I is
                              out; its effect is made when it arrives, before a hold, once per
                              Idempotency-Key (a repeat has none)
    /recovery/effects?key     {"count": the writes' effects so far}
"""

import base64
import email.utils
import gzip
import zlib
import hashlib
import json
import os
import shutil
import socket
import struct
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, unquote_plus, urlsplit

from fixture_support import make_certificate

# /store: records per test key, {id: record}; a record has "id" and "updated_at".
STORE = {}
STORE_LOCK = threading.Lock()
CHARGES = {}  # key -> {"effects": [...], "answers": {idempotency key: (status, body, request body) or None}}

PATTERN = bytes(range(256)) * 256  # 64 KiB; byte i of a body is i % 256
# The /cut/ routes' body: JSON text that compresses to a few KiB, so a cut stream decodes to
# a plausible prefix.
CUT_BODY = json.dumps([{"id": i, "name": "item %d" % i, "tag": "t%d" % (i * 7919 % 1000)}
                       for i in range(2000)]).encode()

# Compressed forms of a body, made once each: brotli and zstd with Debian's command-line tools
# (packages brotli and zstd), so that whichever python3 runs this needs no module beyond the
# standard library.
COMPRESSED = {}
COMPRESSED_LOCK = threading.Lock()


def compressed(body, encoding):
    """`body` in the content coding `encoding` (gzip, deflate, br, zstd); any other name gives
    the body as it is, for a coding no client decodes (only the header matters then)."""
    with COMPRESSED_LOCK:
        if (body, encoding) in COMPRESSED:
            return COMPRESSED[(body, encoding)]
        if encoding == "gzip":
            packed = gzip.compress(body, 6, mtime=0)
        elif encoding == "deflate":
            packed = zlib.compress(body, 6)
        elif encoding in ("br", "zstd"):
            tool = ["brotli", "-c", "-q", "6"] if encoding == "br" else ["zstd", "-c", "-q", "-3"]
            packed = subprocess.run(tool, input=body, stdout=subprocess.PIPE, check=True).stdout
        else:
            packed = body
        COMPRESSED[(body, encoding)] = packed
        return packed


SEED_TOKEN = "seed-token"
SEED_USERS = [{"id": str(n), "name": name, "email": name.lower() + "@example.com",
               "avatar_url": None if n % 2 else "https://example.com/%d.png" % n,
               "created_at": 1700000000 + n, "updated_at": 1700000100 + n}
              for n, name in enumerate(["Ada", "Swift", "Grace", "Swiftie", "Linus"], start=1)]

BOOKKEEPING = ("/hits", "/concurrency", "/paused", "/charges/effects")  # read the records without adding to them
state_lock = threading.Lock()
hits = {}  # key -> list of request records
in_flight = {}  # key -> (current, max)
toggles = set()  # names switched on by /toggle/on
stopped_floods = set()  # /endless-fast ids that /endless-stop ended
recovery = {}  # key -> (outage level, delay in ms) for /recovery/...
recovery_holds = {}  # key -> {"after", "served", "held", "generation"} for /recovery/...
recovery_writes = {}  # key -> {"effects": n, "keys": set of Idempotency-Keys} for /recovery/write
sessions = {}  # key -> [login count, uses of the first token] for /sync/...&expire_after=N
oauth = {}  # key -> token endpoint state for /oauth/... (see Handler.oauth_token)
OAUTH_CLIENT_ID = "courier-test"
# A secret with characters that RFC 6749's form encoding must escape in the Basic credential.
OAUTH_CLIENT_SECRET = "cl-s3cr3t:/+ \u00e9"
paused = {}  # key -> when /host-pause sent its 429
quotas = {}  # key -> [window start, requests in the window] for /quota
record_sets = {}  # key -> {"items": [...], "fail": bool, "delay_ms": int, "version": int}


def record(key, handler, body):
    entry = {
        "time": time.time(),
        "method": handler.command,
        "path": handler.path,
        "headers": [[k, v] for k, v in handler.headers.items()],
        "body": body.decode("utf-8", "replace"),
        "peerPort": handler.client_address[1],
    }
    with state_lock:
        hits.setdefault(key, []).append(entry)
        return len(hits[key])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "CourierFixture/1"
    # Headers and body go out in separate writes; without this, Nagle's algorithm and the
    # client's delayed ACK add 40 ms to every response.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def __getattr__(self, name):
        if name.startswith("do_"):
            return self.handle_any
        raise AttributeError(name)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def reply(self, status, body=b"", headers=(), content_type="application/json"):
        self.send_response(status)
        if not any(name.lower() == "cache-control" for name, _ in headers):
            self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(body)

    def gate(self, name, seconds=10):
        """Head and a first chunk at once; the last chunk once /toggle/on?name= was called
        (or after `seconds`, at most 300)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"5\r\nfirst\r\n")
        self.wfile.flush()
        deadline = time.time() + min(seconds, 300)
        while time.time() < deadline:
            with state_lock:
                if name in toggles:
                    break
            time.sleep(0.01)
        self.wfile.write(b"4\r\nlast\r\n0\r\n\r\n")

    def chunk(self, data):
        self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
        self.wfile.flush()

    def wait_for(self, name, seconds=10):
        deadline = time.time() + seconds
        while time.time() < deadline:
            with state_lock:
                if name in toggles:
                    return
            time.sleep(0.01)

    def sse(self, arg):
        """Server-sent events, resumable after Last-Event-ID (see the route list)."""
        total, per = int(arg("n", "3")), int(arg("per", "0"))
        start = int(self.headers.get("Last-Event-ID") or 0)
        if per and start >= total:
            return self.reply(204)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.chunk(b": courier fixture\n\n")
        if arg("retry"):
            self.chunk(b"retry: %s\n\n" % arg("retry").encode())
        last = min(total, start + per) if per else total
        for i in range(start + 1, last + 1):
            end = b"\r\n" if i % 2 else b"\n"
            event = (b"id: %d" % i + end + b"event: tick" + end + b"data: {\"n\": %d," % i + end
                     + "data:  \"text\": \"café %d\"}".encode() % i + end + end)
            # In two chunks, cut inside the "é", so the client meets a split character.
            cut = event.index("é".encode()) + 1
            self.chunk(event[:cut])
            self.chunk(event[cut:])
            if i == start + 1 and arg("gate"):
                self.wait_for(arg("gate"), 300)
            elif arg("interval_ms"):
                time.sleep(int(arg("interval_ms")) / 1000)
        if per and arg("cut"):
            self.chunk(b"data: never dispatched\n")
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(b"0\r\n\r\n")

    def ndjson(self, arg):
        """JSON lines (see the route list)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        bad = int(arg("bad", "0"))
        line_number = 0
        for i in range(1, int(arg("n", "3")) + 1):
            line_number += 1
            if line_number == bad:
                line = b'{"id": %d, "name": ' % i
            else:
                line = json.dumps({"id": i, "name": "item é %d" % i}, ensure_ascii=False).encode()
            self.chunk(line + (b"\r\n" if i % 2 == 0 else b"\n"))
            if i == 2:
                self.chunk(b"\n")
                line_number += 1
            if i == 1 and arg("gate"):
                self.wait_for(arg("gate"), 300)
        self.wfile.write(b"0\r\n\r\n")

    def digest(self):
        """Reads the body in chunks without keeping it: its length, SHA-256 and the headers."""
        digest = hashlib.sha256()
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            length, chunked = 0, True
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                digest.update(self.rfile.read(size))
                length += size
                self.rfile.readline()
        else:
            length, chunked = int(self.headers.get("Content-Length") or 0), False
            left = length
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 20))
                if not chunk:
                    break
                digest.update(chunk)
                left -= len(chunk)
        self.reply_json(200, {
            "method": self.command,
            "length": length,
            "chunked": chunked,
            "sha256": digest.hexdigest(),
            "headers": [[k, v] for k, v in self.headers.items()],
        })

    def reply_json(self, status, value, headers=()):
        self.reply(status, json.dumps(value).encode(), headers)

    def handle_any(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query, keep_blank_values=True)
        arg = lambda name, default=None: query.get(name, [default])[0]
        if url.path == "/digest":
            return self.digest()
        if url.path == "/gate":
            if arg("key"):
                record(arg("key"), self, b"")
            query = parse_qs(url.query)
            return self.gate(query.get("name", [""])[0], float(query.get("max", ["10"])[0]))
        if url.path == "/sse":
            if arg("key"):
                record(arg("key"), self, b"")
            return self.sse(arg)
        if url.path == "/ndjson":
            return self.ndjson(arg)
        body = self.read_body()
        key = arg("key")
        route = url.path
        count = record(key, self, body) if key and route not in BOOKKEEPING else 0
        # Requests so far on this connection (a handler lives as long as its connection).
        self.served = getattr(self, "served", 0) + 1

        if route == "/echo":
            self.reply_json(200, {
                "method": self.command,
                "path": url.path,
                "query": url.query,
                "headers": [[k, v] for k, v in self.headers.items()],
                "body": body.decode("utf-8", "replace"),
                "bodyLength": len(body),
                "peerPort": self.client_address[1],
            })
        elif route.startswith("/status/"):
            status = int(route.split("/")[2])
            headers = [("Location", "/echo")] if 300 <= status < 400 else []
            self.reply(status, b"status %d" % status, headers, "text/plain")
        elif route == "/headers-repeated":
            self.reply(200, b"{}", [("X-Multi", "a"), ("X-Multi", "b"),
                                    ("Set-Cookie", "one=1"), ("Set-Cookie", "two=2")])
        elif route == "/flaky":
            if count <= int(arg("fail", "2")):
                self.reply_json(int(arg("status", "503")), {"attempt": count, "ok": False})
            else:
                # hold_until=NAME: the answer waits for /toggle/on?name=NAME (300 s at most).
                deadline = time.time() + 300
                while arg("hold_until") and time.time() < deadline:
                    with state_lock:
                        if arg("hold_until") in toggles:
                            break
                    time.sleep(0.01)
                self.reply_json(200, {"attempt": count, "ok": True})
        elif route == "/wilting":
            if count <= int(arg("ok", "1")):
                self.reply_json(200, {"attempt": count, "token": "tok-" + key})
            else:
                self.reply_json(int(arg("status", "503")), {"attempt": count, "ok": False})
        elif route == "/retry-after":
            if count <= int(arg("times", "1")):
                seconds = int(arg("seconds", "1"))
                value = (email.utils.formatdate(time.time() + seconds, usegmt=True)
                         if arg("date") else str(seconds))
                self.reply_json(429, {"attempt": count}, [("Retry-After", value)])
            else:
                self.reply_json(200, {"attempt": count})
        elif route == "/slow":
            self.track(key, +1)
            try:
                if arg("after"):
                    self.wait_until(lambda: arg("after") in paused)
                if arg("hold_until"):  # held until /toggle/on?name= (300 s at most)
                    self.wait_until(lambda: arg("hold_until") in toggles, seconds=300)
                time.sleep(int(arg("ms", "1000")) / 1000)
            finally:
                self.track(key, -1)
            self.reply_json(200, {"slept": int(arg("ms", "1000"))})
        elif route == "/host-pause":
            self.host_pause(key, count, arg)
        elif route == "/paused":
            with state_lock:
                self.reply_json(200, {"at": paused.get(key, 0)})
        elif route == "/quota":
            self.quota(key, arg)
        elif route == "/concurrency":
            with state_lock:
                current, most = in_flight.get(key, (0, 0))
            self.reply_json(200, {"max": most, "current": current})
        elif route == "/hits":
            with state_lock:
                self.reply_json(200, {"count": len(hits.get(key, [])),
                                      "requests": list(hits.get(key, []))})
        elif route == "/stale":
            # A keep-alive connection the server drops just as the client reuses it: the first
            # request on a connection is answered (and the connection kept), any later one is
            # read and the connection closed without an answer.
            if self.served > 1:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            else:
                self.reply_json(200, {"connectionRequest": self.served})
        elif route == "/drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif route == "/truncated":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif route.startswith("/malformed/"):
            self.malformed(route[len("/malformed/"):])
        elif route.startswith("/cut/"):
            self.cut(route[len("/cut/"):], arg)
        elif route == "/challenge":
            self.challenge(arg)
        elif route == "/reset-mid-body":
            # Half of a promised body, then a TCP reset (SO_LINGER 0) rather than a clean close.
            self.send_response(200)
            self.send_header("Content-Length", "200000")
            self.end_headers()
            self.wfile.write(b"x" * 100000)
            self.wfile.flush()
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
        elif route == "/drip":
            # One byte a second for n seconds (at most 60), announced up front.
            n = min(int(arg("n", "30")), 60)
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            for _ in range(n):
                self.wfile.write(b"d")
                self.wfile.flush()
                time.sleep(1)
        elif route == "/many-headers":
            n = min(int(arg("n", "1000")), 5000)
            self.send_response(200)
            for i in range(n):
                self.send_header("X-H-%d" % i, "v%d" % i)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
        elif route == "/huge-header":
            size = min(int(arg("bytes", "1048576")), 8 << 20)
            self.send_response(200)
            self.send_header("X-Huge", "h" * size)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
        elif route.startswith("/huge-head/"):
            self.huge_head(route[len("/huge-head/"):], arg)
        elif route == "/bad-utf8":
            # Bytes that are not UTF-8 in a header value and in the body.
            body = b"\xff\xfe not utf-8 \xc3\x28"
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Bad: \xff\xfe\xc3\x28\r\n"
                             b"Content-Type: text/plain\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)
            self.close_connection = True
        elif route == "/endless-chunked":
            # Chunks every 50 ms for at most 60 s: a client must give up on its own deadline.
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            deadline = time.time() + 60
            try:
                while time.time() < deadline:
                    self.wfile.write(b"4\r\nmore\r\n")
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass
            self.close_connection = True
        elif route == "/endless-fast":
            # 64 KiB chunks as fast as the client takes them, for at most 60 s (seconds=S, up
            # to 600): a cap and a deadline must end it from outside the transfer.
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            gzipped = arg("encoding") == "gzip"
            if gzipped:
                self.send_header("Content-Encoding", "gzip")
            self.end_headers()
            deadline = time.time() + min(float(arg("seconds", "60")), 600)
            flood = arg("id")
            chunk = b"%x\r\n" % len(PATTERN) + PATTERN + b"\r\n"
            packer = zlib.compressobj(6, zlib.DEFLATED, 31)
            try:
                while time.time() < deadline and flood not in stopped_floods:
                    if gzipped:
                        packed = packer.compress(PATTERN) + packer.flush(zlib.Z_SYNC_FLUSH)
                        chunk = b"%x\r\n" % len(packed) + packed + b"\r\n"
                    self.wfile.write(chunk)
            except OSError:
                pass
            self.close_connection = True
        elif route == "/endless-stop":
            with state_lock:
                stopped_floods.add(arg("id"))
            self.reply(204)
        elif route == "/bytes":
            self.send_bytes(int(arg("n", "1024")), arg("chunked") == "1")
        elif route == "/redirect":
            self.reply(int(arg("status", "302")), arg("body", "").encode(),
                       [("Location", arg("to", "/echo"))])
        elif route.startswith("/mirror/"):
            segment = unquote(route[len("/mirror/"):])
            self.reply(302, b"", [("Location", "/echo?m=" + quote(segment[::-1]))])
        elif route == "/chain":
            n = int(arg("n", "1"))
            if n > 0:
                self.reply(302, b"", [("Location", "/chain?n=%d" % (n - 1))])
            else:
                self.reply_json(200, {"done": True})
        elif route == "/loop":
            self.reply(302, b"", [("Location", "/loop")])
        elif route == "/error-json":
            self.reply_json(422, {"error": "invalid", "detail": "name is required"})
        elif route == "/empty":
            self.reply(204)
        elif route == "/echo-html":
            # An error page that repeats the request, as proxies' and frameworks' pages do.
            head = "%s %s %s\r\n" % (self.command, self.path, self.request_version)
            head += "".join("%s: %s\r\n" % (k, v) for k, v in self.headers.items())
            self.reply(200, ("<!DOCTYPE html><pre>%s</pre>" % head).encode(), (), "text/html")
        elif route == "/etag":
            etag = '"%s"' % arg("v", "1")
            modified = "Wed, 01 Jan 2025 00:00:00 GMT"
            headers = [("ETag", etag), ("Last-Modified", modified)]
            if arg("cache") is not None:  # the caching tests' Cache-Control, instead of no-store
                headers.append(("Cache-Control", arg("cache")))
            if self.headers.get("If-None-Match") == etag or (
                    self.headers.get("If-None-Match") is None
                    and self.headers.get("If-Modified-Since") == modified):
                self.reply(304, b"", headers)
            else:
                self.reply_json(200, {"version": arg("v", "1")}, headers)
        elif route == "/pages":
            self.pages(arg)
        elif route in ("/charges", "/charges/effects"):
            self.charges(route, arg, body)
        elif route in ("/store/put", "/store/items"):
            self.store(route, arg, body)
        elif route == "/toggle/on":
            with state_lock:
                toggles.add(arg("name"))
            self.reply_json(200, {"on": arg("name")})
        elif route == "/toggle":
            with state_lock:
                on = arg("name") in toggles
            self.reply_json(200 if on else 503, {"on": on, "body": body.decode("utf-8", "replace")})
        elif route == "/set-cookie":
            fields = [("Set-Cookie", value) for value in query.get("c", [])]
            if arg("to"):
                self.reply(302, b"", fields + [("Location", arg("to"))])
            else:
                self.reply_json(200, {"set": len(fields)}, fields)
        elif route == "/v1/users" or route.startswith("/v1/users/"):
            self.seed_users(route, arg)
        elif route.startswith("/sync/"):
            self.sync_api(route, arg, body)
        elif route == "/echo-auth":
            value = self.headers.get("Authorization", "")
            self.reply_json(200, {"authorization": value}, [("X-Echo-Authorization", value)])
        elif route == "/echo-auth-redirect":
            # Sends the credential back base64-encoded (URL-safe, unpadded) in a redirect's
            # query, after 13 bytes of its own, so it sits at no 3-byte boundary.
            value = ("auth: " + self.headers.get("Authorization", "")).encode()
            state = base64.urlsafe_b64encode(value).decode().rstrip("=")
            self.reply(302, b"", [("Location", "/echo?state=" + state)])
        elif route.startswith("/ping/"):
            hang = min(float(arg("hang", "0")), 600)
            if hang > 0 and arg("hang_on") in (None, route.rsplit("/", 1)[-1]):
                time.sleep(hang)
            self.reply(int(arg("status", "200")), b"OK", [], "text/plain; charset=utf-8")
        elif route == "/json":
            self.reply(200, (arg("v") or "null").encode())
        elif route in ("/search", "/graphql"):
            self.body_pages(route, arg, body)
        elif route.startswith("/recovery/"):
            self.recovery_api(route, arg, body)
        elif route == "/oauth/token":
            self.oauth_token(arg, body)
        elif route.startswith("/oauth/api/"):
            self.oauth_api(route, arg)
        elif route.startswith("/records/"):
            self.records_api(route, arg, body)
        elif route == "/typed":
            # The bytes given in hex under the Content-Type given: charsets, content types.
            self.reply(200, bytes.fromhex(arg("hex", "")), [],
                       arg("type", "application/octet-stream"))
        else:
            self.reply_json(404, {"error": "no route " + route})

    def sync_api(self, route, arg, body):
        # An API shaped like GitHub's: log in for a token, list users in pages (Link header,
        # per_page/page), fetch each user (ETag; If-None-Match gives 304). The token is made
        # from `key`, so each test has its own. `total`, `per_page`, `delay_ms` (each list page)
        # and `fail_page` (that page answers 500) shape the listing.
        token = "tok-" + (arg("key") or "none") + "-s3cr3t"
        expire_after = int(arg("expire_after", "0"))
        if expire_after:
            # Tokens with generations: each login issues the next one; only the newest is
            # good, and the first stops being good after `expire_after` requests.
            with state_lock:
                session = sessions.setdefault(arg("key"), [0, 0])
                if route == "/sync/login":
                    session[0] += 1
                generation = session[0]
                token = "tok-%s-g%d-s3cr3t" % (arg("key"), generation)
                if route != "/sync/login" and generation == 1 and \
                        self.headers.get("Authorization") == "Bearer " + token:
                    session[1] += 1
                    if session[1] > expire_after:
                        token = "expired"
                if arg("reject_all") and route != "/sync/login":
                    token = "never"
                if route == "/sync/login" and generation > int(arg("logins", "1000000")):
                    return self.reply_json(401, {"error": "no more logins"})
        if route == "/sync/login":
            if not self.good_login(body):
                return self.reply_json(401, {"error": "bad credentials"})
            return self.reply_json(200, {"access_token": token, "token_type": "bearer"},
                                   [("X-Session", token)])
        if self.headers.get("Authorization") != "Bearer " + token:
            return self.reply_json(401, {"error": "no or wrong token"})
        if route == "/sync/users":
            total, per = int(arg("total", "10")), int(arg("per_page", "3"))
            page = int(arg("page", "1"))
            if arg("delay_ms"):
                time.sleep(int(arg("delay_ms")) / 1000)
            if arg("fail_page") and int(arg("fail_page")) == page:
                return self.reply_json(500, {"error": "page %d is broken" % page})
            start = (page - 1) * per
            items = [{"id": i, "login": "user%d" % i} for i in range(start + 1, min(total, start + per) + 1)]
            headers = []
            if start + per < total:
                keep = "&".join("%s=%s" % (k, arg(k)) for k in ("key", "total", "per_page", "delay_ms", "fail_page") if arg(k))
                headers.append(("Link", '</sync/users?%s&page=%d>; rel="next"' % (keep, page + 1)))
            return self.reply_json(200, {"items": items, "page": page}, headers)
        if route.startswith("/sync/users/"):
            ident = route.rsplit("/", 1)[1]
            etag = '"v1-%s"' % ident
            if self.headers.get("If-None-Match") == etag:
                return self.reply(304, b"", [("ETag", etag)])
            return self.reply_json(200, {"id": ident, "login": "user" + ident, "active": True},
                                   [("ETag", etag)])
        self.reply_json(404, {"error": "no route " + route})

    def oauth_error(self, status, code, description):
        self.reply_json(status, {"error": code, "error_description": description})

    def oauth_token(self, arg, body):
        """An OAuth2 token endpoint: client authentication, two grants, failures on demand."""
        key = arg("key") or ""
        if arg("delay_ms"):
            time.sleep(int(arg("delay_ms")) / 1000)
        fail = arg("fail")
        if arg("fail_until"):
            with state_lock:
                if arg("fail_until") not in toggles:
                    fail = "503"
        if fail == "invalid_client":
            return self.oauth_error(400, "invalid_client", "Client authentication failed")
        if fail == "500":
            return self.reply(500, b"internal error", (), "text/plain")
        if fail == "503":
            return self.reply(503, b"try later", (), "text/plain")
        if fail == "redirect":
            return self.reply(307, b"", [("Location", self.path.replace("fail=redirect", ""))])
        if fail == "nonjson":
            return self.reply(200, b"<html><body>Sign in</body></html>", (), "text/html")
        if fail == "noaccess":
            return self.reply_json(200, {"token_type": "bearer", "expires_in": 60})
        if self.command != "POST" or not self.headers.get("Content-Type", "").startswith(
                "application/x-www-form-urlencoded"):
            return self.oauth_error(400, "invalid_request", "POST a form")
        form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        field = lambda name: form.get(name, [None])[0]
        header = self.headers.get("Authorization", "")
        client_id, secret = field("client_id"), field("client_secret")
        if header.startswith("Basic "):
            if secret is not None:
                return self.oauth_error(400, "invalid_request", "two ways of client authentication")
            decoded = base64.b64decode(header[6:]).decode("utf-8", "replace")
            name, _, password = decoded.partition(":")
            client_id, secret = unquote_plus(name), unquote_plus(password)
        elif header:
            return self.oauth_error(400, "invalid_request", "unexpected Authorization")
        if client_id != OAUTH_CLIENT_ID or (secret is not None and secret != OAUTH_CLIENT_SECRET):
            return self.oauth_error(401, "invalid_client", "Client authentication failed")
        grant = field("grant_type")
        with state_lock:
            session = oauth.setdefault(key, {"issued": 0, "tokens": {}, "first_uses": 0,
                                             "refresh": "rt-%s-1-s3cr3t" % key, "refreshes": 1})
            if grant == "client_credentials":
                if secret is None:
                    return self.oauth_error(401, "invalid_client", "a confidential client only")
            elif grant == "refresh_token":
                if field("refresh_token") != session["refresh"]:
                    return self.oauth_error(400, "invalid_grant", "unknown or used refresh token")
                if arg("rotate"):
                    session["refreshes"] += 1
                    session["refresh"] = "rt-%s-%d-s3cr3t" % (key, session["refreshes"])
            else:
                return self.oauth_error(400, "unsupported_grant_type", str(grant))
            session["issued"] += 1
            number = session["issued"]
            token = "at-%s-%d-s3cr3t" % (key, number)
            lifetime = float(arg("expires_in", "3600"))
            session["tokens"][token] = (number, time.time(), lifetime)
            answer = {"access_token": token, "token_type": "Bearer", "expires_in": lifetime}
            if field("scope") is not None:
                answer["scope"] = field("scope")
            if grant == "refresh_token" and arg("rotate"):
                answer["refresh_token"] = session["refresh"]
        self.reply_json(200, answer)

    def oauth_api(self, route, arg):
        """A protected route: a live bearer token from /oauth/token of the same key."""
        key = arg("key") or ""
        if arg("delay_ms"):
            time.sleep(int(arg("delay_ms")) / 1000)
        header = self.headers.get("Authorization", "")
        with state_lock:
            session = oauth.get(key)
            entry = None
            if session and header.startswith("Bearer "):
                entry = session["tokens"].get(header[len("Bearer "):])
            good = entry is not None and time.time() < entry[1] + entry[2]
            if good and arg("revoke_after") and entry[0] == 1:
                session["first_uses"] += 1
                good = session["first_uses"] <= int(arg("revoke_after"))
        if not good:
            return self.reply_json(401, {"error": "invalid_token"},
                                   [("WWW-Authenticate", 'Bearer error="invalid_token"')])
        if arg("toggle"):
            with state_lock:
                on = arg("toggle") in toggles
            if not on:
                return self.reply_json(503, {"on": False})
        self.reply_json(200, {"ok": True, "path": route, "token": entry[0]})

    def good_login(self, body):
        """Whether this is a POST of {"password": "hunter22"}, the fixture APIs' one login."""
        try:
            login = json.loads(body or b"{}")
        except ValueError:
            return False
        return self.command == "POST" and isinstance(login, dict) and login.get("password") == "hunter22"

    def recovery_api(self, route, arg, body):
        key = arg("key") or ""
        if route == "/recovery/level":
            with state_lock:
                recovery[key] = (int(arg("level", "0")), int(arg("delay_ms", "0")))
                # Each call is a new setting: requests held by the one before are let go.
                generation = recovery_holds.get(key, {}).get("generation", 0) + 1
                recovery_holds[key] = {"after": int(arg("hold_after", "0")), "served": 0,
                                       "held": 0, "generation": generation}
            return self.reply_json(200, {"level": recovery[key][0]})
        if route == "/recovery/held":
            with state_lock:
                return self.reply_json(200, {"held": recovery_holds.get(key, {}).get("held", 0)})
        if route == "/recovery/effects":
            with state_lock:
                return self.reply_json(
                    200, {"count": recovery_writes.get(key, {}).get("effects", 0)})

        def out(name):
            # Deterministic: a quarter of names are out at level 1, the same and another
            # quarter at level 2.
            bucket = zlib.crc32(name.encode()) % 4
            return (level >= 1 and bucket == 1) or (level >= 2 and bucket == 3)

        with state_lock:
            level, delay = recovery.get(key, (0, 0))
            if route == "/recovery/write" and not out("write" + (arg("id") or "")):
                # The effect is made as the write arrives: a run killed while it is held has
                # made it, and does not know.
                writes = recovery_writes.setdefault(key, {"effects": 0, "keys": set()})
                idempotency = self.headers.get("Idempotency-Key")
                if idempotency is None or idempotency not in writes["keys"]:
                    writes["effects"] += 1
                if idempotency is not None:
                    writes["keys"].add(idempotency)
            hold = recovery_holds.get(key)
            held = False
            if hold and hold["after"]:
                hold["served"] += 1
                held = hold["served"] > hold["after"]
                if held:
                    hold["held"] += 1
            generation = hold["generation"] if hold else 0
        if held:
            # Past hold_after answers, every request waits for the next /recovery/level (300 s
            # at most): a run cannot end before the test has killed it.
            deadline = time.time() + 300
            while time.time() < deadline:
                with state_lock:
                    if recovery_holds[key]["generation"] != generation:
                        break
                time.sleep(0.01)
        if delay:
            time.sleep(delay / 1000)

        if route == "/recovery/write":
            if out("write" + (arg("id") or "")):
                return self.reply_json(503, {"error": "writes are out"})
            return self.reply_json(201, {"written": arg("id")})
        if route == "/recovery/login":
            if not self.good_login(body):
                return self.reply_json(401, {"error": "bad credentials"})
            return self.reply_json(200, {"token": "tok-" + key})
        if route == "/recovery/list":
            total, size, page = int(arg("total", "10")), int(arg("size", "5")), int(arg("page", "1"))
            if out("%spage%d" % (arg("name", ""), page)):
                return self.reply_json(503, {"error": "page %d is out" % page})
            start = (page - 1) * size
            items = [{"id": i} for i in range(start + 1, min(total, start + size) + 1)]
            headers = []
            if start + size < total:
                keep = "key=%s&total=%d&size=%d&name=%s" % (key, total, size, arg("name", ""))
                headers.append(("Link", '</recovery/list?%s&page=%d>; rel="next"' % (keep, page + 1)))
            return self.reply_json(200, {"items": items, "page": page}, headers)
        if route == "/recovery/search":
            # A POST search paged by {"page", "size"} in the body; a page's name is out as
            # /recovery/list's are.
            try:
                request = json.loads(body or b"{}")
            except ValueError:
                return self.reply_json(400, {"error": "the body is not JSON"})
            total, size = int(arg("total", "9")), int(request.get("size") or 3)
            page = int(request.get("page") or 1)
            if out("%ssearch%d" % (arg("name", ""), page)):
                return self.reply_json(503, {"error": "search page %d is out" % page})
            start = (page - 1) * size
            items = [{"id": i, "name": "item %d" % i} for i in range(start + 1, min(total, start + size) + 1)]
            return self.reply_json(200, {"items": items, "has_more": start + size < total})
        if route in ("/recovery/item", "/recovery/private"):
            ident = arg("id", "")
            if ident.startswith("gone"):
                return self.reply_json(404, {"error": "%s was deleted" % ident})
            if route == "/recovery/private":
                basic = "Basic " + base64.b64encode(b"user:hunter22").decode()
                if self.headers.get("Authorization") not in ("Bearer tok-" + key, basic):
                    return self.reply_json(401, {"error": "no or wrong credentials"})
            if out(ident):
                return self.reply_json(503, {"error": "%s is out" % ident})
            etag = '"v1-%s"' % ident
            if self.headers.get("If-None-Match") == etag:
                return self.reply(304, b"", [("ETag", etag)])
            return self.reply_json(200, {"id": ident, "v": 1}, [("ETag", etag)])
        self.reply_json(404, {"error": "no route " + route})

    def charges(self, route, arg, body):
        """A write with Stripe's idempotency: an effect per new key (or per request without
        one), a repeat of a key answered as the first time, 409 while the first is under way."""
        def toggled_off(name):
            with state_lock:
                return bool(name) and name not in toggles
        with state_lock:
            state = CHARGES.setdefault(arg("key") or "", {"effects": [], "answers": {}})
        if route == "/charges/effects":
            with state_lock:
                pending = sum(1 for answer in state["answers"].values() if answer is None)
                return self.reply_json(200, {"count": len(state["effects"]), "pending": pending,
                                             "charges": list(state["effects"])})
        if toggled_off(arg("fail_until")):
            return self.reply_json(503, {"error": "try again"})
        key = self.headers.get(arg("header") or "Idempotency-Key")
        with state_lock:
            if key is not None and key in state["answers"]:
                answer = state["answers"][key]
                if answer is None:
                    return self.reply_json(409, {"error": "a request with this key is under way"})
                status, reply, sent = answer
                if sent != body:
                    return self.reply_json(400, {"error": "this key was used with another body"})
                return self.reply(status, reply, [("Content-Type", "application/json"),
                                                  ("Idempotent-Replayed", "true")])
            charge = {"id": "ch_%d" % (len(state["effects"]) + 1), "key": key,
                      "body": body.decode("utf-8", "replace")}
            state["effects"].append(charge)
            if key is not None:
                state["answers"][key] = None
        if arg("hang_until"):
            deadline = time.time() + 300
            while toggled_off(arg("hang_until")) and time.time() < deadline:
                time.sleep(0.02)
        reply = json.dumps({"id": charge["id"], "status": arg("status") or "paid"}).encode()
        with state_lock:
            if key is not None:
                state["answers"][key] = (201, reply, body)
        try:
            self.reply(201, reply, [("Content-Type", "application/json")])
        except OSError:
            self.close_connection = True

    def store(self, route, arg, body):
        """An incremental-sync API: PUT records in (JSON list, upserted by id), list those
        updated after ?since= in updated_at order, pages of ?size= by ?page= with Link next."""
        key = arg("key") or ""
        if route == "/store/put":
            with STORE_LOCK:
                records = STORE.setdefault(key, {})
                for record in json.loads(body or b"[]"):
                    if record.get("_remove"):  # gone upstream, without a tombstone
                        records.pop(record["id"], None)
                    else:
                        records[record["id"]] = record
            return self.reply_json(200, {"stored": len(STORE[key])})
        page, size = int(arg("page", "1")), int(arg("size", "2"))
        def until(name):
            # Without a name, always; with one, while /toggle/on?name= has not been called.
            with state_lock:
                return not name or name not in toggles
        if arg("fail_page") and int(arg("fail_page")) == page and until(arg("fail_until")):
            return self.reply_json(500, {"error": "page %d is broken" % page})
        if arg("hang_page") and int(arg("hang_page")) == page:
            if arg("hang_until"):
                deadline = time.time() + 300
                while until(arg("hang_until")) and time.time() < deadline:
                    time.sleep(0.02)
            else:
                time.sleep(30)
        since, start, before = arg("since") or "", arg("from") or "", arg("before") or ""
        with STORE_LOCK:
            found = sorted((r for r in STORE.get(key, {}).values()
                            if r["updated_at"] > since and r["updated_at"] >= start
                            and (not before or r["updated_at"] < before)),
                           key=lambda r: (r["updated_at"], r["id"]))
        items = found[(page - 1) * size: page * size]
        headers = []
        if page * size < len(found):
            query = "&".join("%s=%s" % (k, v) for k, v in parse_qs(urlsplit(self.path).query, keep_blank_values=True).items() for v in v if k != "page")
            headers.append(("Link", '</store/items?%s&page=%d>; rel="next"' % (query, page + 1)))
        self.reply_json(200, {"items": items, "total": len(found)}, headers)
    def records_api(self, route, arg, body):
        key = arg("key") or ""
        if route == "/records/gen":
            count, size, page = int(arg("count", "10")), int(arg("size", "10000")), int(arg("page", "1"))
            v, every = int(arg("v", "1")), int(arg("deleted_every", "0"))
            first, last = (page - 1) * size + 1, min(count, page * size)
            rows = []
            for i in range(first, last + 1):
                if every and i % every == 0:
                    rows.append('{"id":%d,"deleted":true}' % i)
                else:
                    rows.append('{"id":%d,"name":"user-%d","v":%d}' % (i, i, v))
            headers = []
            if last < count:
                keep = "count=%d&size=%d&v=%d&deleted_every=%d" % (count, size, v, every)
                headers.append(("Link", '</records/gen?%s&page=%d>; rel="next"' % (keep, page + 1)))
            return self.reply(200, ('{"items":[' + ",".join(rows) + "]}").encode(), headers)
        if route == "/records/set":
            value = json.loads(body or b"{}")
            with state_lock:
                version = record_sets.get(key, {}).get("version", 0) + 1
                record_sets[key] = {"items": value.get("items", []), "fail": bool(value.get("fail")),
                                    "delay_ms": int(value.get("delay_ms", 0)), "version": version}
            return self.reply_json(200, {"version": version})
        with state_lock:
            current = record_sets.get(key, {"items": [], "fail": False, "delay_ms": 0, "version": 0})
        if current["delay_ms"]:
            time.sleep(current["delay_ms"] / 1000)
        if current["fail"]:
            return self.reply_json(503, {"error": "the record set %s is out" % key})
        items = current["items"]
        etag = '"v%d"' % current["version"]
        if route == "/records/list":
            size, page = int(arg("size", "3")), int(arg("page", "1"))
            if self.headers.get("If-None-Match") == etag:
                return self.reply(304, b"", [("ETag", etag)])
            chunk = items[(page - 1) * size:page * size]
            headers = [("ETag", etag)]
            if page * size < len(items):
                headers.append(("Link", '</records/list?key=%s&size=%d&page=%d>; rel="next"' % (key, size, page + 1)))
            return self.reply_json(200, {"items": chunk, "page": page}, headers)
        if route == "/records/ids":
            return self.reply_json(200, {"ids": [item.get("id") for item in items]})
        if route == "/records/item":
            for item in items:
                if str(item.get("id")) == arg("id"):
                    return self.reply_json(200, item)
            return self.reply_json(404, {"error": "no record %s" % arg("id")})
        self.reply_json(404, {"error": "no route " + route})

    def body_pages(self, route, arg, body):
        """POST search and GraphQL endpoints that page by what the request body says: /search
        takes {"offset", "limit"}, {"page", "size"} or {"cursor", "limit"} and answers
        {"items", "total", "has_more", "next_cursor"}; /graphql takes {"query", "variables":
        {"after", "first"}} and answers {"data": {"items": {"nodes", "pageInfo": {"endCursor",
        "hasNextPage"}}}}. ?total=N items (ids 0…N-1); a body that is not JSON is a 400."""
        total = int(arg("total", "10"))
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return self.reply_json(400, {"error": "the body is not JSON"})
        if route == "/graphql":
            variables = request.get("variables") or {}
            first = int(variables.get("first") or 3)
            start = int(variables["after"]) + 1 if variables.get("after") is not None else 0
            nodes = [{"id": i} for i in range(start, min(total, start + first))]
            end = str(nodes[-1]["id"]) if nodes else None
            return self.reply_json(200, {"data": {"items": {"nodes": nodes, "pageInfo": {
                "endCursor": end, "hasNextPage": start + first < total}}}})
        size = int(request.get("limit") or request.get("size") or 3)
        if "page" in request:
            start = (int(request["page"]) - 1) * size
        elif request.get("cursor") is not None:
            start = int(request["cursor"])
        else:
            start = int(request.get("offset") or 0)
        items = [{"id": i} for i in range(start, min(total, start + size))]
        more = start + size < total
        self.reply_json(200, {"items": items, "total": total, "has_more": more,
                              "next_cursor": str(start + size) if more else None})

    def pages(self, arg):
        style, total, size = arg("style", "page"), int(arg("total", "10")), int(arg("size", "3"))
        if style in ("page", "gitlab"):
            start = (int(arg("page", "1")) - 1) * size
        elif style == "after":
            start = int(arg("after")) + 1 if arg("after") else 0
        elif style == "offset":
            start = int(arg("offset", "0"))
        else:
            start = int(arg("cursor") or arg("start", "0"))
        if arg("fail_start") and int(arg("fail_start")) == start:
            with state_lock:
                failing = arg("fail_until") not in toggles
            if failing:
                return self.reply_json(500, {"error": "the page at %d is broken" % start})
        items = [{"id": i} for i in range(start, min(total, start + size))]
        after = start + size
        if arg("loop") == "1":
            after = start  # the next link points at this same page again
        more = after < total or arg("loop") == "1"
        keep = "&".join("%s=%s" % (k, arg(k)) for k in ("style", "total", "size", "loop", "key", "host", "etag", "fail_start", "fail_until") if arg(k))
        origin = arg("host") or ""
        next_url = "%s/pages?%s&start=%d" % (origin, keep, after)
        body = {"data": items} if style == "after" else {"items": items}
        headers = []
        if style == "header" and more:
            headers.append(("Next-Page", next_url))
        elif style == "gitlab":
            headers.append(("X-Next-Page", str(int(arg("page", "1")) + 1) if more else ""))
        elif style == "link" and more:
            headers.append(("Link", '<%s>; rel="next", </pages?%s&start=0>; rel="first"' % (next_url, keep)))
        elif style == "json":
            body["next"] = next_url if more else None
        elif style == "cursor":
            body["cursor"] = str(after) if more else None
        if arg("etag") == "1":  # validators per page; 304 when If-None-Match is this page's
            tag = '"p%d-%d"' % (start, total)
            headers.append(("ETag", tag))
            if self.headers.get("If-None-Match") == tag:
                return self.reply(304, b"", headers)
        self.reply_json(200, body, headers)

    def seed_users(self, route, arg):
        if self.headers.get("Authorization") != "Bearer " + SEED_TOKEN:
            self.reply_json(401, {"error": "unauthorized"})
            return
        if route == "/v1/users":
            page, per_page = int(arg("page", "1")), int(arg("per_page", "20"))
            matches = [u for u in SEED_USERS if (arg("q") or "").lower() in u["name"].lower()]
            pages = max(1, -(-len(matches) // per_page))
            self.reply_json(200, {"page": page, "total_pages": pages, "total_results": len(matches),
                                  "results": matches[(page - 1) * per_page: page * per_page]})
            return
        found = [u for u in SEED_USERS if u["id"] == route[len("/v1/users/"):]]
        if found:
            self.reply_json(200, found[0])
        else:
            self.reply_json(404, {"error": "no such user"})

    def huge_head(self, how, arg):
        """A header block of many short lines, each one well-formed: a server (or a proxy) that
        makes a client parse megabytes before the body. Written raw, in 64 KiB writes."""
        if how == "folded":
            n = min(int(arg("n", "40000")), 1000000)
            lines = [b"X-Folded: a\r\n"] + [b"\tb\r\n"] * n
        elif how == "many":
            n = min(int(arg("n", "100000")), 1000000)
            lines = [b"X-A: b\r\n"] * n
        else:
            return self.reply_json(404, {"error": "no huge-head " + how})
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" + b"".join(lines)
        out = head + b"Content-Length: 2\r\n\r\nok"
        try:
            for start in range(0, len(out), 65536):
                self.wfile.write(out[start:start + 65536])
            self.wfile.flush()
        except OSError:
            pass  # the client gave up on the header block, as it should
        self.close_connection = True

    def malformed(self, how):
        """Malformed status lines and framing, written byte for byte, then a close."""
        body = b'{"ok": true}'
        length = b"Content-Length: %d\r\n" % len(body)
        heads = {
            "status-short": b"HTTP/1.1 20 OK\r\n" + length,
            "status-long": b"HTTP/1.1 2000000000000000000000 OK\r\n" + length,
            "status-letters": b"HTTP/1.1 2OO OK\r\n" + length,
            "no-reason": b"HTTP/1.1 200\r\n" + length,
            "dup-length": b"HTTP/1.1 200 OK\r\n" + length + b"Content-Length: 5\r\n",
            "length-letters": b"HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n",
        }
        if how == "http09":
            out = body  # an HTTP/0.9 reply: the body alone, no status line
        elif how == "trailer":
            # Well-formed: a chunked body with a trailer field (RFC 9112 §7.1.2).
            out = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n"
                   b"Content-Type: application/json\r\n\r\n"
                   + b"%x\r\n" % len(body) + body + b"\r\n0\r\nX-Checksum: abc\r\n\r\n")
        elif how in heads:
            out = heads[how] + b"Content-Type: application/json\r\n\r\n" + body
        else:
            return self.reply_json(404, {"error": "no malformed " + how})
        self.wfile.write(out)
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def challenge(self, arg):
        """A 401 with a WWW-Authenticate challenge of the scheme asked for, and a body."""
        scheme = arg("scheme", "Basic")
        fields = {"Basic": 'Basic realm="fixture"',
                  "Digest": 'Digest realm="fixture", nonce="n0", qop="auth", algorithm=MD5',
                  "Bearer": 'Bearer realm="fixture", error="invalid_token"'}
        self.reply_json(401, {"error": "unauthorized", "scheme": scheme,
                              "detail": "this body is the server's explanation"},
                        [("WWW-Authenticate", fields.get(scheme, scheme))])

    def cut(self, how, arg):
        """Hostile responses for the truncation tests, written byte for byte, then a close."""
        head = b'HTTP/1.1 200 OK\r\nETag: "cut"\r\nContent-Type: application/json\r\n'
        body = CUT_BODY
        if how.startswith("gzip-"):
            encoding = arg("encoding", "gzip")
            try:
                packed = compressed(body, encoding)
            except (OSError, subprocess.CalledProcessError) as error:
                return self.reply_json(500, {"error": "no %s encoder: %s (Debian packages brotli "
                                             "and zstd; make test-deps)" % (encoding, error)})
            if arg("whole") != "1":
                packed = packed[: len(packed) * 38 // 100]
            head += b"Content-Encoding: " + encoding.encode() + b"\r\n"
            if how == "gzip-chunked":
                half = len(packed) // 2
                out = head + b"Transfer-Encoding: chunked\r\n\r\n"
                for piece in (packed[:half], packed[half:]):
                    out += b"%x\r\n" % len(piece) + piece + b"\r\n"
                out += b"0\r\n\r\n"
            else:
                out = head + b"Content-Length: %d\r\n\r\n" % len(packed) + packed
        elif how == "not-gzip":
            # Announced as gzip, sent plain: no decoder can read it.
            out = head + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        elif how == "headers":
            out = head
        elif how == "length-overflow":
            out = head + b"Content-Length: 12345678901234567890123456\r\n\r\n" + body[:100]
        elif how == "chunked-bad":
            out = head + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n"
        elif how == "chunked-early-close":
            out = (head + b"Transfer-Encoding: chunked\r\n\r\n"
                   + b"5\r\nhello\r\n5\r\nworld\r\n")
        else:
            return self.reply_json(404, {"error": "no cut " + how})
        self.wfile.write(out)
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def host_pause(self, key, count, arg):
        """A 429 that comes while other requests of the key are under way (see the list)."""
        first = int(arg("first", "2"))
        if count == 1:
            self.wait_until(lambda: len(hits.get(key, [])) >= first)
            with state_lock:
                paused[key] = time.time()
            self.reply_json(429, {"attempt": count}, [("Retry-After", arg("seconds", "2"))])
        elif count <= first:
            self.wait_until(lambda: key in paused)
            if arg("release"):
                # The test lets them go once the client has logged the 429: an event, so that
                # a loaded machine cannot let a slot free up before the pause is known.
                self.wait_until(lambda: arg("release") in toggles, seconds=300)
            else:
                time.sleep(0.5)
            self.reply_json(200, {"attempt": count})
        else:
            self.reply_json(200, {"attempt": count})

    def wait_until(self, ready, seconds=5):
        """Waits until ready() (called under the state lock) is true, `seconds` at most."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            with state_lock:
                if ready():
                    return
            time.sleep(0.005)

    def quota(self, key, arg):
        limit, allowed = int(arg("limit", "10")), int(arg("remaining", "5"))
        window = float(arg("window", "3"))
        now = time.time()
        with state_lock:
            start, used = quotas.get(key, (now, 0))
            if now >= start + window:
                start, used = now, 0
            used += 1
            quotas[key] = (start, used)
        reset = str(max(1, int(-(-(start + window - now) // 1))))
        left = allowed - used
        headers = [("RateLimit-Limit", str(limit)), ("RateLimit-Remaining", str(max(0, left))),
                   ("RateLimit-Reset", reset)]
        if left < 0:
            self.reply_json(429, {"over": -left}, headers + [("Retry-After", reset)])
        else:
            self.reply_json(200, {"left": left}, headers)

    def track(self, key, delta):
        with state_lock:
            current, most = in_flight.get(key, (0, 0))
            current += delta
            in_flight[key] = (current, max(most, current))

    def send_bytes(self, size, chunked):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        if self.command == "HEAD":
            return
        sent = 0
        while sent < size:
            piece = PATTERN[: min(len(PATTERN), size - sent)]
            if chunked:
                self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
            else:
                self.wfile.write(piece)
            sent += len(piece)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        pass  # clients that hang up mid-response are part of the tests


def tls_server():
    """A TLS listener with a fresh self-signed certificate for localhost, or None."""
    folder = tempfile.mkdtemp(prefix="courier-tls-")
    try:
        pair = make_certificate(folder)
        if pair is None:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*pair)
    finally:
        # The context holds the key and certificate now; nothing reads the files again.
        shutil.rmtree(folder, ignore_errors=True)
    server = Server(("127.0.0.1", 0), Handler)
    # The handshake runs in the handler's thread, so a stalled client cannot block accept().
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    return server


def main():
    # --port N fixes the first port (for `make demo`); tests always use free ports.
    first = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
    servers = [Server(("127.0.0.1", port), Handler) for port in (first, 0)]
    secure = tls_server()
    for server in servers + ([secure] if secure else []):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    ports = [s.server_address[1] for s in servers] + [secure.server_address[1] if secure else 0]
    print("READY %d %d %d" % tuple(ports), flush=True)
    if "--no-stdin" in sys.argv:
        threading.Event().wait()
    sys.stdin.read()  # returns at EOF: the parent has gone
    os._exit(0)


if __name__ == "__main__":
    main()
