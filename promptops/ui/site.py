"""What the UI shows: the packages under a folder, built once per revision, and a search index.

A :class:`Site` holds one :class:`Shelf` per package folder: its bundle (HEAD, or the
working tree with ``worktree``), the :class:`~promptops.render.renderer.Renderer` over it
(the one `promptops render` and ``prompts/get`` use) and the catalog rows with a
lower-cased haystack each, so a search over 10,000 prompts is one substring scan
(a few milliseconds) and never a rebuild. Other revisions (compare) are built on demand
and the last few kept, keyed by the commit they resolve to.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.errors import PromptopsError, UsageError
from promptops.render.renderer import Renderer

if TYPE_CHECKING:
    from promptops.lint.problem import Finding
    from promptops.pipeline.build import Build
    from promptops.pipeline.bundle_types import Bundle, Prompt
    from promptops.pipeline.memo import FileMemo
    from promptops.pipeline.source import Source
    from promptops.testing.cases import Case
    from promptops.testing.runner import Outcome

MANIFEST = "promptops.yaml"
MAX_DEPTH = 4  # how deep below DIR packages are looked for
_SKIP = {"node_modules", "__pycache__", "site-packages", "dist", "build"}
# A revision a person may type: git's ref names, abbreviated ids, tags like name@1.2.0,
# ancestry suffixes. Never an option (no leading '-'), bounded in length.
REF = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./@^~{}+-]{0,199}")
KEPT_REVISIONS = 8
MAX_CHANNELS = 20  # per package shown (`promptops channels` lists them all)


@dataclass(frozen=True)
class Channel:
    """A release channel of a package: the release tag it holds (None: its pointer is no
    tag, as a damaged ref would be), that tag's version, and the revision compare takes."""

    name: str
    release: str | None
    version: str | None
    revision: str  # PACKAGE/CHANNEL: what History.commit resolves


@dataclass(frozen=True)
class Row:
    """One prompt as the catalog lists it."""

    package: str
    name: str
    title: str
    description: str
    version: str
    arguments: tuple[str, ...]
    tags: tuple[str, ...]
    haystack: str = field(repr=False)


@dataclass
class Shelf:
    """One package folder at the served revision: its bundle, or why it has none."""

    folder: Path | None  # None: a bundle handed in (serve --bundle), no git history
    rel: str  # the folder as the URL names it (relative to the site's root)
    bundle: Bundle | None = None
    renderer: Renderer | None = None
    error: str | None = None
    source: Source | None = None  # the files it was built from (compare's source diff)
    build: Build | None = field(default=None, repr=False)  # what lint reads (health)
    _findings: list[Finding] | None = field(default=None, repr=False)
    _lint_error: str | None = field(default=None, repr=False)
    _tests: dict[str, list[tuple[Case, Outcome]] | str] = field(default_factory=dict,
                                                                repr=False)
    rows: list[Row] = field(default_factory=list)
    hays: list[str] = field(default_factory=list)  # rows[i].haystack, for the search loop

    @property
    def name(self) -> str:
        return self.bundle["package"]["name"] if self.bundle else self.rel

    def findings(self, prompt: Prompt) -> list[Finding] | str:
        """Lint's findings on the prompt's file and the files its messages name (the
        package linted once, on first ask, with the manifest's settings and no cache
        written: the UI writes nothing); or why lint could not run."""
        if self.build is None:
            return "lint needs the package folder (this package was served from a bundle)"
        if self._findings is None and self._lint_error is None:
            from promptops.lint.runner import Options, lint_package

            try:
                self._findings = lint_package(self.build, Options(use_cache=False)).findings
            except PromptopsError as exc:
                self._lint_error = str(exc)
        if self._findings is None:
            return self._lint_error or "lint did not run"
        paths = {prompt["source"]}
        for m in prompt["messages"]:
            paths.update(p for p in (m.get("template"), m.get("file")) if p)
        return [f for f in self._findings if f.path in paths]


    def tests(self, prompt: Prompt) -> list[tuple[Case, Outcome]] | str:
        """The package's test cases for the prompt (its test files' cases, then its smoke
        case), each with its outcome from `promptops test`'s own runner; or why they could
        not run. Run once per build on first ask, and read-only: a snapshot the CLI would
        write is reported, never written (the UI writes nothing)."""
        if self.build is None:
            return "tests need the package folder (this package was served from a bundle)"
        name = prompt["name"]
        found = self._tests.get(name)
        if found is None:
            found = self._run_tests(self.build, name)
            self._tests[name] = found
        return found

    @staticmethod
    def _run_tests(build: Build, name: str) -> list[tuple[Case, Outcome]] | str:
        from promptops.testing import snapshots
        from promptops.testing.runner import SnapshotPolicy, run_cases
        from promptops.testing.suite import all_cases

        try:
            source, package, bundle = build.source, build.package, build.bundle
            chosen = [c for c in all_cases(package, source, bundle) if c.prompt == name]
            policy = SnapshotPolicy(
                stored=snapshots.stored(source, snapshots.snapshot_files(package.files),
                                        chosen),
                update=False, writable=build.ref is None, ci=False)
            return list(zip(chosen, run_cases(bundle, chosen, policy, 1), strict=True))
        except PromptopsError as exc:
            return str(exc)


