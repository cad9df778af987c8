"""Serving what is committed at HEAD, and following HEAD as it moves.

``initial()`` gives the bundles of the checked-out commit(s); ``start()`` runs one
background thread that watches, for every repository involved, ``HEAD``, the ref it
names, ``packed-refs`` and the rebase folders by ``os.stat`` every 50 ms. A burst of
changes (a rebase, a pull, a script making five commits) is one change: nothing
happens until the files have been quiet for 120 ms. Then HEAD is resolved; if any
package's commit differs from the served one, every package is rebuilt (through the
cache) in that same thread and ``on_change`` gets the complete new set (new bundles are
written to the build cache right after, not before: the listeners do not wait for it). A
commit that does not build is logged and skipped: the last good set stays served until
HEAD reaches a commit that builds. While a rebase is under way nothing is rebuilt; its end
(the rebase folder disappearing, the branch ref moving) triggers one rebuild.

Only committed content is ever served: bundles are built from git objects
(``Build(dir, commit)``), never from the working tree.

Nothing of the build is loaded before HEAD first moves to a commit the cache does not
hold. An earlier version warmed up one second after start (imported the build stack and
parsed the served commit into the memo) so that the first such rebuild would re-parse
only what changed; that cost every server ~26 MB at 1,000 prompts (~100 MB at 10,000)
for a checkout most editor windows never see, doubling the memory of `--bundle`. A commit
is now rebuilt from the last bundle in proportion to what it changed (rebuild.py), and
nothing is parsed to prepare it: what its first one makes besides the imports is the base
(the tree's listing, each prompt's encoding cut from the cached file) and the lint
record, ~0.3 s at 1,000 prompts but 1.1 s of CPU at 100,000. :meth:`Follower.warm_up`
makes them ahead: a team server (``serve --http``) calls it before it listens, and a stdio
server calls it from its follower thread at start when it serves :data:`PREPARE_AT`
prompts or more, where the base is a small part of its memory and would otherwise put
the first commit over a second (docs/following.md). Smaller stdio servers stay lazy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from promptops.errors import GitError, PromptopsError
from promptops.git import refs as gitrefs
from promptops.pipeline import collector
from promptops.pipeline.memo import FileMemo
from promptops.serve.background import (
    POLL_S,
    Background,
    BuildFailed,
    Gate,
    Log,
    Notify,
    failure,
)
from promptops.serve.cache import BuildCache, restamp
from promptops.serve.catalog import check_names

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from promptops.pipeline.build import Build
    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.rebuild import Built

# A stdio server serving this many prompts or more warms up at start (Follower.warm_up)
PREPARE_AT = 20_000
# ... once its client has sent nothing for this long (Background.idle_for): run while a
# client's first requests were answered, its CPU held the GIL they waited for
WARM_IDLE_S = 0.2
QUIET_S = 0.12
class _Package:
    """A served package folder, its repository and cache (a plain class: see :class:`News`)."""

    __slots__ = ("cache", "directory", "prefix", "repo")

    def __init__(self, directory: Path, repo: gitrefs.Repo, prefix: str,
                 cache: BuildCache) -> None:  # prefix: the folder in the repository, "." at the top
        self.directory, self.repo, self.prefix, self.cache = directory, repo, prefix, cache


class Follower(Background):
    """The bundles to serve for a set of package folders, kept in step with their HEADs."""

    def __init__(self, package_dirs: list[Path], *, ref: str | None, log: Log,
                 gate: Gate | None = None, notify: Notify | None = None,
                 channel: str | None = None) -> None:
        super().__init__(log, notify)
        self._gate = gate
        self._ref = ref
        # serve --channel: follow each package's channel ref instead of HEAD (docs/channels.md)
        self._channel = channel
        # Per-file results kept across rebuilds, so a checkout re-parses only what changed.
        # Without a gate a serving process never lints: memoised files drop their parsed YAML.
        self._memo = FileMemo(keep_yaml=gate is not None)
        caches: dict[Path, BuildCache] = {}
        self._packages: list[_Package] = []
        for directory in package_dirs:
            repo, prefix = gitrefs.locate(directory)
            cache = caches.setdefault(repo.common_dir, BuildCache(
                repo.common_dir, lambda m: self._say("warning", m)))
            self._packages.append(_Package(directory.resolve(), repo, prefix, cache))
        self._watches = [gitrefs.Watch(r) for r in {p.repo: None for p in self._packages}]
        self._channel_refs = [self._channel_ref(p) for p in self._packages] if channel else []
        # Bundles built but not yet in the build cache: written once the set is served (or
        # refused), so the listeners hear of a commit without waiting for its serialisation
        # (the bytes come along when the incremental rebuild composed them)
        self._unstored: list[tuple[BuildCache, str, str, Bundle, Built | None]] = []
        self._remember: list[tuple[BuildCache, str, str, str]] = []  # trees served as cached
        # Each package's last bundle, what the next commit is rebuilt from (rebuild.py): the
        # bundle served at start (from the cache: a tree id, a bundle and its file) until
        # the first rebuild, which needs the build stack; a Built from then on
        self._last: dict[Path, Built | tuple[str, Bundle, Path | None]] = {}
        self._served: tuple[str, ...] | None = None  # the commits now served, one per package
        self._failed: tuple[str | None, ...] | None = None  # the last set that did not build
        # how each package's bundle was last made: "cached", "incremental" or "full" (what
        # tests/follow/test_incremental_rebuild.py checks; the log does not say)
        self.how: dict[Path, str] = {}
        # serve --http with tracing (tracing.py): a context manager around each rebuild
        self.traced: Callable[[tuple[str, ...]], AbstractContextManager[object]] | None = None

    # -- the served set -------------------------------------------------------------------

    def initial(self) -> list[Bundle]:
        """The bundles at HEAD (or at ``ref``) now; raises when any of them does not build."""
        commits = tuple(self._start_commit(p) for p in self._packages)
        try:
            bundles = self._build(commits)
        finally:
            self._store()
        self._served = commits
        return bundles

    def _start_commit(self, package: _Package) -> str:
        if self._channel is not None:
            ref = self._channel_refs[self._packages.index(package)]
            commit = gitrefs.rev_parse(package.repo, f"{ref}^{{commit}}")
            if commit is None:
                raise GitError(f"channel ref {ref} in {package.repo.top} names no commit")
            return commit
        if self._ref is not None:
            commit = gitrefs.rev_parse(package.repo, f"{self._ref}^{{commit}}")
            if commit is None:
                raise GitError(f"unknown revision {self._ref!r} in {package.repo.top}")
            return commit
        head = gitrefs.read_head(package.repo)
        if head.commit is None:
            raise GitError(
                f"{package.repo.top}: {head.ref or 'HEAD'} has no commits yet; "
                "`promptops serve` serves committed packages: commit it first"
            )
        return head.commit

    def _build(self, commits: tuple[str, ...]) -> list[Bundle]:
        trees = self._trees(commits)
        bundles = [self._bundle(p, c, t)
                   for p, c, t in zip(self._packages, commits, trees, strict=True)]
        check_names(bundles)  # a set that cannot be served does not build
        if self._channel is not None:  # served `_meta` says which channel (not the digest):
            # a copy, after the cache took the bundle; `channel` is no bundle key (catalog.py)
            name = self._channel.rpartition("/")[2]
            bundles = [cast("Bundle", {**b, "source": {**b["source"], "channel": name}})
                       for b in bundles]
        return bundles

    def _channel_ref(self, package: _Package) -> str:
        """The ref of this package's channel: ``PACKAGE/CHANNEL`` as given, or the one
        package having ``CHANNEL``, or (several have it) the one whose name the package
        folder holds at the channel's commit."""
        assert self._channel is not None
        refs = gitrefs.channel_refs(package.repo, self._channel)
        if len(refs) > 1:
            refs = [r for r in refs if _name_at(package, r) == r.split("/")[-2]]
        if len(refs) != 1:
            raise GitError(
                f"no channel {self._channel!r} for the package in {package.directory} "
                "(`promptops channels` lists them; promote a release with `promptops promote "
                f"VERSION --to {self._channel}`, or fetch them: `promptops channels fetch "
                "origin`)" if not refs else f"several channels match {self._channel!r}: "
                "name one as PACKAGE/CHANNEL")
        return refs[0]

    def _trees(self, commits: tuple[str, ...]) -> list[str | None]:
        """Each package's tree id at its commit (None: the folder is not there): from the
        build cache's index of a commit seen before, else one git process for all the
        packages of a repository at a commit (100 packages: one, not one each)."""
        trees = [p.cache.tree_for(c, p.prefix)
                 for p, c in zip(self._packages, commits, strict=True)]
        asked: dict[tuple[gitrefs.Repo, str], list[int]] = {}
        for i, (package, commit) in enumerate(zip(self._packages, commits, strict=True)):
            if trees[i] is None:
                asked.setdefault((package.repo, commit), []).append(i)
        for (repo, commit), which in asked.items():
            found = gitrefs.trees_of(repo, commit, [self._packages[i].prefix for i in which])
            for i in which:
                trees[i] = found[self._packages[i].prefix]
        return trees

    def _bundle(self, package: _Package, commit: str, tree: str | None) -> Bundle:
        """From the cache by tree id when possible; otherwise built from git objects."""
        cache = package.cache
        if tree is not None:
            last = self._last.get(package.directory)
            if last is not None and _tree(last) == tree:  # as served: no load, no encoding
                self._remember.append((cache, commit, package.prefix, tree))
                self.how[package.directory] = "cached"
                return cache.restamped(tree, _bundle_of(last), commit, package.prefix)
            cached = cache.load(tree)
            if cached is not None:
                self._remember.append((cache, commit, package.prefix, tree))
                self._last[package.directory] = (tree, cached, cache.file(tree))
                self.how[package.directory] = "cached"
                return restamp(cached, commit, package.prefix)
        got = self._rebuild(package, commit, tree)
        built, last = got if got is not None else (self._fresh(package, commit), None)
        bundle = built.bundle
        refused = self._gate(built) if self._gate is not None else None
        if refused is not None:  # never stored: the cache holds only what may be served
            raise PromptopsError(f"{package.directory.name} at {commit[:12]}: {refused}")
        self.how[package.directory] = "incremental" if last is not None else "full"
        if last is None:
            from promptops.pipeline.rebuild import Built

            last = Built.of(built, bundle)
        if last is not None:
            self._last[package.directory] = last
        self._unstored.append((cache, commit, package.prefix, bundle, last))
        return bundle

    def _rebuild(self, package: _Package, commit: str,
                 tree: str | None) -> tuple[Build, Built] | None:
        """The build of ``commit`` from the package's last bundle, in proportion to what
        changed (:mod:`promptops.pipeline.rebuild`); None when only a full build will do."""
        last = self._base(package)
        if last is None or tree is None:
            return None
        from promptops.pipeline.rebuild import rebuild

        try:
            return rebuild(last, package.directory, commit, tree, self._memo,
                           keep_asts=self._gate is not None)
        except Exception as exc:  # the full build decides, and words any failure
            self._log(f"incremental rebuild of {commit[:12]} failed, building it in full: "
                      f"{failure(exc)}")
            return None

    def _fresh(self, package: _Package, commit: str) -> Build:
        """A build through the memo; with a gate it keeps its template ASTs for lint (3x
        cheaper than parsing each template again: 0.6 -> 0.2 s CPU for 1,000 prompts)."""
        return _build(package.directory, commit, self._memo, keep_asts=self._gate is not None)

    def _store(self) -> None:
        """Write the bundles built since the last call into the build cache (~40 ms for a
        1,000-prompt bundle's canonical JSON, off the path from a commit to its listeners)."""
        pending, self._unstored = self._unstored, []
        remember, self._remember = self._remember, []
        trees: dict[tuple[BuildCache, str], dict[str, str]] = {}
        for cache, commit, prefix, tree in remember:  # one index write a commit and repo
            trees.setdefault((cache, commit), {})[prefix] = tree
        for (cache, commit), by_prefix in trees.items():
            cache.remember_all(commit, by_prefix)
        for cache, commit, prefix, bundle, built in pending:
            cache.store(commit, prefix, bundle, built.serialised() if built else None)
            if built is not None and built.encoded is None:  # a full build's: the next
                built.file = cache.file(built.tree)  # rebuild cuts, not encodes
        for cache in {cache: None for cache, *_ in pending}:  # bounded (cache.py), keeping
            cache.prune(self._serving(cache))  # what the next rebuilds start from
        flush = getattr(self._gate, "flush", None)  # the lint gate's cache (FollowGate)
        if flush is not None:
            flush()

    def _serving(self, cache: BuildCache) -> set[str]:
        """The trees of ``cache``'s packages that this process serves and rebuilds from."""
        lasts = [(p, self._last.get(p.directory)) for p in self._packages]
        return {_tree(last) for p, last in lasts if p.cache is cache and last is not None}

    # -- following HEAD -------------------------------------------------------------------

    def _follows(self) -> bool:
        return self._ref is None  # a fixed ref never changes: no thread then

    def built(self) -> bool:
        return any(how != "cached" for how in self.how.values())

    def _signature(self) -> tuple[object, ...]:
        if self._channel is not None:
            return tuple(gitrefs.stat(path) for p, ref in zip(self._packages, self._channel_refs,
                                                              strict=True)
                         for path in gitrefs.ref_watched(p.repo, ref))
        return tuple(w.signature() for w in self._watches)

    def _what(self) -> str:
        return "HEAD" if self._channel is None else f"the channel {self._channel!r}"

    def _heads(self) -> tuple[str | None, ...]:
        """The commit each package should serve now: its HEAD, or its channel's release."""
        if self._channel is not None:
            return tuple(gitrefs.rev_parse(p.repo, f"{ref}^{{commit}}")
                         for p, ref in zip(self._packages, self._channel_refs, strict=True))
        # HEAD once a repository, not once a package: the packages of one repository share
        # it (100 packages: 100 reads of the same two files, ~2.7 ms of the GIL at each
        # check, the first one while a client's first requests were being answered)
        commits = {w.repo: gitrefs.read_head(w.repo).commit for w in self._watches}
        return tuple(commits[p.repo] for p in self._packages)

    def _follow(self, on_change: Callable[[list[Bundle]], object]) -> None:
        # a large set's first commit would pay it (warm_up says why); before it, it makes it
        warm = self._served_prompts() >= PREPARE_AT
        last = self._signature()
        # Check once right away: HEAD may have moved between initial() and start().
        changed_at: float | None = time.monotonic() - QUIET_S
        wait = POLL_S
        while self._waited(wait, last, idle=changed_at is None and not warm):
            if warm and (self.idle_for is None or self.idle_for() >= WARM_IDLE_S):
                warm = False
                self.warm_up()
            sig = self._signature()
            now = time.monotonic()
            wait = POLL_S
            if sig != last:
                last, changed_at = sig, now
            elif changed_at is not None and now - changed_at < QUIET_S:
                # the last poll of the quiet period lands where it ends, not up to a whole
                # poll after it (a commit reached its listeners ~30 ms later otherwise)
                wait = min(POLL_S, max(0.005, changed_at + QUIET_S - now))
            elif changed_at is not None:
                changed_at = None
                try:
                    self._moved(on_change)
                except Exception:  # the follower must outlive any bug in one rebuild
                    import traceback  # deferred, like the build: only a bug needs it

                    self._say("error",
                              "internal error while following HEAD:\n" + traceback.format_exc())

    def warm_up(self) -> None:
        """Make now what the first new commit would make on its way to the listeners: the
        build stack and lint imported, each package's last bundle made the base of an
        incremental rebuild (its tree listed, each prompt's encoding cut from the cached
        file, :meth:`Built.prepare`), the lint gate's last record read and, with several
        packages, each one's :class:`~promptops.serve.cache.Stamp` made (a commit leaves
        all but one as they were: 100 packages, ~1.1 s of JSON). Nothing is
        parsed: a rebuild reads only what a commit changed. A team server calls it before
        it listens (``serve --http``: run in the follower thread, ~1 s of CPU competed with
        the first requests for the GIL, p99 17-20 ms); a stdio server from the follower
        thread once its client is idle (:data:`WARM_IDLE_S`; the same contention) when it
        serves :data:`PREPARE_AT` prompts or more, where the first commit would otherwise
        take over a second and what is made is a small part of the process's memory (the
        module docstring). A warm-up that fails changes nothing served."""
        commits = self._served
        if commits is None or not self._follows():
            return
        try:
            prompts = 0
            # what it makes lives as long as the served set: the collector's passes over it
            # while it grows free nothing (100 packages of 1,000: a 0.4 s pass, loaded, that
            # a request arriving then waited for); settled (frozen) below, as a swap is
            with collector.paused():
                for package, commit in zip(self._packages, commits, strict=True):
                    prompts += self._warm(package, commit)
            if prompts:
                self._settle()  # the base is as long-lived as the served set
                self._log(f"warmed up: the served commit's {prompts} prompts are ready to be "
                          "rebuilt in proportion to a commit")
        except Exception as exc:  # the served set came from the cache and stays served
            self._log(f"warm-up of the served commit failed (the next commit makes what it "
                      f"needs): {failure(exc)}")

    def _warm(self, package: _Package, commit: str) -> int:
        """One package's part of :meth:`warm_up`: the prompts it made ready (0: none)."""
        last = self._base(package)
        if last is not None and len(self._packages) > 1:  # what a commit leaving
            package.cache.stamp(last.tree, last.bundle)  # it as it was restamps with
        source = last.prepare(package.directory, commit) if last else None
        if last is None or source is None:
            return 0  # built at start, or warmed up already
        prepare = getattr(self._gate, "prepare", None)  # the lint gate's record
        if prepare is not None:
            from promptops.pipeline.build import Build

            prepare(Build(package.directory, commit, memo=self._memo,
                          keep_asts=True, source=source))
        return len(last.bundle["prompts"])

    def _served_prompts(self) -> int:
        return sum(len(_bundle_of(last)["prompts"]) for last in self._last.values())

    def _base(self, package: _Package) -> Built | None:
        """The package's last bundle as the base of a rebuild (made from what the start
        loaded from the cache on first need)."""
        last = self._last.get(package.directory)
        if isinstance(last, tuple):
            from promptops.pipeline.rebuild import Built

            last = self._last[package.directory] = Built(last[0], last[1], file=last[2])
        return last

    def _moved(self, on_change: Callable[[list[Bundle]], object]) -> None:
        if self._channel is None and any(gitrefs.busy(w.repo) for w in self._watches):
            return  # mid-rebase: wait for it to finish (its end changes the watched files)
        try:
            heads = self._heads()
        except PromptopsError as exc:  # damaged refs: say so once, keep what is served
            self._say("warning",
                      f"cannot read {self._what()}; still serving the last good bundles: {exc}")
            return
        if heads == self._served or heads == self._failed:
            return
        short = ", ".join((c or "no commit")[:12] for c in heads)
        if None in heads:
            self._failed = heads
            self._say("warning", f"{self._what()} has no commit ({short}); still serving the "
                      "last good bundles")
            return
        commits = tuple(c for c in heads if c is not None)
        swapped = False
        try:
            try:
                if self.traced is None:
                    bundles = self._build(commits)
                else:
                    with self.traced(commits):
                        bundles = self._build(commits)
            except Exception as exc:  # hostile content must never cost the served set
                self._failed = heads
                self._tell(BuildFailed(
                    "error", f"commit {short} does not build; still serving the last "
                    f"good bundles until a commit that builds is checked out:\n{failure(exc)}"
                ))
                return
            recovered = self._failed is not None
            self._served, self._failed = commits, None
            if recovered:
                count = sum(len(b["prompts"]) for b in bundles)
                self._say("info", f"commit {short} builds; serving its {count} prompt"
                                  f"{'s' if count != 1 else ''} again")
            # the swap makes new objects per changed prompt: a collector's pass during it
            # would walk them to free nothing; they are collected and frozen after it
            with collector.paused():
                on_change(bundles)
            swapped = True
        finally:
            self._store()
        if swapped:
            self._settle()  # after the listeners and the build cache: collector.Settler


def _tree(last: Built | tuple[str, Bundle, Path | None]) -> str:
    return last[0] if isinstance(last, tuple) else last.tree


def _bundle_of(last: Built | tuple[str, Bundle, Path | None]) -> Bundle:
    return last[1] if isinstance(last, tuple) else last.bundle


def _build(directory: Path, commit: str, memo: FileMemo, *, keep_asts: bool) -> Build:
    """A build, its module imported on first use: a start from the cache never needs it
    (pydantic, Jinja's compiler, GitPython: ~18 MB and ~200 ms)."""
    from promptops.pipeline import build

    return build.Build(directory, commit, memo=memo, keep_asts=keep_asts)


def _name_at(package: _Package, ref: str) -> str | None:
    """The package name in the manifest of ``package``'s folder at ``ref``'s commit."""
    import re

    folder = "" if package.prefix == "." else package.prefix + "/"
    text = gitrefs.show(package.repo, f"{ref}^{{commit}}:{folder}promptops.yaml") or ""
    found = re.search(r"""^name:\s*["']?([A-Za-z0-9._-]+)""", text, re.MULTILINE)
    return found.group(1) if found else None
