"""Fuzzing `promptops import`: real prompt files, mutated, in one folder per round.

Each round copies a few corpus prompt files into a folder and mutates some of them (cut
short, bytes flipped, lines repeated or swapped, frontmatter made hostile: deep nesting,
aliases, huge integers, NaN, odd types), then imports the folder in-process. Whatever the
files hold: the exit is 0 or 1 (never 3), every file is reported exact, lossy or refused,
and what is written builds. Issue 22's per-file isolation, on inputs nobody wrote by hand.

A few seconds of the fuzz budget: 4 s locally, 8 s in CI (``CI`` set),
``PROMPTOPS_FUZZ_IMPORT_SECONDS`` for a longer run; ``PROMPTOPS_FUZZ_SEED`` seeds it.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

from helpers.repo import run_cli

from promptops.pipeline.build import Build

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
SOURCES = sorted(p for p in CORPUS.rglob("*")
                 if p.suffix in (".prompty", ".prompt", ".md") and p.parent != CORPUS
                 and not p.name.startswith("_") and p.stat().st_size < 20_000)
FRONT = ["metadata: " + "[" * 150 + "]" * 150, "a: &a [*a]", "n: " + "1" * 4400,
         "x: .nan", "description: [1, {a: b}]", "name: 42", "inputs: {q: {type: object, "
         "default: 3}}", "input:\n  schema:\n    q(array): integer", "tools: 7",
         "model: {parameters: {temperature: .inf}}", "sample: ${file:../../../etc/passwd}",
         "argument-hint: \x00", "&x a: *x"]
MIN_ROUNDS = 4


def budget() -> float:
    return float(os.environ.get("PROMPTOPS_FUZZ_IMPORT_SECONDS")
                 or ("8" if os.environ.get("CI") else "4"))


def mutate(rng: random.Random, data: bytes) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return data[: rng.randrange(len(data) + 1)]
    if kind == 1:
        out = bytearray(data)
        for _ in range(rng.randrange(1, 8)):
            if out:
                out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    lines = data.split(b"\n")
    if kind == 2 and lines:
        i = rng.randrange(len(lines))
        lines[i:i] = [lines[i]] * rng.randrange(1, 4)
    elif kind == 3 and len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 4:
        front = rng.choice(FRONT).encode()
        if data.startswith(b"---\n"):
            return b"---\n" + front + b"\n" + data[4:]
        return b"---\n" + front + b"\n---\n" + data
    else:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(
            [b"{{", b"{% if %}", b"{{#each x}}", b"${input:}", b"$ARGUMENTS$1", b"user:",
             b"{{role \"model\"}}", b"---", b"\t\x0b\x0c", "\u202e".encode()]))
    return b"\n".join(lines)


def test_import_isolates_every_file(tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("PROMPTOPS_FUZZ_SEED", "1")))
    deadline = time.monotonic() + budget()
    rounds = 0
    while rounds < MIN_ROUNDS or time.monotonic() < deadline:
        src = tmp_path / f"r{rounds}" / "src"
        src.mkdir(parents=True)
        for n, path in enumerate(rng.sample(SOURCES, 6)):
            data = path.read_bytes()
            if rng.random() < 0.7:
                data = mutate(rng, data)
            (src / f"{n}-{path.name}").write_bytes(data)
        out = tmp_path / f"r{rounds}" / "pkg"
        done = run_cli("import", str(src), "-o", str(out), "--format", "json")
        assert done.returncode in (0, 1), (rounds, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr
        files = json.loads(done.stdout)
        assert {f["outcome"] for f in files} <= {"exact", "lossy", "refused"}
        if any(f["outcome"] != "refused" for f in files):
            Build(out).bundle  # noqa: B018 - what is written builds
        else:
            assert not out.exists()
        rounds += 1
