"""Stage 3: a validated package -> a bundle, the immutable unit that is served.

A bundle is canonical JSON (sorted keys, fixed separators, UTF-8) so the same commit
gives the same bytes anywhere; its ``digest`` is sha256 over that serialisation
without the digest itself. Reading a bundle is on ``serve``'s cold path, so this
module imports only the standard library at run time.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptops.errors import BundleError, UsageError
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


def atomic_write(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write a file so that a crash or kill at any moment leaves the old or the new content.

    The data goes into an unnamed O_TMPFILE file in the same folder, which is linked to
    a temp name only once complete and then renamed over ``path``: a SIGKILL before the
    link leaves nothing behind. SIGTERM is held back until the rename is done, so it never
    leaves the named temp; SIGKILL cannot be held, and one landing between link and rename
    leaves a complete ``.<name>.<pid>.tmp`` that the next write sweeps (its pid is gone).
    Without O_TMPFILE the named temp is written directly.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _sweep_temps(path)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    # Windows has no signal masks; there a kill is TerminateProcess (docs/platforms.md).
    masks = hasattr(signal, "pthread_sigmask")
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}) if masks else set()
    try:
        if not _write_anonymous(path.parent, tmp, data, mode):
            tmp.unlink(missing_ok=True)
            with open(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as fh:
                _fill(fh, data, mode)
        os.replace(tmp, path)
        if not hasattr(os, "fchmod"):  # Windows before 3.13: only the read-only bit, by name
            os.chmod(path, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        if masks:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _fill(fh: Any, data: bytes, mode: int) -> None:
    fh.write(data)
    fh.flush()
    os.fsync(fh.fileno())
    if hasattr(os, "fchmod"):  # POSIX, and Windows from Python 3.13
        os.fchmod(fh.fileno(), mode)


def _write_anonymous(folder: Path, tmp: Path, data: bytes, mode: int) -> bool:
    """Write ``data`` to an O_TMPFILE file and link it as ``tmp``; False if unsupported."""
    try:
        fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600)
    except (AttributeError, OSError):
        return False
    with open(fd, "wb") as fh:
        _fill(fh, data, mode)
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            tmp.unlink(missing_ok=True)
            os.link(f"/proc/self/fd/{fd}", tmp.name, dst_dir_fd=dir_fd)  # linkat, following
        except OSError:
            return False
        finally:
            os.close(dir_fd)
    return True


def _sweep_temps(path: Path) -> None:
    """Remove ``.<name>.<pid>.tmp`` files left by killed writers (their pid is gone)."""
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        pid = stale.name[len(path.name) + 2 : -4]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        if sys.platform == "win32":  # os.kill would terminate that process, not probe it
            with contextlib.suppress(OSError):  # a live writer holds it open: unlink fails
                stale.unlink()
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            stale.unlink(missing_ok=True)
        except OSError:
            continue


def write_bundle(bundle: Bundle, out_dir: Path, *, force: bool = False) -> tuple[Path, bool]:
    """Write read-only; (path, written). Same content is a no-op, different needs force."""
    path = out_dir / file_name(bundle)
    data = serialise(bundle)
    if path.exists():
        if path.read_bytes() == data:
            return path, False
        if not force:
            raise UsageError(
                f"{path} exists with different content; a released version's bundle must not "
                "change: bump the version, or pass --force to overwrite"
            )
        path.chmod(0o644)
    atomic_write(path, data, mode=0o444)
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
