#!/usr/bin/env python3
"""House limits on the C++ in src/ and include/: no file over 600 lines, no
function body over 80 lines. Prints each offender; exits 1 if any.

    size_check.py ROOT

A function is found the way a reader finds one: a line at namespace or class
level whose brace-depth-0 text ends in ')' + qualifiers + '{' (or whose
signature continued from previous lines), counted to its matching '}'.
Lambdas and blocks inside a function count towards that function. Tables
(brace-initialised data) are not functions and are skipped.
"""
import os
import re
import sys

MAX_FILE, MAX_FUNC = 600, 80
SIG_END = re.compile(r"\)\s*(const|noexcept|override|final|->\s*[\w:<>, *&]+|\s)*\{\s*(//.*)?$")


def strip(line):
    # Drop string/char literals and // comments so braces inside them do not count.
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def functions(lines):
    depth, start, fdepth, in_block_comment = 0, None, None, False
    container = []  # depths that are namespaces/classes/structs (functions live right inside them)
    for i, raw in enumerate(lines):
        line = strip(raw)
        if in_block_comment:
            if "*/" in line:
                line = line.split("*/", 1)[1]
                in_block_comment = False
            else:
                continue
        if "/*" in line and "*/" not in line:
            line = line.split("/*", 1)[0]
            in_block_comment = True
        at_level = depth == 0 or (container and container[-1] == depth)
        if start is None and at_level and SIG_END.search(line) and "=" not in line.split("(")[0]:
            start, fdepth = i, depth
        elif at_level and start is None and re.search(r"\b(namespace|class|struct|union|enum)\b[^;]*\{\s*$", line):
            container.append(depth + 1)
        for ch in line:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if container and depth < container[-1]:
                    container.pop()
                if start is not None and depth == fdepth:
                    yield start + 1, i - start + 1
                    start = None


def main(root):
    bad = []
    for top in ("src", "include"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(dirpath, f)
                lines = open(path, errors="replace").read().splitlines()
                rel = os.path.relpath(path, root)
                if len(lines) > MAX_FILE:
                    bad.append("%s: %d lines (at most %d)" % (rel, len(lines), MAX_FILE))
                for line, n in functions(lines):
                    if n > MAX_FUNC:
                        bad.append("%s:%d: a function of %d lines (at most %d)" % (rel, line, n, MAX_FUNC))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
