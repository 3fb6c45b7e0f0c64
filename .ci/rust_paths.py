"""Reading Rust source for .ci/layers: which paths of a file reach other
parts of the crate, with comments and string literals left out.

Standard library only. Every offset is into the file's text, so that line
numbers stay true.
"""

import re


def blank_comments_and_strings(text):
    """The source with comments and literals' contents replaced by spaces.

    Newlines stay, so offsets and line numbers stay true.
    """
    out = list(text)
    n = len(text)
    i = 0

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif (m := re.compile(r'(?:b|c)?r(#*)"').match(text, i)) and not (
            i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            end = text.find('"' + m.group(1), m.end())
            end = n if end < 0 else end + 1 + len(m.group(1))
            blank(m.end(), end - 1 - len(m.group(1)))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}'), or a lifetime ('a).
            if text.startswith("\\", i + 1):
                j = text.find("'", i + 3 if text[i + 2 : i + 3] == "'" else i + 2)
                j = n if j < 0 else j
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                blank(i + 1, i + 2)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
TOKEN = re.compile(rf"\s*(::|\{{|\}}|,|\*|;|{IDENT})")


def use_trees(code, spans):
    """Yields (offset, [segments], alias) for every leaf of every `use`,
    and records each statement's span in `spans`."""
    for m in re.finditer(r"(?<![A-Za-z0-9_:])use\b", code):
        tokens = []
        pos = m.end()
        while True:
            t = TOKEN.match(code, pos)
            if not t or t.group(1) == ";":
                break
            tokens.append((t.start(1), t.group(1)))
            pos = t.end()
        spans.append((m.start(), pos))
        leaves = []
        parse_tree(tokens, 0, [], leaves)
        yield from leaves


def parse_tree(tokens, i, prefix, leaves):
    """Parses one use tree at tokens[i]; returns the index after it."""
    path = list(prefix)
    offset = tokens[i][0] if i < len(tokens) else 0
    while i < len(tokens):
        at, tok = tokens[i]
        if tok == "{":
            i += 1
            while i < len(tokens) and tokens[i][1] != "}":
                i = parse_tree(tokens, i, path, leaves)
                if i < len(tokens) and tokens[i][1] == ",":
                    i += 1
            return i + 1
        if tok == "*":
            leaves.append((at, path, None))
            return i + 1
        if tok in (",", "}"):
            break
        if tok == "::":
            i += 1
            continue
        if tok == "as":
            alias = tokens[i + 1][1] if i + 1 < len(tokens) else None
            leaves.append((offset, path, alias))
            return i + 2
        if tok == "self" and path:
            # `a::{self, b}`: the module `a` itself.
            i += 1
            continue
        path.append(tok)
        offset = at
        i += 1
    if path:
        leaves.append((offset, path, path[-1]))
    return i


CODE_PATH = re.compile(rf"(?<![A-Za-z0-9_:])\$?({IDENT}(?:\s*::\s*{IDENT})+)")


def code_paths(code, aliases, use_spans):
    """Yields (offset, [segments]) for paths outside `use` statements that
    start with `crate`, `super`, `self` or a name a `use` bound to a module."""
    for m in CODE_PATH.finditer(code):
        if any(a <= m.start() < b for a, b in use_spans):
            continue
        segs = [s.strip() for s in m.group(1).split("::")]
        if segs[0] in ("crate", "super", "self") or segs[0] in aliases:
            yield m.start(1), segs


# The serde attribute keys whose string value is a path or a type: `from`,
# `try_from` and `into` name types, `with`, `serialize_with`,
# `deserialize_with`, `default`, `skip_serializing_if` and `getter` name
# functions or modules, `remote` and `crate` name paths, and `bound` (with
# `serialize` and `deserialize` inside it) holds where-clauses. The other
# keys (`rename`, `alias`, `tag`, `content`, `expecting` …) hold names.
SERDE_PATH_KEYS = {
    "from",
    "try_from",
    "into",
    "with",
    "serialize_with",
    "deserialize_with",
    "default",
    "skip_serializing_if",
    "getter",
    "remote",
    "crate",
    "bound",
    "serialize",
    "deserialize",
}

SERDE_ATTRIBUTE = re.compile(r"(?:#\s*\[|,)\s*serde\s*\(")
SERDE_VALUE = re.compile(rf"({IDENT})\s*=\s*\"")


def serde_attribute_paths(text, code, aliases):
    """Yields (offset, [segments]) for the paths written inside the string
    values of serde attributes (`#[serde(from = "super::x::Y")]`, also
    within `cfg_attr`), which `code` has blanked as string literals: the
    derives turn them into code, so they are uses like any other. `code`
    is `text` with comments and literals blanked; offsets are into both."""
    for m in SERDE_ATTRIBUTE.finditer(code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            if code[j] == "(":
                depth += 1
            elif code[j] == ")":
                depth -= 1
            j += 1
        for v in SERDE_VALUE.finditer(code, m.end(), j):
            if v.group(1) not in SERDE_PATH_KEYS:
                continue
            start = v.end()
            end = code.find('"', start)
            if end < 0 or end > j:
                continue
            for p in CODE_PATH.finditer(text, start, end):
                segs = [s.strip() for s in p.group(1).split("::")]
                if segs[0] in ("crate", "super", "self") or segs[0] in aliases:
                    yield p.start(1), segs


def inline_modules(code):
    """[(start, end, name)] of every `mod name { … }` in the file."""
    spans = []
    for m in re.finditer(rf"(?<![A-Za-z0-9_])mod\s+({IDENT})\s*\{{", code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
            j += 1
        spans.append((m.end(), j, m.group(1)))
    return spans


def resolve(segs, here):
    """The absolute module path of `segs` written in module `here`, or None
    for a path that does not start inside the crate."""
    if segs[0] == "crate":
        return segs[1:]
    if segs[0] not in ("super", "self"):
        return None
    base = list(here)
    rest = list(segs)
    if rest[0] == "self":
        rest = rest[1:]
    while rest and rest[0] == "super":
        if not base:
            return None
        base.pop()
        rest = rest[1:]
    return base + rest


def module_of(rel):
    """src-relative file path to its module path: a/b.rs, a/b/mod.rs -> [a, b]."""
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts.pop()
    if parts == ["lib"]:
        return []
    return parts
