#!/usr/bin/env python3
"""House limits, on every language the repository is written in: no file
over 600 lines, no function over 80. Prints each offender; exits 1 if any.

    size_check.py ROOT

What is read: `dev` and every C++ (.cpp .hpp .h .cc), Python (.py), Go
(.go) and bash (.sh) file under src/, include/, devlib/, drills/, bench/,
soak/, lab/ and test/. The limits are the same in tests: a test case over
80 lines is as hard to read as any other function, and splits the same way
(a builder, a helper, one case per behaviour).

A function counts from its first line (a decorator, a template line, a
signature over several lines) to its last; what is nested in it (lambdas,
closures, inner functions, local classes) counts towards it:

    C++     size_cpp.py: brace blocks at namespace or class level whose head
            is a signature, operators included; data tables are not functions
    Python  the ast: each def and async def that is not inside another
    Go      each func at package level (methods too), literals, raw strings
            and comments blanked before the braces are counted
    bash    each NAME() { ... } to the '}' at its own indentation, heredoc
            bodies skipped
"""
import ast
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import size_cpp  # noqa: E402

MAX_FILE, MAX_FUNC = 600, 80
TOPS = ("src", "include", "devlib", "drills", "bench", "soak", "lab", "test")
SCRIPTS = ("dev",)  # bash files without an extension
SKIP_DIRS = ("__pycache__", ".git")
LANGUAGES = {".cpp": "c++", ".hpp": "c++", ".h": "c++", ".cc": "c++", ".py": "python", ".go": "go", ".sh": "bash"}


def python_functions(text):
    """(first line, lines) of each def not nested in another def."""
    found = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                found.append((first, child.end_lineno - first + 1))
            else:
                visit(child)
    visit(ast.parse(text))
    return found


GO_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|`[^`]*`', re.S)


def go_functions(text):
    """(first line, lines) of each func declared at package level."""
    clean = GO_TOKEN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    depth, start, opened = 0, None, False
    for n, line in enumerate(clean.split("\n"), 1):
        if depth == 0 and start is None and line.startswith("func"):
            start, opened = n, False
        for c in line:
            depth += {"{": 1, "}": -1}.get(c, 0)
            opened = opened or depth > 0
        if start is not None and opened and depth == 0:
            yield start, n - start + 1
            start = None


BASH_FUNC = re.compile(r"^(\s*)(?:function\s+)?[\w:.-]+\s*\(\)\s*\{")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_]\w*)\1")


def bash_functions(text):
    """(first line, lines) of each NAME() { function; one on a line counts 1."""
    lines, heredoc, start, indent = text.split("\n"), None, None, None
    for n, line in enumerate(lines, 1):
        if heredoc is not None:
            heredoc = None if line.strip() == heredoc else heredoc
            continue
        m = BASH_FUNC.match(line)
        if start is None and m:
            if line.rstrip().endswith("}") and line.count("{") == line.count("}"):
                yield n, 1
            else:
                start, indent = n, m.group(1)
        elif start is not None and re.match(re.escape(indent) + r"\}\s*(#.*)?$", line):
            yield start, n - start + 1
            start = None
        code = line.split(" #", 1)[0]
        h = HEREDOC.search(code)
        if h and "<<<" not in code:
            heredoc = h.group(2)


FUNCTIONS = {
    "c++": lambda text: size_cpp.functions(text),
    "python": python_functions,
    "go": go_functions,
    "bash": bash_functions,
}


def files(root):
    """(path relative to root, language) of every file the limits cover."""
    for name in SCRIPTS:
        if os.path.isfile(os.path.join(root, name)):
            yield name, "bash"
    for top in TOPS:
        for dirpath, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for f in sorted(names):
                lang = LANGUAGES.get(os.path.splitext(f)[1])
                if lang:
                    yield os.path.relpath(os.path.join(dirpath, f), root), lang


def offences(root, rel, lang):
    """What is wrong with one file, a line each."""
    with open(os.path.join(root, rel), errors="replace") as f:
        text = f.read()
    bad, count = [], len(text.splitlines())
    if count > MAX_FILE:
        bad.append("%s: %d lines (at most %d)" % (rel, count, MAX_FILE))
    try:
        found = list(FUNCTIONS[lang](text))
    except SyntaxError as e:
        return bad + ["%s:%s: not parsed as Python (%s)" % (rel, e.lineno, e.msg)]
    for line, n in found:
        if n > MAX_FUNC:
            bad.append("%s:%d: a function of %d lines (at most %d)" % (rel, line, n, MAX_FUNC))
    return bad


def main(root):
    bad = [b for rel, lang in files(root) for b in offences(root, rel, lang)]
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
