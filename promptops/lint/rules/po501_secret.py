"""A secret (API key, access token, private key) is committed in a template or resource.

Why: bundles are published and served to any client; a key in a prompt is a leaked
key. Rotate it, then pass what the prompt needs as an argument.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    text: "Call the API with key sk-proj-AbCdEf0123456789AbCdEf0123456789"

Passes::

    text: "Call the API with the key the user configured."
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, AnyStr

from promptops.lint.problem import Hit

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO501", "secret", "error", "raw"

PATTERNS = (
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})")),
    ("OpenAI/Anthropic API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("Stripe secret key", re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}")),
    ("private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
)


#: Every pattern needs one of these substrings; files without any are skipped cheaply.
HINTS = ("AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xox",
         "AIza", "k_live_", "PRIVATE KEY")
# The hints as seven scans instead of thirteen: each ``in`` is a pass over the whole file, and
# on 10,000 real prompts (54 MB of text) those passes were most of this rule's cost. A regex
# with a literal first character scans as fast as ``in``, so the hints sharing one go in one.
_GH = re.compile(r"gh[pousr]_")
_A = re.compile(r"A(?:KIA|SIA|Iza)")
_SPLIT = ("sk-", "xox", "k_live_", "PRIVATE KEY", "github_pat_")
# The same scans of a file's UTF-8 bytes: every hint is ASCII, and an ASCII byte of UTF-8 is
# that character and nothing else, so the bytes hold a hint where the text does. A text past
# ASCII is stored two or four bytes a character, where a substring search runs 5-10 times
# slower than in bytes (on real, half of the files; PO502 reads their bytes anyway).
_SPLIT_B = tuple(h.encode() for h in _SPLIT)
_BOM = b"\xef\xbb\xbf"
_GH_B, _A_B = re.compile(_GH.pattern.encode()), re.compile(_A.pattern.encode())


def may_hold(text: str | bytes) -> bool:
    """Whether ``text`` (or its UTF-8 bytes) holds one of ``HINTS`` (the same answer, fewer
    passes)."""
    if isinstance(text, bytes):
        return any(h in text for h in _SPLIT_B) or _GH_B.search(text) is not None \
            or _A_B.search(text) is not None
    return any(h in text for h in _SPLIT) or _GH.search(text) is not None \
        or _A.search(text) is not None


def check(ctx: LintContext) -> Iterator[Hit]:
    for path in ctx.text_files:
        text = ctx.text(path)
        if not text:
            continue
        # a text past ASCII is scanned in its bytes (read for PO502 anyway: _SPLIT_B)
        raw = None if text.isascii() else ctx.raw(path)
        if not may_hold(text if raw is None else raw):
            continue  # before the table: its key is the whole file (a hash of every byte)
        # may_hold stops at the first hint: where texts repeat, a copy costs that and
        # the table's lookup, not every scan
        scan = _scan if raw is None else (lambda _, raw=raw: _scan_raw(raw))
        for line, col, what in ctx.memo(CODE, text, scan):
            yield Hit(path, line, col, f"possible {what} committed in the package")


def _scan(text: str) -> list[tuple[int, int, str]]:
    """(line, column, what) of the first secret on each line of ``text``."""
    # Only the lines holding a hint are tried (each pattern on the line, as before):
    # splitting every line of a file that says "task-" somewhere cost more than the scan.
    return _lines_scanned(text, _hint_lines(text, _SPLIT, (_GH, _A), "\n"), str)


def _scan_raw(raw: bytes) -> list[tuple[int, int, str]]:
    """:func:`_scan` of the text ``raw`` decodes to (``utf-8-sig``, as
    :meth:`~promptops.lint.context.LintContext.text` decodes it), its hints found in the
    bytes: a line's bytes decode to the text's line (line breaks are ASCII), once the
    byte order mark decoding drops is dropped (as :func:`check` reads a text past ASCII)."""
    if raw.startswith(_BOM):
        raw = raw[3:]  # no line break in it: the lines keep their numbers
    return _lines_scanned(raw, _hint_lines(raw, _SPLIT_B, (_GH_B, _A_B), b"\n"),
                          bytes.decode)


def _lines_scanned(text: AnyStr, starts: list[int], decode: Callable[[AnyStr], str]
                   ) -> list[tuple[int, int, str]]:
    """The patterns tried on each line of ``text`` starting at one of ``starts``."""
    out: list[tuple[int, int, str]] = []
    nl = "\n" if isinstance(text, str) else b"\n"
    line, counted = 1, 0
    for start in starts:
        end = text.find(nl, start)
        if end < 0:
            end = len(text)
        line += text.count(nl, counted, start)
        counted = start
        src = decode(text[start:end])
        for what, rx in PATTERNS:
            found = rx.search(src)
            if found:
                out.append((line, found.start() + 1, what))
                break
    return out


def _hint_lines(text: AnyStr, split: Sequence[AnyStr], rxs: Sequence[re.Pattern[AnyStr]],
                nl: AnyStr) -> list[int]:
    """Where each line holding a hint starts, in order: only a line holding one can match
    a pattern (each pattern contains a hint). Found by :func:`may_hold`'s seven scans
    (substring searches and regexes with a literal first character), not by one regex of
    every hint, an alternation the engine tried at every character (on ``diff_shapes``'s
    ``real``, 232 hinted files of 72 KB: 0.13 -> 0.09 s, of the lint child's 0.24 s for this
    rule; issue 26, session 21)."""
    starts: set[int] = set()
    for hint in split:
        at = text.find(hint)
        while at >= 0:
            starts.add(text.rfind(nl, 0, at) + 1)
            end = text.find(nl, at)
            at = -1 if end < 0 else text.find(hint, end + 1)
    for rx in rxs:
        m = rx.search(text)
        while m is not None:
            starts.add(text.rfind(nl, 0, m.start()) + 1)
            end = text.find(nl, m.start())
            m = None if end < 0 else rx.search(text, end + 1)
    return sorted(starts)
