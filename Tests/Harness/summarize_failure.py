"""Prints a compact account of a failed `swift test` run from its saved output.

Kept short (a CI page shows the last few lines of a run): the tests still running when the
process stopped, the tests that failed, and, last, a crash's reason with its first frames.
Usage: summarize_failure.py LOG STATUS
"""
import re
import sys

LIMIT = 160  # characters kept of any one line


def cut(line):
    line = line.rstrip()
    return line if len(line) <= LIMIT else line[: LIMIT - 1] + "…"


def main():
    path, status = sys.argv[1], sys.argv[2]
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    running = {}  # name -> order started; removed when it ends
    failed = []
    for index, line in enumerate(lines):
        started = re.search(r"◇ Test (.+?) started\.$", line) or re.search(
            r"Test Case '(.+?)' started", line)
        if started and started.group(1) != "run":
            running[started.group(1)] = index
            continue
        ended = re.search(r"[✔✘] Test (.+?) (?:passed|failed)", line) or re.search(
            r"Test Case '(.+?)' (?:passed|failed|skipped)", line)
        if ended:
            running.pop(ended.group(1), None)
            if "failed" in line and ended.group(1) not in failed:
                failed.append(ended.group(1))
    reasons = [cut(l) for l in lines if re.search(r"Fatal error|Program crashed|Precondition failed|"
                                                  r"Assertion failed|Simultaneous accesses", l)]
    frames = []
    for index, line in enumerate(lines):
        if re.match(r"Thread \d+ crashed:", line):
            frames = [cut(l) for l in lines[index + 1: index + 14] if re.match(r"\s*\d+\s", l)][:8]
            break
    print()
    print(f"== swift test failed (exit {status}); whole output: {path}")
    if running:
        order = sorted(running, key=running.get)
        print(f"still running when it stopped ({len(order)}):")
        for name in order[-6:]:
            print("  " + cut(name))
    if failed:
        print(f"failed ({len(failed)}):")
        for name in failed[:6]:
            print("  " + cut(name))
    for reason in reasons[:3]:
        print(reason)
    if frames:
        print("crashed thread, first frames:")
        for frame in frames:
            print("  " + frame.strip())


main()
