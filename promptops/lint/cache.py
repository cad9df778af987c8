"""Lint results cached by content: a second run on an unchanged package is a lookup.

The key is built from the git blob id of every package file (``sha1("blob <size>\\0"
+ bytes)``, the id git itself would give it, so it is the same for the working tree
and for a commit), the promptops version, the rule table, the settings and the code the
results come from (``CODE``: lint, the validation in pipeline/ and what they import). Since the
blob ids of the templates a prompt includes are part of the key, editing a partial
invalidates the prompts that include it. A hit reads and hashes the files (of a commit
it reads none: the tree names each file's blob, so serve's gate does not read 1,000
blobs to look a commit up) but parses and validates nothing, which is what makes a
cached 10,000-prompt run take well under a second. Entries live in
``.git/promptops/lint/`` (or the user cache folder outside a repository); the newest 16
are kept.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import TypedDict

from promptops import __version__
from promptops.lint.problem import Finding
from promptops.lint.registry import RULES
from promptops.lint.settings import LintSettings
from promptops.pipeline.source import CachingSource, WorktreeSource, blob_id

KEEP = 16
# Last records kept (store_last): more than the packages a repository usually holds (serve
# follows 100 in benchmarks/growth.py's many layout), fewer than a folder nothing prunes.
KEEP_LAST = 128
FORMAT = 1


# The code lint's results come from: lint itself, the validation it runs and reports
# (pipeline), the sandbox the rules ask, versioning (6xx), git (what a Source reads) and
# the shared modules below them. It was lint's folder alone, so with a warm cache a broken validator
# passed the lint tests; tests/lint/test_lint_cache_key.py checks that this covers every
# module promptops.lint.engine imports, directly or not.
ROOT = Path(__file__).resolve().parent.parent  # the promptops package
CODE = ("lint", "pipeline", "sandbox", "versioning", "git", "errors.py", "problem.py",
        "fsutil.py", "signals.py")


def _code_paths() -> list[tuple[str, str]]:
    """(path under ROOT, full path) of the source files of ``CODE``, in a stable order."""
    root = str(ROOT)
    out: list[tuple[str, str]] = []
    for name in CODE:
        top = os.path.join(root, name)
        if name.endswith(".py"):
            out.append((name, top))
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            rel = os.path.relpath(folder, root)
            out += [(f"{rel}/{f}", os.path.join(folder, f)) for f in sorted(files)
                    if f.endswith(".py")]
    return out


def code_files() -> list[Path]:
    """The source files whose size and mtime the key stamps."""
    return [Path(full) for _, full in _code_paths()]


@functools.cache
def _code_stamp() -> str:
    """Size and mtime of the code results come from, so editing a rule or the validator
    invalidates old results. Once per process: the code that runs is what was imported."""
    stamps = []
    for rel, full in _code_paths():
        try:
            st = os.stat(full)
        except OSError:  # a module gone from disk: its absence is part of the stamp
            stamps.append(f"{rel}:-")
            continue
        stamps.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
    return ",".join(stamps)


def settings_key(settings: LintSettings) -> str:
    """What results depend on besides the files: format, version, rules, settings, code."""
    rules = ",".join(f"{r.code}:{r.level}" for r in RULES)
    return hashlib.sha256(
        f"{FORMAT}|{__version__}|{rules}|{settings.key()}|{_code_stamp()}".encode()).hexdigest()


def blobs(source: CachingSource, folder: Path) -> dict[str, str]:
    """path -> blob id of every package file ("missing" for a dangling symlink)."""
    if isinstance(source.inner, WorktreeSource):
        return _worktree_blobs(source, folder)
    at_once = getattr(source.inner, "blob_ids", None)  # a commit's listing, in one pass
    listed: dict[str, str] | None = at_once() if at_once is not None else None
    if listed is not None:
        return listed
    out: dict[str, str] = {}
    for path in source.files():
        known = source.blob_id(path)  # a commit names its files' content: nothing to read
        if known is not None:
            out[path] = known
            continue
        try:
            out[path] = blob_id(source.read(path))
        except FileNotFoundError:  # a dangling symlink: its absence is part of the state
            out[path] = "missing"
    return out


def package_key(source: CachingSource, settings: LintSettings, folder: Path,
                ids: dict[str, str] | None = None) -> str:
    h = hashlib.sha256()
    h.update(f"{settings_key(settings)}\n".encode())
    ids = blobs(source, folder) if ids is None else ids
    for path in source.files():
        h.update(f"{path}\0{ids.get(path, 'missing')}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


_RACY_NS = 2_000_000_000


def _worktree_blobs(source: CachingSource, folder: Path) -> dict[str, str]:
    """Blob ids of the working tree's files, reusing ids whose file did not change.

    Like git's index: a file whose mtime, size and inode match the recorded ones keeps
    its recorded id without being read, unless it changed within the last two seconds
    of the record (the same-timestamp race git calls "racily clean"). Symlinks count
    as their target path; a target outside the package is unreadable anyway.
    """
    assert isinstance(source.inner, WorktreeSource)
    root = str(source.inner.root)
    index_path = folder / f"stat-{hashlib.sha1(root.encode()).hexdigest()[:16]}.json"
    try:
        old = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    if not old:  # a cold run reads every file: the direct read, not a resolve per path
        source.prefetch()  # (2.4 s -> ~0.4 s of CPU at 10,000 prompts; validation reuses it)
    now = time.time_ns()
    new: dict[str, list[object]] = {}
    out: dict[str, str] = {}
    for path in source.files():
        full = os.path.join(root, path)
        try:
            st = os.lstat(full)
        except OSError:
            out[path] = "missing"
            continue
        if stat.S_ISLNK(st.st_mode):
            out[path] = "link:" + os.readlink(full)
            continue
        sig = [st.st_mtime_ns, st.st_size, st.st_ino]
        entry = old.get(path)
        if entry and entry[:3] == sig and now - st.st_mtime_ns > _RACY_NS:
            out[path] = str(entry[3])
        else:
            try:  # kept by the source: validation keys its memo on the same id
                out[path] = source.content_id(path)
            except FileNotFoundError:  # not a regular file (a FIFO), or gone since the walk
                out[path] = "missing"
                continue
        new[path] = [*sig, out[path]]
    if new != old:
        try:
            from promptops.fsutil import atomic_write

            atomic_write(index_path, json.dumps(new).encode())
        except OSError:
            pass
    return out


def load(folder: Path, key: str) -> list[Finding] | None:
    try:
        data = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
        return [Finding.from_json(f) for f in data["findings"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(folder: Path, key: str, findings: list[Finding]) -> None:
    from promptops.fsutil import atomic_write

    try:
        body = json.dumps({"findings": [f.to_json() for f in findings]}).encode()
        atomic_write(folder / f"{key}.json", body)
        entries = sorted((p for p in folder.glob("*.json")
                          if not p.name.startswith(("stat-", "last-"))),
                         key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:  # a read-only .git must not fail the lint
        pass


class Record(TypedDict):
    """The last full run: what an incremental run starts from."""

    blobs: dict[str, str]  # path -> blob id
    findings: list[Finding]
    deps: dict[str, list[str]]  # prompt file -> the other files it reads
    names: dict[str, str]  # prompt file -> prompt name
    # whether the package validated completely (no load problem anywhere): only then do
    # ``deps`` and ``names`` cover every prompt file, which an added file is judged against
    complete: bool


def load_last(folder: Path, settings: LintSettings, package: Path) -> Record | None:
    """The last full record of the package folder ``package`` under these settings (blobs,
    findings, dependencies, names): what an incremental run starts from
    (promptops.lint.incremental)."""
    try:
        data = json.loads(_last(folder, settings, package).read_text(encoding="utf-8"))
        # the files read are a few partials read by most prompts: one string each, not one
        # a mention (the JSON decoder shares keys only; 100,000 prompts: 210,000 strings
        # of 10,000 texts, ~14 MB that serve's lint gate keeps between commits)
        shared: dict[str, str] = {}
        deps = {path: [shared.setdefault(read, read) for read in reads]
                for path, reads in data["deps"].items()}
        return Record(blobs=dict(data["blobs"]), deps=deps,
                      names=dict(data["names"]), complete=data.get("complete") is True,
                      findings=[Finding.from_json(f) for f in data["findings"]])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store_last(folder: Path, settings: LintSettings, package: Path, record: Record) -> None:
    from promptops.fsutil import atomic_write

    body = {**record, "findings": [f.to_json() for f in record["findings"]]}
    with contextlib.suppress(OSError):  # a read-only .git must not fail the lint
        path = _last(folder, settings, package)
        atomic_write(path, json.dumps(body).encode())
        _prune_last(folder, path)


def _prune_last(folder: Path, kept: Path) -> None:
    """At most :data:`KEEP_LAST` last records, the most recently written: one a package
    folder and settings is one for every path a package was ever linted from (each git
    worktree, a moved folder, a temporary clone), each as large as its package's findings
    and blob ids (21 MB at 100,000 prompts), in a folder nothing else empties."""
    with contextlib.suppress(OSError):
        entries = sorted(((p.stat().st_mtime, p) for p in folder.glob("last-*.json")
                          if p != kept), reverse=True)
        for _, old in entries[KEEP_LAST - 1:]:
            old.unlink(missing_ok=True)


def _last(folder: Path, settings: LintSettings, package: Path) -> Path:
    """Where the last record of ``package`` is kept: one a package folder, because the lint
    cache is the repository's (``<common git dir>/promptops/lint``) and the packages of one
    repository share their settings; one record for all of them made a commit re-lint its
    package in full whenever another package was linted last (serve following 100
    packages: ~1.5 s of CPU for a commit touching one prompt)."""
    slot = hashlib.sha256(str(package.resolve()).encode()).hexdigest()[:16]
    return folder / f"last-{settings_key(settings)[:32]}-{slot}.json"
