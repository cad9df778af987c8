"""Add one member to a JSON (or JSONC) config file, changing nothing else in it.

A client's config file is the user's own: ``~/.claude.json`` holds Claude Code's whole
state, VS Code's ``mcp.json`` is JSONC with comments and trailing commas. A round trip
through ``json.loads``/``json.dumps`` would drop the comments, re-indent every line and
reorder nothing but still rewrite everything. So the file is scanned once into a tree of
spans (where each object, member and comma is), the container that maps server names to
entries is found (or created, one level at a time) by offsets, and the new member is
spliced in with the file's own indentation, newline style and trailing-comma habit.
Every byte outside the inserted (with ``force``: the replaced) span stays as it was,
which is what VS Code's own ``jsonc-parser.modify`` does; no well-kept Python library
edits JSONC in place (the PyPI ones parse only).

Strict files are checked with :func:`json.loads` first, so a file the client itself
would reject is reported (line:column) and never "repaired".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from promptops.errors import UsageError


class ConfigError(UsageError):
    """The existing file cannot be merged into; the message says where and why."""


class EntryExists(ConfigError):
    """A server of that name is already configured (replaced only with ``force``)."""


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n\ufeff]+)
  | (?P<line>//[^\n]*)
  | (?P<block>/\*.*?\*/)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<punct>[{}\[\]:,])
  | (?P<lit>[^\s{}\[\]:,"/]+)
""", re.S | re.X)


@dataclass
class Span:
    """A value's place in the text; objects know their members and the commas after them."""

    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int  # exclusive
    members: list[tuple[str, int, Span]] = field(default_factory=list)  # key, key offset, value
    commas: dict[int, int] = field(default_factory=dict)  # member index -> offset of its comma


