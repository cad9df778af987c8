"""The handshake era (2024-11-05 .. 2025-11-25) over real pipes, one revision at a time."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from serve_helpers import PNG, WAV, RawClient

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
Raw = Callable[..., RawClient]
REVIEW_ARGS = {"code": "print(1)", "language": "go"}


@pytest.mark.parametrize("rev", REVISIONS)
def test_initialize_echoes_and_declares(raw: Raw, rev: str) -> None:
    c = raw(rev)
    result = c.initialize(rev)["result"]
    assert result["protocolVersion"] == rev
    caps = result["capabilities"]
    assert caps["prompts"] == {"listChanged": True}
    assert caps["logging"] == {} and caps["resources"] == {}
    assert ("completions" in caps) == (rev != "2024-11-05")
    assert result["instructions"] == "Use code_review for reviews."
    assert c.request("ping")["result"] == {}
    rc, err = c.close()
    assert rc == 0, err


def test_unsupported_version_gets_counter_offer(raw: Raw) -> None:
    c = raw("2025-11-25")
    assert c.initialize("1999-01-01")["result"]["protocolVersion"] == "2025-11-25"
    again = c.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert again["error"]["code"] == -32600


@pytest.mark.parametrize("rev", REVISIONS)
def test_list_pages_fields_by_revision(raw: Raw, rev: str) -> None:
    c = raw(rev, "--page-size", "4")
    c.initialize(rev)
    names, cursor, pages = [], None, 0
    while True:
        r = c.request("prompts/list", {"cursor": cursor} if cursor else {})["result"]
        pages += 1
        names += [p["name"] for p in r["prompts"]]
        for p in r["prompts"]:
            if p["name"] == "code_review":
                review = p
        cursor = r.get("nextCursor")
        if not cursor:
            break
    assert names == sorted(names) and len(names) == 15 and pages == 4
    assert ("title" in review) == (rev >= "2025-06-18")
    assert ("title" in review["arguments"][0]) == (rev >= "2025-06-18")
    assert ("icons" in review) == (rev >= "2025-11-25")
    assert review["arguments"][0] == {
        "name": "code", "description": "The code to review", "required": True,
        **({"title": "Code"} if rev >= "2025-06-18" else {}),
    }
    bad = c.request("prompts/list", {"cursor": "not a cursor!"})
    assert bad["error"]["code"] == -32602


@pytest.mark.parametrize("rev", REVISIONS)
def test_get_renders_with_traceability(raw: Raw, rev: str, kit_bundle: object) -> None:
    c = raw(rev)
    c.initialize(rev)
    r = c.request("prompts/get", {"name": "code_review", "arguments": REVIEW_ARGS})["result"]
    assert [m["content"]["text"] for m in r["messages"]] == [
        "You are a careful reviewer.", "Review this go code (pep8):\nprint(1)"]
    ann = r["messages"][0]["content"]["annotations"]
    assert ("lastModified" in ann) == (rev >= "2025-06-18") and ann["priority"] == 0.5
    meta = r["_meta"]
    assert meta["promptops/package"] == "kit" and meta["promptops/version"] == "1.2.3"
    assert meta["promptops/digest"].startswith("sha256:") and len(meta["promptops/commit"]) == 40


@pytest.mark.parametrize("rev", REVISIONS)
def test_content_types_degrade_by_revision(raw: Raw, rev: str) -> None:
    c = raw(rev)
    c.initialize(rev)
    msgs = c.request("prompts/get", {"name": "media", "arguments": {"topic": "cats"}})["result"][
        "messages"]
    image, audio, file_res, inline_res, link = (m["content"] for m in msgs)
    assert image == {"type": "image", "mimeType": "image/png",
                     "data": base64.b64encode(PNG).decode()}
    if rev >= "2025-03-26":
        assert audio == {"type": "audio", "mimeType": "audio/wav",
                         "data": base64.b64encode(WAV).decode()}
    else:  # no AudioContent: the same bytes as an embedded blob resource
        assert audio["type"] == "resource"
        assert audio["resource"] == {"uri": "promptops://kit/assets/beep.wav",
                                     "mimeType": "audio/wav",
                                     "blob": base64.b64encode(WAV).decode()}
    assert file_res["resource"]["text"] == "# Guide\nBe kind.\n"
    assert inline_res["resource"] == {"uri": "note://cats", "mimeType": "text/plain",
                                      "text": "About cats"}
    if rev >= "2025-06-18":
        assert link["type"] == "resource_link" and link["uri"] == "https://example.com/cats"
        assert link["title"] == "The docs"
    else:  # no ResourceLink: a text block carrying the link
        assert link == {"type": "text", "text": "The docs: https://example.com/cats\nRead these"}


@pytest.mark.parametrize("rev", REVISIONS)
def test_validation_errors_are_invalid_params(raw: Raw, rev: str) -> None:
    c = raw(rev)
    c.initialize(rev)
    cases = {
        "unknown prompt 'nope'": ("nope", {}),
        "missing required argument 'code'": ("code_review", {"language": "go"}),
        "unknown argument 'colour'": ("code_review", {**REVIEW_ARGS, "colour": "red"}),
        "must be one of": ("code_review", {**REVIEW_ARGS, "language": "cobol"}),
        "does not match its pattern": ("code_review", {**REVIEW_ARGS, "style": "PEP 8"}),
        "over its maxLength 50": ("code_review", {**REVIEW_ARGS, "code": "x" * 51}),
    }
    for text, (name, args) in cases.items():
        err = c.request("prompts/get", {"name": name, "arguments": args})["error"]
        assert err["code"] == -32602 and text in err["message"], (text, err)
    err = c.request("prompts/get", {"name": "broken"})["error"]
    assert err["code"] == -32603 and "ZeroDivisionError" in err["message"]
    assert c.request("prompts/get", {"arguments": {}})["error"]["code"] == -32602


@pytest.mark.parametrize("rev", REVISIONS)
def test_completion(raw: Raw, rev: str) -> None:
    c = raw(rev)
    c.initialize(rev)

    def complete(arg: str, value: str, name: str = "code_review") -> Any:
        return c.request("completion/complete", {
            "ref": {"type": "ref/prompt", "name": name},
            "argument": {"name": arg, "value": value}})

    assert complete("language", "p")["result"]["completion"] == {
        "values": ["python", "Pascal"], "total": 2, "hasMore": False}
    assert complete("style", "PY")["result"]["completion"]["values"] == ["pythonic"]
    assert complete("style", "")["result"]["completion"]["total"] == 3
    assert complete("code", "")["result"]["completion"]["values"] == []
    assert complete("nope", "x")["error"]["code"] == -32602
    assert complete("code", "x", name="nope")["error"]["code"] == -32602


@pytest.mark.parametrize("rev", ["2024-11-05", "2025-11-25"])
def test_resources(raw: Raw, rev: str) -> None:
    c = raw(rev)
    c.initialize(rev)
    listed = c.request("resources/list")["result"]["resources"]
    assert [r["uri"] for r in listed] == ["promptops://kit/assets/beep.wav",
                                          "promptops://kit/assets/pixel.png",
                                          "promptops://kit/notes/guide.md"]
    read = c.request("resources/read", {"uri": "promptops://kit/notes/guide.md"})["result"]
    assert read["contents"] == [{"uri": "promptops://kit/notes/guide.md",
                                 "mimeType": "text/markdown", "text": "# Guide\nBe kind.\n"}]
    png = c.request("resources/read", {"uri": "promptops://kit/assets/pixel.png"})["result"]
    assert base64.b64decode(png["contents"][0]["blob"]) == PNG
    missing = c.request("resources/read", {"uri": "promptops://kit/nope"})["error"]
    assert missing["code"] == -32002
    assert c.request("resources/templates/list")["result"] == {"resourceTemplates": []}


def test_logging_set_level(raw: Raw) -> None:
    c = raw("2025-06-18")
    c.initialize("2025-06-18")
    assert c.request("logging/setLevel", {"level": "info"})["result"] == {}
    assert c.request("logging/setLevel", {"level": "loud"})["error"]["code"] == -32602


def test_batches_in_2025_03_26(raw: Raw) -> None:
    c = raw("2025-03-26")
    c.initialize("2025-03-26")
    c.send([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
        {"jsonrpc": "2.0", "id": "b", "method": "prompts/get", "params": {"name": "nope"}},
        {"jsonrpc": "2.0", "id": "c", "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {}}},
    ])
    batch = c.recv()
    assert [m["id"] for m in batch] == ["a", "b", "c"]
    assert batch[0]["result"] == {} and batch[1]["error"]["code"] == -32602
    assert batch[2]["error"]["code"] == -32600
    c.send([{"jsonrpc": "2.0", "method": "notifications/whatever"}])
    c.send([])
    assert c.recv()["error"]["code"] == -32600  # only notifications: no reply at all
    assert c.request("ping")["result"] == {}


@pytest.mark.parametrize("rev", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batches_refused_elsewhere(raw: Raw, rev: str) -> None:
    c = raw(rev)
    c.initialize(rev)
    c.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    reply = c.recv()
    assert isinstance(reply, dict) and reply["error"]["code"] == -32600
    assert ("id" in reply) == (rev < "2025-11-25")
