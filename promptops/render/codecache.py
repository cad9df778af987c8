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
Template *objects* are not shared: each renderer makes its own from the code, as Jinja's
bytecode cache does, so nothing one renderer's environment holds leaks into another's.
"""

from __future__ import annotations

from types import CodeType
from typing import TYPE_CHECKING

from jinja2.bccache import Bucket, BytecodeCache

if TYPE_CHECKING:
    from jinja2 import Environment, Template

_Key = tuple[str, str]  # (Jinja's key for the name, the source's checksum)


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

    def __len__(self) -> int:
        return len(self._inline) + sum(len(m.code) for m in self._modes.values())
