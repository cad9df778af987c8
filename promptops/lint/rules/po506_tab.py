"""A tab indents a line of the rendered prompt.

Why: a tab renders differently in every viewer, so indentation a reviewer sees is not the
indentation the model gets; and YAML forbids tabs for indentation, so a block that mixes
them is one edit away from not loading. Use spaces. Only tabs that reach the rendered text
as indentation are reported, once per template: a tab after text on its line (columns of a
table of data) is content the author meant. A text file served as it is (a resource) has
no template to tell data from layout: its first tab is reported. Not fixed automatically:
the right number of spaces depends on intent.

Measured on the real-prompt corpus: 1/1 findings real (100%).

Fails::

    template: "\\tStep one\\n\\tStep two"

Passes::

    template: "code\\tmarket\\nUS\\tNYSE"   (tabs between columns of data)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._rendered import (
    file_position,
    indent_tab_lines,
    template_sources,
    verbatim_files,
)
from promptops.pipeline.lines import split_line

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO506", "tab", "warning", "raw"


def check(ctx: LintContext) -> Iterator[Hit]:
    for path, loc, source in template_sources(ctx):
        found = indent_tab_lines(ctx, source)
        if not found:
            continue
        line, col = file_position(ctx, path, loc, found[0], "")
        more = f" (and {len(found) - 1} more line{'s' if len(found) > 2 else ''})" \
            if len(found) > 1 else ""
        row = split_line(ctx.text(path) or "", line - 1)
        at = row.find("\t") if row is not None else -1
        yield Hit(path, line, at + 1 if at >= 0 else col,
                  f"a tab indents the rendered text{more}; use spaces")
    for path, text in verbatim_files(ctx):
        for n, raw in enumerate(text.split("\n"), 1):
            at = raw.rstrip(" \t\r").find("\t")  # trailing tabs are PO504's
            if at >= 0:
                yield Hit(path, n, at + 1, "tab character; use spaces")
                break
