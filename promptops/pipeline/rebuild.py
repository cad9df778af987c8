"""A commit's bundle from the last one built: work proportional to the change.

``promptops serve`` follows HEAD: every commit is rebuilt. A full build reads, parses and
compiles every file, so a commit touching one prompt of 100,000 cost a full build
(docs/following.md). A bundle is a function of the package folder's tree, and most of
it of single files: an unchanged prompt file compiles to the same bundle entry whatever
else changed, as long as the manifest and the media types of the files it names did not
change. :func:`rebuild` therefore asks git which files differ between the last tree built
and the new one (one ``git diff-tree``, whose cost follows the change), validates and
compiles only the changed prompt files (and the templates they or the changed templates
reach), and takes everything else from the last bundle; the digest is hashed over the
same canonical bytes, composed from each prompt's kept encoding.

It gives exactly the bundle a full build gives (tests/follow/test_incremental_rebuild.py
compares them byte for byte after a series of commits), or None, and the caller builds in
full. A removed prompt file, or an edited prompt or template that names fewer templates
or files than before, is rebuilt here too: what it no longer reaches leaves the bundle
unless something else still reaches it, which :mod:`promptops.pipeline.reach` finds out
for those few names (who reaches what is not kept). None when exactness would need more:
the manifest changed; a template or named file was removed; a file named by a prompt
changed its media type; a symlink or submodule is involved; the search for who still
reaches a dropped name gave up; or any problem at all (a full build reports problems with
their positions, and a commit that does not build keeps the last good bundle served).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from promptops.git.objects import Change, Entry, diff_trees, read_batch
from promptops.pipeline import collector
from promptops.pipeline.bundle import (
    canonical,
    canonical_body,
    compile_prompt,
    digest_of_body,
    resource,
    serialised_from_body,
)
from promptops.pipeline.source import MANIFEST, GitSource, Origin, names_git
from promptops.pipeline.validate import Some, is_prompt_file, validate_some

if TYPE_CHECKING:
    from collections.abc import Mapping

    from promptops.pipeline.build import Build
    from promptops.pipeline.bundle_types import Bundle, Prompt, Resource
    from promptops.pipeline.memo import FileMemo
    from promptops.pipeline.validate import PromptDef

_SYMLINK, _GITLINK = 0o120000, 0o160000
V = TypeVar("V")


@dataclass
class Built:
    """A package's last bundle and what the next :func:`rebuild` starts from.

    ``entries`` (the tree's files) is listed on first need and then patched; ``encoded``
    (each prompt's canonical JSON, in the bundle's order), ``names`` (the prompts' names,
    in that order) and ``paths`` (prompt file -> name) are made on first need and then
    patched; ``body`` is the bundle's canonical JSON in parts, when it was composed here
    (the build cache writes it without encoding the bundle again)."""

    tree: str
    bundle: Bundle
    entries: dict[str, Entry] | None = None
    encoded: list[bytes] | None = None
    body: list[bytes] | None = None
    file: Path | None = None  # where the bundle's canonical JSON is (the build cache)
    names: list[str] | None = None
    paths: dict[str, str] | None = None
    # the prompt files whose encoding holds a backslash of the text or adjacent literals
    # (reach.suspects: what a removal's search validates whatever it looks for), once known
    suspects: set[str] | None = None

    def serialised(self) -> bytes | None:
        """The bundle's file (``serialise``), once, if it was composed here: made when
        the build cache writes it, after the commit reached the clients."""
        body, self.body = self.body, None
        return None if body is None else serialised_from_body(body, self.bundle["digest"])

    @classmethod
    def of(cls, build: Build, bundle: Bundle) -> Built | None:
        """A full build (of a commit) and its bundle as the base of the next rebuild."""
        tree = bundle["source"].get("tree")
        inner = build.source.inner
        if not isinstance(tree, str) or not isinstance(inner, GitSource):
            return None
        return cls(tree, bundle, inner.entries())

    def prepare(self, directory: Path, commit: str) -> GitSource | None:
        """Make now what the next :func:`rebuild` would make first (``commit`` is the one
        this bundle was served for): the tree's listing, each prompt's encoding and the
        name tables. A start from the build cache knows none of them, and at 100,000
        prompts they were most of what its first commit cost beyond the imports (serve's
        warm-up, docs/following.md). Returns the commit's source, which knows the listing
        and reads only the files asked for (the lint gate reads its manifest: a source's
        first read would otherwise read every blob); None when nothing was left to make."""
        if self.entries is not None and self.encoded is not None and self.names is not None:
            return None
        source = GitSource(directory, commit)
        if source.tree != self.tree:
            return None
        if self.entries is None:
            self.entries = source.entries()
        source.know(self.entries)
        self.suspected()
        return source

    def suspected(self) -> set[str]:
        """:attr:`suspects`, found now if not known (three searches of every encoding)."""
        if self.suspects is None:
            from promptops.pipeline import reach

            encoded, prompts = self.prompts_encoded(), self.bundle["prompts"]
            self.suspects = {prompts[k]["source"] for k in reach.suspects(encoded)}
        self.name_tables()
        return self.suspects

    def name_tables(self) -> tuple[list[str], dict[str, str]]:
        """The prompts' names in the bundle's order, and prompt file -> name."""
        if self.names is None or self.paths is None:
            self.names = [p["name"] for p in self.bundle["prompts"]]
            self.paths = {p["source"]: p["name"] for p in self.bundle["prompts"]}
        return self.names, self.paths

    def prompts_encoded(self) -> list[bytes]:
        """Each prompt's canonical JSON: cut from the bundle's file when there is one (one
        read and one split, instead of encoding 100,000 prompts), else encoded."""
        if self.encoded is None:
            prompts = self.bundle["prompts"]
            self.encoded = _cut(self.file, len(prompts)) if self.file is not None else None
            if self.encoded is None:
                self.encoded = [canonical(p) for p in prompts]
        return self.encoded


_FIRST = b'{"arguments":['  # every prompt's first member ("arguments" sorts first, always there)
_BETWEEN = b'},{"arguments":['  # where one prompt ends and the next begins


def _cut(file: Path, count: int) -> list[bytes] | None:
    """The canonical JSON of each of the ``count`` prompts of the bundle file ``file``.

    In canonical JSON a quote inside a string is escaped, so ``"prompts":[`` first opens
    the prompts array and ``],"resources":{`` last closes it (only strings follow it), and
    each prompt but the first begins at ``},{"arguments":[``. That text can also occur
    inside a prompt (a list of objects in its metadata), which would cut it in two:
    exactly ``count`` pieces proves it did not. None when the file is gone, is not laid out
    so, or holds another number of prompts: then each prompt is encoded. Each piece is one
    slice of the file (a split, then the pieces' ends put back, copied 68 MB twice at
    100,000 prompts: 0.2 s of the first commit of a session, 0.07 s so)."""
    try:
        data = file.read_bytes()
    except OSError:
        return None
    start = data.find(b',"prompts":[') + 12
    end = data.rfind(b'],"resources":{')
    if start < 12 or end < start or not data.startswith(b'{"digest":'):
        return None
    if count == 0 or start == end:
        return [] if count == 0 and start == end else None
    if not data.startswith(_FIRST, start):
        return None
    pieces: list[bytes] = []
    find, pos = data.find, start
    while len(pieces) < count:
        at = find(_BETWEEN, pos, end)
        if at < 0:
            break
        pieces.append(data[pos : at + 1])
        pos = at + 2
    pieces.append(data[pos:end])
    return pieces if len(pieces) == count else None


def rebuild(last: Built, directory: Path, commit: str, tree: str, memo: FileMemo, *,
            keep_asts: bool) -> tuple[Build, Built] | None:
    """The build of ``commit`` (whose package tree is ``tree``) from ``last``, its bundle
    already made, and the state the next rebuild starts from; None when only a full build
    can give it exactly (the module docstring lists when)."""
    with collector.paused():
        return _rebuild(last, directory, commit, tree, memo, keep_asts=keep_asts)


def _rebuild(last: Built, directory: Path, commit: str, tree: str, memo: FileMemo, *,
             keep_asts: bool) -> tuple[Build, Built] | None:
    from promptops.pipeline.build import Build

    source = GitSource(directory, commit)
    if source.tree != tree:
        return None
    git_dir = source.history.git_dir
    changes = [c for c in diff_trees(git_dir, last.tree, tree) if not names_git(c.path)]
    old = last.bundle
    kinds = _sort(changes, old)
    if kinds is None:
        return None
    prompts_changed, templates_changed, resources_changed, removed = kinds
    # the blobs of both sides of the change in one read (the old side: what an edit named)
    blobs = read_batch(git_dir, {c.new_sha for c in changes if c.new_mode}
                       | {c.old_sha for c in changes if c.old_mode and c.path in prompts_changed})
    entries = _files(last, source, changes, blobs)
    if entries is None:
        return None
    build = Build(directory, commit, memo=memo, keep_asts=keep_asts, source=source)
    files = build.source
    some = validate_some(files, [p for p in prompts_changed if p not in removed],
                         templates_changed, memo=memo, index=build.index)
    if some is None:
        return None
    before = _before(last, blobs, [c for c in changes if c.path in prompts_changed
                                   and c.old_mode], templates_changed, memo, build)
    if before is None:
        return None
    resources = _named(old, some, {p: files.read(p) for p in resources_changed})
    if resources is None:
        return None
    templates = {**old["templates"], **some.templates}
    recompiled = _prompts(last, some.prompts, {p: r["mimeType"] for p, r in resources.items()},
                          removed)
    if recompiled is None:
        return None
    prompts, encoded, names, paths = recompiled
    suspects = _suspects(last, some, removed, (encoded, names))
    if not _dropped(before, some, old, (templates, resources), (prompts, encoded), build,
                    (git_dir, entries), (suspects, names, paths)):
        return None  # the search for who still reaches it gave up: a full build knows
    bundle = cast("Bundle", {
        "format": old["format"],
        "package": old["package"],
        "prompts": prompts,
        "resources": _in_order(resources, old["resources"]),
        "source": {"commit": commit, "tree": tree, "dirty": False, "path": source.prefix},
        "templates": _in_order(templates, old["templates"]),
        "digest": "",
    })
    body = canonical_body(bundle, encoded)
    if body is None:
        return None
    bundle["digest"] = digest_of_body(body)
    build.__dict__["bundle"] = bundle
    return build, Built(tree, bundle, entries, encoded, body, names=names, paths=paths,
                        suspects=suspects)


def _suspects(last: Built, some: Some, removed: list[str],
              made: tuple[list[bytes], list[str]]) -> set[str] | None:
    """The last bundle's :attr:`Built.suspects` without the prompt files changed or removed,
    with the changed ones whose new encoding is one (``made``: the new encodings and names,
    in order); None when the last were not known."""
    if last.suspects is None:
        return None
    from promptops.pipeline import reach

    encoded, names = made
    gone = set(removed) | set(some.prompts)
    kept = {path for path in last.suspects if path not in gone}
    for path, p in some.prompts.items():
        if reach.suspects([encoded[bisect_left(names, p.name)]]):
            kept.add(path)
    return kept


def _sort(changes: list[Change],
          old: Bundle) -> tuple[list[str], list[str], list[str], list[str]] | None:
    """The changed prompt files (removed ones included), templates, named files and the
    removed prompt files; None for a change only a full build handles (the manifest, a
    symlink or submodule, the removal of a template or a named file)."""
    prompts: list[str] = []
    templates: list[str] = []
    resources: list[str] = []
    removed: list[str] = []
    for c in changes:
        if c.path == MANIFEST or {c.old_mode, c.new_mode} & {_SYMLINK, _GITLINK}:
            return None
        is_prompt = is_prompt_file(c.path)
        if not c.new_mode and (c.path in old["templates"] or c.path in old["resources"]):
            return None
        if is_prompt:
            prompts.append(c.path)
            if not c.new_mode:
                removed.append(c.path)
        if c.path in old["templates"]:
            templates.append(c.path)
        if c.path in old["resources"]:
            resources.append(c.path)
    return prompts, templates, resources, removed


def _files(last: Built, source: GitSource, changes: list[Change],
           blobs: dict[str, bytes]) -> dict[str, Entry] | None:
    """The new tree's files for ``source`` (the last listing patched, or listed once in
    full), the changed blobs and the unchanged templates seeded into it; None when git
    could not read a changed blob (the full build says so)."""
    if last.entries is None:
        entries = source.entries()
    else:
        entries = dict(last.entries)
        for c in changes:
            if not c.new_mode:
                entries.pop(c.path, None)
            elif c.new_sha in blobs:
                entries[c.path] = Entry(c.new_mode, c.new_sha, len(blobs[c.new_sha]))
            else:
                return None
    source.know(entries)
    for c in changes:
        if c.new_mode and c.new_sha in blobs:
            source.seed(c.path, blobs[c.new_sha])
    touched = {c.path for c in changes}
    for name, text in last.bundle["templates"].items():  # what the last build read
        if name not in touched and not text.startswith("\ufeff"):  # (a BOM more is dropped)
            source.seed(name, text.encode())
    return entries


def _named(old: Bundle, some: Some, changed: dict[str, bytes]) -> dict[str, Resource] | None:
    """The files prompts name: the last ones, those whose content changed (``changed``;
    None when one's media type changed: the prompts naming it compile differently), and
    those the changed prompts name for the first time."""
    resources: dict[str, Resource] = dict(old["resources"])
    for path, raw in changed.items():
        made = resource(path, raw)
        if made["mimeType"] != old["resources"][path]["mimeType"]:
            return None
        resources[path] = made
    for named in some.resources.values():
        for path, raw in named.items():
            if path not in resources:
                resources[path] = resource(path, raw)
    return resources


def _in_order(new: dict[str, V], old: Mapping[str, V]) -> dict[str, V]:
    """``new`` sorted by key as a bundle holds it (already so when it has the old keys:
    ``new`` is ``old`` updated, keys added at its end, keys removed from it)."""
    return new if new.keys() == old.keys() else dict(sorted(new.items()))


def _dropped(before: tuple[dict[str, frozenset[str]], dict[str, set[str]]], some: Some,
             old: Bundle, new: tuple[dict[str, str], dict[str, Resource]],
             made: tuple[list[Prompt], list[bytes]], build: Build,
             tree: tuple[str, dict[str, Entry]],
             kept: tuple[set[str] | None, list[str], dict[str, str]]) -> bool:
    """The templates and named files that the removed prompts and the edits no longer name
    taken out of ``new`` (the new bundle's templates and files), unless something else
    still reaches them (reach.py; ``kept``: the new bundle's suspects when known, its names
    and prompt file -> name); False when that cannot be told cheaply."""
    templates, resources = new
    prompts, encoded = made
    git_dir, entries = tree
    refs_before, files_before = before
    dropped = {t for p, was in refs_before.items() for t in was - some.refs.get(p, frozenset())}
    files = {f for p, was in files_before.items()
             for f in was - set(some.resources.get(p, {}))}
    if not dropped and not files:
        return True
    from promptops.pipeline import reach

    index = build.index
    candidates = reach.closure(dropped, (old["templates"], some.templates), index)
    changed = set(refs_before) | set(some.prompts)

    def alone(path: str, blob: bytes) -> reach.Refs | None:
        got = validate_some(_Alone(path, blob, build.source.origin), [path], [],
                            memo=build.memo, index=index)
        return None if got is None else (got.refs.get(path, frozenset()),
                                         frozenset(got.resources.get(path, {})))

    def sha_of(path: str) -> str | None:
        entry = entries.get(path)
        return None if entry is None else entry.sha

    found = reach.still_reached(
        candidates, files, index=index, templates=templates,
        roots=[some.refs.get(p, frozenset()) for p in some.prompts],
        named=[set(named) for named in some.resources.values()],
        prompts=([p["source"] for p in prompts], encoded), skip=changed,
        refs_of=reach.blob_refs(git_dir, sha_of, alone), suspect=_positions(*kept))
    if found is None:
        return False
    reached, files_kept = found
    for t in candidates - reached:
        templates.pop(t, None)
    for f in files - files_kept:
        del resources[f]
    return True


def _positions(suspects: set[str] | None, names: list[str],
               paths: dict[str, str]) -> list[int] | None:
    """The positions of the ``suspects`` prompt files in the bundle's order, or None."""
    if suspects is None:
        return None
    return sorted(bisect_left(names, paths[path]) for path in suspects)


def _before(last: Built, old_blobs: dict[str, bytes], edited: list[Change],
            templates: list[str], memo: FileMemo,
            build: Build) -> tuple[dict[str, frozenset[str]], dict[str, set[str]]] | None:
    """What the edited prompt files and templates named before the change: the templates
    (and, for prompts, the files) each names directly."""
    if any(c.old_sha not in old_blobs for c in edited):
        return None
    refs: dict[str, frozenset[str]] = {}
    named: dict[str, set[str]] = {}
    for c in edited:
        got = validate_some(_Alone(c.path, old_blobs[c.old_sha], build.source.origin),
                            [c.path], [], memo=memo, index=build.index)
        if got is None:
            return None
        refs[c.path] = got.refs.get(c.path, frozenset())
        named[c.path] = set(got.resources.get(c.path, {}))
    for t in templates:
        got = validate_some(_Alone(t, last.bundle["templates"][t].encode(), build.source.origin),
                            [], [t], memo=memo, index=build.index)
        if got is None:
            return None
        refs[t] = got.refs.get(t, frozenset())
    return refs, named


class _Alone:
    """One file's old content and nothing else: every other path it names reads as empty,
    so validating it gives what it names directly (not what those files name in turn)."""

    label = "the last build"

    def __init__(self, path: str, data: bytes, origin: Origin) -> None:
        self.path, self.data, self.origin = path, data, origin

    def files(self) -> list[str]:
        return [self.path]

    def read(self, path: str) -> bytes:
        return self.data if path == self.path else b""

    def blob_id(self, path: str) -> str | None:
        return None

    def read_ahead(self, paths: list[str]) -> None:
        pass


def _prompts(last: Built, changed: Mapping[str, PromptDef], mime_of: Mapping[str, str],
             removed: list[str]) -> tuple[list[Prompt], list[bytes], list[str],
                                          dict[str, str]] | None:
    """The last bundle's prompts with the changed ones recompiled and the ``removed``
    files' left out, in name order, with their encodings, names and (prompt file ->
    name); None when a changed prompt's name clashes with another's."""
    last_names, last_paths = last.name_tables()
    prompts = list(last.bundle["prompts"])
    encoded = list(last.prompts_encoded())
    names = list(last_names)
    paths = dict(last_paths)
    # out with the old versions (from the end, so earlier positions hold) ...
    gone = sorted((bisect_left(names, paths.pop(path)) for path in [*changed, *removed]
                   if path in paths), reverse=True)
    for i in gone:
        del prompts[i], encoded[i], names[i]
    # ... in with the new, each where its name sorts
    for p in changed.values():
        k = bisect_left(names, p.name)
        if k < len(names) and names[k] == p.name:
            return None  # two prompts, one name: the full build reports it
        made = compile_prompt(p, mime_of)
        prompts.insert(k, made)
        encoded.insert(k, canonical(made))
        names.insert(k, p.name)
        paths[p.path] = p.name
    return prompts, encoded, names, paths
