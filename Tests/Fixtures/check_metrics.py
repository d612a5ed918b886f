#!/usr/bin/env python3
"""Reads a Prometheus text file with the official Python client's parser (Debian's
python3-prometheus-client), a reader courier's tests did not write, and prints every sample as
JSON lines: {"family", "type", "name", "labels", "value"}, the value as Python's repr of the
float it read (shortest round trip: read with a strict float parser, not a JSON one). Exits 1, naming the problem, when the
parser refuses the file.

Usage: check_metrics.py FILE
"""

import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        text = handle.read()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as error:  # the parser's own errors are ValueError and friends
        print("refused: %s" % error, file=sys.stderr)
        return 1
    for family in families:
        for sample in family.samples:
            value = sample.value
            print(json.dumps({
                "family": family.name, "type": family.type, "name": sample.name,
                "labels": sample.labels,
                "value": "+Inf" if value == math.inf else repr(float(value)),
            }, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
