#!/usr/bin/env python3
"""Validates job files against jobs/schema.json (JSON Schema 2020-12).

Usage: check_schema.py SCHEMA FILE...   Prints "FILE: ok" or "FILE: invalid: reason" per file;
exits 0 when it could check them all (whatever the verdicts), 3 when jsonschema is missing.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed (Debian: python3-jsonschema)", file=sys.stderr)
    sys.exit(3)

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
for path in sys.argv[2:]:
    try:
        document = json.load(open(path))
    except ValueError as error:
        print("%s: invalid: not JSON (%s)" % (path, error))
        continue
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
        print("%s: invalid: %s: %s" % (path, where, errors[0].message))
    else:
        print("%s: ok" % path)
