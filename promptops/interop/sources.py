"""What `promptops import` reads: the files it finds under the paths it was given, and nothing else.

A source folder is something a user downloaded or cloned, so it is read as untrusted
(SECURITY.md, "What `import` reads"):

* Discovery lists the named paths recursively *before anything is read*, with ``lstat``
  only. A symlink anywhere among them, a FIFO, a device or a socket is refused for the
  whole run (:class:`NotRegular`, exit 2): a committed ``notes.md -> ~/.ssh/id_rsa`` would
  otherwise end up in a prompt, ``/dev/zero`` would be read until memory runs out and a
  FIFO would hang the read. git's folders and dependency folders are not entered.
* Every read opens the file relative to the folder the user named, one component at a
  time with ``O_NOFOLLOW`` (a folder swapped for a symlink meanwhile is refused too), the
  file itself ``O_NONBLOCK``; ``fstat`` must say "regular file" of at most
  :data:`MAX_SOURCE_BYTES`, and at most that many bytes are read whatever it says.
* The files a prompt names beside it (Dotprompt partials, Prompty ``${file:...}``, LangChain
  ``template_path``) come through :class:`Siblings`, which reads the same way and only
  inside the named folder: ``../../etc/passwd`` is simply absent.

In a folder, a file is a candidate by its name (:func:`candidate`); the command then looks
at its content (a ``.json`` that is no chat array and has no ``_type`` is data, not a
prompt). A file named on the command line is always a candidate.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from promptops.errors import UsageError
from promptops.fsutil import ReadRefused, read_fd_bounded

MAX_SOURCE_BYTES = 4 * 1024 * 1024  # one prompt file; a sibling (partial, sample) likewise
MAX_FILES = 5_000  # prompt files in one run
MAX_ENTRIES = 100_000  # folder entries looked at in one run (a user naming `/` by mistake)
MAX_SIBLINGS = 200  # sibling files one prompt may read
MAX_SIBLING_BYTES = 16 * 1024 * 1024  # what they may add up to
MAX_TOTAL_BYTES = 256 * 1024 * 1024  # all prompt files of one run, by their size when listed
MAX_LIST = 1024 * 1024  # bytes of a path list read from stdin (`-`)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FD = os.open in os.supports_dir_fd and bool(_DIRECTORY)

# Folders never entered: git's (credentials), dependencies and environments (thousands of
# files nobody means as prompts), promptops' own editor schemas.
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".promptops",
                       ".tox", ".mypy_cache", ".pytest_cache"})
# Markdown that is documentation or instructions, not a command: skipped in a folder.
_DOC_NAMES = frozenset({"readme.md", "changelog.md", "license.md", "contributing.md",
                        "code_of_conduct.md", "security.md", "claude.md", "agents.md",
                        "copilot-instructions.md", "notes.md", "history.md", "todo.md"})
_DOC_SUFFIXES = (".instructions.md", ".chatmode.md", ".agent.md")
# Text files that are documents or tool inputs by their name: skipped in a folder even with
# a template tag or in a prompt folder (docs/interop.md, "Which .txt in a folder").
_DOC_TXT = re.compile(r"(?:readme|license|licence|copying|notice|changelog|authors|"
                      r"contributors|requirements|constraints|cmakelists|robots)(?![a-z])")
_SUFFIXES = (".prompty", ".prompt", ".md", ".txt", ".j2", ".jinja", ".jinja2", ".njk",
             ".nunjucks", ".json", ".yaml", ".yml")


class NotRegular(UsageError):
    """Something among the sources that import never reads: a symlink, a FIFO, a device."""


class SourceUnreadable(Exception):
    """One file that cannot be read as a prompt source (too large, not UTF-8, vanished)."""

    def __init__(self, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


@dataclass(frozen=True)
class SourceFile:
    """One file to import: ``root`` is the folder it may read siblings in (the folder the
    user named, or the named file's own folder), ``rel`` its POSIX path below ``root``."""

    shown: str  # the path as the user knows it (the named path joined with ``rel``)
    root: Path
    rel: str
    named: bool  # named on the command line (never skipped as "not a prompt")

    @property
    def path(self) -> Path:
        return self.root / self.rel


@dataclass
class Discovery:
    files: list[SourceFile]
    skipped: list[str]  # folder entries that are not prompt files, by name


def kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def candidate(name: str) -> bool:
    """Whether a file found in a folder may be a prompt, by its name alone."""
    low = name.lower()
    if low in _DOC_NAMES or low.endswith(_DOC_SUFFIXES) or low == "promptops.yaml":
        return False
    if low.endswith((".prompt.yaml", ".prompt.yml", ".test.yaml")):  # promptops' own files
        return False
    if low.startswith("_") and low.endswith(".prompt"):  # a Dotprompt partial: read as one
        return False
    if low.endswith(".txt") and _DOC_TXT.match(low):
        return False
    return low.endswith(_SUFFIXES)


def read_path_list(data: bytes) -> list[str]:
    """The paths of a ``-`` operand: one a line (``\\r\\n`` too), blank lines ignored."""
    if len(data) > MAX_LIST:
        raise UsageError(f"the path list on stdin is over {MAX_LIST // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"the path list on stdin is not UTF-8 (byte {exc.start})") from None
    return [line.rstrip("\r") for line in text.split("\n") if line.strip()]


def discover(paths: list[Path], *, skip: Path | None = None) -> Discovery:
    """Every file to import under ``paths``, in a stable order; nothing is read.

    ``skip`` is a folder not to enter (the output package, when it lies inside a source).
    NotRegular (exit 2) names every symlink, FIFO or device found; a path that does not
    exist is a UsageError.
    """
    found: list[SourceFile] = []
    skipped: list[str] = []
    refused: list[str] = []
    seen: dict[tuple[int, int], int] = {}
    entries = total = 0
    skip_id = _identity(skip) if skip is not None else None
    for named in paths:
        try:
            st = os.lstat(named)
        except OSError as exc:
            raise UsageError(f"cannot read {named}: {exc.strerror}") from None
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
            _add(found, seen, st, SourceFile(str(named), named.parent, named.name, named=True))
            continue
        if not stat.S_ISDIR(st.st_mode):
            refused.append(f"{named}: {kind(st.st_mode)}")
            continue
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            folder = named / rel_dir if rel_dir else named
            try:
                with os.scandir(folder) as it:
                    listing = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                raise UsageError(f"cannot read {folder}: {exc.strerror}") from None
            subdirs: list[str] = []
            for entry in listing:
                entries += 1
                if entries > MAX_ENTRIES:
                    raise UsageError(f"{named} holds more than {MAX_ENTRIES:,} entries; name "
                                     "the folder that holds the prompts")
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                shown = str(named / rel)
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    if entry.name.lower() in SKIP_DIRS or (
                            skip_id is not None and _identity(Path(entry.path)) == skip_id):
                        continue
                    subdirs.append(rel)
                elif not stat.S_ISREG(mode):
                    refused.append(f"{shown}: {kind(mode)}")
                elif candidate(entry.name):
                    st = entry.stat(follow_symlinks=False)
                    total += st.st_size
                    _add(found, seen, st, SourceFile(shown, named, rel, named=False))
                else:
                    skipped.append(shown)
            stack.extend(reversed(subdirs))
        if len(found) > MAX_FILES:
            break
    if refused:
        raise NotRegular(
            "import reads only regular files, and none through a symlink (it could point "
            "anywhere); refused, nothing was read or written:\n  "
            + "\n  ".join(r.encode("unicode_escape").decode("ascii") if not r.isprintable()
                           else r for r in refused))
    if len(found) > MAX_FILES:
        raise UsageError(f"more than {MAX_FILES:,} prompt files; import them in parts")
    if total > MAX_TOTAL_BYTES:
        raise UsageError(f"the prompt files add up to {total:,} bytes, over "
                         f"{MAX_TOTAL_BYTES // (1024 * 1024)} MiB; import them in parts")
    return Discovery(found, skipped)


def _add(found: list[SourceFile], seen: dict[tuple[int, int], int], st: os.stat_result,
         source: SourceFile) -> None:
    """``source`` unless the same file was already found (named twice, or in two folders);
    a file found in a folder and also named is named (never skipped), read from the folder
    (whose files it may reach: jinja_tree.py)."""
    key = (st.st_dev, st.st_ino)
    if key not in seen:
        seen[key] = len(found)
        found.append(source)
    elif source.named != found[seen[key]].named:
        folder = source if not source.named else found[seen[key]]
        found[seen[key]] = SourceFile(folder.shown, folder.root, folder.rel, named=True)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def read_bytes(root: Path, rel: str) -> bytes:
    """The bytes of the regular file ``rel`` below ``root``, no symlink followed on the way.

    SourceUnreadable for anything else (a symlink or folder swapped in since discovery,
    a FIFO, a device, too large, gone).
    """
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise SourceUnreadable(f"{rel}: not a path inside {root}")
    try:
        return read_fd_bounded(_open_file(root, parts), MAX_SOURCE_BYTES)
    except ReadRefused as exc:
        if exc.what == "not-regular":
            raise SourceUnreadable(f"{kind(exc.mode)}; import reads only regular files"
                                   ) from None
        if exc.what == "too-large":
            raise SourceUnreadable(f"over {MAX_SOURCE_BYTES // (1024 * 1024)} MiB "
                                   f"({exc.size:,} bytes)") from None
        raise SourceUnreadable(f"over {MAX_SOURCE_BYTES // (1024 * 1024)} MiB (it grew "
                               "while being read)") from None


def _open_file(root: Path, parts: list[str]) -> int:
    """The file ``root/parts...`` opened read-only, non-blocking, no symlink followed."""
    flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC
    try:
        if not _DIR_FD:  # lstat each step: not race-free, but no symlink is followed
            here = root
            for part in parts:
                here = here / part
                if here.is_symlink():
                    raise SourceUnreadable("a symlink on the way; import never follows one")
            return os.open(root.joinpath(*parts), flags)
        fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            for part in parts[:-1]:
                nxt = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = nxt
            return os.open(parts[-1], flags, dir_fd=fd)
        finally:
            os.close(fd)
    except SourceUnreadable:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise SourceUnreadable("a symlink on the way; import never follows one") from None
        raise SourceUnreadable(f"cannot read it: {exc.strerror}") from None


def read_text(source: SourceFile) -> str:
    """A source file's text (UTF-8; a BOM is dropped). SourceUnreadable otherwise."""
    data = read_bytes(source.root, source.rel)
    return decode(data)


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SourceUnreadable(f"not UTF-8 text (byte {exc.start}); a binary file is no "
                               "prompt", line, col) from None


class Siblings(Mapping[str, str]):
    """The files a prompt may name, by path relative to its own folder, read on demand.

    Only what lies inside the folder the user named is there: a name that climbs out
    (``../x``), is absolute, goes through ``.git`` or a symlink, or is no UTF-8 regular
    file of at most :data:`MAX_SOURCE_BYTES` is absent (the importer reports a missing
    file as a loss). At most :data:`MAX_SIBLINGS` files and :data:`MAX_SIBLING_BYTES`
    bytes are read for one prompt.
    """

    def __init__(self, source: SourceFile) -> None:
        self.root = source.root
        self.folder = posixpath.dirname(source.rel)
        self.own = source.rel
        self._read: dict[str, str | None] = {}
        self._bytes = 0

    def _norm(self, name: str) -> str | None:
        if not name or "\x00" in name or "\\" in name or name.startswith("/"):
            return None
        norm = posixpath.normpath(posixpath.join(self.folder, name))
        if norm in (".", "..") or norm.startswith("../") or norm == self.own:
            return None
        if any(p.lower() == ".git" for p in norm.split("/")):
            return None
        return norm

    def _load(self, name: str) -> str | None:
        norm = self._norm(name)
        if norm is None:
            return None
        if norm not in self._read:
            if len(self._read) >= MAX_SIBLINGS or self._bytes > MAX_SIBLING_BYTES:
                return None
            try:
                data = read_bytes(self.root, norm)
                self._bytes += len(data)
                self._read[norm] = decode(data) if self._bytes <= MAX_SIBLING_BYTES else None
            except SourceUnreadable:
                self._read[norm] = None
        return self._read[norm]

    def __getitem__(self, name: str) -> str:
        text = self._load(name)
        if text is None:
            raise KeyError(name)
        return text

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._load(name) is not None

    def __iter__(self) -> Iterator[str]:
        """The regular files beside the prompt (its own folder), by name."""
        folder = self.root / self.folder if self.folder else self.root
        with contextlib.suppress(OSError), os.scandir(folder) as it:
            names = sorted(e.name for e in it if e.is_file(follow_symlinks=False))
            yield from (n for n in names
                        if posixpath.join(self.folder, n).lstrip("/") != self.own)

    def __len__(self) -> int:
        return sum(1 for _ in self)
