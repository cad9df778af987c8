"""Shared pieces of the hardening tests: packages, CLI and serve subprocesses, and the
records that docs/reliability.md is generated from.

Each fault test ends with :func:`record`: the fault tried and the behaviour observed,
normalised so that it is the same on every run (no temp paths, pids or timings). The
records are committed under ``tests/hardening/records/``; a fresh observation that
differs from its committed record fails the test (run with
``PROMPTOPS_UPDATE_RELIABILITY=1`` to rewrite the records, then
``python tests/hardening/gen_reliability.py`` to regenerate the document), and
``test_reliability_doc.py`` fails when the document differs from the records.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import git
import pytest
from helpers.repo import REPO_ROOT, cli_env, make_repo, run_cli_process
from helpers.serve import ServeProcess

RECORDS = Path(__file__).resolve().parent / "records"
UPDATE = os.environ.get("PROMPTOPS_UPDATE_RELIABILITY") == "1"

MANIFEST = "name: demo\nversion: 1.0.0\n"
ABOUT = ("description: About a topic\narguments:\n  - {name: topic, required: true}\n"
         "messages:\n  - role: user\n    text: \"About {{ topic }}\"\n")


def package_files(about: str = ABOUT) -> dict[str, str | bytes]:
    return {"promptops.yaml": MANIFEST, "prompts/about.prompt.yaml": about}


def repo_with(root: Path, extra: dict[str, str | bytes] | None = None) -> git.Repo:
    repo: git.Repo = make_repo(root, {**package_files(), **(extra or {})})
    return repo


def record(area: str, fault: str, command: str, behaviour: str, test: str) -> None:
    """Check (or, when updating, write) the committed record of one fault."""
    key = f"{area} {command} {fault}"
    slug = re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-")[:80].rstrip("-")
    slug += "-" + hashlib.sha256(key.encode()).hexdigest()[:8]  # `+` and `~` slug alike
    path = RECORDS / f"{slug}.json"
    entry = {"area": area, "fault": fault, "command": command, "behaviour": behaviour,
             "test": test}
    text = json.dumps(entry, indent=2, ensure_ascii=False) + "\n"
    if UPDATE:
        RECORDS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    committed = path.read_text(encoding="utf-8") if path.exists() else None
    if committed != text:
        pytest.fail(f"the reliability record {path.name} is stale:\n{committed}\nobserved:\n"
                    f"{text}\nrerun with PROMPTOPS_UPDATE_RELIABILITY=1 and regenerate "
                    "docs/reliability.md with tests/hardening/gen_reliability.py")


def normalise(text: str, *roots: Path) -> str:
    for root in roots:
        for form in {str(root), str(root.resolve())}:
            text = text.replace(form, "<repo>")
    text = re.sub(r"sha256:[0-9a-f]{64}", "sha256:<digest>", text)
    return re.sub(r"\(([0-9a-f]{12})\)|\b[0-9a-f]{12,40}\b", "<sha>", text).strip()


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m promptops ARGS``: these tests put the process itself under test."""
    return run_cli_process(*args, cwd=cwd, timeout=timeout)


def one_clear_message(proc: subprocess.CompletedProcess[str]) -> str:
    """The error of a refused command: no traceback, not a bug (exit 3), one error line."""
    err = proc.stderr.strip()
    assert proc.returncode in (1, 2), (proc.returncode, err)
    assert "Traceback" not in err and "internal error" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert 1 <= len(lines) <= 3, err
    return lines[0]


class Serve(ServeProcess):
    """`promptops serve ARGS` over real pipes (the suite's one client), as the hardening
    tests drive it: replies matched by id, logs and notifications awaited."""

    def __init__(self, *args: str, cwd: Path | None = None) -> None:
        super().__init__(list(args), cwd=cwd or REPO_ROOT, env=cli_env())
        self._next = 0

    def send(self, msg: Any) -> None:
        self.send_json(msg)

    def _message(self, timeout: float) -> Any:
        try:
            return self.next_message(timeout)
        except EOFError:
            raise AssertionError(f"serve closed its stdout:\n{self.stderr_text()}") from None

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self._next += 1
        self.send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params or {}})
        while True:
            msg = self._message(30)
            if msg.get("id") == self._next:
                return msg

    def initialize(self) -> Any:
        reply = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def text(self, name: str, **arguments: str) -> str:
        reply = self.request("prompts/get", {"name": name, "arguments": arguments})
        assert "result" in reply, reply
        return str(reply["result"]["messages"][0]["content"]["text"])

    def wait_notification(self, method: str, timeout: float = 30) -> Any:
        while True:
            msg = self._message(timeout)
            if msg.get("method") == method:
                return msg

    def close(self, timeout: float = 30) -> int:
        return super().close(timeout)
