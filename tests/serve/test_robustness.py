"""Malformed input, lifecycle and process behaviour of the stdio server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import git
from helpers.repo import SIGNALS, posix_only
from serve_helpers import RawClient, envelope, kit_files, serve_cmd

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise

Raw = Callable[..., RawClient]


def test_garbage_never_kills_the_server(raw: Raw) -> None:
    c = raw("2025-11-25")
    c.write(b"{not json\n")
    assert c.recv()["error"]["code"] == -32700
    c.write(b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xff\xfe"}\n')
    err = c.recv()["error"]
    assert err["code"] == -32700 and "UTF-8" in err["message"]
    c.write(b"\n   \n")  # blank lines are ignored
    shapes = [42, "text", None, {"id": 1, "method": "ping"}, {"jsonrpc": "1.0", "id": 1},
              {"jsonrpc": "2.0", "id": 1}, {"jsonrpc": "2.0", "id": True, "method": "ping"},
              {"jsonrpc": "2.0", "id": None, "method": "ping"}]
    for shape in shapes:
        c.send(shape)
        assert c.recv()["error"]["code"] == -32600, shape
    # before initialize: only ping, everything else is refused, and nothing is locked in
    assert c.request("ping")["result"] == {}
    assert c.request("prompts/list")["error"]["code"] == -32600
    c.notify("notifications/unknown", {"x": 1})
    c.notify("notifications/initialized")
    c.send({"jsonrpc": "2.0", "id": 5, "result": {}})  # a stray response: ignored
    assert c.initialize("2025-11-25")["result"]["protocolVersion"] == "2025-11-25"
    assert c.request("tools/list")["error"]["code"] == -32601
    assert c.request("server/discover", envelope())["error"]["code"] == -32601
    assert c.request("prompts/get", {"name": "media", "arguments": "x"})["error"]["code"] == -32602
    c.send({"jsonrpc": "2.0", "id": 9, "method": "prompts/list", "params": [1]})
    assert c.recv()["error"]["code"] == -32602
    c.notify("notifications/cancelled", {"requestId": 3})
    assert c.request("ping", timeout=5)["result"] == {}
    rc, err_text = c.close()
    assert rc == 0 and "serving 15 prompts from kit 1.2.3" in err_text


def test_old_revisions_get_null_ids(raw: Raw) -> None:
    c = raw("2024-11-05")
    c.initialize("2024-11-05")
    c.write(b"]]]\n")
    reply = c.recv()
    assert reply["id"] is None and reply["error"]["code"] == -32700


def test_oversized_line_is_refused_and_the_stream_continues(raw: Raw) -> None:
    c = raw("2025-11-25")
    c.initialize("2025-11-25")
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","p":"' + b"a" * (16 * 1024 * 1024) + b'"}\n'
    c.write(big)
    err = c.recv(timeout=60)["error"]
    assert err["code"] == -32600 and "over" in err["message"]
    assert c.request("ping")["result"] == {}


@posix_only(SIGNALS)
def test_sigterm_and_closed_stdout_exit_quietly(kit_bundle: Path) -> None:
    proc = subprocess.Popen(serve_cmd("--bundle", str(kit_bundle)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["result"] == {}
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0
    # the reader hangs up first: no traceback, no hang
    proc = subprocess.Popen(serve_cmd("--bundle", str(kit_bundle)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n' * 3, timeout=15)
    assert proc.returncode == 0 and b"Traceback" not in err


def test_serving_path_imports_no_heavy_modules(kit_bundle: Path) -> None:
    script = (
        "import sys\nfrom promptops.__main__ import main\n"
        f"rc = main(['serve', '--bundle', {str(kit_bundle)!r}])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'typer', 'git', "
        "'mcp', 'ruamel'})\nsys.stderr.write('HEAVY=' + ','.join(heavy) + '\\n')\nsys.exit(rc)\n"
    )
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get",
         "params": {"name": "code_review", "arguments": {"code": "x", "language": "go"}}},
    ]
    data = "".join(json.dumps(m) + "\n" for m in lines).encode()
    out = subprocess.run([sys.executable, "-c", script], input=data, capture_output=True,
                         timeout=30, check=True)
    assert b'"id":2,"result"' in out.stdout
    assert "HEAVY=\n" in out.stderr.decode()


def test_tampered_bundle_and_collisions_refused(kit_bundle: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.bundle.json"
    bad.write_bytes(kit_bundle.read_bytes().replace(b"careful reviewer", b"sloppy reviewer"))
    run = subprocess.run(serve_cmd("--bundle", str(bad)), input=b"", capture_output=True,
                         timeout=30)
    assert run.returncode == 1 and b"digest mismatch" in run.stderr and run.stdout == b""
    run = subprocess.run(serve_cmd("--bundle", str(kit_bundle), "--bundle", str(kit_bundle)),
                         input=b"", capture_output=True, timeout=30)
    assert run.returncode == 1 and b"served by both package" in run.stderr
    run = subprocess.run(serve_cmd("--page-size", "0"), input=b"", capture_output=True,
                         timeout=30)
    assert run.returncode == 2


def test_path_mode_serves_head_not_the_worktree(repo_factory: Callable[..., git.Repo]) -> None:
    repo = repo_factory(kit_files(extra_prompts=0))
    root = Path(repo.working_tree_dir or ".")
    (root / "prompts" / "draft.prompt.yaml").write_text(
        "messages:\n  - role: user\n    text: uncommitted\n")
    c = RawClient([str(root)], "2025-11-25")
    try:
        c.initialize("2025-11-25")
        names = [p["name"] for p in c.request("prompts/list")["result"]["prompts"]]
        assert names == ["broken", "code_review", "media"]
        meta = c.request("prompts/get", {"name": "media"})["result"]["_meta"]
        assert meta["promptops/commit"] == repo.head.commit.hexsha
        assert meta["promptops/digest"] == Build(root, "HEAD").bundle["digest"]
        assert serialise(Build(root, "HEAD").bundle)  # the same commit builds the same bundle
    finally:
        rc, err = c.close()
        assert rc == 0, err
