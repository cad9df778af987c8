"""Writing an imported package: validated first, then all of it or none of it.

An import must never leave a package that stops building (issue 23), so the files it is
about to write are first validated *together with what the target already holds*, by the
real pipeline (:class:`~promptops.pipeline.build.Build` over :class:`Overlay`, the target's
working tree with the new files laid over it, in memory). Only then is anything written:

* a target that does not exist yet is written complete into a temporary folder beside
  it and renamed into place: one ``rename(2)``, atomic (an existing folder, even an empty
  one, is never replaced: it may be someone's current folder);
* into an existing folder only new files are written (an import never replaces a file
  it did not write itself, except its own ``CONVERSION.md``), each atomically and never
  through a symlink; if any write fails, the files written so far are removed and the
  replaced ones restored, so the target is exactly as before.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path

from promptops.errors import Problem, WriteError
from promptops.fsutil import atomic_write
from promptops.pipeline.source import MemorySource, Origin, WorktreeSource, inside


class Overlay:
    """The target folder as it is on disk, with ``files`` (package-relative) laid over it."""

    def __init__(self, root: Path, files: Mapping[str, bytes]) -> None:
        self.new = dict(files)
        self.inner = WorktreeSource(root) if root.is_dir() else MemorySource({})
        self.label = str(root)
        self.origin = Origin(commit=None, tree=None, dirty=True, path=self.inner.origin.path)

    def files(self) -> list[str]:
        return sorted({*self.inner.files(), *self.new})

    def read(self, path: str) -> bytes:
        norm = inside(path)
        if norm is not None and norm in self.new:
            return self.new[norm]
        return self.inner.read(path)

    def blob_id(self, path: str) -> str | None:
        return None

    def read_ahead(self, paths: list[str]) -> None:
        pass


def problems(root: Path, files: Mapping[str, bytes]) -> list[Problem]:
    """Every problem of the package ``root`` would be with ``files`` written into it (the
    build as far as the bundle: what ``promptops build`` and ``serve`` need)."""
    from promptops.errors import PackageError
    from promptops.pipeline.build import Build

    build = Build(root, source=Overlay(root, files))
    try:
        build.bundle  # noqa: B018 - the whole pipeline, as serve builds it
    except PackageError as exc:
        return list(exc.problems)
    return []


def write(root: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` (package-relative) into ``root``: all of them, or, on any failure,
    none (the exception is raised after the target is restored)."""
    if not os.path.lexists(root):
        _write_fresh(root, files)
        return
    created: list[Path] = []
    replaced: dict[Path, bytes] = {}
    folders: list[Path] = []
    try:
        for rel, data in files.items():
            target = root / rel
            for parent in reversed(target.relative_to(root).parents):
                folder = root / parent
                if parent != Path(".") and not folder.exists():
                    folders.append(folder)
            if target.is_file() and not target.is_symlink():
                replaced[target] = target.read_bytes()
            else:
                created.append(target)
            atomic_write(target, data, root=root)
    except BaseException:
        for path in created:
            with contextlib.suppress(OSError):
                if path.is_file() and not path.is_symlink():
                    path.unlink()
        for path, data in replaced.items():
            with contextlib.suppress(OSError):
                atomic_write(path, data, root=root)
        for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty: never anything that was there
        raise


def _write_fresh(root: Path, files: Mapping[str, bytes]) -> None:
    """A new package: written whole beside ``root``, then renamed to it."""
    parent = root.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    stage = parent / f".{root.name}.import-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        stage.mkdir()  # the umask's mode, as the package folder will have
    except OSError as exc:
        raise WriteError(stage, exc.strerror or str(exc), exc.errno or 0) from None
    try:
        for rel, data in files.items():
            atomic_write(stage / rel, data, root=stage)
        try:
            os.rename(stage, root)  # a folder made meanwhile (not empty) refuses
        except OSError as exc:
            raise WriteError(root, exc.strerror or str(exc), exc.errno or 0) from None
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
