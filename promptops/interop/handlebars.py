"""Handlebars templates read as Handlebars 4.7 reads them: the syntax tree and its whitespace.

Dotprompt files are Handlebars, and an import is only exact if it reproduces what Handlebars
outputs, whitespace included. Handlebars decides whitespace on its syntax tree, not on lines:
a block, ``{{else}}``, partial or comment tag is *standalone* when the content before it ends
in a newline plus blanks and the content after it starts with blanks plus a newline - so two
tags on one line are never standalone, while ``{{role "user"}}{{#if x}}`` keeps its newline.
This module parses the subset Dotprompt uses into a tree and then runs Handlebars' own
whitespace pass (standalone lines and ``~`` stripping) over it, recording on each content node
what was removed and why, so the importer can emit Jinja whose output matches byte for byte
and still lays the text out as the author did.

It is a reader, never a renderer: expressions are parsed into small nodes for the importer
to translate, and anything outside the subset is reported (raw blocks ``{{{{raw}}}}``,
decorators, partial blocks) as :class:`HandlebarsError` with a line and column.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from promptops.interop.hbs_ast import (
    Block,
    Call,
    Comment,
    Content,
    Expr,
    HandlebarsError,
    Mustache,
    Node,
    Partial,
    Program,
    Strip,
)

__all__ = ["Block", "Call", "Comment", "Content", "Expr", "HandlebarsError", "Mustache", "Node",
           "Partial", "Program", "Strip", "parse"]

# --------------------------------------------------------------------------- lexer + parser

_ID = r"[^\s!\"#%-,\.\/;->@\[-\^`\{-~]+(?=[=~}\s\/.)|])"
_TOKEN = re.compile(
    r"(?P<ws>\s+)|(?P<closeraw>\}\}\}\})|(?P<close3>\}~?\}\})|(?P<close>~?\}\})|(?P<string>\"(?:\\\"|[^\"])*\"|'(?:\\'|[^'])*')"
    r"|(?P<number>-?[0-9]+(?:\.[0-9]+)?(?=[~}\s)]))"
    r"|(?P<literal>(?:true|false|undefined|null)(?=[~}\s)]))"
    r"|(?P<as>as\s+\|)|(?P<pipe>\|)|(?P<eq>=)|(?P<dotdot>\.\.)|(?P<dot>\.(?=[=~}\s\/.)|]))"
    r"|(?P<sep>[\/.])|(?P<at>@)|(?P<lparen>\()|(?P<rparen>\))"
    rf"|(?P<id>{_ID})|(?P<seg>\[(?:\\\]|[^\]])*\])|(?P<other>.)", re.S)
_OPENERS = [  # (regex, kind) tried in Handlebars' order at a "{{"
    (re.compile(r"\{\{\{\{"), "raw"),
    (re.compile(r"\{\{(~)?#>"), "partial_block"),
    (re.compile(r"\{\{(~)?>"), "partial"),
    (re.compile(r"\{\{(~)?#\*"), "decorator"),
    (re.compile(r"\{\{(~)?#"), "open"),
    (re.compile(r"\{\{(~)?/"), "close"),
    (re.compile(r"\{\{(~)?\^\s*(~)?\}\}"), "else"),
    (re.compile(r"\{\{(~)?\s*else\s*(~)?\}\}"), "else"),
    (re.compile(r"\{\{(~)?\^"), "open_inverse"),
    (re.compile(r"\{\{(~)?\s*else\b"), "else_chain"),
    (re.compile(r"\{\{(~)?\{"), "triple"),
    (re.compile(r"\{\{(~)?&"), "unescaped"),
    (re.compile(r"\{\{(~)?!--[\s\S]*?--(~)?\}\}"), "comment"),
    (re.compile(r"\{\{(~)?![\s\S]*?(~)?\}\}"), "comment"),
    (re.compile(r"\{\{(~)?\*"), "decorator"),
    (re.compile(r"\{\{(~)?"), "mustache"),
]


def parse(source: str) -> Program:
    """The syntax tree of ``source`` after Handlebars' whitespace pass."""
    program = _Parser(source).parse()
    _whitespace(program, is_root=True)
    return program


