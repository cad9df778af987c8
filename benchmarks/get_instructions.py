"""Instructions per ``prompts/get`` through the serve core, for before/after comparisons.

Wall-clock figures on a shared 2-core machine cannot show a 2% difference; instruction
counts under callgrind do not depend on the machine's load. This script builds a
:class:`~promptops.serve.server.Server` over one bundle, initializes a session and answers
N ``prompts/get`` through ``Server.handle`` (the core every transport calls). Run it under
callgrind with N = 0 and N = 3000 and divide the difference by 3000:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python benchmarks/get_instructions.py 3000 BUNDLE [PROMPT] [NAME=VALUE ...]

(With ``PYTHONPATH=<another checkout>`` the same script measures that checkout.)

``PROMPTOPS_BENCH_USAGE=usage`` attaches the per-prompt counters of ``serve --http``;
``=tracing`` adds a span per request (every request sampled, a render child), exported over
OTLP/HTTP to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (a collector you start, e.g. ``rotel-agent
start --exporter blackhole``); the queue is flushed before the end, so the export
thread's encoding and sending are counted too (callgrind counts every thread).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from promptops.pipeline.bundle import load_bundle
from promptops.serve.catalog import Catalog
from promptops.serve.server import Server


def main() -> None:
    n, bundle = int(sys.argv[1]), load_bundle(Path(sys.argv[2]))
    prompt = sys.argv[3] if len(sys.argv) > 3 else bundle["prompts"][0]["name"]
    args = dict(a.split("=", 1) for a in sys.argv[4:])
    server = Server(Catalog([bundle]))
    mode = os.environ.get("PROMPTOPS_BENCH_USAGE", "")
    tracing = None
    if mode:
        from promptops.serve.usage import Usage

        if mode == "tracing":
            from promptops.serve.tracing import Tracing

            tracing = Tracing()
        server.usage = Usage(tracing=tracing)
    session = server.open(lambda message: None)
    server.handle(session, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}}})
    get = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
           "params": {"name": prompt, "arguments": args}}
    server.handle(session, get)  # the first render compiles: outside the counted loop
    for _ in range(n):
        server.handle(session, get)
    if tracing is not None:
        tracing.shutdown()  # what is queued is encoded and sent before the count ends


if __name__ == "__main__":
    main()
