"""The stdio fuzz driver, run for a bounded time with a fixed seed.

CI runs it for about 20 s (``CI`` set), a local run for 10 s; ``PROMPTOPS_FUZZ_SECONDS``
sets any other budget for a longer opt-in run (and ``PROMPTOPS_FUZZ_SEED`` the seed).
Until session 11 CI gave it 60 s, most of it spent sending 10 MB argument values (3% of
the lines, 99.8% of the bytes); since fuzz_gen sends two a session, 20 s sends more
messages in more sessions than the 60 s did (27,619 in 61 sessions against 16,880 in 37,
seed 1, on the same loaded host) for half the CPU (docs/benchmarks.md, "the suite's CPU,
session 11").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.repo import REPO_ROOT

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hardening"))
from hardening_helpers import record

DRIVER = Path(__file__).resolve().parent / "fuzz_serve.py"


def budget() -> str:
    return os.environ.get("PROMPTOPS_FUZZ_SECONDS") or ("20" if os.environ.get("CI") else "10")


def test_fuzzing_serve_finds_no_crash_and_no_violation() -> None:
    seed = os.environ.get("PROMPTOPS_FUZZ_SEED", "1")
    proc = subprocess.run([sys.executable, str(DRIVER), "--seconds", budget(), "--seed", seed],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=600)
    report = proc.stdout + proc.stderr
    assert "crashes: 0\n" in proc.stdout, report
    assert "invariant violations: 0\n" in proc.stdout, report
    sent = int(proc.stdout.split("messages sent: ")[1].split()[0])
    assert sent >= 200, report  # it really talked to a server
    assert proc.returncode == 0, report
    record("serve protocol fuzzing", "random and mutated JSON-RPC traffic: invalid UTF-8, "
           "truncated, blank, 16 MiB and deeply nested lines, wrong types in every field, "
           "unknown methods, duplicate and missing ids, notifications with ids, out-of-order "
           "lifecycle in both eras, 10 MB arguments, batches", "serve",
           "0 crashes, 0 invariant violations: every request got exactly one reply with the "
           "documented code, valid requests kept rendering what an in-process Renderer "
           "renders, VmRSS stayed under the limit, exit 0 on stdin EOF",
           "test_fuzz_serve.py::test_fuzzing_serve_finds_no_crash_and_no_violation")
