#!/usr/bin/env python3
"""Runs Datasette (PyPI, installed by `make test` into .build/pyvenv) on a free loopback port
over a SQLite database of its own, for the sync tests against a server nobody here wrote.

Prints "READY <port> <database path>" once Datasette answers, and stops it when standard input
closes. Tests change the data between runs with datasette_store.py; Datasette opens the file
in mutable mode, so every request reads it as it is then.
"""

import os
import sqlite3
import subprocess
import tempfile

from fixture_support import free_port, run_until_stdin_closes, venv_program, wait_until_answers

DATASETTE = venv_program("datasette")

folder = tempfile.mkdtemp(prefix="courier-datasette-")
database = os.path.join(folder, "store.db")
sqlite3.connect(database).close()
port = free_port()
child = subprocess.Popen(
    [DATASETTE, "serve", database, "-h", "127.0.0.1", "-p", str(port),
     "--setting", "max_returned_rows", "100000"],
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wait_until_answers("http://127.0.0.1:%d/-/versions.json" % port, child, "datasette", 200)
print("READY %d %s" % (port, database), flush=True)
run_until_stdin_closes(child, folder)
