#!/usr/bin/env python3
"""Checks what `courier report` wrote, the way a person and a CI server would read it.

Usage: check_report.py SCHEMA REPORT.json JUNIT.xml SHOT.png
Prints one line per check: "json ok", "junit ok <cases> <failures>", "png ok <blue> <red>"
(pixels of the chart colours), or "<what> bad: <why>". Exits 3 when a module is missing.
"""
import json
import sys
import xml.dom.minidom

try:
    import jsonschema
    from PIL import Image
except ImportError as error:
    print("missing module: %s (Debian: python3-jsonschema python3-pil)" % error, file=sys.stderr)
    sys.exit(3)

schema_path, report_path, junit_path, png_path = sys.argv[1:5]

try:
    jsonschema.validate(json.load(open(report_path)), json.load(open(schema_path)))
    print("json ok")
except Exception as error:  # noqa: BLE001 - the verdict is the output
    print("json bad: %s" % str(error).splitlines()[0])

try:
    document = xml.dom.minidom.parse(junit_path)
    cases = document.getElementsByTagName("testcase")
    failures = document.getElementsByTagName("failure")
    print("junit ok %d %d" % (len(cases), len(failures)))
except Exception as error:  # noqa: BLE001
    print("junit bad: %s" % error)

try:
    image = Image.open(png_path).convert("RGB")
    blue = red = 0
    for r, g, b in image.getdata():
        if abs(r - 0x2F) < 40 and abs(g - 0x6F) < 40 and abs(b - 0xDE) < 40:
            blue += 1
        elif abs(r - 0xD9) < 40 and abs(g - 0x2D) < 40 and abs(b - 0x20) < 40:
            red += 1
    print("png ok %d %d %d %d" % (image.width, image.height, blue, red))
except Exception as error:  # noqa: BLE001
    print("png bad: %s" % error)
