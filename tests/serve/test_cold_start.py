"""serve's start compiles no Python source at run time, in either mode.

The first ``compile()`` of a process (a string annotation made a ``ForwardRef``, a
``namedtuple``'s generated methods) sets up the parser and every AST type: ~10 M
instructions, ~3% of the bare JSON-RPC floor's whole start (docs/benchmarks.md, "cold
start, session 10"). The start path (the ``initialize`` reply and everything before it)
must not pay that, so this runs the real entry point under an audit hook and lists every
``compile`` of something that is not a module's source file (those are the bytecode
cache's business: this environment may run without one). HEAD mode's note on
uncommitted changes runs from a timer after the first answers, by design (serve/main.py),
so what it compiles is left out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, sys

compiled = []


def hook(event, args):
    if event != "compile" or str(args[1]).endswith(".py"):
        return
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_dirty_notice":  # the timer's, after the first answers
            return
        frame = frame.f_back
    source = args[0]  # bytes or str, by Python version; an AST when one is compiled
    if isinstance(source, bytes):
        source = source.decode("utf-8", "replace")
    compiled.append(source[:80] if isinstance(source, str) else type(source).__name__)


sys.addaudithook(hook)
from promptops.__main__ import main

rc = main(json.loads(sys.argv[1]))
sys.stderr.write("COMPILED=" + json.dumps(compiled) + "\\n")
sys.exit(rc)
"""

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}


def _compiled_at_start(argv: list[str], script: str = SCRIPT) -> list[str]:
    done = subprocess.run([sys.executable, "-c", script, json.dumps(argv)],
                          input=(json.dumps(INITIALIZE) + "\n").encode(), capture_output=True,
                          timeout=60, check=True)
    assert b'"id":1,"result"' in done.stdout, done.stderr.decode()
    line = next(x for x in done.stderr.decode().splitlines() if x.startswith("COMPILED="))
    found: list[str] = json.loads(line.removeprefix("COMPILED="))
    return found


def test_a_bundle_start_compiles_nothing(kit_bundle: Path) -> None:
    assert _compiled_at_start(["serve", "--bundle", str(kit_bundle)]) == []


def test_a_repository_start_compiles_nothing(kit_repo: Path) -> None:
    _compiled_at_start(["serve", str(kit_repo)])  # builds, and fills the build cache
    assert _compiled_at_start(["serve", str(kit_repo)]) == []  # the start clients see


def test_the_hook_sees_a_compile(kit_bundle: Path) -> None:
    """The check can fail: a string evaluated before the entry point is one compile."""
    script = SCRIPT.replace("rc = main(", "eval('1 + 1')\nrc = main(")
    assert _compiled_at_start(["serve", "--bundle", str(kit_bundle)], script) == ["1 + 1"]
