"""Bounded stdio fuzzing of a real `promptops serve --bundle X` subprocess.

    python tests/fuzz/fuzz_serve.py --seconds 60 --seed 1

Sessions (one server process each, in a random era: a handshake revision, 2026-07-28, or
never initialised) receive batches of generated lines (:mod:`fuzz_gen`), each batch
closed by a sentinel ``ping``. Everything the server wrote before the sentinel's reply
must be exactly the replies :mod:`fuzz_oracle` predicts, in order, each well-formed and
valid against the official MCP schema of the session's revision. Invariants: the process
stays up (a death or a hang is a *crash*); every request gets exactly one correct reply;
valid requests keep rendering what an in-process Renderer renders; VmRSS stays under
RSS_LIMIT_MB; stdin EOF ends the process with status 0 and no traceback. Prints the
messages sent, crashes and invariant violations; exits 1 unless both are 0.
"""

from __future__ import annotations

import argparse
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

from fuzz_gen import Generator  # noqa: E402
from fuzz_oracle import Expect, Oracle, judge  # noqa: E402
from helpers.serve import ServeProcess  # noqa: E402

RSS_LIMIT_MB = 300
REPLY_TIMEOUT_S = 60.0
MODES = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "modern", "undecided")
PACKAGE = {
    "promptops.yaml": "name: fuzzkit\nversion: 1.0.0\n",
    "prompts/greet.prompt.yaml": (
        "description: Greets\narguments:\n  - {name: name, required: true, maxLength: 40}\n"
        "  - {name: tone, enum: [warm, dry, Wry], default: warm, examples: [wistful]}\n"
        "messages:\n  - role: user\n    text: \"Hello {{ name }}, in a {{ tone }} way.\"\n"),
    "prompts/code.prompt.yaml": (
        "arguments:\n  - {name: lang, pattern: \"[a-z]+\"}\n  - {name: code}\n"
        "messages:\n  - role: assistant\n    template: partials/p.j2\n"
        "  - role: user\n    text: \"{{ code }}\"\n"),
    "prompts/plain.prompt.yaml": "messages:\n  - role: user\n    text: Just text.\n",
    "prompts/boom.prompt.yaml": "messages:\n  - role: user\n    text: \"{{ 1 / 0 }}\"\n",
    "prompts/bomb.prompt.yaml": (
        "messages:\n  - role: user\n    text: \"{{ 'x'.ljust(10**9) }}{{ '%999999999s' % 1 }}\"\n"),
    "partials/p.j2": "{% if lang %}Language: {{ lang|upper }}{% else %}Any language{% endif %}\n",
}


def build_bundle(root: Path) -> tuple[Path, dict[str, Any]]:
    from promptops.pipeline.build import Build
    from promptops.pipeline.bundle import serialise

    for rel, text in PACKAGE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    bundle = Build(root).bundle
    path = root / "fuzzkit.bundle.json"
    path.write_bytes(serialise(bundle))
    return path, bundle


