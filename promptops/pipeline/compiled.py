"""Prompts compiled once for both ends of a review (:class:`Compiled`).

Kept apart from :mod:`promptops.pipeline.bundle`, which compiles one bundle: this keeps
what one build compiled for the next build of the same memo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from promptops.pipeline.bundle import canonical_long, compile_prompt

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Prompt
    from promptops.pipeline.validate import PromptDef


class Compiled:
    """Prompts compiled, with their canonical encodings, kept for another build of the
    same files: a review builds both ends of a package from one memo, which hands both
    the very same prompt model (:class:`~promptops.pipeline.validate.PromptFile`) for an
    unchanged file (compiling and encoding 5,000 prompts again for BASE: 0.15 s). A
    prompt is :func:`compile_prompt`'s function of its model, name, file and the media
    types of the package's files, so it is reused only for that very model object (kept
    here, so its identity is never another's), the same name and file, and an equal
    table of media types. The bundles then share those prompt objects (never changed).

    ``encoded=False`` (a review's ends: rendered and compared, never written, served or
    told apart by digest): no prompt is encoded and the digest is ``""``, as
    :func:`~promptops.pipeline.bundle.compile_parts` leaves it. The canonical JSON of
    `real`'s 5,000 prompts (36 MB) and its hash were 0.25 s of the review's main process.
    """

    def __init__(self, *, encoded: bool = True) -> None:
        self.encoded = encoded
        self._kept: dict[tuple[tuple[tuple[str, str], ...], int, str, str],
                         tuple[object, Prompt, bytes]] = {}

    def prompts(self, prompts: tuple[PromptDef, ...], mime_of: Mapping[str, str]
                ) -> tuple[list[Prompt], list[bytes]]:
        """``prompts`` compiled and encoded (``b""`` unless ``encoded``), each reused
        when this kept it already."""
        mimes = tuple(sorted(mime_of.items()))
        made: list[Prompt] = []
        encoded: list[bytes] = []
        for p in prompts:
            key = (mimes, id(p.spec), p.name, p.path)
            got = self._kept.get(key)
            if got is None or got[0] is not p.spec:
                one = compile_prompt(p, mime_of)
                got = self._kept[key] = (p.spec, one, canonical_long(one) if self.encoded
                                         else b"")
            made.append(got[1])
            encoded.append(got[2])
        return made, encoded
