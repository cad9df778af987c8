"""Stage 3: a validated package -> a bundle, the immutable unit that is served.

A bundle is canonical JSON (sorted keys, fixed separators, UTF-8) so the same commit
gives the same bytes anywhere; its ``digest`` is sha256 over that serialisation
without the digest itself. Reading a bundle is on ``serve``'s cold path, so this
module imports only the standard library at run time.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import json
import os
import signal
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptops.errors import BundleError, UnsafeWrite, UsageError, WriteError
from promptops.mediatypes import OCTET, TEXT_FALLBACK, guess_type, is_text

if TYPE_CHECKING:
    from promptops.model import Argument, Message
    from promptops.package import Package

FORMAT = "promptops.bundle/1"
Bundle = dict[str, Any]


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _argument(a: Argument) -> dict[str, Any]:
    return _clean(a.model_dump())


def _message(m: Message, mime_of: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role}
    if m.text is not None:
        out.update(type="text", text=m.text)
    elif m.template is not None:
        out.update(type="text", template=m.template)
    elif m.resource is not None:
        r = m.resource
        mime = r.mimeType or (mime_of[r.file] if r.file else TEXT_FALLBACK)
        out.update(type="resource", uri=r.uri, mimeType=mime, text=r.text, file=r.file)
    elif m.image is not None or m.audio is not None:
        media = m.image or m.audio
        assert media is not None
        out.update(type=m.kind, file=media.file, mimeType=media.mimeType or mime_of[media.file])
    elif m.resource_link is not None:
        out.update(type="resource_link", **m.resource_link.model_dump())
    if m.annotations is not None:
        out["annotations"] = _clean(m.annotations.model_dump())
    return _clean(out)


def _resource(path: str, raw: bytes) -> dict[str, Any]:
    mime = guess_type(path)
    if mime is None or is_text(mime):
        try:
            return {"mimeType": mime or TEXT_FALLBACK, "text": raw.decode("utf-8")}
        except UnicodeDecodeError:
            mime = mime or OCTET
    return {"mimeType": mime, "blob": base64.b64encode(raw).decode("ascii")}


def compile_bundle(package: Package) -> Bundle:
    """Everything serve needs and nothing else: no timestamps, paths or user names."""
    m = package.manifest
    resources = {p: _resource(p, raw) for p, raw in package.resources.items()}
    mime_of = {p: r["mimeType"] for p, r in resources.items()}
    prompts = []
    for p in package.prompts:
        s = p.spec
        prompts.append(
            _clean(
                {
                    "name": p.name,
                    "title": s.title,
                    "description": s.description,
                    "resultDescription": s.resultDescription,
                    "icons": [_clean(i.model_dump()) for i in s.icons] if s.icons else None,
                    "arguments": [_argument(a) for a in s.arguments],
                    "messages": [_message(msg, mime_of) for msg in s.messages],
                    "source": p.path,
                }
            )
        )
    o = package.origin
    body: Bundle = {
        "format": FORMAT,
        "package": _clean(
            {
                "name": m.name,
                "version": m.version,
                "description": m.description,
                "instructions": m.instructions,
                "cacheScope": m.serve.cacheScope,
                # only bounds that differ from the defaults: other bundles stay byte-identical
                "limits": m.limits.model_dump(exclude_defaults=True) or None
                if m.limits is not None else None,
            }
        ),
        "prompts": prompts,
        "templates": dict(package.templates),
        "resources": resources,
        "source": {"commit": o.commit, "tree": o.tree, "dirty": o.dirty, "path": o.path},
    }
    body["digest"] = digest(body)
    return body


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(bundle: Bundle) -> str:
    body = {k: v for k, v in bundle.items() if k != "digest"}
    return "sha256:" + hashlib.sha256(canonical(body)).hexdigest()


def serialise(bundle: Bundle) -> bytes:
    return canonical(bundle) + b"\n"


def file_name(bundle: Bundle) -> str:
    pkg = bundle["package"]
    return f"{pkg['name']}-{pkg['version']}.bundle.json"


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
        fd = _step(fd, part, target or folder, "/".join(rel[: i + 1]), create)  # closes fd
    return _Folder(folder, fd)


def _step(fd: int, part: str, folder: Path, shown: str, create: bool) -> int:
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


def atomic_write(path: Path, data: bytes, *, mode: int = 0o644, root: Path | None = None) -> None:
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


def _write_in(folder: _Folder, path: Path, data: bytes, mode: int) -> None:
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


def _fill(fh: Any, data: bytes, mode: int) -> None:
    fh.write(data)
    fh.flush()
    os.fsync(fh.fileno())
    if hasattr(os, "fchmod"):  # POSIX, and Windows from Python 3.13
        os.fchmod(fh.fileno(), mode)


def _write_anonymous(folder: _Folder, tmp: str, data: bytes, mode: int) -> bool:
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


def write_bundle(bundle: Bundle, out_dir: Path, *, force: bool = False,
                 root: Path | None = None) -> tuple[Path, bool]:
    """Write read-only; (path, written). Same content is a no-op, different needs force.

    ``root`` is the package folder when ``out_dir`` is inside it (see ``atomic_write``).
    A failed write leaves the old bundle exactly as it was, its read-only mode included:
    the new one is renamed over it (which needs no write permission on the file).
    """
    path = out_dir / file_name(bundle)
    data = serialise(bundle)
    try:
        existing = read_existing(path, root)
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(path, exc.strerror or str(exc), exc.errno or 0) from exc
    if existing is not None:
        if existing == data:
            return path, False
        if not force:
            raise UsageError(
                f"{path} exists with different content; a released version's bundle must not "
                "change: bump the version, or pass --force to overwrite"
            )
    replace_readonly = existing is not None and os.name == "nt"  # Windows refuses to
    if replace_readonly:
        path.chmod(0o644)
    try:
        atomic_write(path, data, mode=0o444, root=root)
    except BaseException:
        if replace_readonly:
            path.chmod(0o444)
        raise
    return path, True


def _digest_of_serialised(data: bytes) -> str | None:
    """The digest of ``data`` if it has the exact layout ``serialise`` writes, else None.

    Sorted keys put ``digest`` first, so the bytes the digest covers are the file without
    that member: hashing them avoids re-serialising the whole bundle (half the load time
    of a large bundle, which is on serve's cold path). Any other layout returns None and
    the caller recomputes from the parsed object; a match is as strong as that check.
    """
    if not data.startswith(b'{"digest":"sha256:') or not data.endswith(b"}\n"):
        return None
    end = data.find(b'",', 18)
    if end != 18 + 64:
        return None
    body = b"{" + data[end + 2 : -1]
    return "sha256:" + hashlib.sha256(body).hexdigest()


def parse_bundle(data: bytes, label: str) -> Bundle:
    """Parse and verify: format, digest and the whole shape (stdlib only, see bundle_check)."""
    try:
        bundle = json.loads(data, parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, int limit, NaN, nesting
        raise BundleError(f"{label}: not a bundle (invalid JSON: {exc})") from exc
    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT:
        found = bundle.get("format") if isinstance(bundle, dict) else None
        raise BundleError(f"{label}: unknown bundle format {found!r}; expected {FORMAT!r}")
    want = bundle.get("digest")
    got = want if _digest_of_serialised(data) == want else digest(bundle)
    if want != got:
        raise BundleError(
            f"{label}: digest mismatch (file says {want}, content is {got}); the bundle was "
            "modified after it was built: rebuild it with `promptops build`"
        )
    problems = shape_problems(bundle)
    if problems:
        raise BundleError(f"{label}: invalid bundle: " + "; ".join(problems))
    return bundle


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_bundle(path: Path) -> Bundle:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BundleError(f"cannot read bundle {path}: {exc.strerror}") from exc
    return parse_bundle(data, str(path))


def shape_problems(bundle: Bundle) -> list[str]:
    """What serving (and `promptops verify`) refuses in the shape of ``bundle``: the first
    few problems, or []. The rules are in :mod:`promptops.bundle_check`."""
    from promptops.bundle_check import problems

    return problems(bundle)
