#!/usr/bin/env python3
"""Writes the output of one `make bench` run into docs/benchmarks.md, with the machine line.

Usage: record.py OUTPUT.txt docs/benchmarks.md [TARGET]
TARGET (default "bench") names the make target, and so the block: `make soak` writes its own.
The block between the two markers is replaced (or added before the first "## Results");
the rest of the file, the analysis written by people, is left as it is. Atomic replace.

The block's first line after its heading names the commit the run measured and when it ran, so
its figures can always be traced: prose elsewhere should cite a run by that commit and date,
never as "the block above", because the next run replaces the block. The heading stays the
same from run to run, so prose can name the section by it.
"""
import datetime
import os
import platform
import subprocess
import sys

TARGET = sys.argv[3] if len(sys.argv) > 3 else "bench"
START, END = "<!-- make %s: start -->" % TARGET, "<!-- make %s: end -->" % TARGET


def version(command):
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=20)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def commit(folder):
    """HEAD as `git rev-parse --short=12` gives it, with -dirty when the work tree differs from
    it (as the Makefile stamps `courier --version`); None outside a git checkout."""
    try:
        head = subprocess.run(["git", "-C", folder, "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=20)
        if head.returncode != 0 or not head.stdout.strip():
            return None
        clean = subprocess.run(["git", "-C", folder, "diff", "--quiet", "HEAD"],
                               capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + ("" if clean else "-dirty")


output_path, doc_path = sys.argv[1:3]
output = open(output_path).read().strip()
machine = "%d cores, %s %s; %s; %s; %s" % (
    os.cpu_count() or 0, platform.system(), platform.release(),
    version(["swift", "--version"]), version(["curl", "--version"]), version(["nginx", "-v"]))
when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
source = commit(os.path.dirname(os.path.abspath(doc_path)))
stamp = "Written by `make %s` on %s from %s. Each run replaces this section, so its figures" \
    " change with every run; cite them by %s." % (
        TARGET, when, "commit %s" % source if source else "an unknown commit (not a git checkout)",
        "that commit and date" if source else "that date")
block = "\n".join([
    START,
    "## Latest `make %s` output" % TARGET,
    "",
    stamp,
    "",
    "Machine: %s." % machine,
    "",
    "```text",
    output,
    "```",
    END,
])
doc = open(doc_path).read()
if START in doc and END in doc:
    before, rest = doc.split(START, 1)
    after = rest.split(END, 1)[1]
    doc = before + block + after
elif "\n## Results" in doc:
    head, tail = doc.split("\n## Results", 1)
    doc = head + "\n" + block + "\n\n## Results" + tail
else:
    doc = doc.rstrip() + "\n\n" + block + "\n"
temporary = doc_path + ".tmp"
with open(temporary, "w") as out:
    out.write(doc)
    out.flush()
    os.fsync(out.fileno())
os.replace(temporary, doc_path)
print("make %s: wrote the results into %s" % (TARGET, doc_path))
