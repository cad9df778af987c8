"""A ``prompts/get`` reply's short encoding path writes what ``json`` writes, byte for byte.

``wire.encode`` writes a reply of text messages without walking its constant parts
(the keys, and the bundle's ``_meta``, a ``wire.Sealed`` encoded once). The judge here
is the standard library's ``json.dumps`` with the same separators, on replies the real
server core makes from a real package (every prompt of the kit, every session revision
and the stateless one, awkward ids and arguments), and on hand-made shapes that must
take the general path instead.

Every comparison runs once per codec (``promptops.serve.codec``: the stdlib one stdio uses,
the orjson one HTTP uses), as uvicorn's test suite runs over both of its HTTP
implementations (its ``http_protocol_cls`` fixture): one oracle, both peers byte-identical.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest
from serve_helpers import envelope, kit_files

from promptops.pipeline.build import Build
from promptops.serve import wire
from promptops.serve.catalog import Catalog
from promptops.serve.codec import Codec, OrjsonCodec, StdlibCodec
from promptops.serve.revisions import SESSION_REVISIONS
from promptops.serve.server import Server

TEXT_PROMPT = """\
description: "Explain \\"{{ topic }}\\" \u00e9\u4e2d"
arguments:
  - name: topic
    required: true
  - name: tone
    default: neutral
messages:
  - role: assistant
    text: "You are kind. Tone: {{ tone }}.\\n\\ttab \\u2028 end"
  - role: user
    text: |
      Steps for {{ topic }}:
      {% for s in ["one", "two"] %}{{ loop.index }}. {{ s | capitalize }}
      {% endfor %}
"""
ARGUMENTS = ["plain", 'quote " backslash \\ slash /', "\u00e9\u4e2d\U0001f600", "\x00\x1f\x7f",
             "\ud800 lone surrogate", "line\nbreak\r\n", "</script>"]
IDS = [0, 7, -3, 2**62, "id", 'a"[,b\\', "\u00e9", ""]


def _reference(message: Any) -> bytes:
    """The standard library's encoding (ASCII escapes when UTF-8 cannot hold the text)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode()


@pytest.fixture(params=[StdlibCodec, OrjsonCodec], ids=lambda cls: cls.name)
def codec(request: pytest.FixtureRequest) -> Codec:
    """Each codec in turn: the reply bytes of both must be the oracle's."""
    made: Codec = request.param()
    return made


@pytest.fixture
def server(repo_factory: Callable[..., git.Repo]) -> Server:
    repo = repo_factory({**kit_files(extra_prompts=3), "prompts/plain.prompt.yaml": TEXT_PROMPT})
    return Server(Catalog([Build(Path(repo.working_tree_dir or "."), "HEAD").bundle]))


def _session(server: Server, revision: str | None) -> Any:
    session = server.open(lambda message: None)
    if revision is not None:
        server.handle(session, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                "params": {"protocolVersion": revision, "capabilities": {}}})
    return session


@pytest.mark.parametrize("revision", [*SESSION_REVISIONS, None])
def test_every_reply_of_the_core_encodes_as_json_does(server: Server, revision: str | None,
                                                      codec: Codec) -> None:
    session = _session(server, revision)
    snap = server.catalog.snapshot
    short = 0
    for i, name in enumerate(snap.names):
        declared = {a["name"] for a in snap.index[name].prompt["arguments"]}
        for j, topic in enumerate(ARGUMENTS):
            args = {"topic": topic} if "topic" in declared else {}
            params: dict[str, Any] = {"name": name, "arguments": args}
            if revision is None:
                params.update(envelope())
            [reply] = server.handle(session, {"jsonrpc": "2.0", "id": IDS[(i + j) % len(IDS)],
                                              "method": "prompts/get", "params": params})
            assert codec.encode(reply) == _reference(reply), (name, topic)
            short += wire._text_reply(reply) is not None
    # the session era's text prompts (the fillers and plain) took the short path; the
    # stateless era's _meta is a copy with keys of its own, so it never does
    assert (short >= len(ARGUMENTS) * 4) == (revision is not None)


def _reply(**changes: Any) -> dict[str, Any]:
    meta = wire.Sealed({"promptops/package": "kit", "promptops/digest": "sha256:00"})
    result: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi \u00e9"}},
                     {"role": "assistant", "content": {"type": "text", "text": "ok"}}],
        "description": "d", "_meta": meta}
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": 5, "result": result}
    for path, value in changes.items():
        *parents, key = path.split("__")
        node: Any = reply
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if value is KeyError:
            del node[key]
        else:
            node[key] = value
    return reply


@pytest.mark.parametrize("changes", [
    {}, {"result__description": KeyError}, {"id": "x\u2028"}, {"result__messages": []},
], ids=["as served", "no description", "string id", "no messages"])
def test_shapes_of_the_short_path(changes: dict[str, Any], codec: Codec) -> None:
    reply = _reply(**changes)
    assert wire._text_reply(reply) is not None
    assert codec.encode(reply) == _reference(reply)


@pytest.mark.parametrize("changes", [
    {"id": True}, {"id": 1.5}, {"id": None}, {"id": wire.LongInt("9" * 5000)},
    {"jsonrpc": "1.0"}, {"extra": 1}, {"result__description": None},
    {"result__resultType": "complete"}, {"result__messages__0__content__annotations": {}},
    {"result__messages__1__content": {"type": "image", "data": "AA==", "mimeType": "x"}},
    {"result__messages__0__role": 3}, {"result__messages__0__content__text": 3},
    {"result___meta": {"promptops/package": "kit"}}, {"result__messages": ()},
], ids=lambda c: ",".join(c))
def test_every_other_shape_takes_the_general_path(changes: dict[str, Any],
                                                  codec: Codec) -> None:
    reply = _reply(**changes)
    assert wire._text_reply(reply) is None
    if isinstance(reply["id"], wire.LongInt):
        assert codec.encode(reply).startswith(b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b",")
    else:
        assert codec.encode(reply) == _reference(reply)


def test_a_sealed_object_cannot_change_and_copies_freely() -> None:
    sealed = wire.Sealed({"a": "b\u00e9", "n": 1, "t": True})
    assert sealed.text == json.dumps(sealed, ensure_ascii=False, separators=(",", ":"))
    for change in (lambda: sealed.__setitem__("a", "c"), lambda: sealed.pop("a"),
                   lambda: sealed.update(a="c"), sealed.clear, sealed.popitem,
                   lambda: sealed.setdefault("z", 1), lambda: sealed.__delitem__("a"),
                   lambda: sealed.__ior__({"z": 1})):
        with pytest.raises(TypeError):
            change()
    assert sealed == {"a": "b\u00e9", "n": 1, "t": True}
    for twin in (copy.copy(sealed), copy.deepcopy(sealed), pickle.loads(pickle.dumps(sealed))):
        assert twin == sealed and type(twin) is wire.Sealed and twin.text == sealed.text
    assert {**sealed, "x": 1} == {"a": "b\u00e9", "n": 1, "t": True, "x": 1}


def test_auto_picks_orjson_when_installed_and_each_transport_takes_its_codec() -> None:
    from promptops.serve import codec as codecs
    from promptops.serve.transports.stdio import Output

    assert codecs.auto().name == "orjson"  # the http extra is installed for the tests
    assert Output(1).parse is codecs.STDLIB.parse is wire.parse  # stdio: the stdlib's bytes
    orjson = codecs.OrjsonCodec()
    assert Output(1, orjson).parse == orjson.parse
