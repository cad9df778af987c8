"""`promptops serve REPO` follows git end to end: real subprocess, real pipes, real clients."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import git
import jsonschema
from follow_helpers import BROKEN, package
from helpers.repo import commit_files, make_repo
from helpers.serve import ServeProcess

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


class Server(ServeProcess):
    """``promptops serve PATH`` over real pipes (the suite's one serve client)."""

    def __init__(self, path: Path) -> None:
        super().__init__([str(path)])

    @property
    def err(self) -> list[str]:
        return self.stderr

    def send(self, msg: dict[str, Any]) -> None:
        self.send_json({"jsonrpc": "2.0", **msg})

    def recv(self, timeout: float = 10) -> Any:
        return self.next_message(timeout)

    def wait_stderr(self, needle: str, timeout: float = 10) -> str:
        try:
            return self.wait_log(needle, timeout)
        except queue.Empty:
            raise AssertionError(f"no {needle!r} on stderr: {self.stderr}") from None

    def close(self, timeout: float = 10) -> int:
        return super().close(timeout)


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
        # The client hears it too, at `error` (it never set a level: issue 24), and
        # nothing else: still the last good set, no list_changed.
        told = server.recv()
        assert told["method"] == "notifications/message", told
        assert told["params"]["level"] == "error" and broken[:12] in told["params"]["data"]
        conforms(told, "LoggingMessageNotification")
        assert prompt_names(server, 4) == ["added", "greet"]

        commit_files(repo, package({"greet": "Hello", "added": "Fixed"}), "fix it")
        told = server.recv()  # the recovery, then the change
        assert told["method"] == "notifications/message", told
        assert told["params"]["level"] == "info" and "builds" in told["params"]["data"]
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