def position(text: str, offset: int) -> str:
    """``line:column`` (1-based) of ``offset``."""
    line = text.count("\n", 0, offset) + 1
    return f"{line}:{offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def _iter_tokens(text: str) -> Iterator[tuple[str, str, int]]:
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ConfigError(f"{position(text, pos)}: unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind not in ("ws", "line", "block"):
            yield kind, m.group(), pos
        pos = m.end()


def _tokens(text: str) -> list[tuple[str, str, int]]:
    return list(_iter_tokens(text))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.pos = 0

    def peek(self) -> tuple[str, str, int]:
        if self.pos >= len(self.toks):
            raise ConfigError(f"{position(self.text, len(self.text))}: unexpected end of file")
        return self.toks[self.pos]

    def value(self) -> Span:
        kind, tok, off = self.peek()
        self.pos += 1
        if tok == "{":
            node = Span("object", off, off)
            while self.peek()[1] != "}":
                k_kind, key, k_off = self.peek()
                if k_kind != "str":
                    raise ConfigError(f"{position(self.text, k_off)}: expected a key, "
                                      f"found {key!r}")
                self.pos += 1
                if self.peek()[1] != ":":
                    raise ConfigError(f"{position(self.text, self.peek()[2])}: expected ':'")
                self.pos += 1
                node.members.append((json.loads(key), k_off, self.value()))
                if self.peek()[1] == ",":
                    node.commas[len(node.members) - 1] = self.peek()[2]
                    self.pos += 1
                elif self.peek()[1] != "}":
                    raise ConfigError(f"{position(self.text, self.peek()[2])}: "
                                      "expected ',' or '}'")
            node.end = self.peek()[2] + 1
            self.pos += 1
            return node
        if tok == "[":
            node = Span("array", off, off)
            while self.peek()[1] != "]":
                self.value()
                if self.peek()[1] == ",":
                    self.pos += 1
            node.end = self.peek()[2] + 1
            self.pos += 1
            return node
        if kind in ("str", "lit"):
            return Span("scalar", off, off + len(tok))
        raise ConfigError(f"{position(self.text, off)}: unexpected {tok!r}")


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise ConfigError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _strip_jsonc(text: str, *, commas: bool = True) -> str:
    """The JSONC text as strict JSON: comments blanked, trailing commas dropped.

    Token by token, so a comma or slash inside a string is never touched; anything the
    scanner cannot read is left for :func:`json.loads` to report with its position.
    """
    parts: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            parts.append(("rest", text[pos:]))
            break
        parts.append((m.lastgroup or "", m.group()))
        pos = m.end()
    out: list[str] = []
    for i, (kind, tok) in enumerate(parts):
        if kind in ("line", "block"):
            out.append(" " * len(tok) if "\n" not in tok else re.sub(r"[^\n]", " ", tok))
            continue
        if tok == "," and commas:
            after = next((t for k, t in parts[i + 1:] if k not in ("ws", "line", "block")), "")
            if after in ("}", "]"):
                out.append(" ")
                continue
        out.append(tok)
    return "".join(out)


MAX_DEPTH = 200  # a client config nests 4-6 levels; Python's parsers recurse per level
MAX_NUMBER = 1000  # characters: Python refuses to convert integers of 4,300 digits and more
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _check_tokens(text: str, kind: str) -> None:
    """What :func:`json.loads` would accept but the client would not, or what would take
    Python's parsers past their limits, reported with its position before they run.

    ``NaN``, ``Infinity`` and ``-Infinity`` are Python extensions (JavaScript's
    ``JSON.parse`` and VS Code's jsonc-parser reject them); nesting deeper than
    :data:`MAX_DEPTH` would end in a RecursionError, an integer of thousands of digits in
    a ValueError. One linear pass over the tokens, no recursion.
    """
    depth = 0
    tokens = _iter_tokens(text)  # lazily: a check must not cost a list of every token
    while True:
        try:
            tok_kind, tok, off = next(tokens)
        except StopIteration:
            return
        except ConfigError:  # an unexpected character: json.loads words it, positioned
            return
        if tok in ("{", "["):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(f"{position(text, off)}: not valid {kind}: nested more "
                                  f"than {MAX_DEPTH} levels deep (no client config is)")
        elif tok in ("}", "]"):
            depth -= 1
        elif tok_kind == "lit" and tok not in ("true", "false", "null"):
            if not _NUMBER.fullmatch(tok):
                raise ConfigError(f"{position(text, off)}: not valid {kind}: {tok[:40]!r} "
                                  "is not a JSON value")
            if len(tok) > MAX_NUMBER:
                raise ConfigError(f"{position(text, off)}: not valid {kind}: a number of "
                                  f"more than {MAX_NUMBER} characters")


def load(text: str, *, jsonc: bool, commas: bool | None = None) -> tuple[Span, object]:
    """The span tree and the value of ``text`` (strict JSON unless ``jsonc``).

    ``commas`` (default: ``jsonc``) says whether trailing commas are accepted: VS Code's
    jsonc-parser accepts them, Gemini CLI's strip-json-comments only drops comments.
    """
    body = text.lstrip("\ufeff")
    kind = "JSON with comments" if jsonc else "JSON"
    _check_tokens(body, kind)  # positions as json.loads counts them: without a BOM
    try:
        value = json.loads(_strip_jsonc(body, commas=jsonc if commas is None else commas)
                           if jsonc else body, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{exc.lineno}:{exc.colno}: not valid {kind}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # bounded above; kept as a last guard
        raise ConfigError(f"1:1: not valid {kind}: {exc}") from None
    parser = _Parser(text)
    root = parser.value()
    if parser.pos != len(parser.toks):
        raise ConfigError(f"{position(text, parser.toks[parser.pos][2])}: "
                          "text after the end of the document")
    return root, value


def _line_indent(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    m = re.match(r"[ \t]*", text[start:])
    return m.group() if m else ""


def _indent_unit(text: str) -> str:
    """The file's indentation step: the smallest indentation in it (tabs kept), else 2."""
    indents = [m.group(1) for m in re.finditer(r"\n([ \t]+)\S", text)]
    if not indents:
        return "  "
    if any(i.startswith("\t") for i in indents):
        return "\t"
    return " " * min(len(i) for i in indents)


def _dump(value: object, indent: str, unit: str, newline: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", newline + indent)


def merge(text: str, path: tuple[str, ...], name: str, entry: object, *, jsonc: bool,
          force: bool = False, commas: bool | None = None) -> str:
    """``text`` with ``entry`` at ``path + (name,)``; EntryExists unless ``force``."""
    if not text.strip("\ufeff \t\r\n"):
        text = text + "{}\n" if text.startswith("\ufeff") else "{}\n"
    newline = "\r\n" if "\r\n" in text else "\n"
    unit = _indent_unit(text)
    for depth in range(len(path) + 1):
        node, _ = load(text, jsonc=jsonc, commas=commas)
        if node.kind != "object":
            raise ConfigError("the file's top level is not a JSON object")
        for i, seg in enumerate(path[:depth]):
            node = next(v for k, _, v in node.members if k == seg)
            if node.kind != "object":
                raise ConfigError(f"{'.'.join(path[:i + 1])} is not an object")
        last = depth == len(path)
        key = name if last else path[depth]
        found = [v for k, _, v in node.members if k == key]
        if found and not last:
            continue
        if found:
            if not force:
                raise EntryExists(f"a server named {name!r} is already configured "
                                  f"(in {'.'.join(path)}); use --force to replace it")
            old = found[-1]
            indent = _line_indent(text, old.start)
            return text[:old.start] + _dump(entry, indent, unit, newline) + text[old.end:]
        text = _insert(text, node, key, entry if last else {}, unit, newline)
        if last:
            return text
    raise AssertionError("unreachable")


def _insert(text: str, obj: Span, key: str, value: object, unit: str, newline: str) -> str:
    name = json.dumps(key, ensure_ascii=False)
    one_line = "\n" not in text.strip() and text.strip("\ufeff \t\r\n") != "{}"
    if not obj.members and one_line:  # a one-line file stays one line
        return (text[:obj.start + 1] + f"{name}: {json.dumps(value, ensure_ascii=False)}"
                + text[obj.end - 1:])
    if obj.members and "\n" not in text[obj.start:obj.members[0][1]]:  # `{"a": 1}` inline
        at = obj.members[-1][2].end
        return text[:at] + f", {name}: {json.dumps(value, ensure_ascii=False)}" + text[at:]
    if obj.members:
        indent = _line_indent(text, obj.members[0][1])
        member = f"{name}: {_dump(value, indent, unit, newline)}"
        last = len(obj.members) - 1
        if last in obj.commas:  # the trailing-comma habit (JSONC): keep it
            at = obj.commas[last] + 1
            eol = text.find("\n", at)
            rest = text[at:eol if eol >= 0 else len(text)].rstrip("\r")
            if re.fullmatch(r"[ \t]*//.*", rest):  # `"x": 1, // note` keeps its note
                at += len(rest)
            return text[:at] + newline + indent + member + "," + text[at:]
        at = obj.members[last][2].end
        eol = text.find("\n", at)
        rest = text[at:eol if eol >= 0 else len(text)].rstrip("\r")
        if re.fullmatch(r"[ \t]*//.*", rest):  # keep `"x": 1 // note` on its own line
            end = at + len(rest)
            return text[:at] + "," + text[at:end] + newline + indent + member + text[end:]
        return text[:at] + "," + newline + indent + member + text[at:]
    parent = _line_indent(text, obj.start)
    indent = parent + unit
    member = f"{name}: {_dump(value, indent, unit, newline)}"
    inner = text[obj.start + 1:obj.end - 1]
    if "\n" in inner:  # `{\n}` or `{ // none yet\n}`: on a line of its own
        eol = obj.start + 1 + inner.index("\n")
        if text[eol - 1] == "\r":
            eol -= 1
        return text[:eol] + newline + indent + member + text[eol:]
    return (text[:obj.start + 1] + newline + indent + member + newline + parent + "}"
            + text[obj.end:])


def lookup(value: object, path: tuple[str, ...]) -> object:
    """``value[path[0]][path[1]]...``, or None where a level is missing."""
    for seg in path:
        if not isinstance(value, dict) or seg not in value:
            return None
        value = value[seg]
    return value
