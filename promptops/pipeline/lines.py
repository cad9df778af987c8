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

    ``splitlines`` ends a line at more than ``\\n`` (``\\r``, ``\\x0b``, ``\\x85``,
    ``\\u2028`` ...), but at every ``\\n`` too, so its line ``n`` ends no later than the
    ``n + 1``-th ``\\n``: the text up to and including that ``\\n`` ends at a line's end
    (a ``\\r\\n`` is whole in it), and its lines are the whole text's first lines."""
    if n < 0:
        return None
    parts = text.split("\n", n + 1)
    head = text[:len(text) - len(parts[-1])] if len(parts) > n + 1 else text
    lines = head.splitlines()
    return lines[n] if n < len(lines) else None
