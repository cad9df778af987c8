"""Long literal block scalars read without libyaml, exactly as libyaml reads them.

A real prompt is mostly one long ``text: |`` block (a 200 KB VS Code prompt is 5,000 lines
of it), and libyaml reads every byte of it twice (its reader checks each character, its
scanner copies each one into the scalar): 6 ns a byte, most of a build of such prompts
(issue 26 item 1, session 12). What a literal block holds is simple to say: the lines
after its header up to the first line indented less than its first one, less that
indentation, the final line breaks as its chomping indicator says. :func:`cut` finds
such blocks with a few passes of C (a regular expression per block, ``bytes.replace``,
the UTF-8 decoder) and gives the fast path a *skeleton*: the document with each body
replaced by a placeholder line, which libyaml parses as a small file; :func:`put_back`
puts the values in the placeholders' place.

It is exact or it declines: a body this cannot read exactly as libyaml does (a tab or a
short run of spaces where indentation is, a carriage return or another line break libyaml
knows, a character libyaml's reader refuses, lines of spaces before the first line) is
left in the skeleton, and a placeholder that libyaml did not read back as the whole value
of the block it stands for (the header was inside another scalar, the indentation was not
the block's) sends the caller back to parse the whole file (``fast.load_bytes``). Every
value the fast path returns is therefore libyaml's; the equivalence tests compare both
ways on generated documents (tests/pipeline/test_yaml_bodies.py).
"""

from __future__ import annotations

import re

MIN_BODY = 8192  # bytes: shorter blocks are left to libyaml (a cut costs a few passes)
_TOKEN = b"\xee\x80\x80promptops-body-"  # U+E000, private use
TEXT_TOKEN = _TOKEN.decode()
# A block mapping value whose header is the whole line: `key: |`, `- key: |+` (no
# indentation indicator, no comment, no tag or anchor: those are libyaml's). Matched at
# the start of a line that holds ``: |`` (found by ``bytes.find``, not a scan of each byte).
_HEADER = re.compile(rb" *(?:- +)?[A-Za-z_][A-Za-z0-9_]*: +\|([+-]?) *\n")
# What libyaml's reader refuses or reads as a line break inside a block: ASCII controls
# but tab and newline (a carriage return included), C1 controls (NEL among them), the
# line and paragraph separators, U+FFFE and U+FFFF. The first pass keeps the bytes they
# can start with; the precise checks run only where one is found.
_SUSPECT = bytes([*range(0x09), *range(0x0B, 0x20), 0x7F, 0xC2, 0xE2, 0xEF])
_NOT_SUSPECT = bytes(b for b in range(256) if b not in _SUSPECT)
_C1 = re.compile(rb"\xc2[\x80-\x9f]")  # a C1 control in UTF-8 (U+0080 to U+009F)
C1_FINDS = 64  # lead bytes of C1 a text may hold for a find of each to beat _C1 (c1)
_REFUSED = "\u2028\u2029\ufffe\uffff"
_SPACES = re.compile(b" *")

# Where a cut block is in the bytes: its header's end (the body's start), the body's end,
# its indentation, its chomping indicator (b"", b"+" or b"-")
Block = tuple[int, int, int, bytes]
# the skeleton; each placeholder's text and value; the blocks cut, in order
Cut = tuple[bytes, list[tuple[str, str]], tuple[Block, ...]]


def cut(raw: bytes, *, lines: bool = False) -> Cut | None:
    """(the skeleton of ``raw``, for each placeholder ``k`` in it: the string libyaml
    reads from the placeholder, and the block's value; the blocks cut), or None when no
    long literal block can be cut exactly (then libyaml reads ``raw`` as it is).

    ``lines``: each placeholder is followed by as many empty lines as its body had
    lines less one, so every node after it has the line and column it has in ``raw``
    (for positions: :func:`promptops.pipeline.yamlio.loader._mark_tree`); empty lines
    are the block's final line breaks, so its value is the placeholder followed by line
    breaks (as many as its chomping keeps). The values are not read then (each is ``""``):
    positions need the blocks' extent, not their text. ``raw`` must be valid UTF-8 (the
    bytes of a text) then: the values' decoding is what refuses anything else."""
    if len(raw) < MIN_BODY:  # (a placeholder's text in the file: put_back finds it twice)
        return None
    blocks: list[Block] = []
    values: list[str] = []
    at = 0  # where the search for the next header goes on
    while (colon := raw.find(b": |", at)) >= 0:
        line = raw.rfind(b"\n", 0, colon) + 1
        header = _HEADER.match(raw, line)
        body = (None if header is None
                else _body(raw, header.end(), header.group(1), read=not lines))
        if header is None or body is None:
            at = colon + 3
            continue
        end, indent, value = body
        blocks.append((header.end(), end, indent, header.group(1)))
        values.append(value)
        at = end
    if not blocks:
        return None
    return skeleton(raw, tuple(blocks), values, lines=lines)


def skeleton(raw: bytes, blocks: tuple[Block, ...], values: list[str] | None = None, *,
             lines: bool = False) -> Cut:
    """:func:`cut`'s answer from the ``blocks`` it cut in ``raw`` (each value ``""`` without
    ``values``): a header not cut stays in the skeleton, as the bytes between blocks do.
    With ``lines``, what ``cut(raw, lines=True)`` gives, from the blocks of ``cut(raw)``:
    both take the same blocks (:func:`_body` refuses the same bytes whether it reads the
    value or not), so placing a finding in a file validation cut need not find its blocks
    again (a regular expression over each body, its refusals: a third of PO504 where no
    text repeats, issue 26 session 18; ``tests/pipeline/test_yaml_bodies.py`` holds the
    two equal)."""
    parts: list[bytes] = []
    out: list[tuple[str, str]] = []
    kept = 0  # how much of ``raw`` is in ``parts``
    for k, (start, end, indent, chomp) in enumerate(blocks):
        mark = b"%s%d" % (_TOKEN, k)
        pad = b"\n" * (raw.count(b"\n", start, end) - 1) if lines else b""
        parts += [raw[kept:start], b" " * indent + mark + b"\n" + pad]
        read = mark.decode() + ("" if chomp == b"-" else "\n")
        out.append((read, values[k] if values is not None else ""))
        kept = end
    parts.append(raw[kept:])
    return b"".join(parts), out, blocks


