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
    # A Swift Testing name is a quoted display name (which may itself say "failed") or a
    # function name; a parameterised test's cases ("Test case passing …") end with their test.
    name = r'("(?:[^"\\]|\\.)*"|\S+)'
    for index, line in enumerate(lines):
        if "◇ Test case passing" in line:
            continue
        started = re.search(r"◇ Test " + name + r" started\.$", line) or re.search(
            r"Test Case '(.+?)' started", line)
        if started and started.group(1) != "run":
            running[started.group(1)] = index
            continue
        ended = re.search(r"^[✔✘] Test " + name + r" ", line) or re.search(
            r"Test Case '(.+?)' (?:passed|failed|skipped)", line)
        if ended:
            running.pop(ended.group(1), None)
            verdict_failed = "✘" in line[:3] or re.search(r"Test Case '.+?' failed", line)
            if verdict_failed and ended.group(1) not in failed and ended.group(1) != "run":
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
