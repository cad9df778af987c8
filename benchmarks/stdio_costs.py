"""What the worst line of each hostile class costs `promptops serve`: time and peak memory.

    python benchmarks/stdio_costs.py [--timeout 120] [--write-docs]

Each case gets a fresh `promptops serve --bundle` (so VmHWM, the peak resident memory
read from /proc, belongs to that line alone), is initialised, then sent one line at
the line bound (16 MiB) or past it; the time runs from the first byte written to the
reply read. Every reply is checked to be the documented one (an error code, or a
result); a line answered otherwise, or not within ``--timeout``, is flagged, and then
``--write`` (which rewrites tests/hardening/measured/serve-stdio.json, a section of
docs/reliability.md: regenerate it with tests/hardening/gen_reliability.py) refuses.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_common import (
    REPO_ROOT,
    BenchError,
    Conn,
    env_info,
    md_table,
    now,
    peak_rss_kb,
    promptops_cmd,
)

MIB = 1024 * 1024
LIMIT = 16 * MIB
SECTION = REPO_ROOT / "tests" / "hardening" / "measured" / "serve-stdio.json"
COLUMNS = ["class", "worst line", "line", "reply", "reply size", "time", "peak RSS (idle)"]
PACKAGE = {
    "promptops.yaml": "name: costs\nversion: 1.0.0\n",
    "prompts/big.prompt.yaml": (
        "messages:\n  - role: user\n"
        "    resource: {uri: \"promptops://costs/big.md\", file: big.md}\n"),
    "prompts/echo.prompt.yaml": ("arguments:\n  - {name: text, maxLength: 20000000}\n"
                                 "messages:\n  - role: user\n    text: \"{{ text }}\"\n"),
    "prompts/slow.prompt.yaml": (
        "messages:\n  - role: user\n    text: \"{% set s = 'x' * 1000000 %}"
        "{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}\"\n"),
    "big.md": "z" * 1_000_000,
}
HEAD = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":'


def _fill(unit: bytes, size: int = LIMIT - 200) -> bytes:
    return unit * (size // len(unit))


def _batch(method: str, params: dict[str, Any], n: int = 100) -> bytes:
    return json.dumps([{"jsonrpc": "2.0", "id": i, "method": method, "params": params}
                       for i in range(n)]).encode()


# (class, what the line is, the line, the revision, the reply expected: a code or "result")
Case = tuple[str, str, Callable[[], bytes], str, Any]
CASES: list[Case] = [
    ("unterminated string", "16 MiB: `[\\\"` repeated, never closed (the old quadratic case)",
     lambda: HEAD + b'"' + _fill(b'[\\"'), "2025-11-25", -32700),
    ("nesting", "16 MiB of `[` (unterminated)", lambda: _fill(b"["), "2025-11-25", -32700),
    ("nesting", "16 MiB: 8 Mi `[` then 8 Mi `]`",
     lambda: _fill(b"[", LIMIT // 2 - 10) + _fill(b"]", LIMIT // 2 - 10), "2025-11-25", -32700),
    ("nesting", "16 MiB of 99 levels opened and closed, over and over",
     lambda: HEAD + b"[" + b",".join([b"[" * 98 + b"]" * 98] * (LIMIT // 200)) + b"]}}",
     "2025-11-25", -32700),
    ("values", "16 MiB of `{},` (5.6 M objects if parsed)",
     lambda: HEAD + b"[" + _fill(b"{},") + b"{}]}}", "2025-11-25", -32700),
    ("values", "49,990 empty objects (within the bound: parsed)",
     lambda: HEAD + b"[" + b",".join([b"{}"] * 49_990) + b"]}}", "2025-11-25", "result"),
    ("values", "99,990 strings of 160 characters (within the bound: parsed)",
     lambda: HEAD + b"[" + b",".join([b'"' + b"s" * 160 + b'"'] * 99_990) + b"]}}",
     "2025-11-25", "result"),
    ("values", "16 MiB of `\"a\",` (4 M strings)",
     lambda: HEAD + b"[" + _fill(b'"a",') + b'"a"]}}', "2025-11-25", -32700),
    ("escape soup", "16 MiB of `\\\\\\\"[{,` repeated",
     lambda: HEAD + b'"' + _fill(b'\\\\\\"[{,'), "2025-11-25", -32700),
    ("one big string", "a 16 MiB argument value, rendered (maxLength 20,000,000) until the "
     "output bound stops it",
     lambda: json.dumps({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {
         "name": "echo", "arguments": {"text": "a" * (LIMIT - 200)}}}).encode(),
     "2025-11-25", -32603),
    ("numbers", "a 16 MiB integer as the request id (echoed digit for digit)",
     lambda: b'{"jsonrpc":"2.0","method":"ping","id":' + _fill(b"7", LIMIT - 60) + b"}",
     "2025-11-25", "result"),
    ("numbers", "a float of 16 MiB of digits",
     lambda: HEAD + b"1." + _fill(b"3", LIMIT - 80) + b"e5}}", "2025-11-25", "result"),
    ("oversized line", "a 64 MiB line (discarded while reading)",
     lambda: HEAD + b'"' + _fill(b"a", 64 * MIB) + b'"}}', "2025-11-25", -32600),
    ("batch", "101 pings (one over the batch bound)",
     lambda: json.dumps([{"jsonrpc": "2.0", "id": i, "method": "ping"}
                         for i in range(101)]).encode(), "2025-03-26", -32600),
    ("batch", "100 reads of a 1 MB resource (100 MB of replies unbounded)",
     lambda: _batch("resources/read", {"uri": "promptops://costs/big.md"}), "2025-03-26",
     "result"),
    ("batch", "100 renders that each run into the 2 s deadline",
     lambda: _batch("prompts/get", {"name": "slow"}), "2025-03-26", -32603),
]


def bundle(tmp: Path) -> Path:
    for rel, text in PACKAGE.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    out = tmp / "dist"
    subprocess.run([*promptops_cmd(), "build", "--worktree", "--no-lint", "-o", str(out)],
                   cwd=tmp, check=True, capture_output=True)
    return next(out.glob("*.bundle.json"))


def _readline(conn: Conn, deadline: float) -> bytes:
    """One reply line of any size: chunks kept in a list (Conn.readline re-joins a long
    line on every read, which would make a 16 MB reply cost the reader a second)."""
    chunks: list[bytes] = []
    while True:
        left = deadline - now()
        if left <= 0:
            raise BenchError("no answer in time")
        ready, _, _ = select.select([conn.rfd], [], [], left)
        if not ready:
            continue
        chunk = os.read(conn.rfd, 1 << 20)
        if not chunk:
            raise BenchError(f"the server closed stdout: {conn.stderr_tail()}")
        end = chunk.find(b"\n")
        if end >= 0:
            return b"".join([*chunks, chunk[:end]])
        chunks.append(chunk)


def measure(path: Path, case: Case, timeout: float) -> dict[str, Any]:
    label, what, make, revision, want = case
    line = make()
    conn = Conn([*promptops_cmd(), "serve", "--bundle", str(path)], timeout)
    try:
        conn.request("initialize", {"protocolVersion": revision, "capabilities": {}})
        base = peak_rss_kb(conn.proc.pid) or 0
        t0 = now()
        conn.write(line + b"\n")
        try:
            reply_line = _readline(conn, t0 + timeout)
        except BenchError:
            return {"class": label, "what": what, "bytes": len(line), "ms": None,
                    "over": timeout, "rss_mb": (peak_rss_kb(conn.proc.pid) or 0) / 1024,
                    "base_mb": base / 1024, "reply": "-", "reply_bytes": 0,
                    "as_documented": False}
        ms = (now() - t0) * 1e3
        peak = peak_rss_kb(conn.proc.pid) or 0
        reply = json.loads(reply_line, parse_int=lambda s: int(s) if len(s) < 100 else s)
        first = reply[0] if isinstance(reply, list) else reply
        got = first["error"]["code"] if "error" in first else "result"
        shown = str(got) if got == want else f"{got} (documented: {want})"
        return {"class": label, "what": what, "bytes": len(line), "ms": ms, "over": None,
                "rss_mb": peak / 1024, "base_mb": base / 1024, "reply": shown,
                "reply_bytes": len(reply_line), "as_documented": got == want}
    finally:
        conn.close()


def cells(rows: list[dict[str, Any]]) -> list[list[str]]:
    out = []
    for r in rows:
        took = f"{r['ms']:,.0f} ms" if r["ms"] is not None else f"> {r['over']:g} s (stopped)"
        out.append([r["class"], r["what"], f"{r['bytes'] / MIB:.1f} MiB", r["reply"],
                    f"{r['reply_bytes'] / 1e6:.2f} MB" if r["reply_bytes"] >= 10_000
                    else f"{r['reply_bytes']} B", took,
                    f"{r['rss_mb']:.0f} MB ({r['base_mb']:.0f} MB)"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=120.0, help="per line (default 120 s)")
    ap.add_argument("--write", action="store_true",
                    help=f"rewrite {SECTION.relative_to(REPO_ROOT)}")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args(argv)
    info = env_info()
    with tempfile.TemporaryDirectory(prefix="promptops-costs-") as tmp:
        path = bundle(Path(tmp))
        rows = []
        for case in CASES:
            rows.append(measure(path, case, args.timeout))
            print(md_table([COLUMNS, *cells(rows[-1:])]).splitlines()[-1], flush=True)
    print(md_table([COLUMNS, *cells(rows)]))
    if args.json_out:
        args.json_out.write_text(json.dumps({"env": info, "rows": rows}, indent=1))
    wrong = [r["what"] for r in rows if not r["as_documented"]]
    if wrong:
        print("not answered as documented: " + "; ".join(wrong))
        if args.write:
            print(f"{SECTION.relative_to(REPO_ROOT)} not written")
            return 1
    if args.write:
        load = os.getloadavg()[0]
        SECTION.parent.mkdir(parents=True, exist_ok=True)
        SECTION.write_text(json.dumps({
            "title": "Measured cost: the worst line of each class (serve stdio)",
            "command": "python benchmarks/stdio_costs.py --write",
            "machine": f"Python {info['python']}, {info['cpus']} cores, load average "
                       f"{load:.1f} at the end; {info['date'][:10]}",
            "note": "Each row is one line sent to a fresh `promptops serve --bundle`, one run: "
                    "the time from its first byte written to the reply read, and the peak "
                    "resident memory (VmHWM) of the server, the idle server's in brackets. "
                    "Bounds: 16 MiB per line, 100 levels of nesting, 100,000 values, batches "
                    "of 100 messages with 16 MiB of replies or 10 s of run time (SECURITY.md).",
            "columns": COLUMNS, "rows": cells(rows)}, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {SECTION.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
