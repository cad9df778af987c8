"""Argument ``pattern``: the one home for compiling and matching a user's regular expression.

A pattern comes from a package (untrusted) and is matched against a value from a client
(untrusted) on the only serving thread, so Python's backtracking ``re`` is not an option:
``([A-Z]+-?)+[0-9]+`` against 41 characters runs for days in one C call that no deadline
can interrupt. Patterns are compiled with RE2 (the ``google-re2`` binding), whose matching
time is linear in the value's length. Linear is not yet bounded: the constant is the size
of the compiled program (RE2 falls back to simulating every instruction per character), so
a 40,000-instruction program takes 15 s on 100,000 characters. Every match therefore
first checks ``len(value) * program size`` against the request's time budget (a quarter of
it at the slowest rate measured, see docs/reliability.md) and refuses a value past it, so
whether a value is accepted is a function of the package and the value, never of timing.

RE2 has no backreferences, lookaround, atomic groups or possessive quantifiers (they are
what makes backtracking necessary). A pattern using one is refused when the package loads,
with a message naming the construct, rather than matched some slower way: there is no
safe fallback that still gives the pattern's meaning. ``\\uXXXX``, ``\\UXXXXXXXX`` (as in
JSON Schema and Python) and Python's ``\\Z`` are accepted and translated to RE2's
spelling. ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII, as in JSON Schema; ``\\p{L}``,
``\\p{Nd}`` name Unicode classes.

``re2`` is imported on first use, so ``serve`` pays for it only when a served prompt has a
pattern.
"""

from __future__ import annotations

import functools
import re
from typing import Any

#: Matching cost, in (value characters x program instructions) per millisecond of the
#: request's time budget: the slowest rate measured (RE2 simulating its whole program per
#: character) is about 4.5 ns per step, so a quarter of the budget at most.
WORK_PER_MS = 50_000
MAX_MEM = 1 << 20  # bytes of RE2's memory for one compiled pattern (program and DFA cache)

# RE2's reason for refusing a construct Python's re accepts -> words an author can act on.
# Expressions, compiled (by re's own cache) only when a pattern is refused: serve imports this
# module on its cold path, where compiling them cost ~3 M instructions for an error's words.
_UNSUPPORTED = [
    (r"invalid escape sequence: \\[1-9]|invalid escape sequence: \\g|"
     r"invalid perl operator: \(\?P=|invalid named capture group: \(\?P=",
     "a backreference"),
    (r"invalid perl operator: \(\?<?[=!]",
     "lookaround (`(?=`, `(?!`, `(?<=` or `(?<!`)"),
    (r"invalid perl operator: \(\?>", "an atomic group `(?>...)`"),
    (r"invalid perl operator: \(\?\(", "a conditional group `(?(...)...)`"),
    (r"bad repetition operator: [*+?}]\+",
     "a possessive quantifier (`*+`, `++` or `?+`)"),
    (r"^a repetition count over 1000", "a repetition count over 1000"),
    (r"invalid perl operator: \(\?[-imsU]*[^-imsU:)]",
     "a flag RE2 lacks (it has i, m, s and U)"),
]


# Mistakes both engines refuse: Python's message for them says where.
_SHARED_SYNTAX = ("missing ", "unexpected ", "no argument", "invalid character class",
                  "trailing \\", "missing argument", "invalid repetition size")


class PatternError(ValueError):
    """A pattern that cannot be compiled; the message says why and what to use instead."""


def _translate(pattern: str) -> str:
    """Python/JSON Schema escapes with the same meaning spelled RE2's way."""
    if "\\" not in pattern:
        return pattern
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c != "\\" or i + 1 == n:
            out.append(c)
            i += 1
            continue
        nxt = pattern[i + 1]
        width = {"u": 4, "U": 8}.get(nxt, 0)
        digits = pattern[i + 2 : i + 2 + width]
        if width and len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
            out.append("\\x{" + digits + "}")
            i += 2 + width
        elif nxt == "Z":
            out.append("\\z")
            i += 2
        else:
            out.append(pattern[i : i + 2])
            i += 2
    return "".join(out)


def _explain(pattern: str, reason: str) -> str:
    if reason.endswith("(?P") and "(?P=" in pattern:  # RE2 quotes only the first 3 chars
        reason += "="
    counts = [int(n) for n in re.findall(r"\d+", reason)] if "repetition" in reason else []
    if counts and max(counts) > 1000:
        reason = f"a repetition count over 1000: {reason}"
    for needle, what in _UNSUPPORTED:
        if re.search(needle, reason):
            detail = reason.removeprefix("a repetition count over 1000: ")
            return (f"pattern uses {what}, which the linear-time matcher (RE2) does not "
                    f"support: rewrite it without ({detail})")
    if reason.startswith("pattern too large"):
        return ("pattern compiles to a program over RE2's memory limit: use fewer or smaller "
                "counted repetitions ({m,n}) and classes")
    if reason.startswith(_SHARED_SYNTAX):
        try:
            re.compile(pattern)
        except re.error as exc:  # the same mistake: Python's message has a position
            return f"pattern is not a valid regular expression: {exc}"
        except (RecursionError, OverflowError):
            pass
    if reason.startswith("invalid repetition size"):  # nested counts multiply past 1000
        return (f"pattern repeats more than 1000 times in all ({reason}): counts of nested "
                "repetitions multiply")
    return f"pattern is not a valid regular expression: {reason}"


