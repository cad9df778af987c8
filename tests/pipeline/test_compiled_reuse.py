"""Both ends of a review compile through one :class:`~promptops.pipeline.compiled.Compiled`:
a prompt file the same at both ends is compiled once, and every bundle is byte for byte
the one compiled alone (the media types of the files a prompt names are part of what a
compiled prompt is kept by, and a changed file is compiled again)."""

from __future__ import annotations

import pytest

from promptops.pipeline import compiled
from promptops.pipeline.bundle import canonical, compile_bundle
from promptops.pipeline.compiled import Compiled
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import MemorySource
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import Package, validate

MANIFEST = "name: demo\nversion: 1.0.0\n"
HELLO = "messages:\n  - role: user\n    text: hello {{ who }}\n"
DOC = ("messages:\n  - role: user\n    resource:\n      uri: doc://x\n"
       "      file: docs/x.dat\n")


def _package(memo: FileMemo, **files: str | bytes) -> Package:
    found = validate(MemorySource({"promptops.yaml": MANIFEST, **files}), memo=memo,
                     index=TemplateIndex(memo))
    assert found.complete and found.package is not None
    return found.package


def test_both_ends_compile_as_alone_and_share_what_did_not_change() -> None:
    memo = FileMemo()
    files: dict[str, str | bytes] = {
        "prompts/hello.prompt.yaml": HELLO, "prompts/doc.prompt.yaml": DOC,
        "prompts/bye.prompt.yaml": HELLO.replace("hello", "bye"), "docs/x.dat": "plain text"}
    head = _package(memo, **files)
    base = _package(memo, **{**files, "prompts/bye.prompt.yaml": HELLO.replace("hello", "ciao")})
    # the document's file no longer UTF-8: another media type for the same model object
    other = _package(memo, **{**files, "docs/x.dat": b"\xff\xfe binary"})
    kept = Compiled()
    made = [compile_bundle(p, kept) for p in (head, base, other, head)]
    alone = [compile_bundle(p) for p in (head, base, other, head)]
    assert [canonical(b) for b in made] == [canonical(b) for b in alone]
    assert [b["digest"] for b in made] == [b["digest"] for b in alone]
    h, b, o, again = ({p["name"]: p for p in bundle["prompts"]} for bundle in made)
    assert h["hello"] is b["hello"] is again["hello"]  # compiled once for both ends
    assert h["doc"] is b["doc"] and h["bye"] is not b["bye"]
    assert o["doc"]["messages"][0]["mimeType"] == "application/octet-stream"
    assert h["doc"]["messages"][0]["mimeType"] == "text/plain"
    assert h["doc"] is again["doc"]  # HEAD's media types again: HEAD's prompt again


def test_a_new_model_of_the_same_file_is_compiled_again() -> None:
    """Kept by the model object: another validation's model of the same file (a memo
    that no longer holds it) is compiled again, never answered by identity reuse."""
    files: dict[str, str | bytes] = {"prompts/hello.prompt.yaml": HELLO}
    kept = Compiled()
    one = compile_bundle(_package(FileMemo(), **files), kept)
    two = compile_bundle(_package(FileMemo(), **files), kept)
    assert canonical(one) == canonical(two)
    assert one["prompts"][0] is not two["prompts"][0]


def test_unencoded_bundles_are_the_bundles_without_encoding_or_digest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A review's ends (``encoded=False``): every member but the digest as compiled alone,
    the digest ``""``, and no prompt encoded (nor reused from an encoding)."""
    memo = FileMemo()
    files: dict[str, str | bytes] = {"prompts/hello.prompt.yaml": HELLO,
                                     "prompts/doc.prompt.yaml": DOC, "docs/x.dat": "plain"}
    head = _package(memo, **files)
    base = _package(memo, **{**files, "prompts/hello.prompt.yaml": HELLO.replace("o {", "a {")})
    alone = [compile_bundle(p) for p in (head, base)]

    def refused(obj: object) -> bytes:
        raise AssertionError("a prompt was encoded")

    monkeypatch.setattr(compiled, "canonical_long", refused)
    kept = Compiled(encoded=False)
    made = [compile_bundle(p, kept) for p in (head, base)]
    assert [b["digest"] for b in made] == ["", ""]
    assert [{**b, "digest": ""} for b in alone] == made
    assert made[0]["prompts"][0] is made[1]["prompts"][0]  # doc: compiled once
