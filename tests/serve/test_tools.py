"""The tool view (``serve --tools``): prompts for clients that only call tools.

In process, over real bundles built from a real repository; every server message is judged
against the official schema of its revision, every structured result against the tool's own
``outputSchema`` and every ``inputSchema`` as a JSON Schema. The tool path is held to the
prompt path: the same messages for the same arguments, the same refusal texts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import jsonschema  # type: ignore[import-untyped]
import pytest
from serve_helpers import check_message, commit, envelope, kit_files

from promptops.pipeline.build import Build
from promptops.serve.catalog import LIST_CHANGED, TOOLS_LIST_CHANGED, Catalog
from promptops.serve.methods import Settings
from promptops.serve.revisions import SESSION_REVISIONS
from promptops.serve.server import Server
from promptops.serve.session import Session
from promptops.serve.views import Views

TYPED = """\
description: Typed arguments
arguments:
  - name: count
    type: integer
    required: true
    schema: {minimum: 1, maximum: 9}
  - name: tags
    type: array
    schema: {items: {type: string}}
    default: [a, b]
messages:
  - role: user
    text: "{{ count }} of {{ tags | join(',') }}"
"""
SYSTEM = """\
description: With a system message
messages:
  - role: system
    text: Be brief.
  - role: user
    text: Hello