def rss_mb(pid: int) -> float:
    try:
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith("VmRSS:"):
                return int(row.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Server(ServeProcess):
    """One `promptops serve --bundle` subprocess (the suite's one serve client)."""

    def __init__(self, bundle: Path) -> None:
        super().__init__(["--bundle", str(bundle)])

    @property
    def replies(self) -> queue.Queue[Any]:
        return self.messages


class Report:
    def __init__(self) -> None:
        self.sent = self.checked = self.crashes = self.violations = self.sessions = 0
        self.max_rss = 0.0
        self.details: list[str] = []

    def violation(self, text: str) -> None:
        self.violations += 1
        if len(self.details) < 20:
            self.details.append(text)


def schema_check(reply: Any, expect: Expect, revision: str) -> str | None:
    try:
        from serve_helpers import check_message  # the serve tests' schema judge
    except ImportError:  # pragma: no cover - run from outside the repository
        return None
    if expect.batch is not None:  # elements one by one: a null id is checked as above
        for sub, item in zip(expect.batch, reply, strict=True):
            why = schema_check(item, sub, revision)
            if why:
                return why
        return None
    try:
        check_message(reply, revision, expect.method)
    except Exception as exc:  # a schema violation: report it, keep fuzzing
        return f"schema ({revision}): {type(exc).__name__}: {str(exc)[:300]} in {str(reply)[:300]}"
    return None


def session(rng: random.Random, bundle_path: Path, bundle: dict[str, Any], report: Report,
            deadline: float) -> None:
    mode = rng.choice(MODES)
    gen = Generator(rng, mode, {p["name"]: p for p in bundle["prompts"]})
    oracle = Oracle(bundle)
    server = Server(bundle_path)
    report.sessions += 1
    alive, batch_no = True, 0
    while alive and time.monotonic() < deadline and batch_no < 40:
        batch_no += 1
        lines = [gen.line() for _ in range(rng.randint(1, 20))]
        if batch_no == 1 and mode not in ("modern", "undecided") and rng.random() < 0.8:
            lines.insert(0, json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                                        "params": {"protocolVersion": mode, "capabilities": {}}
                                        }).encode())
        sentinel = f"sentinel-{batch_no}"
        lines.append(json.dumps({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}).encode())
        expected: list[Expect] = []
        for line in lines:
            expected.extend(oracle.line(line))
        alive = server.write(b"".join(line + b"\n" for line in lines))
        report.sent += len(lines)
        got: list[Any] = []
        waited, over = time.monotonic(), False
        while alive:
            try:
                reply = server.replies.get(timeout=0.25)
            except queue.Empty:
                rss = rss_mb(server.proc.pid)  # sampled while a request is being worked on
                report.max_rss = max(report.max_rss, rss)
                if rss > RSS_LIMIT_MB and not over:
                    over = True
                    report.violation(f"{mode}: VmRSS {rss:.0f} MB over {RSS_LIMIT_MB} MB")
                if time.monotonic() < waited + REPLY_TIMEOUT_S:
                    continue
                report.crashes += 1
                report.details.append(f"{mode}: no reply within {REPLY_TIMEOUT_S:g} s (hang)")
                server.proc.kill()
                return
            if isinstance(reply, EOFError):
                alive = False
                break
            got.append(reply)
            if isinstance(reply, dict) and reply.get("id") == sentinel:
                break
        if not alive:
            report.crashes += 1
            report.details.append(f"{mode}: the server died; stderr: "
                                  f"{server.stderr_text()[-2000:]}")
            return
        if len(got) != len(expected):
            report.violation(f"{mode}: {len(got)} replies for {len(expected)} expected; lines "
                             f"{[ln[:120] for ln in lines]}; replies {str(got)[:800]}")
        else:
            revision = oracle.state.revision or ("2026-07-28" if mode == "modern"
                                                 else "2025-11-25")
            for exp, reply in zip(expected, got, strict=True):
                why = judge(exp, reply) or schema_check(reply, exp, revision)
                report.checked += 1
                if why:
                    report.violation(f"{mode}: {why}")
        rss = rss_mb(server.proc.pid)
        report.max_rss = max(report.max_rss, rss)
        if rss > RSS_LIMIT_MB and not over:
            report.violation(f"{mode}: VmRSS {rss:.0f} MB over {RSS_LIMIT_MB} MB")
    rc = server.close()
    text = server.stderr_text()
    if rc != 0:
        report.crashes += 1
        report.details.append(f"{mode}: exit status {rc} after stdin EOF; stderr {text[-2000:]}")
    elif "Traceback" in text or "internal error" in text:
        report.violation(f"{mode}: traceback on stderr: {text[-2000:]}")


def run(seconds: float, seed: int, each: Any = None, report: Any = None) -> Any:
    """Sessions (``each``, default :func:`session`) on one bundle until ``seconds`` are up."""
    report = Report() if report is None else report
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="promptops-fuzz-") as tmp:
        bundle_path, bundle = build_bundle(Path(tmp))
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            (each or session)(rng, bundle_path, bundle, report, deadline)
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    report = run(args.seconds, args.seed)
    print(f"fuzz_serve: seed {args.seed}, {args.seconds:g} s, {report.sessions} sessions")
    print(f"messages sent: {report.sent}")
    print(f"replies checked: {report.checked}")
    print(f"max VmRSS: {report.max_rss:.0f} MB (limit {RSS_LIMIT_MB} MB)")
    print(f"crashes: {report.crashes}")
    print(f"invariant violations: {report.violations}")
    for line in report.details:
        print(f"  - {line}")
    return 0 if report.crashes == 0 and report.violations == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
