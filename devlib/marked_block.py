"""Rewrite the block between two marker lines of a results file (a
RESULTS.md a command records its last run in), keeping the prose around
it: shared by ./dev e2e and ./dev diff-upstream. Standard library only."""
import os


def write(path, title, begin, end, body):
    """Put `body` between `begin` and `end` in `path`. A missing file is made
    with `title` and the markers; markers lost by hand: the block is
    appended, and nothing else is touched."""
    block = "%s\n%s%s" % (begin, body, end)
    try:
        with open(path) as f:
            old = f.read()
    except FileNotFoundError:
        old = "%s\n\n%s\n%s\n" % (title, begin, end)
    b, e = old.find(begin), old.find(end)
    if b >= 0 and e > b:
        new = old[:b] + block + old[e + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(new)