class Pattern:
    """A compiled pattern: :meth:`fullmatch` is linear, and bounded by a work limit."""

    __slots__ = ("_anchor", "_match", "_rx", "program", "source")

    def __init__(self, source: str, rx: Any, anchor: object) -> None:
        self.source = source
        self._rx = rx
        self.program = max(int(rx.programsize), 1)
        # The binding's public fullmatch maps byte offsets back to characters (2.6 us for
        # a 10-character value); a yes/no answer needs only RE2's own anchored Match.
        raw = getattr(rx, "_regexp", None)
        self._match = raw.Match if raw is not None and anchor is not None else None
        self._anchor = anchor

    def longest(self, timeout_ms: int) -> int:
        """The longest value one match may read within a request of ``timeout_ms``."""
        return WORK_PER_MS * timeout_ms // self.program

    def fullmatch(self, value: str, timeout_ms: int) -> bool:
        """True if the whole value matches; PatternError if matching it would cost too much."""
        longest = self.longest(timeout_ms)
        if len(value) > longest:
            raise PatternError(
                f"is {len(value)} characters, too long to match against its pattern (a "
                f"{self.program}-step RE2 program): at most {longest} characters within the "
                f"{timeout_ms} ms request budget; the package should simplify the pattern or "
                "lower maxLength")
        try:
            if self._match is None:
                return self._rx.fullmatch(value) is not None
            data = value.encode("utf-8")
            return bool(self._match(self._anchor, data, 0, len(data))[0][0] >= 0)
        except UnicodeEncodeError:  # a lone surrogate: not text, so never a match
            return False


@functools.lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> Pattern:
    """The compiled pattern, or PatternError naming the construct RE2 lacks."""
    import re2  # type: ignore[import-untyped]  # google-re2, on first use: off the cold path

    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern to stderr
    options.max_mem = MAX_MEM
    options.never_capture = True  # only "does it match?" is asked
    try:
        rx = re2.compile(_translate(pattern), options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(
            exc.args[0], bytes) else str(exc)
        raise PatternError(_explain(pattern, reason)) from None
    except UnicodeEncodeError:
        raise PatternError("pattern is not valid Unicode text (a lone surrogate)") from None
    anchor = getattr(getattr(re2, "_Anchor", None), "ANCHOR_BOTH", None)
    return Pattern(pattern, rx, anchor)


def nested_quantifier(pattern: str) -> tuple[int, str] | None:
    """(offset, the group) of an unbounded quantifier inside another, e.g. ``([a-z]+-?)+``.

    Nested unbounded repetition is what makes backtracking engines (JavaScript, Python,
    most JSON Schema validators) take exponential time; RE2 does not care, but a client
    that validates the same pattern does. The scan is a small tokenizer: escapes and
    character classes are skipped, groups are matched, quantifiers are ``*``, ``+`` and
    ``{n,}``; bounded ``{n,m}`` counts are treated as unbounded when ``m`` exceeds 10.
    """
    stack: list[tuple[int, bool]] = []  # (start offset, contains an unbounded quantifier)
    i, n = 0, len(pattern)
    last_group: tuple[int, bool] | None = None  # the group that just closed
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            last_group = None
            continue
        if c == "[":
            i = _skip_class(pattern, i)
            last_group = None
            continue
        if c == "(":
            stack.append((i, False))
            i += 1
            last_group = None
            continue
        if c == ")" and stack:
            last_group = stack.pop()
            i += 1
            if last_group[1] and stack:
                stack[-1] = (stack[-1][0], True)
            continue
        unbounded, length = _quantifier(pattern, i)
        if length:
            if unbounded:
                if last_group is not None and last_group[1]:
                    return last_group[0], pattern[last_group[0] : i + length]
                if stack:
                    stack[-1] = (stack[-1][0], True)
            i += length
            if i < n and pattern[i] in "?+":  # lazy or possessive marker
                i += 1
            last_group = None
            continue
        last_group = None
        i += 1
    return None


def _skip_class(pattern: str, i: int) -> int:
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


@functools.cache
def _count() -> re.Pattern[str]:
    """A counted quantifier ``{m,n}`` (compiled on first use, like ``_UNSUPPORTED``)."""
    return re.compile(r"\{(\d*)(,(\d*))?\}")


def _quantifier(pattern: str, i: int) -> tuple[bool, int]:
    """(unbounded, length) of the quantifier at ``i``; length 0 if there is none."""
    c = pattern[i]
    if c in "*+":
        return True, 1
    if c == "?":
        return False, 1
    if c == "{":
        m = _count().match(pattern, i)
        if m is None or (m.group(1) == "" and m.group(2) is None):
            return False, 0
        top = m.group(3) if m.group(2) else m.group(1)
        return (top == "" or int(top or 0) > 10), m.end() - i
    return False, 0
