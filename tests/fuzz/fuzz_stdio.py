"""Bounded fuzzing of the stdio loop with hostile lines and batches (invariant 4).

    python tests/fuzz/fuzz_stdio.py --seconds 10 --seed 1

Where fuzz_serve.py mutates valid traffic, this driver aims at what a line costs: each
generated line is one of the classes that used to cost more than its length (an
unterminated string of escaped quotes, nesting at and far past the bound, values at
and past the bound, escape soup, NaN and integers of thousands of digits, batches of
any size and content on 2025-03-26). Lines go to a real `promptops serve --bundle X`
one at a time, each followed by a sentinel ``ping``. Invariants: every line gets at most
one reply and exactly the one fuzz_oracle predicts (valid against the official schema
of the revision); each line is answered within LINE_BOUND_S (a hang bound: the costs
are milliseconds); VmHWM stays under RSS_LIMIT_MB; stdin EOF ends the process with
status 0 and nothing on stderr but its start line. Prints the figures; exits 1 on any
violation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import queue
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "serve")]

import fuzz_serve  # noqa: E402
from fuzz_oracle import MAX_DEPTH, MAX_VALUES, NO_ID, Expect, Oracle, judge, loads  # noqa: E402
from fuzz_serve import schema_check  # noqa: E402

LINE_BOUND_S = 10.0
RSS_LIMIT_MB = 300
MODES = ("2025-03-26", "2025-03-26", "2024-11-05", "2025-11-25", "2026-07-28")
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
CLASSES = ("escaped quotes", "nesting", "values", "escape soup", "numbers", "batch")


class Lines:
    """Hostile lines of each class, a few KB to a few MB, always a single line."""

    def __init__(self, rng: random.Random, mode: str) -> None:
        self.rng, self.mode = rng, mode
        self.n = 0

    def request(self, params: Any = None, method: str = "ping", rid: Any = None) -> dict[str, Any]:
        self.n += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.n if rid is None else rid,
                               "method": method}
        if self.mode == "2026-07-28":
            method = msg["method"] = "prompts/list" if method == "ping" else method
            params = {**(params or {}), "_meta": ENVELOPE}
        if params is not None:
            msg["params"] = params
        return msg

    def wrap(self, raw: bytes) -> bytes:
        """``raw`` as the value of a param of an otherwise valid request."""
        head = json.dumps(self.request({"x": "@"})).encode()
        return head.replace(b'"@"', raw)

    def line(self, kind: str) -> bytes:
        return getattr(self, kind.replace(" ", "_"))()

    def escaped_quotes(self) -> bytes:
        rng = self.rng
        unit = rng.choice([b'\\"', b'[\\"', b'{\\"[', b'\\\\\\"', b'\\"]'])
        body = unit * rng.choice([10, 1000, 50_000, 300_000])
        # mostly unterminated: the rest of the message then lies inside the string
        return self.wrap(b'"' + body + rng.choice([b"", b"", b'"', b"\\"]))

    def nesting(self) -> bytes:
        rng = self.rng
        depth = rng.choice([MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH,
                            rng.randint(150, 5000), rng.randint(100_000, 1_000_000)])
        kinds = [rng.random() < 0.5 for _ in range(min(depth, 1000))]
        kinds = (kinds * (depth // len(kinds) + 1))[:depth]  # True: an object level
        opens = b"".join(b'{"k":' if k else b"[" for k in kinds)
        if rng.random() < 0.3:  # unbalanced or unterminated
            return self.wrap(opens)
        closes = b"".join(b"}" if k else b"]" for k in reversed(kinds))
        return self.wrap(opens + b"0" + closes)

    def values(self) -> bytes:
        rng = self.rng
        n = rng.choice([MAX_VALUES - 10, MAX_VALUES - 3, MAX_VALUES, MAX_VALUES + 3,
                        rng.randint(1, 50_000), rng.randint(100_010, 400_000)])
        item = rng.choice([b"{}", b"[]", b"0", b'""', b"null", b'"a,b"', b"[1]"])
        return self.wrap(b"[" + b",".join([item] * n) + b"]")

    def escape_soup(self) -> bytes:
        rng = self.rng
        pieces = [b"\\", b'"', b"[", b"]", b"{", b"}", b",", b"\\u", b"a", b":"]
        soup = b"".join(rng.choice(pieces) for _ in range(rng.choice([100, 10_000, 200_000])))
        return self.wrap(soup) if rng.random() < 0.5 else soup

    def numbers(self) -> bytes:
        rng = self.rng
        digits = rng.choice([4299, 4300, 4301, 5000, 100_000])
        big = ("-" if rng.random() < 0.3 else "") + "7" * digits
        choice = rng.randrange(5)
        if choice == 0:  # a long integer id: valid, echoed
            return json.dumps(self.request(rid=0)).encode().replace(b'"id": 0', b'"id": ' +
                                                                    big.encode())
        if choice == 1:
            return self.wrap(big.encode())
        if choice == 2:
            return self.wrap(rng.choice([b"NaN", b"Infinity", b"-Infinity", b"[NaN]"]))
        if choice == 3:
            return self.wrap(("1." + "3" * digits + "e" + str(rng.randint(-500, 500))).encode())
        return json.dumps(self.request({"name": "greet", "arguments": {"name": "@"}},
                                       "prompts/get")).encode().replace(b'"@"', big.encode())

    def batch(self) -> bytes:
        rng = self.rng
        size = rng.choice([0, 1, 2, 99, 100, 101, 150, rng.randint(3, 60)])
        members: list[Any] = []
        for _ in range(size):
            r = rng.random()
            if r < 0.5:
                members.append(self.request())
            elif r < 0.6:
                members.append(self.request({"name": "greet", "arguments": {"name": "n"}},
                                            "prompts/get"))
            elif r < 0.7:
                members.append({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": rng.choice([1, [1], None])}})
            elif r < 0.8:
                members.append(rng.choice([1, "x", None, [], {}, {"jsonrpc": "1.0", "id": 3}]))
            elif r < 0.9:
                members.append(self.request({"protocolVersion": "2025-03-26",
                                             "capabilities": {}}, "initialize"))
            else:
                members.append([self.request()])  # a batch inside a batch
        return json.dumps(members).encode()


class Server(fuzz_serve.Server):
    """fuzz_serve's server process, its replies read as the documented rules read JSON."""

    def decode(self, raw: bytes) -> Any:
        return loads(raw.decode())

    def send(self, data: bytes) -> None:
        assert self.write(data + b"\n"), "the server stopped reading"

    def peak_rss_mb(self) -> float:
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if row.startswith("VmHWM:"):
                    return int(row.split()[1]) / 1024
        return 0.0


