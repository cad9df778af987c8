"""Small helpers the rule modules share."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit

TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2")


def from_load(ctx: Any, code: str) -> Iterator[Hit]:
    """Loader problems the engine classified as ``code``, as they were positioned."""
    for found, p in ctx.problems:
        if found == code:
            yield Hit(p.path, p.line, p.col, p.message)


def prompts(ctx: Any) -> Any:
    return ctx.package.prompts if ctx.package is not None else ()


def prompt_sources(ctx: Any, prompt: Any) -> list[tuple[str, Any, str]]:
    """(path, loc or None, source) of every template a prompt renders, includes too."""
    out: list[tuple[str, Any, str]] = []
    seen: set[tuple[str, Any]] = set()
    for unit in ctx.units(prompt):
        items = [(unit.path, unit.loc, unit.source)] + [
            (p, None, ctx.package.templates[p]) for p in ctx.reached(unit.path, unit.source)
        ]
        for path, loc, src in items:
            if (path, loc) not in seen:
                seen.add((path, loc))
                out.append((path, loc, src))
    return out


def argument_loc(prompt: Any, name: str) -> tuple[int, int]:
    for i, arg in enumerate(prompt.spec.arguments):
        if arg.name == name:
            line, col = prompt.file.position(("arguments", i, "name"))
            return int(line), int(col)
    return 1, 1

