"""Small helpers the rule modules share."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from promptops.lint.problem import Hit
from promptops.sandbox.limits import Limits

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2")


def from_load(ctx: LintContext, code: str) -> Iterator[Hit]:
    """The problems validation found for rule ``code``, as they were positioned."""
    for p in ctx.problems:
        if p.code == code:
            yield Hit(p.path, p.line, p.col, p.message)


def package_limits(ctx: LintContext) -> Limits:
    """The request bounds the package's manifest sets (within the hard caps)."""
    manifest = ctx.package.manifest if ctx.package is not None else None
    config = manifest.limits if manifest is not None else None
    return Limits.of(config.model_dump() if config is not None else None)


def patterned(ctx: LintContext) -> Iterator[tuple[Any, int, Any]]:
    """(prompt, index, argument) of every argument with a ``pattern``."""
    for prompt in prompts(ctx):
        for i, arg in enumerate(prompt.spec.arguments):
            if arg.pattern is not None:
                yield prompt, i, arg


def prompts(ctx: LintContext) -> Any:
    return ctx.package.prompts if ctx.package is not None else ()


def prompt_sources(ctx: LintContext, prompt: Any) -> list[tuple[str, Any, str]]:
    """(path, loc or None, source) of every template a prompt renders, includes too."""
    return ctx.sources(prompt)


def argument_loc(prompt: Any, name: str) -> tuple[int, int]:
    """Where argument ``name``'s name is written (1-based line and column of the value)."""
    for i, arg in enumerate(prompt.spec.arguments):
        if arg.name == name:
            found = _block_item_name(prompt.file.text, i)
            if found is not None:
                return found
            line, col = prompt.file.position(("arguments", i, "name"))
            return int(line), int(col)
    return 1, 1


_ITEM = re.compile(r"( *)- name: *(\S.*?) *$")


def _block_item_name(text: str, index: int) -> tuple[int, int] | None:
    """The position of ``arguments[index].name`` read off the text, when the file writes
    its arguments the plain way (a top-level ``arguments:`` block whose items each start
    with ``- name: value``), else None (the caller asks the YAML marks).

    Placing a finding must not re-parse the file (issue 15): composing a whole file again
    for one argument's position cost a third of a second on 10,000 real prompts. Every
    item line at the block's item indentation must start ``- name:``, so a count of them
    is the argument's index; anything else (a flow sequence, a comment or an anchor in the
    value, another first key) falls back to the exact parse.
    """
    lines = text.split("\n")
    try:
        start = lines.index("arguments:")
    except ValueError:
        return None
    indent: str | None = None
    seen = -1
    for n in range(start + 1, len(lines)):
        line = lines[n]
        if line[:1] not in ("", " ", "-", "#") or line.startswith("---"):
            return None  # the next top-level key: fewer items than the index
        stripped = line.lstrip(" ")
        if not stripped.startswith("- "):
            continue
        lead = line[: len(line) - len(stripped)]
        if indent is None:
            indent = lead
        if lead != indent:
            continue  # a sequence nested inside an argument
        m = _ITEM.fullmatch(line)
        if m is None or m.group(2)[:1] in "&*!#|>[{" or " #" in m.group(2):
            return None
        seen += 1
        if seen == index:
            return n + 1, m.start(2) + 1
    return None

