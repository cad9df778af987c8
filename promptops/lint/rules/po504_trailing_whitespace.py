"""Trailing spaces or tabs that reach the rendered prompt.

Why: invisible in review, yet sent to the model, and noise in every diff. Only whitespace
the renderer outputs is reported (Jinja's lexer decides, configured as the renderer is):
an indentation-only blank line of a ``text: |`` block, spaces before ``{%-``, inside a
comment or after a YAML key never reach the model and are not findings. A run of
template is one finding. ``--unsafe-fixes`` removes it: removing text the model
receives changes the prompt, so plain ``--fix`` refuses (its proof renders every case).

Measured on the real-prompt corpus: 16/16 findings real (100%).

Fails::

    text: |
      Summarise this.␠␠

Passes::

    text: |
      Summarise this.
      ␠␠
      (an indentation-only line: YAML drops it)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._rendered import (
    file_position,
    runs,
    template_sources,
    trailing_lines,
    verbatim_files,
)
from promptops.pipeline.lines import split_line

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO504", "trailing-whitespace", "warning", "raw"

_END = re.compile(r"[ \t]+(?=\r?\n)|[ \t]+\Z")


def check(ctx: LintContext) -> Iterator[Hit]:
    for path, loc, source in template_sources(ctx):
        found = trailing_lines(ctx, source)
        if not found:
            continue
        first = min(found)
        line, col = file_position(ctx, path, loc, first, split_line(source, first - 1) or "")
        groups = runs(found)
        more = ""
        if len(found) > 1:
            shown = ", ".join(f"+{a - first}" if a == b else f"+{a - first}..+{b - first}"
                              for a, b in groups[1:6])
            more = f" (here and {len(found) - 1} more line{'s' if len(found) > 2 else ''}"
            more += f": {shown}{', ...' if len(groups) > 6 else ''})" if shown else ")"
        yield Hit(path, line, col, f"trailing whitespace reaches the rendered prompt{more}")
    for path, text in verbatim_files(ctx):
        lines = [n for n, line in enumerate(text.split("\n"), 1)
                 if line.rstrip("\r") != line.rstrip("\r").rstrip(" \t")]
        if lines:
            raw = text.split("\n")[lines[0] - 1].rstrip("\r")
            more = f" (and {len(lines) - 1} more line{'s' if len(lines) > 2 else ''})" \
                if len(lines) > 1 else ""
            yield Hit(path, lines[0], len(raw.rstrip(" \t")) + 1, f"trailing whitespace{more}")


def fix(text: str) -> str:
    """Every line's trailing whitespace removed (the proof decides whether that is safe)."""
    return _END.sub("", text)
