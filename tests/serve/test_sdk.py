"""The official MCP SDK clients as judges of `promptops serve` over a real stdio pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from helpers.node import NODE_DEPS, npm_package
from helpers.serve import prompt_names
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from serve_helpers import judge_log, kit_files, serve_cmd

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise

TEE = str(Path(__file__).with_name("tee.py"))
CLIENTS = Path(__file__).parents[1] / "data" / "clients"  # the shared SDK client checks


def _params(log: Path, *args: str) -> StdioServerParameters:
    cmd = [sys.executable, TEE, str(log), "--", *serve_cmd(*args)]
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))


async def _code(awaitable: Any) -> int | None:
    try:
        await awaitable
    except MCPError as exc:
        return exc.error.code
    return None


def test_python_sdk_handshake(kit_bundle: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.log"

    async def run() -> None:
        async with (stdio_client(_params(log, "--bundle", str(kit_bundle), "--page-size", "4"))
                    as (read, write), ClientSession(read, write) as s):
            init = await s.initialize()
            assert init.capabilities.prompts is not None and init.capabilities.completions
            await s.send_ping()
            names = await prompt_names(s)
            assert len(names) == 15 and names == sorted(names)
            got = await s.get_prompt("code_review", {"code": "x", "language": "go"})
            assert got.messages[1].content.text == "Review this go code (pep8):\nx"  # type: ignore[union-attr]
            media = await s.get_prompt("media", {"topic": "t"})
            assert [m.content.type for m in media.messages] == [
                "image", "audio", "resource", "resource", "resource_link"]
            comp = await s.complete(types.PromptReference(type="ref/prompt", name="code_review"),
                                    {"name": "language", "value": "g"})
            assert comp.completion.values == ["go"]
            assert await _code(s.get_prompt("nope", {})) == -32602
            assert await _code(s.get_prompt("code_review", {"code": "x"})) == -32602
            assert await _code(s.get_prompt("broken", {})) == -32603
            assert await _code(s.complete(
                types.PromptReference(type="ref/prompt", name="nope"),
                {"name": "a", "value": ""})) == -32602
            res = await s.list_resources()
            assert len(res.resources) == 3
            body = await s.read_resource(str(res.resources[2].uri))
            assert body.contents[0].text == "# Guide\nBe kind.\n"  # type: ignore[union-attr]

    anyio.run(run)
    assert judge_log(log) >= 15


def test_python_sdk_modern_with_elicitation(kit_bundle: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.log"

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"code": "fn main(){}"})

    async def run() -> None:
        async with (stdio_client(_params(log, "--bundle", str(kit_bundle))) as (read, write),
                    ClientSession(read, write, elicitation_callback=elicit) as s):  # type: ignore[arg-type]
            found = await s.discover()
            assert "2026-07-28" in found.supported_versions
            assert s.protocol_version == "2026-07-28"
            page = await s.list_prompts()
            assert len(page.prompts) == 15
            first = await s.get_prompt("code_review", {"language": "rust"},
                                       allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult)
            assert first.input_requests is not None and first.request_state
            done = await s.get_prompt(
                "code_review", {"language": "rust"},
                input_responses={"arguments": types.ElicitResult(
                    action="accept", content={"code": "fn main(){}"})},
                request_state=first.request_state)
            assert isinstance(done, types.GetPromptResult)
            assert done.messages[1].content.text.endswith("fn main(){}")  # type: ignore[union-attr]
            assert await _code(s.get_prompt("nope")) == -32602

    anyio.run(run)
    assert judge_log(log) >= 4


def _clean_bundle(repo_factory: Any, tmp_path: Path) -> Path:
    files = kit_files()
    del files["prompts/broken.prompt.yaml"]  # the check renders every prompt
    root = Path(repo_factory(files).working_tree_dir)
    bundle = tmp_path / "kit.bundle.json"
    bundle.write_bytes(serialise(Build(root, "HEAD").bundle))
    return bundle


def test_shared_python_client_check(repo_factory: Any, tmp_path: Path) -> None:
    bundle = _clean_bundle(repo_factory, tmp_path)
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"code_review": {"code": "x", "language": "go"}}))
    log = tmp_path / "wire.log"
    run = subprocess.run(
        [sys.executable, str(CLIENTS / "py_client_check.py"), "--args-file", str(args), "--",
         sys.executable, TEE, str(log), "--", *serve_cmd("--bundle", str(bundle),
                                                          "--page-size", "5")],
        capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failed" in run.stdout
    assert judge_log(log) >= 20


def test_shared_typescript_client_check(repo_factory: Any, tmp_path: Path) -> None:
    """The official TypeScript SDK, pinned, installed once into the user's test cache."""
    npm_package("@modelcontextprotocol/sdk", "1.32.2")
    deps = NODE_DEPS
    bundle = _clean_bundle(repo_factory, tmp_path)
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"code_review": {"code": "x", "language": "go"}}))
    log = tmp_path / "wire.log"
    run = subprocess.run(
        ["node", str(CLIENTS / "ts_client_check.mjs"), "--args-file", str(args), "--",
         sys.executable, TEE, str(log), "--", *serve_cmd("--bundle", str(bundle),
                                                          "--page-size", "5")],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "MCP_CLIENTS_DEPS": str(deps)})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failed" in run.stdout
    assert judge_log(log) >= 20
