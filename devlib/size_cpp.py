"""The functions of a C++ file and their lengths, for size_check.py.

A function is what a reader takes for one: a brace block opened at
namespace or class level (not inside another function) whose head, the text
since the previous ';', '{' or '}', is a signature: it holds a ')' outside
any parentheses, and no '=' outside them (operator names do not count). It
runs from the first line of that head (template line, attributes, a
signature over several lines) to its closing brace. A block whose head is a
'= [...]' lambda is a function too. Lambdas, local classes and blocks inside
a function count towards that function.

Not functions: namespaces, classes, structs, unions, enums and extern "C"
(their members are looked into); brace-initialised data (`= {`, `name{`) is
skipped whole. Comments, string and character literals (raw ones too) and
preprocessor lines are blanked first, so no brace inside them counts.
"""
import re

CONTAINER = re.compile(r"^(?:(?:template\s*<[^{;]*>\s*)?(?:class|struct|union|enum)\b|namespace\b|extern\s*$)")
ACCESS = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+")
OPERATOR = re.compile(r"\boperator\s*(?:\(\s*\)|\[\s*\]|[^\w\s(]+|\"\"\s*\w+|[\w:<>, *&]+?(?=\s*\())")
RAW = re.compile(r'(?:u8|[uUL])?R"([^()\\\s]{0,16})\(')


def _skip_string(text, i, quote):
    """The index after the literal that opens at text[i] (a quote)."""
    i += 1
    while i < len(text) and text[i] != quote and text[i] != "\n":
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _is_digit_separator(text, i):
    """True if the ' at text[i] separates digits (1'000), not a char literal."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "'."):
        j -= 1
    return text[j].isdigit() and i + 1 < len(text) and text[i + 1].isalnum()


def blank(text):
    """text with comments, literals and preprocessor lines turned into spaces
    (newlines kept, so line numbers hold)."""
    out, i, n, line_start = [], 0, len(text), True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            end = j
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif (m := RAW.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = text.find(")" + m.group(1) + '"', m.end())
            end = n if close < 0 else close + len(m.group(1)) + 2
        elif c == '"' or (c == "'" and not _is_digit_separator(text, i)):
            end = _skip_string(text, i, c)
        else:
            out.append(c)
            if c == "\n":
                line_start = True
            elif not c.isspace():
                line_start = False
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:end]))
        i = end
    return "".join(out)


def _top_level(head):
    """head with every parenthesised part emptied: what is outside parentheses."""
    out, depth = [], 0
    for c in head:
        if c == "(":
            depth += 1
            out.append("(" if depth == 1 else "")
        elif c == ")":
            depth -= 1
            out.append(")" if depth == 0 else "")
        elif depth == 0:
            out.append(c)
    return "".join(out)


def _without_template_header(head):
    """head without a leading template<...> (its defaults hold '=')."""
    m = re.match(r"\s*template\s*<", head)
    if not m:
        return head
    depth, i = 1, m.end()
    while i < len(head) and depth:
        depth += {"<": 1, ">": -1}.get(head[i], 0)
        i += 1
    return head[i:]


def classify(head):
    """What a '{' opened at namespace or class level after head begins:
    'container', 'function', 'member-init' (a brace in a constructor's
    initialiser list) or 'data'."""
    head = ACCESS.sub("", head).strip()
    if CONTAINER.match(head):
        return "container"
    outside = _top_level(OPERATOR.sub("operator", _without_template_header(head)))
    if "=" in outside:
        return "function" if re.search(r"=\s*\[", outside) else "data"
    if ")" not in outside:
        return "data"
    # A constructor's initialiser list: a single ':' after the parameters.
    if re.search(r"\)[^:]*(?<!:):(?!:)", outside) and not re.search(r"[)}]\s*$", outside):
        return "member-init"
    return "function"


def functions(text):
    """(first line, number of lines) of each function in C++ source text."""
    clean = blank(text)
    # One kind per open brace: container, function, member-init, data, or
    # inner (anything in a function or in data, and braces in parentheses:
    # a default argument `= {}`, a lambda argument).
    stack = []
    head_start, line, parens, start_line = 0, 1, 0, None
    for i, c in enumerate(clean):
        if c == "\n":
            line += 1
        if c not in "{};()":
            continue
        level = all(k == "container" for k in stack)
        if c in "()":
            parens += (1 if c == "(" else -1) if level else 0
        elif c == ";":
            head_start = i + 1 if level and not parens else head_start
        elif c == "{" and (not level or parens):
            stack.append("inner")
        elif c == "{":
            kind = classify(clean[head_start:i])
            stack.append(kind)
            if kind == "function":
                body = ACCESS.sub("", clean[head_start:i])
                start_line = clean.count("\n", 0, i - len(body.lstrip())) + 1
            elif kind != "member-init":
                head_start = i + 1
        else:
            kind = stack.pop() if stack else "container"
            if kind == "function":
                yield start_line, line - start_line + 1
            if kind in ("function", "container", "data") and all(k == "container" for k in stack):
                head_start = i + 1