class Report:
    def __init__(self) -> None:
        self.lines = self.sessions = self.violations = 0
        self.bytes = 0
        self.slowest: dict[str, float] = dict.fromkeys(CLASSES, 0.0)
        self.most_replies = 0
        self.peak_rss = 0.0
        self.details: list[str] = []

    def violation(self, text: str) -> None:
        self.violations += 1
        if len(self.details) < 20:
            self.details.append(text[:1500])


def session(rng: random.Random, bundle_path: Path, bundle: dict[str, Any], report: Report,
            deadline: float) -> None:
    mode = rng.choice(MODES)
    gen, oracle, server = Lines(rng, mode), Oracle(bundle), Server(bundle_path)
    report.sessions += 1
    if mode != "2026-07-28":
        init = gen.request({"protocolVersion": mode, "capabilities": {}}, "initialize")
        oracle.line(json.dumps(init).encode())
        server.send(json.dumps(init).encode())
        server.replies.get(timeout=LINE_BOUND_S)
    for _ in range(12):
        if time.monotonic() > deadline:
            break
        kind = rng.choice(CLASSES if mode == "2025-03-26" else CLASSES[:-1])
        line = gen.line(kind)
        expected = oracle.line(line)
        sentinel = gen.request(rid=f"sentinel-{gen.n}")
        oracle.line(json.dumps(sentinel).encode())
        started = time.monotonic()
        server.send(line + b"\n" + json.dumps(sentinel).encode())
        got: list[Any] = []
        try:
            while True:
                reply = server.replies.get(timeout=LINE_BOUND_S)
                if isinstance(reply, EOFError):
                    report.violation(f"{mode} {kind}: the server died: {server.stderr_text()!r}")
                    return
                if isinstance(reply, dict) and reply.get("id") == sentinel["id"]:
                    break
                got.append(reply)
        except queue.Empty:
            report.violation(f"{mode} {kind}: no answer within {LINE_BOUND_S:g} s "
                             f"({len(line):,} bytes: {line[:100]!r})")
            server.proc.kill()
            return
        report.slowest[kind] = max(report.slowest[kind], time.monotonic() - started)
        report.lines += 1
        report.bytes += len(line)
        report.most_replies = max(report.most_replies, len(got))
        if len(got) > 1:
            report.violation(f"{mode} {kind}: {len(got)} replies to one line")
        if len(got) != len(expected):
            report.violation(f"{mode} {kind}: {len(got)} replies, {len(expected)} expected; "
                             f"line {line[:200]!r}; replies {str(got)[:500]}")
            continue
        revision = oracle.state.revision or mode
        for exp, reply in zip(expected, got, strict=True):
            why = judge(exp, reply) or schema_check(reply, _for_schema(exp), revision)
            if why:
                report.violation(f"{mode} {kind}: {why}; line {line[:200]!r}")
    report.peak_rss = max(report.peak_rss, server.peak_rss_mb())
    if server.peak_rss_mb() > RSS_LIMIT_MB:
        report.violation(f"{mode}: VmHWM {server.peak_rss_mb():.0f} MB over {RSS_LIMIT_MB} MB")
    rc = server.close()
    text = server.stderr_text()
    if rc != 0 or "Traceback" in text or len(text.strip().splitlines()) != 1:
        report.violation(f"{mode}: exit {rc}, stderr {text[-2000:]}")


