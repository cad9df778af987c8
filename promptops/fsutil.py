"""Writing files so that nothing is ever half-written, and never through a symlink.

Everything promptops writes (bundles, snapshots, lint fixes, caches, a bumped manifest,
init's scaffold) comes through :func:`atomic_write`: a crash or a kill at any moment
leaves the old content or the new, never a mix, and inside a package no write follows
a symlink the package commits (SECURITY.md, "What a package may read and write"). It
used to live in the bundle module, so six unrelated modules imported the bundle format
to write a file; it is a leaf now, standard library only (serve's build cache uses it
on the cold path).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from promptops.errors import UnsafeWrite, WriteError


def user_cache_dir() -> Path:
    """promptops' folder in the user's cache (``$XDG_CACHE_HOME`` or ``~/.cache``), for
    caches of packages outside any repository (or inside one whose git dir is read-only)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "promptops"


_DIR_FD = (os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd
           and hasattr(os, "O_DIRECTORY"))
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class _Folder:
    """An open folder that files are written in: by descriptor where the platform has
    ``*at`` calls (so nothing can swap a folder under the write), else by path."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path, self.fd = path, fd

    def at(self, name: str) -> str:
        return name if self.fd is not None else str(self.path / name)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)


def _open_folder(folder: Path, root: Path | None, *, create: bool,
                 target: Path | None = None) -> _Folder:
    """``folder`` opened for writing in; with ``root``, never through a symlink below it.

    Without ``root`` the folder is the operator's choice (``-o``, a cache) and is
    created and followed as given. With ``root`` (the package folder), every folder
    from ``root`` down is opened relative to its parent with O_NOFOLLOW, created when
    missing: a committed ``tests/__snapshots__/x -> /elsewhere`` is refused, also if it
    appears between two steps of the walk. ``target`` is the file the refusal names.
    """
    if root is None:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        return _Folder(folder, os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
                       if _DIR_FD else None)
    rel = _below(folder, root)
    if not _DIR_FD:  # lstat each step: not race-free, but no symlink is followed
        here = root
        for part in rel:
            here = here / part
            if here.is_symlink():
                raise UnsafeWrite(target or folder, here.relative_to(root).as_posix())
            if create and not here.exists():
                here.mkdir()
        return _Folder(folder, None)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for i, part in enumerate(rel):
        fd = _step(fd, part, target or folder, "/".join(rel[: i + 1]),
                   create=create)  # closes fd
    return _Folder(folder, fd)


def _step(fd: int, part: str, folder: Path, shown: str, *, create: bool) -> int:
    """The subfolder ``part`` of the open folder ``fd`` (which is closed), not followed."""
    flags = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW
    try:
        try:
            nxt = os.open(part, flags, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile: refused below if
                os.mkdir(part, 0o777, dir_fd=fd)  # it is a symlink, like any other
            nxt = os.open(part, flags, dir_fd=fd)
    except OSError as exc:
        if _is_link(part, fd):
            raise UnsafeWrite(folder, shown, errno.ELOOP) from exc
        raise
    finally:
        os.close(fd)
    return nxt


def _is_link(name: str, dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _below(path: Path, root: Path) -> list[str]:
    """The components of ``path`` below ``root``, compared without resolving symlinks."""
    rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    if ".." in rel.parts:
        raise ValueError(f"{path} is not inside {root}")
    return [p for p in rel.parts if p not in ("", ".")]


def inside_folder(path: Path, root: Path) -> bool:
    """Whether ``path`` lies in ``root`` (lexically: a symlink on the way does not count)."""
    try:
        _below(path, root)
    except ValueError:
        return False
    return True


# A file's content: its bytes, or a function that writes them to the open file it is given
# (at most twice: when a temp file cannot be linked, the named temp is written again).
Data = bytes | Callable[[BinaryIO], None]


def atomic_write(path: Path, data: Data, *, mode: int = 0o644, root: Path | None = None) -> None:
    """Write a file so that a crash or kill at any moment leaves the old or the new content.

    The data goes into an unnamed O_TMPFILE file in the same folder, which is linked to
    a temp name only once complete and then renamed over ``path``: a SIGKILL before the
    link leaves nothing behind. SIGTERM is held back until the rename is done, so it never
    leaves the named temp; SIGKILL cannot be held, and one landing between link and rename
    leaves a complete ``.<name>.<pid>.tmp`` that the next write sweeps (its pid is gone).
    Without O_TMPFILE the named temp is written directly.

    ``root`` is the package folder when ``path`` is inside it: then neither the file nor
    any folder from ``root`` down may be a symlink (:class:`UnsafeWrite`), see
    :func:`_open_folder`. A failure of the file system (no space, read-only) is a
    :class:`WriteError` naming the path, and the old file is untouched, mode included.
    """
    try:
        folder = _open_folder(path.parent, root, create=True, target=path)
        try:
            if root is not None and _is_link(folder.at(path.name), folder.fd):
                raise UnsafeWrite(path, "/".join(_below(path, root)), errno.ELOOP)
            _write_in(folder, path, data, mode)
        finally:
            folder.close()
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(path, exc.strerror or str(exc), exc.errno or 0) from exc


def write_below(folder: Path, rel: str, data: bytes, *, mode: int = 0o644) -> Path:
    """Write ``folder/rel`` atomically, confined to ``folder``: the one writer for files
    that a command writes into an output folder (``export -o``) from names it computes.

    ``folder`` is the operator's choice and is created and followed as given; below it
    nothing is followed - a folder on the way or the file itself that is a symlink (a
    repository can commit ``.claude/commands -> ../../victim``) is refused with
    :class:`UnsafeWrite` naming it, and a ``rel`` that leaves ``folder`` (absolute, ``..``)
    with a :class:`WriteError`. Returns the path written.
    """
    path = folder / rel
    if Path(rel).is_absolute() or not inside_folder(path, folder) or \
            os.path.abspath(path) == os.path.abspath(folder):
        raise WriteError(path, f"{rel!r} is not a file name inside {folder}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(folder, exc.strerror or str(exc), exc.errno or 0) from exc
    atomic_write(path, data, mode=mode, root=folder)
    return path


def _write_in(folder: _Folder, path: Path, data: Data, mode: int) -> None:
    _sweep_temps(folder, path.name)
    tmp = f".{path.name}.{os.getpid()}.tmp"
    # Windows has no signal masks; there a kill is TerminateProcess (docs/platforms.md).
    masks = hasattr(signal, "pthread_sigmask")
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}) if masks else set()
    try:
        if not _write_anonymous(folder, tmp, data, mode):
            _unlink(folder, tmp)
            flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | _NOFOLLOW
            with open(os.open(folder.at(tmp), flags, 0o600, dir_fd=folder.fd), "wb") as fh:
                _fill(fh, data, mode)
        os.replace(folder.at(tmp), folder.at(path.name), src_dir_fd=folder.fd,
                   dst_dir_fd=folder.fd)
        if not hasattr(os, "fchmod"):  # Windows before 3.13: only the read-only bit, by name
            os.chmod(path, mode)
    except BaseException:
        _unlink(folder, tmp)
        raise
    finally:
        if masks:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _unlink(folder: _Folder, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(folder.at(name), dir_fd=folder.fd)


def _fill(fh: BinaryIO, data: Data, mode: int) -> None:
    if isinstance(data, bytes):
        fh.write(data)
    else:
        data(fh)
    fh.flush()
    os.fsync(fh.fileno())
    if hasattr(os, "fchmod"):  # POSIX, and Windows from Python 3.13
        os.fchmod(fh.fileno(), mode)


def _write_anonymous(folder: _Folder, tmp: str, data: Data, mode: int) -> bool:
    """Write ``data`` to an O_TMPFILE file and link it as ``tmp``; False if unsupported."""
    if folder.fd is None:
        return False
    try:
        fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600, dir_fd=folder.fd)
    except (AttributeError, OSError):
        return False
    with open(fd, "wb") as fh:
        _fill(fh, data, mode)
        _unlink(folder, tmp)
        try:
            os.link(f"/proc/self/fd/{fd}", tmp, dst_dir_fd=folder.fd)  # linkat, following
        except OSError:
            return False
    return True


def _sweep_temps(folder: _Folder, name: str) -> None:
    """Remove ``.<name>.<pid>.tmp`` files left by killed writers (their pid is gone)."""
    try:
        entries = os.listdir(folder.fd if folder.fd is not None else folder.path)
    except OSError:
        return
    for stale in entries:
        if not (stale.startswith(f".{name}.") and stale.endswith(".tmp")):
            continue
        pid = stale[len(name) + 2 : -4]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        if sys.platform == "win32":  # os.kill would terminate that process, not probe it
            _unlink(folder, stale)  # a live writer holds it open: the unlink fails
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            _unlink(folder, stale)
        except OSError:
            continue


def remove_file(path: Path, *, root: Path) -> bool:
    """Delete ``path`` (inside the package ``root``) and then its folder if it is empty,
    never through a symlinked folder; False if it was not there."""
    try:
        folder = _open_folder(path.parent, root, create=False, target=path)
    except FileNotFoundError:
        return False
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(path, exc.strerror or str(exc), exc.errno or 0) from exc
    try:
        os.unlink(folder.at(path.name), dir_fd=folder.fd)  # unlink never follows a link
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise WriteError(path, exc.strerror or str(exc), exc.errno or 0) from exc
    finally:
        folder.close()
    if path.parent != root:
        parent = _open_folder(path.parent.parent, root, create=False)
        try:
            with contextlib.suppress(OSError):  # not empty: other snapshots live there
                os.rmdir(parent.at(path.parent.name), dir_fd=parent.fd)
        finally:
            parent.close()
    return True


class ReadRefused(Exception):
    """Why :func:`read_fd_bounded` refused a file: ``what`` is ``not-regular`` (``mode``
    says what it is), ``too-large`` (``size`` is what fstat said) or ``grew`` (it passed the
    bound while being read). Callers word it for their command."""

    def __init__(self, what: str, mode: int = 0, size: int = 0) -> None:
        super().__init__(what)
        self.what, self.mode, self.size = what, mode, size


def read_fd_bounded(fd: int, limit: int) -> bytes:
    """The bytes of the regular file open as ``fd`` (closed here), at most ``limit``.

    The one bounded read of files an attacker may name (import sources, repository-scope
    client configs): a FIFO or device is refused by ``fstat`` before any read (it was
    opened O_NONBLOCK by the caller), a file over ``limit`` before reading, and one that
    grows past it while being read stops at the bound.
    """
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReadRefused("not-regular", mode=info.st_mode)
        if info.st_size > limit:
            raise ReadRefused("too-large", size=info.st_size)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # the size can change between fstat and read
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise ReadRefused("grew", size=size)
    return b"".join(chunks)


def plain_bytes(path: str) -> bytes | None:
    """The bytes of ``path`` when it is a regular file and not a symlink, else None
    (OSError as ``os.open`` raises it).

    One open that refuses a final symlink and does not block on a FIFO, one ``fstat`` of
    what it opened, one read of the size it gave: a working tree's prefetch reads every
    file of a package (``CachingSource.prefetch``: before a review's first fork, on one
    core), and ``lstat``, then ``open``'s buffered reader reading to the end, cost half
    as much again (`real`'s 5,008 files: 0.057 -> 0.038 s). Without ``O_NOFOLLOW`` the
    open cannot refuse a symlink: ``lstat`` first."""
    if not _NOFOLLOW:
        return Path(path).read_bytes() if stat.S_ISREG(os.lstat(path).st_mode) else None
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        data = os.read(fd, min(info.st_size + 1, _ONE_READ))  # a byte more: grown since?
        if len(data) <= info.st_size < _ONE_READ:  # short of what was asked: the end
            return data
        return data + b"".join(iter(lambda: os.read(fd, _ONE_READ), b""))
    finally:
        os.close(fd)


_ONE_READ = 1 << 30  # below Linux's cap on one read (~2 GiB): a larger file takes several


def read_existing(path: Path, root: Path | None) -> bytes | None:
    """The bytes at ``path``, None when absent; with ``root``, through no symlink below it."""
    if root is None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
    try:
        folder = _open_folder(path.parent, root, create=False, target=path)
    except FileNotFoundError:
        return None
    try:
        if _is_link(folder.at(path.name), folder.fd):
            raise UnsafeWrite(path, "/".join(_below(path, root)), errno.ELOOP)
        fd = os.open(folder.at(path.name), os.O_RDONLY | _NOFOLLOW, dir_fd=folder.fd)
    except FileNotFoundError:
        return None
    finally:
        folder.close()
    with open(fd, "rb") as fh:
        return fh.read()


SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", "dist", ".promptops"})


def packages_below(folder: Path, manifest: str = "promptops.yaml", depth: int = 3,
                   limit: int = 5) -> list[Path]:
    """Package folders (holding ``manifest``) at most ``depth`` levels below ``folder``.

    For the error that a folder is not a package: a monorepo keeps its prompts in a
    subfolder, and the message should name it rather than invent a position. Bounded in
    depth and count, never following symlinks, so it is cheap on any tree.
    """
    found: list[Path] = []
    root = os.path.abspath(folder)
    for here, dirs, files in os.walk(root):
        level = here[len(root):].count(os.sep)
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        if level >= depth:
            dirs[:] = []
        if manifest in files and here != root:
            found.append(Path(here))
            dirs[:] = []
            if len(found) >= limit:
                break
    return found


def not_a_package_hint(folder: Path, manifest: str = "promptops.yaml") -> str:
    """``"; packages below it: a/b, c"`` or ``""``: what to pass instead of ``folder``."""
    below = packages_below(folder, manifest)
    if not below:
        return ""
    names = ", ".join(str(p) for p in below)
    return f"; the package{'s' if len(below) > 1 else ''} below it: {names}"
