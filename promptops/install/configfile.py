"""Reading and writing a client's config file without being led elsewhere by it.

Two kinds of file, two rules (SECURITY.md, "What install reads and writes"):

* **A repository-scope file** (``.mcp.json``, ``.vscode/mcp.json``, ``.cursor/mcp.json``,
  ``.gemini/settings.json``) is whatever the repository commits, and a repository can
  commit ``.mcp.json -> ~/.claude.json``: following it would copy the user's state (and
  its tokens) into a file meant to be pushed, and a link to ``/dev/zero`` would be read
  until memory runs out. So from the repository root down, no folder and not the file
  may be a symlink, the file must be a regular file, and it is opened non-blocking
  (a FIFO never hangs the read), checked with ``fstat`` and read to a bound (1 MiB). Anything
  else is refused with exit 2 before a byte is read through it; the write goes through
  :func:`promptops.fsutil.atomic_write` with the repository as its root, which refuses
  the same links again at write time.
* **A user file** (``~/.claude.json``, ``~/.cursor/mcp.json`` ...) is the user's own, and
  people keep them in a dotfiles repository behind a symlink. Replacing the link with a
  plain file would silently fork their config, so the link is followed to its final
  target, which must exist and be a regular file (else exit 2, the link untouched), and
  the new text is written atomically *there*: the link stays a link.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from promptops.errors import UsageError
from promptops.fsutil import ReadRefused, read_fd_bounded

MAX_BYTES = 64 * 2**20  # ~/.claude.json holds Claude Code's history; configs are KBs
MAX_SHARED_BYTES = 2**20  # a committed MCP config is a few KB; a repository is untrusted
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


@dataclass(frozen=True)
class Loaded:
    """A config file's bytes and where its new text goes (the link's target, for a user
    file kept as a symlink); ``data`` is None when the file does not exist yet."""

    data: bytes | None
    real: Path


def read(path: Path, *, root: Path | None) -> Loaded:
    """The bytes of ``path``; ``root`` (the repository) makes it a repository-scope file."""
    if root is not None:
        return Loaded(_read_confined(path, root), path)  # bounded by MAX_SHARED_BYTES
    try:
        is_link = path.is_symlink()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    real = path
    if is_link:
        real = Path(os.path.realpath(path))
        if not os.path.lexists(real):
            raise UsageError(f"{path} is a symlink to {real}, which does not exist: create "
                             "that file (or remove the link), then install again")
    try:
        fd = os.open(real, os.O_RDONLY | _NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return Loaded(None, real)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    return Loaded(_read_fd(fd, path), real)


_DIR_FD = os.open in os.supports_dir_fd and bool(_DIRECTORY)


def _is_junction(path: Path) -> bool:
    """A Windows junction (a folder link ``lstat`` does not report as one), Python 3.12+."""
    check = getattr(os.path, "isjunction", None)
    return bool(check(path)) if check is not None else False


def _read_by_path(path: Path, root: Path, rel: tuple[str, ...]) -> bytes | None:
    """Windows (no ``openat``): lstat each step, then open; not race-free, never following."""
    here = root
    for i, part in enumerate(rel):
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(info.st_mode) or _is_junction(here):
            raise _link_refusal(root, "/".join(rel[:i + 1]))
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    return _read_fd(fd, path, MAX_SHARED_BYTES)


def _read_confined(path: Path, root: Path) -> bytes | None:
    rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).parts
    if not _DIR_FD:
        return _read_by_path(path, root, rel)
    fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    shown: list[str] = []
    try:
        for part in rel[:-1]:
            shown.append(part)
            try:
                nxt = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                return None
            except OSError as exc:
                raise _refusal(path, root, "/".join(shown), fd, part, exc) from None
            os.close(fd)
            fd = nxt
        try:
            file_fd = os.open(rel[-1], os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _refusal(path, root, "/".join(rel), fd, rel[-1], exc) from None
    finally:
        os.close(fd)
    return _read_fd(file_fd, path, MAX_SHARED_BYTES)


def _refusal(path: Path, root: Path, shown: str, dir_fd: int, name: str,
             exc: OSError) -> UsageError:
    try:
        mode = os.lstat(name, dir_fd=dir_fd).st_mode
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode) or exc.errno == errno.ELOOP:
        return _link_refusal(root, shown)
    if exc.errno == errno.ENOTDIR:
        return UsageError(f"{root / shown}: {shown} is not a folder")
    return UsageError(f"cannot read {path}: {exc.strerror}")


def _link_refusal(root: Path, shown: str) -> UsageError:
    return UsageError(
        f"{root / shown}: {shown} is a symlink; install never reads or writes through a "
        "symlink the repository commits (it could point at your own ~/.claude.json, or "
        "anywhere): replace it with a regular file")


def _read_fd(fd: int, shown: Path, limit: int = MAX_BYTES) -> bytes:
    """Read a regular file's bytes, at most ``limit``, from the open ``fd`` (closed)."""
    try:
        return read_fd_bounded(fd, limit)
    except ReadRefused as exc:
        if exc.what == "not-regular":
            raise UsageError(f"{shown} is not a regular file (a folder, device or pipe): "
                             "an MCP client's config is a JSON file") from None
        if exc.what == "too-large":
            raise UsageError(f"{shown} is larger than {limit // 2**20} MiB: not an MCP "
                             "client's config; pass --config FILE to write another file"
                             ) from None
        raise UsageError(f"{shown} is larger than {limit // 2**20} MiB") from None


def write(real: Path, data: bytes, *, root: Path | None) -> None:
    """Write atomically, keeping the old file's mode (new files: 0600, like Claude Code);
    ``root`` confines the write below the repository (no symlink on the way)."""
    from promptops.fsutil import atomic_write

    try:
        mode = stat.S_IMODE(os.stat(real, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        mode = 0o600
    atomic_write(real, data, mode=mode, root=root)
