"""The documented gunicorn deployment (docs/http.md, "Deploying"), run as written.

``gunicorn -k uvicorn_worker.UvicornWorker 'promptops.__main__:create_app()'`` with the
options in ``$PROMPTOPS_SERVE_ARGS``: a real gunicorn master and worker on a free port,
answering both eras (a stateless request with its headers, a session with its id), and
stopping cleanly on SIGTERM (gunicorn's graceful shutdown reaching the app's lifespan).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from http_helpers import free_port, initialize, modern, post, wait_healthy


def test_gunicorn_with_uvicorn_worker_serves_both_eras(kit_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PROMPTOPS_SERVE_ARGS": f"{kit_dir} --page-size 2 --no-access-log"}
    err = (tmp_path / "gunicorn.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-k", "uvicorn_worker.UvicornWorker", "-w", "1",
         "--graceful-timeout", "10", "-b", f"127.0.0.1:{port}",
         "promptops.__main__:create_app()"],
        env=env, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp_path)
    log = tmp_path / "gunicorn.log"
    try:
        wait_healthy(base, proc, lambda: log.read_text(errors="replace"), timeout=60)
        b, h = modern("prompts/list")
        r = post(base + "/mcp", b, h)
        assert r.status_code == 200, r.text
        result = r.json()["result"]
        assert len(result["prompts"]) == 2 and result["nextCursor"]  # --page-size 2 applied
        sid = initialize(base + "/mcp")  # the session era: a session id from the worker
        r = post(base + "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "prompts/list",
                                 "params": {}}, {"mcp-session-id": sid,
                                                 "mcp-protocol-version": "2025-11-25"})
        assert r.status_code == 200 and len(r.json()["result"]["prompts"]) == 2, r.text
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
        err.close()
    text = log.read_text(errors="replace")
    assert code == 0, text
    assert "Traceback" not in text, text
