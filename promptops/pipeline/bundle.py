"""Stage 3: a validated package -> a bundle, the immutable unit that is served.

A bundle is canonical JSON (sorted keys, fixed separators, UTF-8) so the same commit
gives the same bytes anywhere; its ``digest`` is sha256 over that serialisation
without the digest itself. Reading a bundle is on ``serve``'s cold path, so this
module imports only the standard library at run time.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, cast

from promptops.errors import BundleError, UsageError, WriteError
from promptops.pipeline.bundle_format import FORMAT
from promptops.pipeline.mediatypes import OCTET, TEXT_FALLBACK, guess_type, is_text

if TYPE_CHECKING:  # the TypedDicts too: serve's cold path reads bundles, never makes them
    from promptops.fsutil import Data
    from promptops.pipeline import model
    from promptops.pipeline.bundle_types import (
        Argument,
        Bundle,
        Message,
        PackageInfo,
        Prompt,
        Resource,
    )
    from promptops.pipeline.compiled import Compiled
    from promptops.pipeline.validate import Package, PromptDef

__all__ = ["FORMAT", "compile_bundle", "compile_parts", "compile_serialised",
           "digest", "load_bundle", "parse_bundle", "serialise", "write_bundle"]


def _clean(d: Mapping[str, object]) -> dict[str, object]:
    """``d`` without its None values: optional keys are absent from a bundle, never null."""
    return {k: v for k, v in d.items() if v is not None}


def _argument(a: model.Argument) -> Argument:
    out = _clean(a.model_dump(by_alias=True))
    if out.get("type") == "string":
        del out["type"]  # the default: bundles of untyped packages keep their bytes
    return cast("Argument", out)


def _message(m: model.Message, mime_of: Mapping[str, str]) -> Message:
    out: dict[str, object] = {"role": m.role}
    if m.history is not None:
        out.update(type="history", argument=m.history, strip=m.strip or None)
    elif m.text is not None:
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
        out["annotations"] = dict(sorted(_clean(m.annotations.model_dump()).items()))  # as filed
    if m.omitIfBlank:
        out["omitIfBlank"] = True
    if m.loop is not None:
        out["loopItem"], out["loopOver"] = m.loop
    if m.continues:
        out["continues"] = True
    return cast("Message", _clean(out))


def _resource(path: str, raw: bytes) -> Resource:
    mime = guess_type(path)
    if mime is None or is_text(mime):
        try:
            return {"mimeType": mime or TEXT_FALLBACK, "text": raw.decode("utf-8")}
        except UnicodeDecodeError:
            mime = mime or OCTET
    import base64  # building only: not on serve's cold path

    return {"mimeType": mime, "blob": base64.b64encode(raw).decode("ascii")}


def compile_prompt(p: PromptDef, mime_of: Mapping[str, str]) -> Prompt:
    """One prompt as the bundle holds it: a function of its file and the media types of the
    files it names (serve's incremental rebuild recompiles only the prompts that changed)."""
    s = p.spec
    return cast("Prompt", _clean({
        "name": p.name,
        "title": s.title,
        "description": s.description,
        "resultDescription": s.resultDescription,
        "icons": [_clean(i.model_dump()) for i in s.icons] if s.icons else None,
        "arguments": [_argument(a) for a in s.arguments],
        "messages": [_message(msg, mime_of) for msg in s.messages],
        "source": p.path,
        "model": _clean(s.model.model_dump()) if s.model is not None else None,
        "tools": [_clean(t.model_dump()) for t in s.tools] if s.tools is not None else None,
        "output": _clean(s.output.model_dump(by_alias=True))
        if s.output is not None else None,
        "samples": [t.model_dump() for t in s.samples] if s.samples is not None else None,
        "metadata": s.metadata,
        "whitespace": s.whitespace,
    }))


def resource(path: str, raw: bytes) -> Resource:
    """A file a prompt names, as the bundle holds it."""
    return _resource(path, raw)


def compile_bundle(package: Package, kept: Compiled | None = None) -> Bundle:
    """Everything serve needs and nothing else: no timestamps, paths or user names; with
    ``kept``, each prompt another build of the same files compiled is reused."""
    return _compile(package, keep=False, kept=kept)[0]


def compile_serialised(package: Package) -> tuple[Bundle, bytes]:
    """:func:`compile_bundle` and its :func:`serialise`, from one encoding: the canonical JSON
    the digest is computed over is the file without its first member (``digest`` sorts
    first), so it is not encoded a second time to be written (54 MB at 10,000 prompts)."""
    bundle, data = _compile(package, keep=True)
    assert data is not None
    return bundle, data


def _compile(package: Package, *, keep: bool, kept: Compiled | None = None
             ) -> tuple[Bundle, bytes | None]:
    resources = {p: _resource(p, raw) for p, raw in package.resources.items()}
    mime_of = {p: r["mimeType"] for p, r in resources.items()}
    if kept is None:
        prompts: list[Prompt] = [compile_prompt(p, mime_of) for p in package.prompts]
        encoded = [canonical_long(p) for p in prompts]
    else:
        prompts, encoded = kept.prompts(package.prompts, mime_of)
    body = _body(package, prompts, resources)
    if kept is not None and not kept.encoded:  # no digest (see Compiled)
        return body, None
    # Encoded member by member (the same bytes as ``canonical``, see ``canonical_body``): one
    # text of the whole bundle widened to 2 or 4 bytes a character wherever one prompt had
    # an emoji, and joining its pieces then took longer than encoding them.
    parts = canonical_body(body, encoded)
    assert parts is not None  # the body has exactly BODY_KEYS
    body["digest"] = digest_of_body(parts)
    return body, serialised_from_body(parts, body["digest"]) if keep else None


def compile_parts(package: Package) -> tuple[Bundle, Iterator[bytes]]:
    """The bundle without its digest (``""``) and its :func:`canonical_body`, in parts that
    are made as they are asked for: each prompt is compiled and encoded when its turn
    comes, and joins the bundle's ``prompts`` then (complete once the parts are). The
    parts are the bytes ``canonical_body`` joins to, never a copy of all of them: the
    writer of the file (:mod:`promptops.pipeline.bundle_stream`) hashes and writes each
    batch while the next prompts are encoded."""
    resources = {p: _resource(p, raw) for p, raw in package.resources.items()}
    mime_of = {p: r["mimeType"] for p, r in resources.items()}
    prompts: list[Prompt] = []
    body = _body(package, prompts, resources)

    def encoded() -> Iterator[list[bytes]]:
        for p in package.prompts:
            one = compile_prompt(p, mime_of)
            prompts.append(one)
            yield canonical_long_parts(one)

    return body, _body_parts(body, encoded())


def _body(package: Package, prompts: list[Prompt], resources: dict[str, Resource]) -> Bundle:
    """The bundle of ``package`` with ``prompts`` (compiled) and its digest ``""``."""
    m = package.manifest
    o = package.origin
    info = cast("PackageInfo", _clean({
        "name": m.name,
        "version": m.version,
        "description": m.description,
        "instructions": m.instructions,
        "cacheScope": m.serve.cacheScope,
        # always written: a bundle without it was built before the modes (bundle_types)
        "whitespace": m.templates.whitespace,
        "systemRole": m.serve.systemRole if m.serve.systemRole != "user" else None,
        "tools": m.serve.tools,  # absent unless chosen: other bundles stay byte-identical
        # only bounds that differ from the defaults: other bundles stay byte-identical
        "limits": m.limits.model_dump(exclude_defaults=True) or None
        if m.limits is not None else None,
    }))
    body: Bundle = {
        "format": FORMAT,
        "package": info,
        "prompts": prompts,
        "templates": dict(package.templates),
        "resources": resources,
        "source": {"commit": o.commit, "tree": o.tree, "dirty": o.dirty, "path": o.path},
        "digest": "",
    }
    return body


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical(obj: object) -> bytes:
    """Sorted keys, no spaces, UTF-8 (``json.dumps`` with these options: its encoder)."""
    return _CANONICAL.encode(obj).encode()


def _canonical_members(mapping: Mapping[str, object]) -> bytes:
    """``canonical(mapping)`` (string keys), encoded member by member."""
    return b"{" + b",".join(canonical(k) + b":" + canonical_long(v)
                            for k, v in sorted(mapping.items())) + b"}"


# Long strings (a prompt's text: 200 KB in a VS Code prompt) are escaped over their UTF-8
# bytes: what canonical JSON escapes is ASCII (``"``, ``\``, controls), which UTF-8 encodes
# as itself, so each is a bytes.replace (memchr) instead of json's loop over every
# character, and the string is copied twice less (json's pieces joined, then encoded).
LONG = 4096  # characters: shorter strings are left to json
_ESCAPE = {c: b"\\u%04x" % c for c in range(0x20)} | {
    0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0C: b"\\f", 0x0D: b"\\r", 0x22: b'\\"'}
_NOT_ESCAPED = bytes(b for b in range(256) if b not in _ESCAPE and b != 0x5C)
_COMMON = (0x0A, 0x22)  # a newline and a double quote: most of what a prompt escapes


def _long_string(text: str) -> bytes:
    """``canonical(text)`` without its quotes, from ``text``'s UTF-8 bytes (the caller
    puts the quotes around it: one copy of the text less)."""
    raw = text.encode()  # UnicodeEncodeError on a lone surrogate, as ``canonical``'s
    found = raw.translate(None, _NOT_ESCAPED)  # every byte to escape, in order
    if not found:
        return raw
    # Which ones, without a set of all of them (a 200 KB HTML page has 12,000: the set
    # cost more than the translate): the common three by memchr, then the rest's set.
    if 0x5C in found:  # first: the other escapes add backslashes
        raw = raw.replace(b"\\", b"\\\\")
    for c in _COMMON:
        if c in found:
            raw = raw.replace(bytes((c,)), _ESCAPE[c])
    for c in set(found.translate(None, b"\\\n\"")):
        raw = raw.replace(bytes((c,)), _ESCAPE[c])
    return raw


def _swap_long(obj: object, found: list[str]) -> object:
    """``obj`` with each long string replaced by a placeholder naming it in ``found``."""
    if type(obj) is str:
        if len(obj) < LONG:
            return obj
        found.append(obj)
        return f"\0{len(found) - 1}\0"
    if type(obj) is dict:
        return {k: _swap_long(v, found) for k, v in obj.items()}
    if type(obj) is list:
        return [_swap_long(v, found) for v in obj]
    return obj


def canonical_long(obj: object) -> bytes:
    """``canonical(obj)``, the same bytes, with its long strings escaped by
    :func:`_long_string` (:func:`canonical_long_parts` joined)."""
    parts = canonical_long_parts(obj)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def canonical_long_parts(obj: object) -> list[bytes]:
    """:func:`canonical_long` in parts that join to it (each long string one of them, not
    copied into a join): json encodes the rest with placeholders, each of which must be
    found exactly once (a string of the same value elsewhere: ``canonical`` it is)."""
    found: list[str] = []
    swapped = _swap_long(obj, found)
    if not found:
        return [canonical(obj)]
    encoded = canonical(swapped)
    parts, at = [], 0
    for i, text in enumerate(found):
        token = b'"\\u0000%d\\u0000"' % i
        start = encoded.find(token, at)
        if start < 0 or encoded.find(token, start + 1) >= 0:
            return [canonical(obj)]
        parts += [encoded[at:start + 1], _long_string(text)]  # the quotes kept
        at = start + len(token) - 1
    parts.append(encoded[at:])
    return parts


BODY_KEYS = ("format", "package", "prompts", "resources", "source", "templates")


def canonical_body(bundle: Mapping[str, object], prompts: list[bytes]) -> list[bytes] | None:
    """``canonical`` of ``bundle`` without its digest, in parts that join to it, from the
    canonical JSON of each of its prompts (``prompts``, in order) and of its other members:
    the same bytes, without re-encoding every prompt when only some changed (serve's
    incremental rebuild). None when ``bundle`` has members this layout does not know (then
    ``canonical`` it is)."""
    if set(bundle) - {"digest"} != set(BODY_KEYS):
        return None
    return list(_body_parts(bundle, ([p] for p in prompts)))


def _body_parts(bundle: Mapping[str, object], prompts: Iterable[list[bytes]]
                ) -> Iterator[bytes]:
    """:func:`canonical_body`'s parts as they are made, each prompt's from ``prompts`` (in
    parts, asked for when its turn comes); the first part is ``b"{"``."""
    yield b"{"
    for n, key in enumerate(BODY_KEYS):
        yield b'%s"%s":' % (b"," if n else b"", key.encode())
        value = bundle[key]
        if key == "prompts":  # each prompt a part: the file is joined once, not twice
            yield b"["
            for i, encoded in enumerate(prompts):
                if i:
                    yield b","
                yield from encoded
            yield b"]"
        elif key in ("templates", "resources") and isinstance(value, Mapping):
            yield _canonical_members(value)  # a file each, of any size
        else:
            yield canonical(value)
    yield b"}"


def digest_of_body(body: list[bytes]) -> str:
    """The digest of a bundle whose ``canonical_body`` is ``body`` (hashed part by part:
    the prompts of 100,000 are 68 MB, not copied once more to be hashed)."""
    h = hashlib.sha256()
    for part in body:
        h.update(part)
    return "sha256:" + h.hexdigest()


def serialised_from_body(body: list[bytes], digest_: str) -> bytes:
    """``serialise`` of the bundle whose body is ``body`` (``digest`` sorts first)."""
    return b"".join([b'{"digest":', canonical(digest_), b",", *body[1:], b"\n"])


def digest(bundle: Mapping[str, object]) -> str:
    """sha256 over the canonical JSON of every key but ``digest`` itself."""
    body = {k: v for k, v in bundle.items() if k != "digest"}
    return "sha256:" + hashlib.sha256(canonical(body)).hexdigest()


def serialise(bundle: Bundle) -> bytes:
    return canonical(bundle) + b"\n"


def file_name(bundle: Bundle) -> str:
    pkg = bundle["package"]
    return f"{pkg['name']}-{pkg['version']}.bundle.json"


def write_bundle(bundle: Bundle, out_dir: Path, *, force: bool = False,
                 root: Path | None = None, data: bytes | None = None) -> tuple[Path, bool]:
    """Write read-only; (path, written). Same content is a no-op, different needs force.

    ``root`` is the package folder when ``out_dir`` is inside it (see ``atomic_write``).
    A failed write leaves the old bundle exactly as it was, its read-only mode included:
    the new one is renamed over it (which needs no write permission on the file).
    ``data``: ``serialise(bundle)`` when the caller has it already (:func:`compile_serialised`).
    """
    path = out_dir / file_name(bundle)
    data = serialise(bundle) if data is None else data
    return path, put_bundle(path, data, existing_bundle(path, root), force=force, root=root)


def existing_bundle(path: Path, root: Path | None) -> bytes | None:
    """The bytes of the bundle file at ``path`` (None: none there), for :func:`put_bundle`."""
    from promptops.fsutil import read_existing  # writing's module: not on serve's cold path
    try:
        return read_existing(path, root)
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(path, exc.strerror or str(exc), exc.errno or 0) from exc


def put_bundle(path: Path, data: Data, existing: bytes | None, *, force: bool,
               root: Path | None) -> bool:
    """:func:`write_bundle`'s write of ``data`` at ``path`` where ``existing`` was; whether
    it wrote. ``data`` is the file's bytes, or (only where there was no file to compare
    with) a function that writes them to the file it is given (``fsutil.atomic_write``)."""
    if existing is not None:
        assert isinstance(data, bytes)  # compared whole
        if existing == data:
            return False
        if not force:
            raise UsageError(
                f"{path} exists with different content; a released version's bundle must not "
                "change: bump the version, or pass --force to overwrite"
            )
    from promptops.fsutil import atomic_write  # writing's module: not on serve's cold path
    replace_readonly = existing is not None and os.name == "nt"  # Windows refuses to
    if replace_readonly:
        path.chmod(0o644)
    try:
        atomic_write(path, data, mode=0o444, root=root)
    except BaseException:
        if replace_readonly:
            path.chmod(0o444)
        raise
    return True


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
    # Hashed in place: slicing and prefixing the bytes made two copies of the file, which
    # set serve's peak RSS at 10,000 prompts (+30 MB over the parsed bundle; issue 17).
    body = hashlib.sha256(b"{")
    body.update(memoryview(data)[end + 2 : -1])
    return "sha256:" + body.hexdigest()


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
    return cast("Bundle", bundle)  # its whole shape was just checked


def _not_json(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def load_bundle(path: Path) -> Bundle:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BundleError(f"cannot read bundle {path}: {exc.strerror}") from exc
    return parse_bundle(data, str(path))


def shape_problems(bundle: object) -> list[str]:
    """What serving (and `promptops verify`) refuses in the shape of ``bundle``: the first
    few problems, or []. The rules are in :mod:`promptops.pipeline.bundle_check`."""
    from promptops.pipeline.bundle_check import problems

    return problems(bundle)
