"""Line-oriented helpers for the rules that read raw files."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


def lines(ctx: LintContext, containing: str = "") -> Iterator[tuple[str, int, str]]:
    """(path, 1-based line, line without its end) of every package text file; only of the
    files that contain ``containing`` (a rule looking for it skips the others unsplit)."""
    for path in ctx.text_files:
        text = ctx.text(path)
        if text is None or containing not in text:
            continue
        for n, line in enumerate(text.split("\n"), 1):
            yield path, n, line.removesuffix("\r")


def first_per_line(
    ctx: LintContext, rx: re.Pattern[str], *, ascii_only: bool = False
) -> Iterator[tuple[str, int, int, str]]:
    """(path, line, column, match) of the first match of ``rx`` on each line.

    One regex pass over each whole file, not one per line: on a 10,000-file package
    the per-line loop was most of the cost of the hygiene rules. ``ascii_only``: the
    pattern only matches non-ASCII text, so pure-ASCII files are skipped outright.
    """
    for path in ctx.text_files:
        text = ctx.text(path)
        if not text or (ascii_only and text.isascii()):
            continue
        for line, col, found in first_in(text, rx):
            yield path, line, col, found


def first_in(text: str, rx: re.Pattern[str]) -> list[tuple[int, int, str]]:
    """(line, column, match) of the first match of ``rx`` on each line of ``text``."""
    out: list[tuple[int, int, str]] = []
    # Lines counted from the last match, and the search resumed at the next line: a
    # count from the file's start per match grew with matches times size.
    line, counted, pos = 1, 0, 0
    while (m := rx.search(text, pos)) is not None:
        start = m.start()
        line += text.count("\n", counted, start)
        counted = start
        col = start - (text.rfind("\n", 0, start) + 1) + 1
        out.append((line, col, m.group(0)))
        pos = text.find("\n", start) + 1
        if not pos:
            break
    return out
