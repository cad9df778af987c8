"""The HTTP server's dependencies stay off `promptops serve`'s stdio path."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("uvicorn", "prometheus_client", "jwt", "httptools", "uvloop", "starlette",
         "promptops.serve.http", "promptops.serve.transports.http", "promptops.serve.auth")


def test_stdio_path_imports_no_http_dependency() -> None:
    code = ("import sys, json; import promptops.__main__, promptops.serve.main, "
            "promptops.serve.transports.stdio, promptops.serve.server; "
            "print(json.dumps(sorted(sys.modules)))")
    mods = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                     text=True, check=True).stdout)
    loaded = [m for m in mods if m.split(".")[0] in HEAVY or m in HEAVY]
    assert loaded == []
    # and the check can fail: the HTTP entry point does import them
    code2 = code.replace("promptops.serve.server;", "promptops.serve.server, "
                         "promptops.serve.http, promptops.serve.metrics;")
    mods2 = json.loads(subprocess.run([sys.executable, "-c", code2], capture_output=True,
                                      text=True, check=True).stdout)
    assert "prometheus_client" in mods2