def _for_schema(expect: Expect) -> Expect:
    return expect if expect.id is not NO_ID else Expect(NO_ID, expect.code, batch=expect.batch,
                                                         method=expect.method)


def run(seconds: float, seed: int, min_lines: int = 0) -> Report:
    """Sessions for ``seconds``, and on until ``min_lines`` lines covering every class went out.

    The floor makes what a run covers independent of how busy the machine is: a loaded CI
    runner takes longer, it does not test less (a time box alone sent 13 lines under load).
    """
    report = Report()
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="promptops-fuzz-") as tmp:
        bundle_path, bundle = fuzz_serve.build_bundle(Path(tmp))
        deadline = time.monotonic() + seconds
        while (time.monotonic() < deadline or report.lines < min_lines
               or not all(report.slowest.values())) and report.sessions < 10_000:
            session(rng, bundle_path, bundle, report, max(deadline, time.monotonic() + 1.0))
    return report


def summary(report: Report, seconds: float, seed: int) -> str:
    rows = [f"fuzz_stdio: seed {seed}, {seconds:g} s, {report.sessions} sessions",
            f"lines sent: {report.lines} ({report.bytes / 1e6:.1f} MB)",
            f"most replies to one line: {report.most_replies}",
            *(f"slowest {kind} line: {took * 1e3:.0f} ms (bound {LINE_BOUND_S:g} s)"
              for kind, took in report.slowest.items()),
            f"peak VmHWM: {report.peak_rss:.0f} MB (limit {RSS_LIMIT_MB} MB)",
            f"invariant violations: {report.violations}",
            *(f"  - {line}" for line in report.details)]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    report = run(args.seconds, args.seed)
    print(summary(report, args.seconds, args.seed))
    return 0 if report.violations == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