# An open block on the parser's stack: the block, the program being filled, where it opened,
# and its helper name ("" for the chained block of an {{else if}}, closed with its parent).
_Open = tuple[Block, Program, int, str]


class _Parser:
    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0
        self.root = Program()
        self._newlines = [m.start() for m in re.finditer("\n", source)]

    def where(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_left(self._newlines, pos)  # newlines before pos
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, pos - start + 1

    def fail(self, message: str, pos: int) -> HandlebarsError:
        return HandlebarsError(message, *self.where(pos))

    def parse(self) -> Program:
        stack: list[_Open] = []
        current, src = self.root, self.src
        while self.pos < len(src):
            start = src.find("{{", self.pos)
            if start < 0:
                self._content(current, self.pos, len(src))
                break
            escapes = 0
            while escapes < 2 and start - escapes - 1 >= self.pos and \
                    src[start - escapes - 1] == "\\":
                escapes += 1
            if escapes == 1:  # \{{ is literal text, up to the next {{ (or its escape)
                self._content(current, self.pos, start - 1)
                nxt = src.find("{{", start + 2)
                end = len(src) if nxt < 0 else nxt
                while end > start + 2 and end > nxt - 2 and src[end - 1] == "\\":
                    end -= 1
                self._content(current, start, end)
                self.pos = end
                continue
            # \\{{ is one backslash, then a real mustache.
            self._content(current, self.pos, start - 1 if escapes == 2 else start)
            self.pos = start
            current = self._tag(start, current, stack)
        if stack:
            _, _, at, name = stack[-1]
            raise self.fail(f"{{{{#{name}}}}} is never closed", at)
        return self.root

    def _content(self, program: Program, a: int, b: int) -> None:
        if b > a:
            program.body.append(Content(self.src[a:b], self.where(a)[0]))

    def _tag(self, start: int, current: Program, stack: list[_Open]) -> Program:
        # The last opener matches any "{{", so one always does.
        m, kind = next((m, k) for m, k in ((r.match(self.src, start), k) for r, k in _OPENERS)
                       if m is not None)
        line, col = self.where(start)
        open_strip = bool(m.groups() and m.group(1))
        if kind in ("raw", "partial_block", "decorator"):
            names = {"raw": "raw blocks {{{{raw}}}}", "partial_block": "partial blocks {{#> }}",
                     "decorator": "decorators {{* }}"}
            raise self.fail(f"Handlebars {names[kind]} are not supported", start)
        if kind in ("comment", "else"):
            self.pos = m.end()
            strip = Strip(open_strip, bool(m.lastindex and m.lastindex > 1 and m.group(2)))
            if kind == "comment":
                current.body.append(Comment(strip, line, col))
                return current
            return self._else(stack, strip, start)
        self.pos = m.end()
        call, block_params, close_strip = self._inner(start, triple=kind == "triple")
        tag_strip = Strip(open_strip, close_strip)
        if kind == "else_chain":  # {{else if b}}: an inverse holding one chained block
            if not stack or stack[-1][0].inverse is not None:
                raise self.fail("{{else ...}} outside a block or after its {{else}}", start)
            block, _, at, name = stack[-1]
            chained = Program(chained=True)
            inner = Block(call, block_params, Program(), None, tag_strip, Strip(), Strip(),
                          line, col, offset=start)
            block.else_offset = start
            chained.body.append(inner)
            block.inverse, block.inverse_strip = chained, tag_strip
            stack[-1] = (block, chained, at, name)
            assert inner.program is not None
            stack.append((inner, inner.program, start, ""))
            return inner.program
        if kind in ("open", "open_inverse"):
            body = Program()
            block = Block(call, block_params, body if kind == "open" else None,
                          None if kind == "open" else body, tag_strip, Strip(), Strip(),
                          line, col, offset=start)
            current.body.append(block)
            stack.append((block, body, start, call.helper.original))
            return body
        if kind == "close":
            name = call.helper.original
            while stack and stack[-1][3] == "":
                inner_block = stack.pop()[0]
                inner_block.close_strip, inner_block.close_offset = tag_strip, start
            if not stack:
                raise self.fail(f"{{{{/{name}}}}} closes no block", start)
            block, _, _, opened = stack.pop()
            if opened != name:
                raise self.fail(f"{{{{/{name}}}}} does not match {{{{#{opened}}}}}", start)
            block.close_strip, block.close_offset = tag_strip, start
            return stack[-1][1] if stack else self.root
        if kind == "partial":
            current.body.append(Partial(call.helper, call.params[0] if call.params else None,
                                        call.hash, tag_strip, line, col))
            return current
        current.body.append(Mustache(call, kind == "mustache", tag_strip, line, col))
        return current

    def _else(self, stack: list[_Open], strip: Strip, at: int) -> Program:
        if not stack:
            raise self.fail("{{else}} outside a block", at)
        block, _, start, name = stack[-1]
        if block.inverse is not None and block.program is not None:
            raise self.fail("a second {{else}} in one block", at)
        block.inverse_strip, block.else_offset = strip, at
        if block.program is None:  # {{^x}}...{{else}}...{{/x}}: the else part is the program
            block.program = Program()
            stack[-1] = (block, block.program, start, name)
            return block.program
        block.inverse = Program()
        stack[-1] = (block, block.inverse, start, name)
        return block.inverse

    def _inner(self, start: int, triple: bool) -> tuple[Call, list[str], bool]:
        """helper params* hash? (as |a b|)? up to the closing braces."""
        items: list[Expr] = []
        hash_: dict[str, Expr] = {}
        block_params: list[str] = []
        while True:
            tok, val, at = self._next()
            if tok == ("close3" if triple else "close"):
                return self._call(items, hash_, start), block_params, val.startswith(
                    "}~" if triple else "~")
            if tok == "as":
                while True:
                    t2, v2, a2 = self._next()
                    if t2 == "pipe":
                        break
                    if t2 != "id":
                        raise self.fail("expected a block parameter name", a2)
                    block_params.append(v2)
                continue
            if self._hash_key(tok, hash_, val):
                continue
            if hash_:
                raise self.fail("a positional parameter after hash parameters", at)
            items.append(self._param(tok, val, at))

    def _hash_key(self, tok: str, hash_: dict[str, Expr], val: str) -> bool:
        after = self.pos
        while after < len(self.src) and self.src[after].isspace():
            after += 1
        if tok != "id" or not self.src.startswith("=", after):
            return False
        self.pos = after + 1
        hash_[val] = self._param(*self._next())
        return True

    def _next(self) -> tuple[str, str, int]:
        while True:
            if self.pos >= len(self.src):
                raise self.fail("unterminated {{", self.pos)
            m = _TOKEN.match(self.src, self.pos)
            assert m is not None and m.lastgroup is not None
            self.pos = m.end()
            if m.lastgroup != "ws":
                return m.lastgroup, m.group(), m.start()

    def _call(self, items: list[Expr], hash_: dict[str, Expr], start: int) -> Call:
        if not items:
            raise self.fail("empty {{ }}", start)
        return Call(items[0], items[1:], hash_)

    def _param(self, tok: str, val: str, at: int) -> Expr:
        if tok == "string":
            return Expr("string", value=val[1:-1].replace("\\" + val[0], val[0]), original=val)
        if tok == "number":
            return Expr("number", value=float(val) if "." in val else int(val), original=val)
        if tok == "literal":
            kind = {"true": "boolean", "false": "boolean", "null": "null",
                    "undefined": "undefined"}[val]
            return Expr(kind, value={"true": True, "false": False}.get(val),  # type: ignore[arg-type]
                        original=val)
        if tok == "lparen":
            items: list[Expr] = []
            hash_: dict[str, Expr] = {}
            while True:
                t, v, a = self._next()
                if t == "rparen":
                    return Expr("sexpr", call=self._call(items, hash_, at),
                                original=self.src[at:self.pos])
                if not self._hash_key(t, hash_, v):
                    items.append(self._param(t, v, a))
        data = tok == "at"
        if data:
            tok, val, at = self._next()
        return self._path(tok, val, at, data)

    def _path(self, tok: str, val: str, at: int, data: bool) -> Expr:
        depth, this_, start = 0, False, at
        parts: list[str] = []
        while True:
            if tok == "dotdot" and not parts:
                depth += 1
            elif (tok == "dot" or (tok == "id" and val == "this")) and not parts:
                this_ = True
            elif tok == "id":
                parts.append(val)
            elif tok == "seg":
                parts.append(val[1:-1].replace("\\]", "]"))
            else:
                raise self.fail(f"unexpected {val!r} in an expression", at)
            if self.pos < len(self.src) and self.src[self.pos] in "./":
                sep = _TOKEN.match(self.src, self.pos)
                if sep is not None and sep.lastgroup == "sep":
                    self.pos = sep.end()
                    tok, val, at = self._next()
                    continue
            break
        original = ("@" if data else "") + self.src[start:self.pos]
        return Expr("data" if data else "path", tuple(parts), depth, this_, original=original)


# --------------------------------------------------------------------------- whitespace
# Handlebars' WhitespaceControl pass (compiler/whitespace-control.js), on this tree.

# JavaScript's "$" (no m flag) is Python's "\Z": Python's "$" also matches before a final "\n".
_PREV_WS = re.compile(r"(?:^|\S)[^\S\n]*\n\s*\Z")
_PREV_WS_ROOT = re.compile(r"^\s*\Z|(?:^|\S)[^\S\n]*\n\s*\Z")
_NEXT_WS = re.compile(r"^\s*?\r?\n")
_NEXT_WS_ROOT = re.compile(r"^\s*?(\r?\n|\Z)")


def _is_prev_ws(body: list[Node], i: int | None, is_root: bool) -> bool:
    i = len(body) if i is None else i
    return _blank_beside(body, i - 1, i - 2, is_root, _PREV_WS, _PREV_WS_ROOT)


def _is_next_ws(body: list[Node], i: int | None, is_root: bool) -> bool:
    i = -1 if i is None else i
    return _blank_beside(body, i + 1, i + 2, is_root, _NEXT_WS, _NEXT_WS_ROOT)


def _blank_beside(body: list[Node], near: int, far: int, is_root: bool, rx: re.Pattern[str],
                  rx_root: re.Pattern[str]) -> bool:
    """Handlebars' isPrevWhitespace/isNextWhitespace: the neighbour at ``near`` is content
    whose blanks reach a newline (a missing neighbour counts at the root's edges only)."""
    node = body[near] if 0 <= near < len(body) else None
    if node is None:
        return is_root
    if isinstance(node, Content):
        sibling = 0 <= far < len(body)
        return (rx if sibling or not is_root else rx_root).search(node.original) is not None
    return False


def _omit_right(body: list[Node], i: int | None, multiple: bool = False) -> None:
    idx = 0 if i is None else i + 1
    current = body[idx] if idx < len(body) else None
    if not isinstance(current, Content) or (not multiple and current.right_stripped):
        return
    original = current.value
    m = re.match(r"\s+" if multiple else r"[ \t]*\r?\n?", current.value)
    removed = m.group() if m else ""
    current.value = current.value[len(removed):]
    if not multiple:
        current.standalone_before += removed
    current.right_stripped = current.value != original


def _omit_left(body: list[Node], i: int | None, multiple: bool = False) -> bool:
    idx = len(body) - 1 if i is None else i - 1
    current = body[idx] if idx >= 0 else None
    if not isinstance(current, Content) or (not multiple and current.left_stripped):
        return False
    original = current.value
    m = re.search(r"(?:^|(?<=\S))\s+\Z" if multiple else r"(?:^|(?<=[^ \t]))[ \t]+\Z",
                  current.value)
    removed = m.group() if m else ""
    current.value = current.value[:len(current.value) - len(removed)]
    if not multiple:
        current.standalone_after = removed + current.standalone_after
    current.left_stripped = current.value != original
    return current.left_stripped


@dataclass
class _StripInfo:
    open: bool = False
    close: bool = False
    open_standalone: bool = False
    close_standalone: bool = False
    inline_standalone: bool = False


def _whitespace(program: Program, is_root: bool) -> None:
    body = program.body
    for i, node in enumerate(body):
        strip = _accept(node)
        if strip is None:
            continue
        prev_ws, next_ws = _is_prev_ws(body, i, is_root), _is_next_ws(body, i, is_root)
        open_sa = strip.open_standalone and prev_ws
        close_sa = strip.close_standalone and next_ws
        inline_sa = strip.inline_standalone and prev_ws and next_ws
        if strip.close:
            _omit_right(body, i, True)
        if strip.open:
            _omit_left(body, i, True)
        if inline_sa:
            _omit_right(body, i)
            if _omit_left(body, i) and isinstance(node, Partial):
                prev = body[i - 1]
                assert isinstance(prev, Content)
                m = re.search(r"(?:^|[^ \t])([ \t]+)\Z", prev.original)
                node.indent = m.group(1) if m else ""
            if isinstance(node, Comment | Partial):
                node.standalone = True
        if open_sa and isinstance(node, Block):
            target = node.program or node.inverse
            assert target is not None
            _omit_right(target.body, None)
            _omit_left(body, i)
            node.open_standalone = True
        if close_sa and isinstance(node, Block):
            _omit_right(body, i)
            target = node.inverse or node.program
            assert target is not None
            _omit_left(target.body, None)
            node.close_standalone = True


def _accept(node: Node) -> _StripInfo | None:
    if isinstance(node, Block):
        return _block(node)
    if isinstance(node, Mustache):
        return _StripInfo(open=node.strip.open, close=node.strip.close)
    if isinstance(node, Comment | Partial):
        return _StripInfo(open=node.strip.open, close=node.strip.close, inline_standalone=True)
    return None


def _block(block: Block) -> _StripInfo:
    if block.program is not None:
        _whitespace(block.program, is_root=False)
    if block.inverse is not None:
        _whitespace(block.inverse, is_root=False)
    program = block.program or block.inverse
    assert program is not None
    inverse = block.inverse if block.program is not None else None
    first_inverse = last_inverse = inverse
    if inverse is not None and inverse.chained:
        first = inverse.body[0]
        assert isinstance(first, Block) and first.program is not None
        first_inverse = first.program
        while last_inverse is not None and last_inverse.chained:
            last = last_inverse.body[-1]
            assert isinstance(last, Block)
            last_inverse = last.inverse or last.program
    strip = _StripInfo(open=block.open_strip.open, close=block.close_strip.close,
                       open_standalone=_is_next_ws(program.body, None, False),
                       close_standalone=_is_prev_ws((first_inverse or program).body, None, False))
    if block.open_strip.close:
        _omit_right(program.body, None, True)
    if inverse is not None and first_inverse is not None and last_inverse is not None:
        if block.inverse_strip.open:
            _omit_left(program.body, None, True)
        if block.inverse_strip.close:
            _omit_right(first_inverse.body, None, True)
        if block.close_strip.open:
            _omit_left(last_inverse.body, None, True)
        if _is_prev_ws(program.body, None, False) and _is_next_ws(first_inverse.body, None,
                                                                    False):
            _omit_left(program.body, None)
            _omit_right(first_inverse.body, None)
            block.else_standalone = True
    elif block.close_strip.open:
        _omit_left(program.body, None, True)
    return strip
