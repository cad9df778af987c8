"""What the build and serve benchmarks share: statistics, /proc readers, git package
generation, a select()-based JSON-RPC line reader, tables and the docs writer.

Standard library only (plus ``genpkg`` next to this file), so the benchmarks run from a
bare checkout with the venv and nothing from outside the repository.
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import json
import math
import os
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
DOCS = REPO_ROOT / "docs" / "benchmarks.md"
if str(HERE) not in sys.path:  # genpkg lives next to this file
    sys.path.insert(0, str(HERE))

import genpkg  # noqa: E402

now = time.perf_counter
CLK_TCK = os.sysconf("SC_CLK_TCK")
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x"}


class BenchError(Exception):
    """A wrong or missing answer: the server (or build) that caused it gets no numbers."""


# -- statistics ---------------------------------------------------------------------------

def pct(xs: Sequence[float], q: float) -> float:
    """Percentile with linear interpolation between closest ranks (numpy's default)."""
    s = sorted(xs)
    k = (len(s) - 1) * q
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def median(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def fmt(x: float | None, nd: int = 1) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.{nd}f}"


# -- /proc --------------------------------------------------------------------------------

def peak_rss_kb(pid: int) -> int | None:
    """VmHWM: the high-water mark of resident memory, read before the process ends."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def cpu_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def env_info() -> dict[str, Any]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count(), "cpu": cpu, "loadavg": os.getloadavg(),
            "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")}


def env_lines(info: dict[str, Any], load_end: tuple[float, ...]) -> list[str]:
    la = ", ".join(f"{x:.2f}" for x in info["loadavg"])
    lb = ", ".join(f"{x:.2f}" for x in load_end)
    return [f"- Date: {info['date']}; Python {info['python']} on {info['platform']}",
            f"- CPU: {info['cpus']} x {info['cpu']}",
            f"- Load average (1, 5, 15 min) at start: {la}; at end: {lb} "
            "(other jobs were running on the machine; medians over several runs are reported)"]


# -- packages -----------------------------------------------------------------------------

def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def make_package(n: int, root: Path) -> Path:
    """A generated package of ``n`` prompts, committed on ``main`` in a fresh repository."""
    out = root / f"pkg{n}"
    genpkg.generate(n, out)
    git(out, "init", "-q", "-b", "main")
    git(out, "add", "-A")
    git(out, "commit", "-qm", "bench")
    return out


def change_prompt(pkg: Path, i: int, marker: str) -> str:
    """Rewrite prompt ``i``'s description; returns the prompt name."""
    path = pkg / "prompts" / f"task_{i:05d}.prompt.yaml"
    text = path.read_text()
    line = next(x for x in text.splitlines() if x.startswith("description:"))
    path.write_text(text.replace(line, f"description: {marker}", 1))
    return f"task_{i:05d}"


def branch_with_change(pkg: Path, branch: str, i: int, marker: str) -> str:
    """Commit a one-prompt change on a new ``branch`` off main, leaving main checked out."""
    git(pkg, "checkout", "-q", "-b", branch, "main")
    name = change_prompt(pkg, i, marker)
    git(pkg, "commit", "-qam", f"change {name}")
    git(pkg, "checkout", "-q", "main")
    return name


def promptops_cmd() -> list[str]:
    """The console script next to this interpreter: what an MCP client would spawn."""
    script = Path(sys.executable).parent / "promptops"
    return [str(script)] if script.exists() else [sys.executable, "-m", "promptops"]


# -- a JSON-RPC peer over pipes -----------------------------------------------------------

class Conn:
    """A spawned stdio server and a select()-based line reader (no reader thread)."""

    def __init__(self, argv: list[str], timeout: float, cwd: Path | None = None) -> None:
        self.timeout = timeout
        self.errf: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.t_spawn = now()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.errf, bufsize=0, cwd=cwd)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.lines: collections.deque[bytes] = collections.deque()
        self.partial = b""
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.wfd, view):]

    def readline(self, deadline: float) -> bytes:
        while not self.lines:
            left = deadline - now()
            if left <= 0:
                raise BenchError(f"no answer within {self.timeout:g} s")
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise BenchError(f"server closed stdout (exit {self.proc.poll()}): "
                                 + self.stderr_tail())
            parts = (self.partial + chunk).split(b"\n")
            self.partial = parts.pop()
            self.lines.extend(p for p in parts if p.strip())
        return self.lines.popleft()

    def encode(self, method: str, params: dict[str, Any] | None) -> tuple[int, bytes]:
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        return self.next_id, json.dumps(msg, separators=(",", ":")).encode() + b"\n"

    def notify(self, method: str) -> None:
        self.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")

    def read_response(self, deadline: float) -> dict[str, Any]:
        """The next response; notifications are kept aside, server requests refused."""
        while True:
            msg = json.loads(self.readline(deadline))
            if not isinstance(msg, dict):
                raise BenchError(f"not a JSON-RPC object: {msg!r:.200}")
            if "method" not in msg:
                return msg
            if "id" in msg:
                self.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                    "code": -32601, "message": "not supported by the benchmark"}}).encode() + b"\n")
            else:
                self.notifications.append(msg)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid, data = self.encode(method, params)
        self.write(data)
        return result_of(self.read_response(now() + self.timeout), rid, method)

    def stderr_tail(self, n: int = 800) -> str:
        self.errf.seek(0)
        return self.errf.read().decode("utf-8", "replace")[-n:]

    def close(self) -> None:
        """stdin EOF is the MCP stdio shutdown; a server that ignores it is killed."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.proc.stdout.close()
        self.errf.close()


def result_of(msg: dict[str, Any], rid: int, method: str) -> dict[str, Any]:
    if msg.get("jsonrpc") != "2.0" or msg.get("id") != rid:
        raise BenchError(f"{method}: bad envelope or id (wanted {rid}): {msg!r:.200}")
    if "error" in msg:
        raise BenchError(f"{method}: error {json.dumps(msg['error'])[:300]}")
    res = msg.get("result")
    if not isinstance(res, dict):
        raise BenchError(f"{method}: result is not an object")
    return res


# -- output -------------------------------------------------------------------------------

def md_table(rows: list[list[str]]) -> str:
    head, *body = rows
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def write_section(heading: str, body: str, path: Path = DOCS) -> None:
    """Replace the ``## heading`` section of the docs file (other sections are kept)."""
    text = path.read_text() if path.exists() else (
        "# Benchmarks\n\nMeasured figures for each command, regenerated by the scripts in "
        "`benchmarks/` (each section names the command that produced it).\n")
    lines = text.splitlines()
    title = f"## {heading}"
    section = [title, "", *body.strip("\n").splitlines()]
    if title in lines:
        start = lines.index(title)
        end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("## ")),
                   len(lines))
        tail = lines[end:]
        lines = lines[:start] + section + (["", *tail] if tail else [])
    else:
        lines = [*lines, "", *section]
    path.write_text("\n".join(lines).rstrip("\n") + "\n")
