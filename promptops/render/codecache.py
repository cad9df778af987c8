"""Compiled template code, shared by every renderer that renders the same source.

Compiling is nearly all of a cold render: Jinja lexes, parses, generates Python and
compiles it, about 0.4 ms a template, where rendering the compiled code takes 20 µs. Yet
the same source is compiled again and again: 5,000 prompts that open with the same
message text compile it 5,000 times, and a review compiles every unchanged prompt once
per side (BASE and HEAD hold the same text). The code depends only on the source, its
name and the environment's configuration, and :func:`promptops.sandbox.environment.environment`
varies that configuration by the whitespace mode alone (includes, imports and extends are
resolved when the template runs, never baked into its code), so code is keyed by
(whitespace mode, name, source) and reused.

A :class:`CodeCache` belongs to its caller, never to the process: a renderer without one
makes its own (one bundle's repeats compile once), and a review hands one to both sides.
Template *objects* are shared between renderers only where nothing of one renderer's
environment can reach another's renders: an inline template whose code never asks its
environment for a template (no include, import or extends: :func:`_asks`). The
environments of one whitespace mode differ in their loaders only (their templates), and
such code never reads the loader (issue 26, session 22: a review's second end made
again each text the first had made, 35 µs each, a fifth of a ``real`` render worker's
compile). Any other template each renderer makes from the code, as Jinja's bytecode
cache does, so nothing one renderer's environment holds leaks into another's.
"""

from __future__ import annotations

from types import CodeType
from typing import TYPE_CHECKING

from jinja2.bccache import Bucket, BytecodeCache

if TYPE_CHECKING:
    from jinja2 import Environment, Template

    from promptops.render.template import Compiled

_Key = tuple[str, str]  # (Jinja's key for the name, the source's checksum)
# what generated code calls to reach its environment's loader (include, import, extends)
_LOADING = frozenset({"get_template", "select_template", "get_or_select_template"})


def _asks(code: CodeType) -> bool:
    """Whether ``code`` (or a function it defines) names a method that loads a template."""
    return not _LOADING.isdisjoint(code.co_names) or any(
        _asks(c) for c in code.co_consts if isinstance(c, CodeType))


class ModeCache(BytecodeCache):
    """Jinja's hook for templates loaded by name (files, partials): code objects kept in
    memory by name and source checksum, for the environments of one whitespace mode.
    Public because the review's shape cache (review/skeleton.py) specialises it."""

    def __init__(self) -> None:
        self.code: dict[_Key, CodeType] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        found = self.code.get((bucket.key, bucket.checksum))
        if found is not None:
            bucket.code = found

    def dump_bytecode(self, bucket: Bucket) -> None:
        if bucket.code is not None:
            self.code[(bucket.key, bucket.checksum)] = bucket.code


class CodeCache:
    """Code for inline sources and loaded templates, per whitespace mode, unbounded (a
    renderer's templates are a bundle's, which the build already bounds)."""

    def __init__(self) -> None:
        self._modes: dict[str | None, ModeCache] = {}
        self._inline: dict[tuple[str | None, str], CodeType] = {}
        # inline templates ready to render that ask for no template, by (mode, source,
        # fast paths): any renderer of the mode may render them (module docstring)
        self._made: dict[tuple[str | None, str, bool], Compiled] = {}

    def loader_cache(self, whitespace: str | None) -> BytecodeCache:
        """What an environment of ``whitespace`` mode takes as its ``bytecode_cache``."""
        found = self._modes.get(whitespace)
        if found is None:
            found = self._modes[whitespace] = ModeCache()
        return found

    def from_string(self, env: Environment, whitespace: str | None, source: str) -> Template:
        """``env.from_string(source)``, compiling ``source`` only the first time any
        environment of this mode asks."""
        key = (whitespace, source)
        code = self._inline.get(key)
        if code is None:
            code = self._inline[key] = env.compile(source)
        return env.template_class.from_code(env, code, env.make_globals(None), None)

    def made(self, whitespace: str | None, source: str, *, fast: bool) -> Compiled | None:
        """The inline template another renderer of this mode made of ``source`` (with
        the fast paths or without: ``fast``), where :meth:`keep` kept it."""
        return self._made.get((whitespace, source, fast))

    def keep(self, whitespace: str | None, source: str, made: Compiled, *, fast: bool) -> None:
        """Keep a renderer's inline template of ``source`` for the others of this mode,
        when nothing it runs asks its environment for a template."""
        functions = [made.root, *made.blocks.values()]
        if not any(_asks(f.__code__) for f in functions):
            self._made[(whitespace, source, fast)] = made

    def __len__(self) -> int:
        return len(self._inline) + sum(len(m.code) for m in self._modes.values())
