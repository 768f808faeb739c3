#!/usr/bin/env python3
"""Every relative link in the repository's Markdown resolves: the file it
names exists, and its #anchor is a heading of that file (or of the page
itself for a bare #anchor), with anchors made as GitHub makes them.

    devlib/doc_links.py [ROOT]     # default: this checkout

One line per broken link (FILE:LINE: what), exit 1 if there is any. Links
to other sites (http:, https:, mailto:) are not followed. Run by meson as
the unit test doc-links; test/unit/doc_links_test.py tries it on made-up
pages."""
import os
import re
import subprocess
import sys

# [text](target) and ![alt](target); the target stops at a space (a title
# may follow) or the closing parenthesis.
LINK = re.compile(r'!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
CODE_SPAN = re.compile(r'(`+)(?:(?!\1).)+?\1')
FENCE = re.compile(r'^\s{0,3}(```|~~~)')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
EXTERNAL = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')


def slug(heading):
    """GitHub's anchor for a heading: the text as rendered (no markup, a
    link's text only), lower case, punctuation dropped but for - and _,
    each space a hyphen."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)
    text = re.sub(r'<[^>]+>', '', text)
    text = text.replace('`', '').replace('*', '')
    text = re.sub(r'(^|\s)_+|_+(\s|$)', r'\1\2', text)  # _emphasis_, not snake_case
    text = text.strip().lower()
    text = ''.join(c for c in text if c.isalnum() or c in ' -_')
    return text.replace(' ', '-')


def prose_lines(text, blank_code=True):
    """(line number, line) outside fenced code blocks, code spans blanked
    unless `blank_code` is false."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1) == fence:
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield n, CODE_SPAN.sub(lambda s: ' ' * len(s.group(0)), line) if blank_code else line


def anchors(text):
    """The anchors a page's headings make, duplicates numbered as GitHub
    numbers them (name, name-1, name-2...)."""
    seen, out = {}, set()
    for _, line in prose_lines(text, blank_code=False):  # a heading's code is in its anchor
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def links(text):
    """(line number, target) of every link in the page's prose."""
    for n, line in prose_lines(text):
        for m in LINK.finditer(line):
            yield n, m.group(1)


def markdown_files(root):
    """The Markdown of the checkout under `root` (tracked, or new and not
    ignored), else every .md file but the build directories'."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                              "--", "*.md"], capture_output=True, check=True)
        return sorted(p for p in out.stdout.decode().split("\0") if p)
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            found += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".md")]
        return sorted(found)


def check(root, files):
    """Problems, as "FILE:LINE: what", for the pages `files` (relative to root)."""
    cache = {}

    def page(path):
        if path not in cache:
            with open(path, encoding="utf-8") as f:
                cache[path] = f.read()
        return cache[path]

    problems = []
    for rel in files:
        here = os.path.join(root, rel)
        for n, target in links(page(here)):
            if EXTERNAL.match(target):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(here), path)) if path else here
            where = "%s:%d: %s" % (rel, n, target)
            if os.path.relpath(dest, root).split(os.sep)[0] == "..":
                problems.append(where + ": outside the repository")
            elif not os.path.exists(dest):
                problems.append(where + ": no such file")
            elif anchor and os.path.isdir(dest):
                problems.append(where + ": an anchor on a directory")
            elif anchor and dest.endswith(".md") and anchor not in anchors(page(dest)):
                problems.append(where + ": no heading makes #" + anchor)
    return problems


def main(argv):
    root = os.path.abspath(argv[0] if argv else os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = markdown_files(root)
    problems = check(root, files)
    for p in problems:
        print(p)
    print("doc-links: %d pages, %d broken links" % (len(files), len(problems)), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