def find_packages(root: Path) -> list[Path]:
    """``root`` itself when it is a package, else the package folders below it (sorted)."""
    root = root.resolve()
    if (root / MANIFEST).is_file():
        return [root]
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder; pass a package folder")
    found: list[Path] = []
    base = len(root.parts)
    for dirpath, dirnames, filenames in os.walk(root):
        depth = len(Path(dirpath).parts) - base
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP
                             and depth < MAX_DEPTH)
        if MANIFEST in filenames:
            found.append(Path(dirpath))
            dirnames[:] = []  # a package's own folders hold no packages
    if not found:
        from promptops.pipeline.source import find_package

        return [find_package(root)]  # the nearest above, or its clear error
    return found


def _row(package: str, version: str, p: Prompt) -> Row:
    args = tuple(a["name"] for a in p["arguments"])
    meta = p.get("metadata") or {}
    tags_value = meta.get("tags") if isinstance(meta, dict) else None
    tags = tuple(str(t) for t in tags_value) if isinstance(tags_value, list) else ()
    title = p.get("title") or ""
    description = p.get("description") or ""
    hay = "\n".join((package, p["name"], title, description, " ".join(args), " ".join(tags)))
    return Row(package, p["name"], title, description, version, args, tags, hay.lower())


def shelf_of(bundle: Bundle, folder: Path | None = None, rel: str = "") -> Shelf:
    """The shelf of a built bundle: its renderer and catalog rows."""
    shelf = Shelf(folder, rel, bundle=bundle, renderer=Renderer(bundle))
    pkg = bundle["package"]
    shelf.rows = [_row(pkg["name"], pkg["version"], p) for p in bundle["prompts"]]
    shelf.hays = [r.haystack for r in shelf.rows]
    return shelf


def build_shelf(folder: Path, rel: str, ref: str | None, memo: FileMemo | None = None
                ) -> Shelf:
    """The shelf of one package at ``ref`` (None: the working tree); a package that does
    not build is a shelf with its error, so one broken package hides no other."""
    from promptops.pipeline.build import Build

    build = Build(folder, ref, memo=memo)
    try:
        bundle = build.bundle
    except PromptopsError as exc:
        return Shelf(folder, rel, error=str(exc))
    shelf = shelf_of(bundle, folder, rel)
    shelf.source = build.source
    shelf.build = build
    return shelf


def _head(folder: Path) -> str | None:
    """The commit HEAD names in the repository holding ``folder`` (None: none yet)."""
    from promptops.git.history import History

    try:
        return History.open(folder, "HEAD mode reads git").commit("HEAD")
    except PromptopsError:
        return None


