"""Instructions per ``prompts/get`` of whole HTTP servers (uvicorn included), for before/after.

``http_bench.py`` compares server CPU per request with a bare uvicorn app's (the floor);
on a shared machine those clocks move by more than the few per cent a change makes.
This script measures the same ratio in instructions, which do not depend on the load:
each server runs under callgrind (``--separate-threads=yes``) and is driven from outside
by a plain keep-alive client, with the load generator's requests (the same headers, a
unique topic per request, the 2026-07-28 envelope and headers for ``@modern``). Per server:

1. start it, wait until it answers, warm every prompt the run will ask for (first
   renders compile) and complete the clients' handshakes;
2. ``callgrind_control -z`` (zero), ``--n`` requests, ``callgrind_control -d`` (dump);
3. zero, ``--idle`` seconds without requests, dump: what the process spends on its own
   (uvicorn's tick, a follower's poll) per second, which is taken off step 2 in
   proportion to its wall time (under callgrind a request takes ~50x longer than it
   does natively, so the idle rate would otherwise weigh 50x what it does in
   ``http_bench.py``).

Printed per server: instructions per request of the event loop's thread and of every
thread, and their ratio to the floor (the first server named ``floor...``). Kernel time
(the syscalls) is not counted: it is about the same per request for every uvicorn server,
so the CPU ratio of ``http_bench.py`` is a little closer to 1 than this one.

Usage (the defaults are what ``http_bench.py``'s target compares):

    python benchmarks/http_server_instructions.py [--n 600] [--conc 1] [--prompts 40]
        [--server LABEL=CMD ...]   # CMD with {port}, {promptset}, {pkg}, {bundle}; LABEL@modern

With ``PYTHONPATH=<another checkout>`` (run from outside this checkout's root), the
promptops servers are that checkout's.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from http_bench import make_package  # noqa: E402

MODERN = "2026-07-28"
SESSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
UA = "Python/3.11 aiohttp/3.14.5"  # what the load generator's requests carry


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Client:
    """One keep-alive connection and, in the session era, its session."""

    def __init__(self, port: int, *, modern: bool) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        self.modern, self.next_id = modern, 1
        self.headers = {"Content-Type": "application/json", "Accept": ACCEPT,
                        "User-Agent": UA, "Accept-Encoding": "gzip, deflate"}
        if modern:
            self.headers["mcp-protocol-version"] = MODERN

    def post(self, method: str, params: dict[str, object] | None, *, notify: bool = False,
             extra: dict[str, str] | None = None) -> tuple[int, bytes, http.client.HTTPResponse]:
        msg: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            msg["id"] = self.next_id
            self.next_id += 1
        body = json.dumps(msg).encode()
        self.conn.putrequest("POST", "/mcp", skip_accept_encoding=True)
        for k, v in {**self.headers, **(extra or {})}.items():
            self.conn.putheader(k, v)
        self.conn.putheader("Content-Length", str(len(body)))
        self.conn.endheaders(body)
        resp = self.conn.getresponse()
        return resp.status, resp.read(), resp

    def envelope(self, params: dict[str, object]) -> dict[str, object]:
        return {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                                    "io.modelcontextprotocol/clientCapabilities": {},
                                    "io.modelcontextprotocol/clientInfo": {
                                        "name": "http_bench", "version": "0.1"}}}

    def handshake(self) -> None:
        if self.modern:
            return
        status, raw, resp = self.post("initialize", {
            "protocolVersion": SESSION, "capabilities": {},
            "clientInfo": {"name": "http_bench", "version": "0.1"}})
        assert status == 200, (status, raw[:200])
        sid = resp.getheader("mcp-session-id")
        if sid:
            self.headers["mcp-session-id"] = sid
        self.headers["mcp-protocol-version"] = json.loads(raw)["result"]["protocolVersion"]
        self.post("notifications/initialized", None, notify=True)

    def get(self, name: str, topic: str) -> bool:
        params: dict[str, object] = {"name": name, "arguments": {"topic": topic,
                                                                 "tone": "formal"}}
        if self.modern:
            status, raw, _ = self.post("prompts/get", self.envelope(params), extra={
                "mcp-method": "prompts/get", "mcp-name": name})
        else:
            status, raw, _ = self.post("prompts/get", params)
        if b"render took longer than" in raw:
            return False  # under callgrind on a loaded machine: asked again, and counted
        if status != 200 or topic.encode() not in raw:
            raise SystemExit(f"bad reply for {name}: {status} {raw[:300]!r}")
        return True


def control(pid: int, what: str) -> None:
    subprocess.run(["callgrind_control", what, str(pid)], check=True, capture_output=True)


def totals(prefix: Path, dump: int) -> dict[str, int]:
    """Instructions per thread of dump number ``dump`` (``-d`` files end ``.<n>-<thread>``)."""
    out: dict[str, int] = {}
    for f in sorted(prefix.parent.glob(f"{prefix.name}.{dump}-*")):
        for line in f.read_text(errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                out[f.name.rsplit("-", 1)[1]] = int(line.split()[1])
                break
    return out


def wait_dump(prefix: Path, dump: int, timeout: float = 600) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = totals(prefix, dump)
        if found:
            time.sleep(0.5)  # every thread's file written
            return totals(prefix, dump)
        time.sleep(0.2)
    raise SystemExit(f"no callgrind dump {dump} under {prefix}")


def measure(label: str, cmd: str, args: argparse.Namespace, work: Path,
            names: list[str]) -> dict[str, float]:
    modern = label.endswith("@modern")
    port = free_port()
    prefix = work / f"cg-{label.replace('@', '_')}"
    argv = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
            f"--callgrind-out-file={prefix}.%p", *shlex.split(cmd.replace("{port}", str(port)))]
    log = (work / f"{prefix.name}.log").open("wb")
    # one hash seed: dict and set layouts, and so the counts, repeat from run to run
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
                            env={**os.environ, "PYTHONHASHSEED": "0"})
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                probe = Client(port, modern=modern)
                probe.handshake()
                probe.get(names[0], "probe")
                break
            except (OSError, http.client.HTTPException):
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    tail = Path(log.name).read_text(errors="replace")[-2000:]
                    raise SystemExit(f"{label} did not start:\n{tail}") from None
                time.sleep(0.5)
        for rnd in range(2):  # compile (and let valgrind translate) what the run asks for
            for i, name in enumerate(names):
                for _ in range(5):  # a first render may pass its deadline under callgrind
                    if probe.get(name, f"warm-{rnd}-{i}"):
                        break
        clients = [Client(port, modern=modern) for _ in range(args.conc)]
        for c in clients:
            c.handshake()
            c.get(names[0], "warm")
        pid = proc.pid
        found = prefix.with_name(f"{prefix.name}.{pid}")
        control(pid, "-z")
        counter = iter(range(args.n))
        lock = threading.Lock()
        again = [0]

        def worker(c: Client) -> None:
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                while not c.get(names[i % len(names)], f"load-{i}-topic"):
                    with lock:
                        again[0] += 1

        t0 = time.perf_counter()
        threads = [threading.Thread(target=worker, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        control(pid, "-d")
        load = wait_dump(found, 1)
        control(pid, "-z")
        t1 = time.perf_counter()
        time.sleep(args.idle)
        control(pid, "-d")
        idle_wall = time.perf_counter() - t1
        idle = wait_dump(found, 2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
    main_t = min(load)  # thread 01: the main thread, which runs the event loop
    per = {t: (load[t] - idle.get(t, 0) * wall / idle_wall) / args.n for t in load}
    return {"main": per[main_t], "all": sum(per.values()),
            "main_raw": load[main_t] / args.n, "wall_ms": wall * 1000 / args.n,
            "idle_per_s": sum(idle.values()) / idle_wall, "threads": len(load),
            "again": again[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--conc", type=int, default=1)
    ap.add_argument("--prompts", type=int, default=40, help="distinct prompts the run asks for")
    ap.add_argument("--idle", type=float, default=3.0)
    ap.add_argument("--server", action="append", default=[])
    ap.add_argument("--json", type=Path, help="append the figures here")
    args = ap.parse_args()
    py = sys.executable
    floor = HERE / "floor" / "http" / "srv_floor_http.py"
    exe = [py, "-m", "promptops"]
    servers = args.server or [
        f"floor-httptools={py} {floor} --http httptools --loop uvloop --port {{port}}",
        f"promptops={' '.join(exe)} serve --http --port {{port}} --page-size 1000 "
        "--no-access-log --bundle {bundle}",
        f"promptops-2026@modern={' '.join(exe)} serve --http --port {{port}} "
        "--page-size 1000 --no-access-log --bundle {bundle}",
    ]
    with tempfile.TemporaryDirectory(prefix="po-http-instr-") as tmp:
        work = Path(tmp)
        promptset = work / "promptset.json"
        subprocess.run([py, str(HERE / "floor" / "gen_promptset.py"), "1000", str(promptset)],
                       check=True, capture_output=True)
        pkg = make_package(promptset, work / "pkg")
        # served from its bundle: a package folder's start (build and lint gate) takes
        # minutes under callgrind, and the request path is the same (docs/benchmarks.md)
        subprocess.run([*exe, "build", "--no-lint", "-o", str(work / "dist"), str(pkg)],
                       check=True, capture_output=True)
        bundle = next((work / "dist").glob("*.json"))
        names = [p["name"] for p in json.loads(promptset.read_text())][:args.prompts]
        os.environ["PROMPTSET"] = str(promptset)
        results: dict[str, dict[str, float]] = {}
        for spec in servers:
            label, cmd = spec.split("=", 1)
            cmd = cmd.replace("{promptset}", str(promptset)).replace("{pkg}", str(pkg)).replace(
                "{bundle}", str(bundle))
            print(f"{label}: {args.n} requests under callgrind ...", file=sys.stderr, flush=True)
            results[label] = measure(label, cmd, args, work, names)
        base = next((r for label, r in results.items() if label.startswith("floor")), None)
        print(f"instructions per prompts/get, n={args.n}, C={args.conc}, "
              f"{args.prompts} prompts of 1,000; idle rate taken off")
        print("| server | event-loop thread | every thread | ratio to the floor (loop / all) "
              "| threads | asked again |")
        print("| --- | --- | --- | --- | --- | --- |")
        for label, r in results.items():
            ratio = (f"{r['main'] / base['main']:.3f}x / {r['all'] / base['all']:.3f}x"
                     if base else "-")
            print(f"| {label} | {r['main']:,.0f} | {r['all']:,.0f} | {ratio} | "
                  f"{r['threads']:.0f} | {r['again']:.0f} |")
        if args.json:
            with args.json.open("a") as f:
                f.write(json.dumps({"n": args.n, "conc": args.conc, "results": results}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