def _body(raw: bytes, start: int, chomp: bytes, *, read: bool = True,
          ) -> tuple[int, int, str] | None:
    """(where the block starting at ``start`` ends, its indentation, its value, or ``""``
    when not ``read``), or None."""
    extent = _extent(raw, start)
    if extent is None:
        return None
    end, indent = extent
    if not read:  # the same refusals, read off the bytes as they are (no line breaks
        return None if _refused(raw[start:end]) else (end, indent, "")  # removed)
    # from the header's line break: the leading empty lines are the value's first breaks.
    # Split and joined, not ``bytes.replace``d: replace counts the indented line breaks in
    # one pass and finds each again in another; split finds each once (0.22 s against
    # 0.34 s over the 162 MB of speed2's tuning bodies: issue 26 session 20). Same bytes.
    text = b"\n".join(raw[start - 1:end].split(b"\n" + b" " * indent))
    suspect = text.translate(None, _NOT_SUSPECT)
    if suspect and (suspect.translate(None, b"\xc2\xe2\xef") or c1(text, suspect)):
        return None
    try:
        value = str(memoryview(text)[1:], "utf-8")
    except UnicodeDecodeError:
        return None
    if (b"\xe2" in suspect or b"\xef" in suspect) and any(c in value for c in _REFUSED):
        return None
    breaks = 0  # the final line breaks
    while breaks < len(text) and text[-1 - breaks] == 0x0A:
        breaks += 1
    if chomp == b"+" or (chomp == b"" and breaks <= 1):
        return end, indent, value
    return end, indent, value[:len(value) - breaks + (chomp == b"")]


def _extent(raw: bytes, start: int) -> tuple[int, int] | None:
    """(where the block starting at ``start`` ends, its indentation), or None when it is
    not one :func:`cut` takes."""
    first = start
    while raw.startswith(b"\n", first):  # empty lines before the first: breaks of the value
        first += 1
    indent = _SPACES.match(raw, first).end() - first  # type: ignore[union-attr]  # " *"
    if indent == 0 or first + indent >= len(raw) or raw[first + indent] in b" \t\n":
        return None  # no block, a tab or a line of spaces where libyaml sets the indentation
    # the first line neither indented as much nor empty ends the block
    stop = re.compile(b"\n(?! {%d}|\n)" % indent).search(raw, first - 1)
    end = len(raw) if stop is None else stop.start() + 1
    if end < len(raw):
        newline = raw.find(b"\n", end)
        if not raw[end:newline if newline >= 0 else len(raw)].strip(b" "):
            return None  # a line of fewer spaces than the indentation: not cut
    return None if end - start < MIN_BODY else (end, indent)


def _refused(body: bytes) -> bool:
    """Whether libyaml would read ``body`` (UTF-8) otherwise than as lines of text: what
    :func:`_body` refuses, the checks of its value's text made on the bytes."""
    suspect = body.translate(None, _NOT_SUSPECT)
    if suspect and (suspect.translate(None, b"\xc2\xe2\xef") or c1(body, suspect)):
        return True
    if b"\xe2" in suspect or b"\xef" in suspect:
        try:  # one character's search of the text: 3-byte searches of the bytes, which
            text = str(body, "utf-8")  # stop at each "…" or "’", cost ten times more
        except UnicodeDecodeError:
            return True
        return any(c in text for c in _REFUSED)
    return False


def c1(text: bytes, suspect: bytes) -> bool:
    """Whether ``text`` (UTF-8) holds a C1 control, ``suspect`` being its bytes of
    ``_SUSPECT``: each ``\xc2`` found by ``bytes.find`` (memchr) and the byte after it
    looked at, where there are few (a no-break space, a ``©``: six in a real prompt of
    speed2), the regular expression otherwise, whose search goes byte by byte over the
    whole text (0.053 s against 0.016 s over speed2's tuning bodies: issue 26 session 20)."""
    count = suspect.count(b"\xc2")
    if count > C1_FINDS:
        return _C1.search(text) is not None
    at = text.find(b"\xc2") if count else -1
    while at >= 0:
        if b"\x80" <= text[at + 1:at + 2] < b"\xa0":
            return True
        at = text.find(b"\xc2", at + 1)
    return False


def put_back(data: object, values: list[tuple[str, str]]) -> object:
    """``data`` (the skeleton's) with each placeholder's value; ValueError unless each
    placeholder was read exactly as the whole of one string value, and nothing else
    holds one."""
    by_read = {read: k for k, (read, _) in enumerate(values)}
    found = [0] * len(values)

    def back(obj: object) -> object:
        if type(obj) is str:
            if TEXT_TOKEN not in obj:
                return obj
            k = by_read.get(obj)
            if k is None:
                raise ValueError("a placeholder read otherwise than as its block")
            found[k] += 1
            return values[k][1]
        if type(obj) is dict:
            if any(type(key) is str and TEXT_TOKEN in key for key in obj):
                raise ValueError("a placeholder read as a key")
            return {key: back(v) for key, v in obj.items()}
        if type(obj) is list:
            return [back(v) for v in obj]
        return obj

    out = back(data)
    if found != [1] * len(values):
        raise ValueError("a placeholder missing or read twice")
    return out