"""
SUB = "io.modelcontextprotocol/subscriptionId"
SESSION_TOOLS = [r for r in SESSION_REVISIONS]


def _files(extra: dict[str, str] | None = None, manifest: str = "") -> dict[str, str | bytes]:
    files = kit_files(extra_prompts=3)
    files["prompts/typed.prompt.yaml"] = TYPED
    files["prompts/sys.prompt.yaml"] = SYSTEM
    if manifest:
        files["promptops.yaml"] = f"{files['promptops.yaml']}{manifest}"  # type: ignore[str-bytes-safe]
    files.update(extra or {})
    return files


@pytest.fixture
def built(repo_factory: Callable[..., git.Repo]) -> Callable[..., tuple[git.Repo, dict[str, Any]]]:
    def make(manifest: str = "") -> tuple[git.Repo, dict[str, Any]]:
        repo = repo_factory(_files(manifest=manifest))
        return repo, Build(Path(repo.working_tree_dir or "."), "HEAD").bundle
    return make


class Conn:
    """One session in process; every message it receives is judged for its revision."""

    def __init__(self, server: Server, revision: str) -> None:
        self.server, self.revision, self.sent = server, revision, []  # type: list[Any]
        self.session: Session = server.open(self.sent.append)
        self.n = 0
        self.stateless = revision >= "2026-07-28"
        if not self.stateless:
            self.caps = self.call("initialize", {"protocolVersion": revision, "capabilities": {}})
            server.handle(self.session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        else:
            self.caps = self.call("server/discover", {})

    def raw(self, method: str, params: dict[str, Any]) -> Any:
        self.n += 1
        if self.stateless:
            params = {**envelope(), **params}
        [reply] = self.server.handle(self.session, {"jsonrpc": "2.0", "id": self.n,
                                                    "method": method, "params": params})
        check_message(reply, self.revision, method)
        return reply

    def call(self, method: str, params: dict[str, Any]) -> Any:
        reply = self.raw(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def tools(self) -> list[dict[str, Any]]:
        out, cursor = [], None
        while True:
            page = self.call("tools/list", {"cursor": cursor} if cursor else {})
            out += page["tools"]
            cursor = page.get("nextCursor")
            if not cursor:
                return out


def _server(bundle: dict[str, Any], tools: str | None, page_size: int = 100) -> Server:
    return Server(Catalog([bundle]), Settings(tools=tools, page_size=page_size))


def _check_output(tool: dict[str, Any], result: dict[str, Any]) -> None:
    if "outputSchema" in tool:
        jsonschema.Draft202012Validator(tool["outputSchema"]).validate(
            result["structuredContent"])
    assert json.loads(result["content"][0]["text"]) == result.get(
        "structuredContent", json.loads(result["content"][0]["text"]))


ALL = [*SESSION_TOOLS, "2026-07-28"]


@pytest.mark.parametrize("revision", ALL)
def test_off_by_default_nothing_changes(built: Any, revision: str) -> None:
    _, bundle = built()
    conn = Conn(_server(bundle, None), revision)
    caps = conn.caps["capabilities"]
    assert "tools" not in caps
    reply = conn.raw("tools/list", {})
    assert reply["error"]["code"] == -32601
    assert "offers no tools" in reply["error"]["message"]


@pytest.mark.parametrize("revision", ALL)
def test_catalog_tools_list_and_render_as_prompts_get(built: Any, revision: str) -> None:
    _, bundle = built()
    conn = Conn(_server(bundle, "catalog", page_size=1), revision)
    assert conn.caps["capabilities"]["tools"] == {"listChanged": True}
    tools = {t["name"]: t for t in conn.tools()}  # paged one tool a page
    assert list(tools) == ["list_prompts", "get_prompt"]
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        if revision >= "2025-03-26":
            ann = tool["annotations"]
            assert (ann["readOnlyHint"], ann["destructiveHint"], ann["idempotentHint"],
                    ann["openWorldHint"]) == (True, False, True, False)
        assert ("outputSchema" in tool) == (revision >= "2025-06-18")

    args = {"code": "x = 1", "language": "go"}
    got = conn.call("prompts/get", {"name": "code_review", "arguments": args})
    res = conn.call("tools/call", {"name": "get_prompt",
                                   "arguments": {"name": "code_review", "arguments": args}})
    assert "isError" not in res
    structured = json.loads(res["content"][0]["text"])
    assert structured["messages"] == got["messages"]
    assert res["_meta"]["promptops/digest"] == bundle["digest"]
    _check_output(tools["get_prompt"], res)

    names, cursor = [], None
    while True:
        res = conn.call("tools/call", {"name": "list_prompts",
                                       "arguments": {"cursor": cursor} if cursor else {}})
        page = json.loads(res["content"][0]["text"])
        _check_output(tools["list_prompts"], res)
        names += [p["name"] for p in page["prompts"]]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    assert names == sorted(p["name"] for p in bundle["prompts"])  # prompts/list's order


@pytest.mark.parametrize("revision", ["2025-06-18", "2026-07-28"])
def test_a_callers_mistake_is_a_tool_error_with_the_prompt_paths_message(
        built: Any, revision: str) -> None:
    _, bundle = built()
    conn = Conn(_server(bundle, "catalog"), revision)
    cases = [
        ({"name": "code_review", "arguments": {"code": "x"}}, None),  # missing language
        ({"name": "code_review", "arguments": {"code": "x", "language": "cobol"}}, None),
        ({"name": "code_review", "arguments": {"code": "x", "language": "go", "nope": "1"}},
         None),
        ({"name": "broken", "arguments": {}}, None),  # a template that fails
        ({"name": "no_such_prompt"}, "unknown prompt 'no_such_prompt'"),
    ]
    for arguments, expected in cases:
        res = conn.call("tools/call", {"name": "get_prompt", "arguments": arguments})
        assert res["isError"] is True, arguments
        text = res["content"][0]["text"]
        if expected is None:  # the very message prompts/get gives
            err = conn.raw("prompts/get", arguments)["error"]
            assert text == err["message"], arguments
        else:
            assert text == expected
    unknown = conn.raw("tools/call", {"name": "nope", "arguments": {}})
    assert unknown["error"]["code"] == -32602 and "unknown tool 'nope'" in unknown["error"][
        "message"]
    bad = conn.raw("tools/call", {"name": "get_prompt", "arguments": []})
    assert bad["error"]["code"] == -32602


@pytest.mark.parametrize("revision", ALL)
def test_per_prompt_tools_are_typed_by_the_prompts_arguments(built: Any, revision: str) -> None:
    _, bundle = built()
    conn = Conn(_server(bundle, "per-prompt", page_size=2), revision)
    tools = {t["name"]: t for t in conn.tools()}
    prompts = [p["name"] for p in bundle["prompts"]]
    assert sorted(tools) == sorted(prompts)  # one tool per prompt, named as the prompt
    review = tools["code_review"]["inputSchema"]
    jsonschema.Draft202012Validator.check_schema(review)
    assert review["required"] == ["code", "language"]
    assert review["additionalProperties"] is False
    props = review["properties"]
    assert props["language"]["enum"] == ["python", "go", "rust", "Pascal"]
    assert props["style"] == {"type": "string", "examples": ["pep8", "google", "pythonic"],
                              "pattern": "^(?:[a-z0-9]+)$", "default": "pep8",
                              "maxLength": props["style"]["maxLength"]}
    assert props["code"]["maxLength"] == 50 and props["code"]["description"]
    typed = tools["typed"]["inputSchema"]
    assert typed["properties"]["count"] == {"type": "integer", "minimum": 1, "maximum": 9}
    assert typed["properties"]["tags"]["type"] == "array"
    assert typed["properties"]["tags"]["default"] == ["a", "b"]
    if revision >= "2025-06-18":
        assert tools["code_review"]["title"] == "Code review"
    if revision >= "2025-11-25":
        assert tools["code_review"]["icons"][0]["src"] == "https://example.com/icon.png"

    # What the schema accepts renders exactly as prompts/get does with the wire strings.
    res = conn.call("tools/call", {"name": "typed", "arguments": {"count": 3, "tags": ["x"]}})
    jsonschema.Draft202012Validator(typed).validate({"count": 3, "tags": ["x"]})
    got = conn.call("prompts/get", {"name": "typed",
                                    "arguments": {"count": "3", "tags": '["x"]'}})
    assert json.loads(res["content"][0]["text"])["messages"] == got["messages"]
    _check_output(tools["typed"], res)
    # ... and what the schema refuses, the tool refuses with the prompt path's words.
    bad = conn.call("tools/call", {"name": "typed", "arguments": {"count": 12}})
    err = conn.raw("prompts/get", {"name": "typed", "arguments": {"count": "12"}})["error"]
    assert bad["isError"] is True and bad["content"][0]["text"] == err["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(typed).validate({"count": 12})
    # A system message is served as the prompt path serves it.
    sys_tool = conn.call("tools/call", {"name": "sys", "arguments": {}})
    sys_get = conn.call("prompts/get", {"name": "sys"})
    assert json.loads(sys_tool["content"][0]["text"])["messages"] == sys_get["messages"]
    assert "list_prompts" not in tools  # per-prompt is instead of the catalog pair


def test_a_swap_tells_tool_listeners_in_both_eras(
        built: Any, repo_factory: Callable[..., git.Repo]) -> None:
    repo, first = built()
    commit(repo, {"prompts/zz.prompt.yaml": "messages:\n  - role: user\n    text: zz\n"}, "zz")
    second = Build(Path(repo.working_tree_dir or "."), "HEAD").bundle
    server = _server(first, "per-prompt")
    legacy = Conn(server, "2025-11-25")
    modern = Conn(server, "2026-07-28")
    [ack] = server.handle(modern.session, {
        "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": {**envelope(), "notifications": {"promptsListChanged": True,
                                                   "toolsListChanged": True}}})
    assert ack["params"]["notifications"] == {"promptsListChanged": True,
                                              "toolsListChanged": True}
    legacy.sent.clear()
    assert server.swap([second])
    assert [m["method"] for m in legacy.sent] == [LIST_CHANGED, TOOLS_LIST_CHANGED]
    assert [m["method"] for m in modern.sent] == [LIST_CHANGED, TOOLS_LIST_CHANGED]
    assert all(m["params"]["_meta"][SUB] == "L" for m in modern.sent)
    for msg in legacy.sent:
        check_message(msg, "2025-11-25", None)
    assert "zz" in {t["name"] for t in Conn(server, "2025-11-25").tools()}


def test_without_the_tool_view_no_tool_notification(built: Any) -> None:
    _, first = built()
    server = _server(first, None)
    modern = Conn(server, "2026-07-28")
    [ack] = server.handle(modern.session, {
        "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": {**envelope(), "notifications": {"promptsListChanged": True,
                                                   "toolsListChanged": True}}})
    assert ack["params"]["notifications"] == {"promptsListChanged": True}


def test_a_package_chooses_its_tool_view_in_its_manifest(built: Any) -> None:
    _, bundle = built("serve:\n  tools: per-prompt\n")
    assert bundle["package"]["tools"] == "per-prompt"
    conn = Conn(_server(bundle, None), "2025-11-25")  # no --tools: the package's choice
    assert conn.caps["capabilities"]["tools"] == {"listChanged": True}
    assert "code_review" in {t["name"] for t in conn.tools()}
    _, off = built("serve:\n  tools: 'off'\n")
    conn = Conn(_server(off, "catalog"), "2025-11-25")  # the package opts out of --tools
    assert "tools" not in conn.caps["capabilities"]
    _, plain = built()
    assert "tools" not in plain["package"]  # absent unless chosen: digests stay as they were


def test_visibility_holds_on_the_tool_path(built: Any) -> None:
    _, bundle = built()
    views = Views([bundle], Settings(tools="catalog"))
    narrow = Conn(views.server(("kit/code_*",)), "2025-11-25")
    res = narrow.call("tools/call", {"name": "list_prompts", "arguments": {}})
    assert [p["name"] for p in json.loads(res["content"][0]["text"])["prompts"]] == [
        "code_review"]
    hidden = narrow.call("tools/call", {"name": "get_prompt", "arguments": {"name": "typed"}})
    assert hidden["isError"] is True and hidden["content"][0]["text"] == "unknown prompt 'typed'"
    per = Views([bundle], Settings(tools="per-prompt")).server(("kit/code_*",))
    assert [t["name"] for t in Conn(per, "2025-11-25").tools()] == ["code_review"]
    assert Conn(per, "2025-11-25").raw("tools/call", {"name": "typed", "arguments": {}})[
        "error"]["code"] == -32602
