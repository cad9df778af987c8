"""The methods table through the serve core, in process: what each request gets back.

The wire tests (tests/serve/test_modern.py, test_protocol_edges.py, ...) run a server
process; these send the same JSON-RPC to :class:`~promptops.serve.server.Server` directly,
so every refusal a handler makes (the params a method checks, the code it answers with)
is pinned by a test that takes milliseconds, on both eras. Each reply is also checked
against the official schema of its revision.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.repo import make_repo
from serve_helpers import check_message, envelope, kit_files

from promptops.pipeline.build import Build
from promptops.serve.catalog import Catalog
from promptops.serve.methods import Settings
from promptops.serve.revisions import LATEST_STATELESS, SESSION_REVISIONS
from promptops.serve.server import Server
from promptops.serve.session import Session

SESSION_REV = SESSION_REVISIONS[0]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("kit") / "repo"
    make_repo(root, kit_files(extra_prompts=98))  # 101 prompts: more than a default page
    return dict(Build(root, "HEAD").bundle)


class Client:
    """One session of either era, talking JSON-RPC to an in-process server."""

    def __init__(self, server: Server, revision: str, caps: dict[str, Any] | None = None):
        self.server, self.revision, self.caps = server, revision, caps or {}
        self.sent: list[Any] = []
        self.session: Session = server.open(self.sent.append)
        self.stateless = revision == LATEST_STATELESS
        if not self.stateless:
            init = self.reply("initialize", {"protocolVersion": revision,
                                             "capabilities": self.caps,
                                             "clientInfo": {"name": "t", "version": "1"}})
            assert init["result"]["protocolVersion"] == revision
            server.handle(self.session, {"jsonrpc": "2.0", "method": "notifications/initialized"})

    def reply(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.stateless:
            params = {**envelope(self.caps), **params}
        [out] = self.server.handle(self.session, {"jsonrpc": "2.0", "id": 1, "method": method,
                                                  "params": params})
        check_message(out, self.revision if method != "initialize" else SESSION_REV, method)
        return dict(out)

    def error(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        out = self.reply(method, params)
        assert "error" in out, out
        return dict(out["error"])

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        out = self.reply(method, params)
        assert "result" in out, out
        return dict(out["result"])


@pytest.fixture(params=[SESSION_REV, LATEST_STATELESS])
def client(request: pytest.FixtureRequest, bundle: dict[str, Any]) -> Client:
    return Client(Server(Catalog([bundle])), request.param)


STRINGS = "ref.name, argument.name and argument.value must be strings"


@pytest.mark.parametrize("value", [1, None, ["py"], {"v": "py"}, True])
def test_completion_refuses_a_value_that_is_not_a_string(client: Client, value: Any) -> None:
    """-32602 (the request is wrong), never -32603 (the server failed)."""
    err = client.error("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "code_review"},
        "argument": {"name": "language", "value": value}})
    assert err == {"code": -32602, "message": STRINGS}


def test_completion_refuses_names_that_are_not_strings(client: Client) -> None:
    for ref_name, arg_name in ((7, "language"), ("code_review", 7), (None, "language")):
        err = client.error("completion/complete", {
            "ref": {"type": "ref/prompt", "name": ref_name},
            "argument": {"name": arg_name, "value": "p"}})
        assert err == {"code": -32602, "message": STRINGS}


def test_completion_needs_ref_and_argument_objects_and_a_prompt_ref(client: Client) -> None:
    needs = "completion/complete needs `ref` and `argument` objects"
    arg = {"name": "language", "value": "p"}
    assert client.error("completion/complete", {"argument": arg}) == {
        "code": -32602, "message": needs}
    assert client.error("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "code_review"}, "argument": "language"}) == {
        "code": -32602, "message": needs}
    assert client.error("completion/complete", {
        "ref": {"type": "ref/resource", "uri": "x://y"}, "argument": arg}) == {
        "code": -32602, "message": "no completions for 'ref/resource': this server has no "
                                   "resource templates"}


def test_completion_answers_from_the_prompts_enum_and_examples(client: Client) -> None:
    got = client.result("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "code_review"},
        "argument": {"name": "language", "value": "p"}})
    assert got["completion"] == {"values": ["python", "Pascal"], "total": 2, "hasMore": False}


def test_prompts_get_refuses_bad_params(client: Client) -> None:
    assert client.error("prompts/get", {"name": 3}) == {
        "code": -32602, "message": "prompts/get needs a prompt `name` (a string)"}
    assert client.error("prompts/get", {}) == {
        "code": -32602, "message": "prompts/get needs a prompt `name` (a string)"}
    assert client.error("prompts/get", {"name": "code_review", "arguments": ["go"]}) == {
        "code": -32602, "message": "arguments must be an object of strings"}
    assert client.error("prompts/get", {"name": "nope"}) == {
        "code": -32602, "message": "unknown prompt 'nope'"}


def test_prompts_get_renders_and_carries_the_meta(client: Client) -> None:
    got = client.result("prompts/get", {"name": "code_review", "arguments": {
        "code": "x = 1", "language": "go"}})
    texts = [m["content"]["text"] for m in got["messages"]]
    assert texts == ["You are a careful reviewer.", "Review this go code (pep8):\nx = 1"]
    assert (got["_meta"]["promptops/package"], got["_meta"]["promptops/version"]) == (
        "kit", "1.2.3")


def test_prompts_get_without_a_required_argument(client: Client) -> None:
    """Session era: -32602 naming it; stateless era without elicitation: the same."""
    err = client.error("prompts/get", {"name": "code_review", "arguments": {"code": "x"}})
    assert err["code"] == -32602 and "language" in err["message"]
    assert err["data"] == {"argument": "language"}


def test_resources_read_refuses_bad_params_with_the_revisions_code(client: Client) -> None:
    assert client.error("resources/read", {"uri": 5}) == {
        "code": -32602, "message": "resources/read needs a `uri` (a string)"}
    missing = client.error("resources/read", {"uri": "promptops://kit/nope"})
    assert missing == {"code": -32602 if client.stateless else -32002,
                       "message": "resource not found: promptops://kit/nope",
                       "data": {"uri": "promptops://kit/nope"}}


def test_resources_read_and_list(client: Client) -> None:
    listed = client.result("resources/list", {})
    uris = [r["uri"] for r in listed["resources"]]
    assert "promptops://kit/notes/guide.md" in uris
    read = client.result("resources/read", {"uri": "promptops://kit/notes/guide.md"})
    assert read["contents"] == [{"uri": "promptops://kit/notes/guide.md",
                                 "mimeType": "text/markdown", "text": "# Guide\nBe kind.\n"}]
    blob = next(u for u in uris if u.endswith("pixel.png"))
    [content] = client.result("resources/read", {"uri": blob})["contents"]
    assert "blob" in content and "text" not in content and content["mimeType"] == "image/png"
    assert client.result("resources/templates/list", {})["resourceTemplates"] == []


def test_cacheable_results_carry_ttl_and_scope_only_when_stateless(client: Client) -> None:
    hints = {"ttlMs": 60_000, "cacheScope": "public"}
    for method, params in (("prompts/list", {}), ("resources/list", {}),
                           ("resources/templates/list", {}),
                           ("resources/read", {"uri": "promptops://kit/notes/guide.md"})):
        got = client.result(method, params)
        shown = {k: got[k] for k in hints if k in got}
        assert shown == (hints if client.stateless else {}), method


@pytest.mark.parametrize(("size", "pages"), [(None, [100, 1]), (40, [40, 40, 21])])
def test_prompts_list_pages_with_a_cursor(bundle: dict[str, Any], size: int | None,
                                          pages: list[int]) -> None:
    settings = Settings() if size is None else Settings(page_size=size)
    for revision in (SESSION_REV, LATEST_STATELESS):
        c = Client(Server(Catalog([bundle]), settings), revision)
        seen: list[list[str]] = []
        page = c.result("prompts/list", {})
        while True:
            seen.append([p["name"] for p in page["prompts"]])
            if "nextCursor" not in page:
                break
            page = c.result("prompts/list", {"cursor": page["nextCursor"]})
        assert [len(s) for s in seen] == pages
        assert [n for s in seen for n in s] == sorted(p["name"] for p in bundle["prompts"])


def test_initialize_and_discover_announce_instructions_and_capabilities(
        bundle: dict[str, Any]) -> None:
    session = Client(Server(Catalog([bundle])), SESSION_REV)
    assert session.result("ping", {}) == {}
    assert session.result("logging/setLevel", {"level": "error"}) == {}
    init = Client(Server(Catalog([bundle])), SESSION_REV).server.handle(
        Server(Catalog([bundle])).open(lambda m: None),
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": SESSION_REV, "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}})[0]["result"]
    assert init["instructions"] == "Use code_review for reviews."
    assert init["serverInfo"]["name"] == "promptops"
    assert init["capabilities"] == {"prompts": {"listChanged": True}, "completions": {},
                                    "logging": {}, "resources": {}}
    modern = Client(Server(Catalog([bundle])), LATEST_STATELESS)
    found = modern.result("server/discover", {})
    assert found["instructions"] == "Use code_review for reviews."
    assert found["supportedVersions"][0] == LATEST_STATELESS
    assert found["capabilities"] == {"prompts": {"listChanged": True}, "completions": {},
                                     "resources": {}}
    assert (found["ttlMs"], found["cacheScope"]) == (60_000, "public")


def test_listen_refuses_bad_params(bundle: dict[str, Any]) -> None:
    c = Client(Server(Catalog([bundle])), LATEST_STATELESS)
    assert c.error("subscriptions/listen", {"notifications": ["promptsListChanged"]}) == {
        "code": -32602, "message": "subscriptions/listen needs a `notifications` object"}
    params = envelope()
    params["_meta"]["io.modelcontextprotocol/logLevel"] = "loud"
    [out] = c.server.handle(c.session, {"jsonrpc": "2.0", "id": 2, "method":
                                        "subscriptions/listen", "params": {
                                            **params, "notifications": {}}})
    assert out["error"] == {"code": -32602, "message": "unknown log level 'loud' in _meta "
                            "io.modelcontextprotocol/logLevel"}


def test_listen_acknowledges_only_what_it_will_send(bundle: dict[str, Any]) -> None:
    def ack(server: Server, wanted: dict[str, Any]) -> dict[str, Any]:
        session = server.open(lambda m: None)
        [out] = server.handle(session, {"jsonrpc": "2.0", "id": 9, "method":
                                        "subscriptions/listen",
                                        "params": {**envelope(), "notifications": wanted}})
        assert out["method"] == "notifications/subscriptions/acknowledged"
        assert out["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 9}
        return dict(out["params"]["notifications"])

    plain = Server(Catalog([bundle]))
    both = {"promptsListChanged": True, "toolsListChanged": True}
    assert ack(plain, both) == {"promptsListChanged": True}  # no tool view: no tool news
    assert ack(plain, {"promptsListChanged": "yes"}) == {}
    assert ack(plain, {}) == {}
    tools = Server(Catalog([bundle]), Settings(tools="catalog"))
    assert ack(tools, both) == both
    assert ack(tools, {"toolsListChanged": True}) == {"toolsListChanged": True}


def test_settings_refuse_an_unknown_tool_view() -> None:
    with pytest.raises(ValueError, match="unknown tool view 'some'"):
        Settings(tools="some")
    assert Settings(tools="per-prompt").tools == "per-prompt"
    assert Settings().tools is None


def test_no_resources_capability_without_resources(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, {"promptops.yaml": "name: bare\nversion: 0.1.0\n",
                     "prompts/hi.prompt.yaml": "messages:\n  - role: user\n    text: hi\n"})
    c = Client(Server(Catalog([dict(Build(root, "HEAD").bundle)])), LATEST_STATELESS)
    found = c.result("server/discover", {})
    assert found["capabilities"] == {"prompts": {"listChanged": True}, "completions": {}}
    assert "instructions" not in found


ELICIT = {"elicitation": {"form": {}}}


def test_missing_arguments_are_asked_for_then_merged(bundle: dict[str, Any]) -> None:
    """2026-07-28 with elicitation: input_required, then the answers and the state merged
    (what the request sends wins over the state); a non-string is refused at once."""
    c = Client(Server(Catalog([bundle])), LATEST_STATELESS, ELICIT)
    first = c.result("prompts/get", {"name": "code_review", "arguments": {"language": "rust"}})
    assert first["resultType"] == "input_required"
    schema = first["inputRequests"]["arguments"]["params"]["requestedSchema"]
    assert schema["required"] == ["code"] and list(schema["properties"]) == ["code"]
    answer = {"arguments": {"action": "accept", "content": {"code": "fn main(){}"}}}
    done = c.result("prompts/get", {"name": "code_review", "requestState": first["requestState"],
                                    "inputResponses": answer})
    assert done["resultType"] == "complete"
    assert done["messages"][1]["content"]["text"] == "Review this rust code (pep8):\nfn main(){}"
    override = c.result("prompts/get", {"name": "code_review", "arguments": {"language": "go"},
                                        "requestState": first["requestState"],
                                        "inputResponses": answer})
    assert override["messages"][1]["content"]["text"].startswith("Review this go code")
    wrong = c.error("prompts/get", {"name": "code_review", "arguments": {"language": ["rust"]}})
    assert wrong == {"code": -32602, "message": "argument 'language' must be a string",
                     "data": {"argument": "language"}}
    # nothing missing: rendered at once, no state involved
    whole = c.result("prompts/get", {"name": "code_review", "arguments": {
        "language": "go", "code": "x"}})
    assert whole["resultType"] == "complete"
    # a client that cannot elicit gets the plain refusal
    plain = Client(Server(Catalog([bundle])), LATEST_STATELESS)
    err = plain.error("prompts/get", {"name": "code_review", "arguments": {"language": "rust"}})
    assert err["code"] == -32602 and err["data"] == {"argument": "code"}


def test_a_session_client_is_never_asked(bundle: dict[str, Any]) -> None:
    c = Client(Server(Catalog([bundle])), SESSION_REV, ELICIT)
    err = c.error("prompts/get", {"name": "code_review", "arguments": {"language": "rust"},
                                  "inputResponses": {"arguments": {"action": "decline"}}})
    assert err["code"] == -32602 and err["data"] == {"argument": "code"}


def test_media_content_is_shaped_for_each_revision(bundle: dict[str, Any]) -> None:
    kinds = {}
    for revision in ("2024-11-05", SESSION_REV, LATEST_STATELESS):
        c = Client(Server(Catalog([bundle])), revision)
        got = c.result("prompts/get", {"name": "media", "arguments": {"topic": "cats"}})
        kinds[revision] = [m["content"]["type"] for m in got["messages"]]
        assert got["_meta"]["promptops/package"] == "kit"
        resource = got["messages"][2]["content"]["resource"]
        assert resource["uri"] == "promptops://kit/notes/guide.md"
    assert kinds["2024-11-05"] == ["image", "resource", "resource", "resource", "text"]
    assert kinds[SESSION_REV] == kinds[LATEST_STATELESS] == [
        "image", "audio", "resource", "resource", "resource_link"]


def test_a_template_failure_is_an_internal_error_without_data(client: Client) -> None:
    err = client.error("prompts/get", {"name": "broken"})
    assert err["code"] == -32603 and "data" not in err


def test_a_request_only_a_server_sends_is_not_found_and_says_so(client: Client) -> None:
    err = client.error("sampling/createMessage", {})
    assert err == {"code": -32601, "message": "'sampling/createMessage' is a request a server "
                                              "sends to its client, not one it answers"}
