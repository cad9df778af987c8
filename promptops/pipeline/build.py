"""The one way in: a package folder at a revision -> source -> validated -> package -> bundle.

A :class:`Build` names what to build (a folder, and a git revision or the working tree)
and computes each stage once, on first use, as copier's ``Worker`` does with cached
properties: ``promptops build`` lints ``build.validated`` and writes ``build.bundle``
without loading twice, and ``release`` hands its one HEAD build to the lint gate, the
test gate and the tag. The per-file memo and the template index belong to the caller:
serve's follower passes the memo it keeps across rebuilds; lint passes an index that
keeps ASTs. Nothing here is process-wide; validating and bundling pause the cycle
collector while they run (:mod:`promptops.pipeline.collector` says why) and restore it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.pipeline import collector
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import CachingSource, Source, open_source

if TYPE_CHECKING:  # the stages import pydantic and Jinja only when a build needs them
    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.compiled import Compiled
    from promptops.pipeline.templates import TemplateIndex
    from promptops.pipeline.validate import Package, Validated


class Build:
    """One package at one revision (``ref`` None: the working tree), stage by stage.

    Constructing one costs nothing: lint's cached path asks only for ``source`` and never
    imports the validator. ``keep_asts`` keeps the template ASTs for lint to inspect.
    """

    def __init__(self, path: Path, ref: str | None = None, *, memo: FileMemo | None = None,
                 index: TemplateIndex | None = None, keep_asts: bool = False,
                 source: Source | None = None, compiled: Compiled | None = None) -> None:
        self.path = path
        self.compiled = compiled  # prompts another build of the same memo compiled
        self.ref = ref
        self.memo = memo if memo is not None else FileMemo()
        self.keep_asts = keep_asts
        if index is not None:
            self.__dict__["index"] = index
        if source is not None:  # already opened by the caller
            self.__dict__["source"] = (source if isinstance(source, CachingSource)
                                       else CachingSource(source))

    @cached_property
    def source(self) -> CachingSource:
        """The files: the working tree, or the commit ``ref`` names (GitError if none);
        each read once however many stages read it."""
        return CachingSource(open_source(self.path, self.ref))

    @cached_property
    def index(self) -> TemplateIndex:
        """The one template parser of this build (its include graph, and ASTs if kept)."""
        from promptops.pipeline.templates import TemplateIndex

        return TemplateIndex(self.memo, keep_asts=self.keep_asts)

    @cached_property
    def validated(self) -> Validated:
        """The package as far as it validates, and every problem, coded."""
        from promptops.pipeline.validate import validate

        with collector.paused():
            return validate(self.source, memo=self.memo, index=self.index)

    @cached_property
    def package(self) -> Package:
        """The complete package; PackageError listing every problem otherwise."""
        return self.validated.require()

    @cached_property
    def bundle(self) -> Bundle:
        """The bundle: what is served, tested and reviewed."""
        from promptops.pipeline.bundle import compile_bundle

        with collector.paused():  # one pause: a pass between the stages walked the package
            return compile_bundle(self.package, self.compiled)

    @cached_property
    def serialised(self) -> bytes:
        """The bundle file's bytes (``serialise(self.bundle)``). Asked before ``bundle``,
        both come from one encoding of the canonical JSON (``compile_serialised``)."""
        from promptops.pipeline.bundle import compile_serialised, serialise

        if "bundle" in self.__dict__:
            return serialise(self.bundle)
        with collector.paused():
            bundle, data = compile_serialised(self.package)
        self.__dict__["bundle"] = bundle
        return data
