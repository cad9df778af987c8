"""An image or audio file's bytes do not match its mimeType.

Why: clients decode the base64 data by the declared type; a JPEG served as
``image/png`` (or a text file renamed ``.png``) shows as a broken image, or is refused.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    image:
      file: resources/photo.png     # the bytes are a JPEG

Passes::

    image:
      file: resources/photo.jpg
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts
from promptops.pipeline.mediatypes import guess_type

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO404", "media-type-mismatch", "error", "package"


def sniff(data: bytes) -> str | None:
    """The media type the magic bytes say; None when unknown."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data.startswith(b"ID3") or data[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio/mpeg"
    if data.startswith(b"OggS"):
        return "audio/ogg"
    if data.startswith(b"fLaC"):
        return "audio/flac"
    if data.lstrip().startswith((b"<svg", b"<?xml")):
        return "image/svg+xml"
    return None


_ALIASES = {"audio/x-wav": "audio/wav", "audio/wave": "audio/wav", "image/jpg": "image/jpeg",
            "audio/mp3": "audio/mpeg"}


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for i, msg in enumerate(prompt.spec.messages):
            for kind in ("image", "audio"):
                media = getattr(msg, kind)
                if media is None:
                    continue
                declared = media.mimeType or guess_type(media.file)
                data = ctx.pkg.resources.get(media.file)
                actual = sniff(data) if data is not None else None
                declared = _ALIASES.get(declared or "", declared)
                if data is not None and actual != declared:
                    line, col = ctx.position(prompt.file, ("messages", i, kind, "file"))
                    what = f"{actual} data" if actual else "not a recognised media file"
                    yield Hit(prompt.path, line, col,
                              f"{media.file!r} is served as {declared} but is {what}")