class Site:
    """The packages the UI serves; :meth:`reload` rebuilds them (worktree saves).

    ``root`` None: a site over bundles built elsewhere (a server that mounts the UI hands
    its bundles to :meth:`swap` on every reload); compare then has no history to read."""

    def __init__(self, root: Path | None, *, worktree: bool = False,
                 bundles: Sequence[Bundle] = ()) -> None:
        self.root = root.resolve() if root is not None else None
        self.worktree = worktree
        self.folders = find_packages(self.root) if self.root is not None else []
        self.generation = 0
        self._lock = threading.Lock()
        self._revisions: OrderedDict[tuple[str, str], Shelf] = OrderedDict()
        self._views: dict[tuple[str, ...], dict[str, frozenset[str]]] = {}
        self.shelves: dict[str, Shelf] = {}
        # per folder, kept across rebuilds (as serve --worktree keeps its own): a save
        # re-parses the files it changed, not the package
        self._memos: dict[Path, FileMemo] = {}
        self._heads: dict[Path, str | None] = {}  # HEAD mode: the commit each was built at
        if self.root is not None:
            self.reload()
        else:
            self.swap(bundles)

    @property
    def live(self) -> bool:
        """Whether an open page should reload itself when the site is rebuilt: a site
        over package folders (saves, or new commits); not one over handed-in bundles."""
        return self.root is not None

    def head_moved(self) -> bool:
        """HEAD mode: whether any package's HEAD is another commit than the one it was
        built from (a commit, checkout or pull since); then :meth:`reload` picks it up."""
        if self.root is None or self.worktree:
            return False
        return any(_head(folder) != seen for folder, seen in list(self._heads.items()))

    def swap(self, bundles: Sequence[Bundle]) -> None:
        """Serve these bundles from now on (by package name)."""
        self._install({b["package"]["name"]: shelf_of(b) for b in bundles})

    def _install(self, shelves: dict[str, Shelf]) -> None:
        with self._lock:
            self.shelves = shelves
            self._views = {}
            self.generation += 1

    def _rel(self, folder: Path) -> str:
        assert self.root is not None
        return folder.relative_to(self.root).as_posix() if folder != self.root else ""

    def reload(self) -> None:
        """Rebuild every package folder (nothing to do for a site over bundles)."""
        if self.root is None:
            return
        shelves: dict[str, Shelf] = {}
        from promptops.pipeline.memo import FileMemo

        if not self.worktree:  # read before building: a commit during the build shows next
            self._heads = {folder: _head(folder) for folder in self.folders}
        for folder in self.folders:
            memo = self._memos.setdefault(folder, FileMemo())
            shelf = build_shelf(folder, self._rel(folder), None if self.worktree else "HEAD",
                                memo)
            key = shelf.name
            if key in shelves:  # two folders declaring one name: keep both, by folder
                key = f"{key} ({shelf.rel})"
            shelves[key] = shelf
        self._install(shelves)

    def view(self, see: tuple[str, ...] | None) -> dict[str, frozenset[str]] | None:
        """What a caller with visibility ``see`` (serve's ``PACKAGE`` or
        ``PACKAGE/PROMPT-GLOB`` patterns) may see: package key -> prompt names; None for
        everything. The rule is serve's own (:func:`promptops.serve.views.visible`), so a
        team sees in the UI exactly what it sees over MCP."""
        if see is None:
            return None
        from promptops.serve.auth import EVERYTHING
        from promptops.serve.views import visible

        if see == EVERYTHING:
            return None
        found = self._views.get(see)
        if found is None:
            found = {}
            for key, shelf in self.shelves.items():
                cut = visible(shelf.bundle, see) if shelf.bundle is not None else None
                if cut is not None:
                    found[key] = frozenset(p["name"] for p in cut["prompts"])
            if len(self._views) < 256:
                self._views[see] = found
        return found

    def shelf(self, package: str) -> Shelf | None:
        return self.shelves.get(package)

    def search(self, query: str, package: str | None = None, limit: int = 100,
               offset: int = 0, see: tuple[str, ...] | None = None) -> tuple[int, list[Row]]:
        """Rows whose text holds every word of ``query`` (case-insensitive), in
        package then prompt order: (how many match, the ``limit`` from ``offset``);
        only what ``see`` allows (:meth:`view`)."""
        words = query.lower().split()[:16]
        shelves = self.shelves
        view = self.view(see)
        total = 0
        out: list[Row] = []
        for key in sorted(shelves):
            if package and key != package:
                continue
            if view is not None and key not in view:
                continue
            rows = shelves[key].rows
            hays = shelves[key].hays
            hits: Sequence[int] = range(len(rows))
            if view is not None:
                allowed = view[key]
                hits = [i for i in hits if rows[i].name in allowed]
            for w in words:  # one list comprehension per word: ~0.3 µs a row
                hits = [i for i in hits if w in hays[i]]
            start = max(0, offset - total)
            out.extend(rows[i] for i in hits[start:start + limit - len(out)])
            total += len(hits)
        return total, out

    def revision(self, package: str, ref: str) -> Shelf:
        """The package ``package`` at git revision ``ref``, built once and kept a while.
        ``ref`` must look like a revision (UsageError otherwise): it reaches git."""
        shelf = self.shelves.get(package)
        if shelf is None:
            raise UsageError(f"no package {package!r}")
        if not REF.fullmatch(ref):
            raise UsageError(f"not a git revision: {ref!r}")
        if shelf.folder is None:
            raise UsageError(f"package {package!r} is served from a bundle: it has no git "
                             "history to compare")
        from promptops.git.history import History

        try:
            history = History.open(shelf.folder, "compare reads git history: commit the "
                                                 "package first")
            # History.commit: what `promptops diff` resolves, so a channel name
            # (``production`` or ``PACKAGE/production``) is a revision here too
            commit = history.commit(ref)
        except PromptopsError:
            raise
        except Exception:  # BadName, ValueError: what git cannot resolve
            raise UsageError(f"unknown revision {ref!r}") from None
        key = (package, commit)
        with self._lock:
            hit = self._revisions.get(key)
            if hit is not None:
                self._revisions.move_to_end(key)
                return hit
        built = build_shelf(shelf.folder, shelf.rel, commit)
        with self._lock:
            self._revisions[key] = built
            while len(self._revisions) > KEPT_REVISIONS:
                self._revisions.popitem(last=False)
        return built

    def revisions(self, package: str) -> list[str]:
        """Names to offer for compare: HEAD, the package's release tags (newest first),
        then its channels as ``PACKAGE/CHANNEL`` (the form no other package's channel
        of the same name makes ambiguous)."""
        shelf = self.shelves.get(package)
        if shelf is None or shelf.bundle is None or shelf.folder is None:
            return ["HEAD"]
        try:
            from promptops.versioning.history import open_repo, releases

            tags = [r.tag for r in reversed(releases(open_repo(shelf.folder),
                                                     shelf.bundle["package"]["name"]))]
        except PromptopsError:
            return []
        return ["HEAD", *tags, *(c.revision for c in self.channels(package))]

    def channels(self, package: str) -> list[Channel]:
        """The package's release channels and the release each holds, read from the
        repository's refs on each ask (a promote moves a channel, not HEAD: nothing
        cached could tell); none for a package served from a bundle, and none when git
        cannot read them (the page shows the rest)."""
        shelf = self.shelves.get(package)
        if shelf is None or shelf.bundle is None or shelf.folder is None:
            return []
        name = shelf.bundle["package"]["name"]
        from promptops.git.channels import Channels

        try:
            chans = Channels.open(shelf.folder)
            states = [s for s in chans.all() if s.package == name and s.pointer is not None]
            out = []
            for state in states[:MAX_CHANNELS]:
                assert state.pointer is not None
                tag = chans.tag_name(state.pointer)
                version = None
                if tag is not None:
                    owner, sep, rest = tag.rpartition("@")
                    version = rest if sep and owner == name and rest else None
                out.append(Channel(state.channel, tag, version, f"{name}/{state.channel}"))
        except PromptopsError:
            return []
        return out
