#!/usr/bin/env python3
"""Changes a table of the Datasette fixture's database, as an upstream system would.

    datasette_store.py DB TABLE put '[{"id": 1, "updated_at": "...", "name": "..."}, ...]'
    datasette_store.py DB TABLE delete ID...

`put` creates the table (id primary key, updated_at, name, deleted) when it is missing and
upserts the records.
"""

import json
import sqlite3
import sys

database, table, command = sys.argv[1], sys.argv[2], sys.argv[3]
connection = sqlite3.connect(database, timeout=10)
connection.execute(
    'create table if not exists "%s" (id integer primary key, updated_at text, name text, '
    'deleted integer default 0)' % table)
if command == "put":
    for record in json.loads(sys.argv[4]):
        connection.execute(
            'insert or replace into "%s" (id, updated_at, name, deleted) values (?, ?, ?, ?)'
            % table,
            (record["id"], record["updated_at"], record.get("name"), int(record.get("deleted", 0))))
elif command == "delete":
    for identifier in sys.argv[4:]:
        connection.execute('delete from "%s" where id = ?' % table, (int(identifier),))
connection.commit()
