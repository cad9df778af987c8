"""What of a template's source text reaches the rendered prompt, line by line.

The hygiene rules used to judge raw file lines, so whitespace that YAML or Jinja throws
away (an indentation-only blank line of a ``text: |`` block, a space before ``{%-``, a
comment) was reported as if the model saw it: half of all findings on real prompts. Jinja's
own lexer, configured exactly as the renderer is (``trim_blocks``, ``lstrip_blocks``, ``-``
and ``+`` markers), yields the literal text that is output; these helpers find lines in it
and map them back to the file, so a rule reports only what reaches the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from promptops.lint.rules._common import prompt_sources, prompts
from promptops.pipeline.lines import split_line

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


_TRAILING = re.compile(r"[ \t]+(?=\n)|[ \t]+\Z")


def may_trail(source: str) -> bool:
    """Whether ``source`` holds a space or tab before a line end (``\\r`` or ``\\n``) or
    at its end. Lexing is most of what these rules cost (a template is lexed again after
    validation parsed it), and most templates have no whitespace at a line's end and no
    tab at all. The lexer's data tokens are pieces of the source (trim_blocks and
    lstrip_blocks only remove whitespace; line ends are normalised to \\n), so output with
    trailing whitespace needs one of these, and a tab needs a tab. Substring tests, not
    the regular expression ``[ \\t](?:[\\r\\n]|\\Z)``: the engine tried its class at every
    character (150 MB/s; a substring search skips), and where no text repeats it was a
    quarter of PO504 (issue 26, session 16; ``tests/lint/test_speed_equivalence.py`` holds
    the two equal)."""
    return (" \n" in source or source.endswith((" ", "\t"))
            or ("\t" in source and "\t\n" in source)
            or ("\r" in source and (" \r" in source or "\t\r" in source)))


def template_sources(ctx: LintContext) -> Iterator[tuple[str, Any, str]]:
    """(path, loc or None, source) of every distinct template the prompts render."""
    seen: set[tuple[str, Any]] = set()
    for prompt in prompts(ctx):
        for path, loc, source in prompt_sources(ctx, prompt):
            if (path, loc) not in seen:
                seen.add((path, loc))
                yield path, loc, source


def verbatim_files(ctx: LintContext) -> Iterator[tuple[str, str]]:
    """(path, text) of the text files served as they are (resources, notes): not YAML, whose
    prompt text is judged through its template scalars, and not templates, judged by the
    lexer. Their every byte can reach a client, so their raw lines are judged."""
    templates = ctx.package.templates if ctx.package is not None else {}
    for path in ctx.text_files:
        if path.endswith((".yaml", ".yml")) or path in templates:
            continue
        text = ctx.text(path)
        if text:
            yield path, text


def output_data(ctx: LintContext, source: str) -> list[tuple[int, str, bool]]:
    """(template line where it starts, text, last token?) of each literal piece of output.

    A template that does not lex yields nothing (PO103 reports it).
    """
    return ctx.output_pieces(source)


def trailing_lines(ctx: LintContext, source: str) -> list[int]:
    """Template lines whose trailing whitespace is output (once per distinct source: the
    answer is the source's alone; a caller must not change the list)."""
    return ctx.memo("trailing", source, lambda text: _trailing_lines(ctx, text))


def _trailing_lines(ctx: LintContext, source: str) -> list[int]:
    out: list[int] = []
    if not may_trail(source):
        return out  # nothing to find: no lexing
    for lineno, data, final in output_data(ctx, source):
        out += trailing_in(data, final, lineno)
    return out


def trailing_in(data: str, final: bool, lineno: int = 1) -> list[int]:
    """The lines (``lineno`` for the first) of one piece of output whose whitespace at the
    end is output: a space or tab before a line end, or at the piece's end when it is the
    last piece (otherwise a tag or an expression follows on the same line). What
    ``_TRAILING.finditer`` finds, line by line, without trying a run of whitespace at every
    space of the text: that was a third of PO504 where no text repeats (issue 26, session 9;
    ``tests/lint/test_speed_equivalence.py`` holds the two equal). The line ends are found
    by substring search (session 16: the regular expression ``[ \\t]\\n`` tried its class at
    every character)."""
    out: list[int] = []
    line, at = lineno, 0
    for start in _ends(data):
        line += data.count("\n", at, start)
        at = start
        out.append(line)
    if final and data.endswith((" ", "\t")):
        out.append(line + data.count("\n", at))
    return out


def _ends(data: str) -> list[int]:
    """Where each space or tab before a ``\\n`` of ``data`` is, in order."""
    found: list[int] = []
    for pair in (" \n", "\t\n") if "\t" in data else (" \n",):
        at = data.find(pair)
        while at >= 0:
            found.append(at)
            at = data.find(pair, at + 2)
    found.sort()
    return found


def indent_tab_lines(ctx: LintContext, source: str) -> list[int]:
    """Template lines whose output starts with a tab: a tab used as indentation.

    A tab after other text on the line (a column separator in a table of data) is content
    the author meant, not indentation. Once per distinct source (a caller must not change
    the list).
    """
    if "\t" not in source:
        return []  # nothing to find: no lexing
    return ctx.memo("indent-tab", source, lambda text: _indent_tab_lines(ctx, text))


def _indent_tab_lines(ctx: LintContext, source: str) -> list[int]:
    if "\t" not in source:
        return []  # nothing to find: no lexing
    tokens = ctx.tokens(source)
    out: list[int] = []
    at_start = True
    for lineno, kind, value in tokens:
        if kind == "data":
            for i, piece in enumerate(value.split("\n")):
                if (i > 0 or at_start) and piece.lstrip(" ").startswith("\t"):
                    out.append(lineno + i)
        if value:
            at_start = value.endswith("\n")
    return out


def file_position(ctx: LintContext, path: str, loc: Any, lineno: int,
                  line_text: str) -> tuple[int, int]:
    """File line and column of the end of template line ``lineno``'s visible text."""
    line, col = ctx.locate(path, loc, lineno, "")
    found = split_line(ctx.text(path) or "", line - 1)
    if found is not None:
        visible = found.rstrip(" \t\r")
        if line_text and visible.endswith(line_text.rstrip(" \t")):
            return line, len(visible) + 1
    return line, col


def runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive line numbers grouped: [3, 4, 5, 9] -> [(3, 5), (9, 9)]."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out
