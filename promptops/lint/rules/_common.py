"""Small helpers the rule modules share."""

from __future__ import annotations

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
    for i, arg in enumerate(prompt.spec.arguments):
        if arg.name == name:
            line, col = prompt.file.position(("arguments", i, "name"))
            return int(line), int(col)
    return 1, 1

