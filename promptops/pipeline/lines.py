"""One line of a text, found without splitting the whole text.

Placing a finding read one line of its file as ``text.split("\\n")[n]`` or
``text.splitlines()[n]``: a list of every line of the file, for one of them. Where no
prompt text repeats and files are large (real prompts of 200 KB, issue 26 item 1, session
16), lint placed one finding per file with four such splits (the rule's source, the block's
start, the column, the visible end), and they were a fifth of its costliest rule. These
give the same line at a cost in proportion to where the line is: ``str.split`` with a
``maxsplit`` stops after the line asked for.
"""

from __future__ import annotations


def split_line(text: str, n: int) -> str | None:
    """``text.split("\\n")[n]`` for ``n >= 0``; None where that has no line ``n``."""
    if n < 0:
        return None
    parts = text.split("\n", n + 1)
    return parts[n] if n < len(parts) else None


def splitlines_line(text: str, n: int) -> str | None:
    """``text.splitlines()[n]`` for ``n >= 0``; None where that has no line ``n``.

    ``splitlines`` ends a line at more than ``\\n`` (:data:`_BREAKS`), but at every ``\\n``
    too, so its line ``n`` ends no later than the ``n + 1``-th ``\\n``: the text up to and
    including that ``\\n`` ends at a line's end (a ``\\r\\n`` is whole in it), and its lines
    are the whole text's first lines. Where that part holds no other line break (a search
    for each character, bounded by it), its lines are the pieces ``split`` gave."""
    if n < 0:
        return None
    parts = text.split("\n", n + 1)
    end = len(text) - len(parts[-1]) if len(parts) > n + 1 else len(text)
    breaks = _BREAKS[:6] if text.isascii() else _BREAKS
    if any(text.find(c, 0, end) >= 0 for c in breaks):
        lines = text[:end].splitlines()
        return lines[n] if n < len(lines) else None
    if n < len(parts) - 1 or (n == len(parts) - 1 and parts[n]):
        return parts[n]  # a piece before a "\n", or a last one that is not empty
    return None


# The line breaks of ``str.splitlines`` besides "\n", the ASCII ones first.
_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
