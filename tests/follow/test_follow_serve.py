"""`promptops serve REPO` follows git end to end: real subprocess, real pipes, real clients."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

import git
import jsonschema
from follow_helpers import BROKEN, package
from repo_helpers import commit_files, make_repo

DATA = Path(__file__).parents[1] / "data"
CLIENT_CHECK = DATA / "clients" / "py_client_check.py"
REVISION = "2025-06-18"


@cache
def _schema() -> dict[str, Any]:
    return json.loads((DATA / "mcp-schema" / REVISION / "schema.json").read_text())  # type: ignore[no-any-return]


def conforms(msg: Any, definition: str) -> None:
    schema = _schema()
    sub = {
        "$schema": schema["$schema"],
        "definitions": schema["definitions"],
        "$ref": f"#/definitions/{definition}",
    }
    jsonschema.validators.validator_for(sub)(sub).validate(msg)


class Server:
    """``promptops serve`` over real pipes; stdout and stderr are drained by threads."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "promptops", "serve", str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.out: queue.Queue[Any] = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._pump_out, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.out.put(json.loads(line))

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line.decode())

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 10) -> Any:
        return self.out.get(timeout=timeout)

    def wait_stderr(self, needle: str, timeout: float = 10) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.err if needle in line]
            if found:
                return found[0]
            time.sleep(0.02)
        raise AssertionError(f"no {needle!r} on stderr: {self.err}")

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=10)


def test_official_python_client_sees_list_changed_after_checkout(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", package({"greet": "Hello"}))
    repo.git.checkout("-q", "-b", "other")
    commit_files(repo, package({"greet": "Hello", "extra": "More"}))
    repo.git.checkout("-q", "main")
    done = subprocess.run(
        [
            sys.executable,
            str(CLIENT_CHECK),
            "--notify-timeout",
            "10",
            "--trigger",
            f"git -C '{tmp_path / 'repo'}' checkout -q other",
            "--",
            sys.executable,
            "-m",
            "promptops",
            "serve",
            str(tmp_path / "repo"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS notifications/prompts/list_changed received" in done.stdout


def prompt_names(server: Server, request_id: int) -> list[str]:
    server.send({"id": request_id, "method": "prompts/list"})
    reply = server.recv()
    assert reply["id"] == request_id, reply
    return [p["name"] for p in reply["result"]["prompts"]]


def test_list_changed_after_commit_and_none_after_a_broken_commit(tmp_path: Path) -> None:
    repo: git.Repo = make_repo(tmp_path / "repo", package({"greet": "Hello"}))
    server = Server(tmp_path / "repo")
    try:
        server.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": REVISION,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert server.recv()["result"]["protocolVersion"] == REVISION
        server.send({"method": "notifications/initialized"})
        assert prompt_names(server, 2) == ["greet"]

        commit_files(repo, package({"greet": "Hello", "added": "New"}), "add a prompt")
        note = server.recv()
        assert note == {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}
        conforms(note, "PromptListChangedNotification")
        assert prompt_names(server, 3) == ["added", "greet"]

        broken = commit_files(repo, {"prompts/added.prompt.yaml": BROKEN}, "break it")
        line = server.wait_stderr("does not build")
        assert broken[:12] in line
        server.wait_stderr("prompts/added.prompt.yaml:")
        # Still the last good set, and nothing but this reply came out in between.
        assert prompt_names(server, 4) == ["added", "greet"]

        commit_files(repo, package({"greet": "Hello", "added": "Fixed"}), "fix it")
        assert server.recv() == note
        server.send(
            {
                "id": 5,
                "method": "prompts/get",
                "params": {"name": "added", "arguments": {"topic": "t"}},
            }
        )
        reply = server.recv()
        assert reply["result"]["messages"][0]["content"]["text"] == "Fixed t"
    finally:
        assert server.close() == 0
