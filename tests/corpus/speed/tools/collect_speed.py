"""Apply the speed corpus's selection rule (../README.md) to fetched repository snapshots.

Why a script: the rule must be re-runnable and auditable, so every decision (excluded,
no licence, no file of the family, taken) is made here by the written rule, not by hand,
and recorded in ``candidates.yaml`` with its outcome. The snapshots are brought in with the
search tools' ``fetch`` (one bare git directory per repository under /work/.mirror); this
script only reads them with git.

Usage: python tests/corpus/speed/tools/collect_speed.py [--mirror DIR]
Reads ``candidates.yaml`` (family, source, repository; in the rule's order), writes the
files under ``tuning/`` and ``heldout/``, ``manifest.yaml``, the licence texts under
``tests/corpus/licenses/``, and each candidate's ``outcome`` back into ``candidates.yaml``.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

SPEED = Path(__file__).resolve().parent.parent
TESTS = SPEED.parent.parent
REPO = TESTS.parent
LICENSES = SPEED.parent / "licenses"
PER_REPO = 6
PER_FAMILY = 25
# A later rule's extras (speed5, session 17), None for the earlier corpora: a stop when the
# files taken hold this many bytes, and a decision made before a fetch (family, repository ->
# outcome, or None to go on) for a family whose files a repository's name rules out.
MAX_BYTES: int | None = None
PRECHECK: Any = None
# speed6's amendment 2 (session 18): a family whose repositories give at most this many prompt
# files (family -> cap, or None for PER_REPO everywhere).
PER_REPO_OF: Any = None
FORKS = ["*/prompty", "*/genkit", "genkit-ai/*", "firebase/*", "*/dotprompt", "*/promptfoo",
         "*/langchain", "*/awesome-copilot", "*/awesome-claude-code*"]
# The speed corpora in the order they were collected by the same rule (speed, speed2 in
# session 10, speed3 in session 11, speed4 in session 13, speed5 in session 17, speed6 in
# session 18): a later corpus's lists name the earlier corpora's repositories as excluded,
# which must not exclude them from the earlier ones. The one list of the speed corpora: the
# checks and the import tests read it.
ORDER = (SPEED, SPEED.parent / "speed2", SPEED.parent / "speed3", SPEED.parent / "speed4",
         SPEED.parent / "speed5", SPEED.parent / "speed6")


def _this_and_later(own: Path) -> tuple[Path, ...]:
    """``own`` and every corpus collected after it (their lists do not count for it)."""
    return ORDER[ORDER.index(own):] if own in ORDER else (own,)
NOT_COMMANDS = re.compile(r"(^|/)(readme|changelog|license|licence|claude|agents)[^/]*\.md$", re.I)


def part_of(repository: str, path: str) -> str:
    """The rule's split: first byte of sha256('<owner>/<repo>/<path>') even -> tuning."""
    digest = hashlib.sha256(f"{repository}/{path}".encode()).digest()
    return "tuning" if digest[0] % 2 == 0 else "heldout"


def excluded_repositories(own: Path | None = None) -> set[str]:
    """Every ``repository: owner/name`` named under tests/ or benchmarks/ (rule point 1),
    outside the corpus being collected (``own``, this one by default) and the corpora
    collected after it (``ORDER``): speed2 counts this corpus's lists, speed3 both."""
    skip = _this_and_later(SPEED if own is None else own)
    out = set()
    pattern = re.compile(r"repository: *['\"]?([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)")
    for root in (TESTS, REPO / "benchmarks"):
        for path in root.rglob("*"):
            if not path.is_file() or path.suffix in (".pyc",) or any(
                    mine in path.parents for mine in skip):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            out.update(m.lower() for m in pattern.findall(text))
    return out


def earlier_files() -> set[str]:
    """sha256 of every file of the earlier corpora: a byte-identical file is a copy (point 1).
    The corpora collected after this one are not earlier (``ORDER``)."""
    skip = _this_and_later(SPEED)
    roots = [p for p in (SPEED.parent).iterdir() if p.is_dir() and p not in skip]
    roots.append(TESTS / "lint" / "corpus")
    return {hashlib.sha256(f.read_bytes()).hexdigest() for root in roots
            for f in root.rglob("*") if f.is_file()}


def git(mirror: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(mirror), *args], capture_output=True,
                          check=True).stdout


LICENCE_TESTS = [  # (SPDX, must contain all, must contain none)
    ("CC-BY-4.0", ["Attribution 4.0 International"], ["NonCommercial", "NoDerivatives",
                                                      "ShareAlike"]),
    ("CC0-1.0", ["CC0 1.0 Universal"], []),
    ("MPL-2.0", ["Mozilla Public License", "2.0"], []),
    ("Apache-2.0", ["Apache License", "Version 2.0"], []),
    ("MIT", ["Permission is hereby granted, free of charge"], []),
    ("BSD-3-Clause", ["Redistribution and use in source and binary forms",
                      "Neither the name"], []),
    ("BSD-3-Clause", ["Redistribution and use in source and binary forms",
                      "names of its"], []),
    ("BSD-2-Clause", ["Redistribution and use in source and binary forms"], []),
    ("ISC", ["Permission to use, copy, modify, and/or distribute this software"], []),
    ("ISC", ["Permission to use, copy, modify, and distribute this software"], []),
]


def licence(mirror: Path, head: str) -> tuple[str | None, str | None, bytes]:
    """(SPDX, file name, text) of the root licence file, SPDX None when not allowed."""
    names = git(mirror, "ls-tree", "--name-only", head).decode().splitlines()
    found = [n for n in names if re.match(r"(licen[cs]e|copying)", n, re.I)]
    for name in sorted(found):
        text = git(mirror, "show", f"{head}:{name}")
        flat = " ".join(text.decode("utf-8", "replace").split())
        for spdx, need, never in LICENCE_TESTS:
            if all(n in flat for n in need) and not any(n in flat for n in never):
                return spdx, name, text
        return None, name, text
    return None, None, b""


def family_files(family: str, paths: list[str], read: Any) -> list[str]:
    """The candidate's prompt files of ``family`` (rule point 3), in path order."""
    low = {p: p.lower() for p in paths}
    if family == "claude":
        for root in (".claude/commands/", "commands/"):
            got = [p for p in paths if p.startswith(root) and low[p].endswith(".md")
                   and not NOT_COMMANDS.search(p)]
            if got:
                return sorted(got)
        return []
    if family == "vscode":
        return sorted(p for p in paths if low[p].endswith(".prompt.md"))
    if family == "dotprompt":
        return sorted(p for p in paths if low[p].endswith(".prompt")
                      and not posixpath.basename(p).startswith("_"))
    if family == "prompty":
        return sorted(p for p in paths if low[p].endswith(".prompty"))
    if family == "jinja":
        got = {p for p in paths if low[p].endswith((".j2", ".jinja", ".jinja2", ".njk"))
               and "prompt" in low[p]}
        for cfg in (p for p in paths if fnmatch.fnmatch(posixpath.basename(low[p]),
                                                       "promptfooconfig*.yaml")):
            text = read(cfg).decode("utf-8", "replace")
            for ref in re.findall(r"file://([^\s'\"\]\[,]+)", text):
                full = posixpath.normpath(posixpath.join(posixpath.dirname(cfg), ref))
                if full in paths and full.lower().endswith(
                        (".txt", ".json", ".yaml", ".yml", ".j2", ".njk")):
                    got.add(full)
        return sorted(got)
    if family == "langchain":
        out = []
        for p in paths:
            if low[p].endswith((".json", ".yaml", ".yml")):
                try:
                    text = read(p).decode("utf-8", "replace")
                except subprocess.CalledProcessError:
                    continue  # a blob the snapshot lists but does not hold (too large)
                if re.search(r"^\s*[\"']?_type[\"']?\s*:\s*[\"']?(prompt|few_shot|chat)\b",
                             text, re.M):
                    out.append(p)
        return sorted(out)
    raise SystemExit(f"unknown family {family}")


def _walk_up(path: str, ref: str, paths: set[str]) -> str | None:
    """``ref`` resolved from the file's folder, then each folder above it."""
    folder = posixpath.dirname(path)
    while True:
        full = posixpath.normpath(posixpath.join(folder, ref))
        if full in paths:
            return full
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def includes(family: str, path: str, text: str, paths: set[str]) -> tuple[list[str], list[str]]:
    """(files the prompt reads, references not found) - rule points 3 and 5."""
    found, missing = [], []
    if family == "dotprompt":
        for name in re.findall(r"\{\{>\s*([A-Za-z0-9_./-]+)", text):
            want = f"_{posixpath.basename(name)}.prompt"
            hit = _walk_up(path, want, paths) or next(
                (p for p in sorted(paths) if posixpath.basename(p) == want), None)
            (found if hit else missing).append(hit or name)
    elif family == "prompty":
        for ref in re.findall(r"\$\{file:([^}]+)\}", text):
            full = posixpath.normpath(posixpath.join(posixpath.dirname(path), ref.strip()))
            (found if full in paths else missing).append(full if full in paths else ref)
    elif family == "jinja":
        for ref in re.findall(r"\{%-?\s*(?:include|import|from|extends)\s+[\"']([^\"']+)[\"']",
                              text):
            hit = _walk_up(path, ref, paths)
            (found if hit else missing).append(hit or ref)
    elif family == "langchain":
        for ref in re.findall(r"[\"']?(?:template_path|example_prompt_path|suffix_path|"
                              r"prefix_path|examples)[\"']?\s*:\s*[\"']?([^\s\"',}]+\.\w+)",
                              text):
            full = posixpath.normpath(posixpath.join(posixpath.dirname(path), ref))
            (found if full in paths else missing).append(full if full in paths else ref)
    return found, missing


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror")
    args = ap.parse_args()
    cand_file = SPEED / "candidates.yaml"
    data = yaml.safe_load(cand_file.read_text(encoding="utf-8"))
    excluded = excluded_repositories()
    for part in ("tuning", "heldout"):
        shutil.rmtree(SPEED / part, ignore_errors=True)
    taken_hashes = earlier_files()
    per_family: dict[str, int] = {}
    manifest: list[dict[str, Any]] = []
    seen_repos: set[str] = set()
    taken_bytes = 0
    for cand in data["candidates"]:
        repo, family = cand["repository"], cand["family"]
        cand.pop("outcome", None)
        low = repo.lower()
        if low in excluded:
            cand["outcome"] = "excluded: named in an earlier corpus list"
            continue
        if any(fnmatch.fnmatch(low, pat) for pat in FORKS):
            cand["outcome"] = "excluded: named like a tool's own home (fork)"
            continue
        if low in seen_repos:
            cand["outcome"] = "already a candidate above"
            continue
        seen_repos.add(low)
        if per_family.get(family, 0) >= PER_FAMILY:
            cand["outcome"] = "not considered: the family had stopped"
            continue
        if MAX_BYTES is not None and taken_bytes >= MAX_BYTES:
            cand["outcome"] = "not considered: the corpus had its bytes"
            continue
        early = PRECHECK(family, repo) if PRECHECK is not None else None
        if early:
            cand["outcome"] = early
            continue
        if cand.get("fetch"):
            cand["outcome"] = f"not fetched: {cand['fetch']}"
            continue
        mirror = Path(args.mirror) / repo.replace("/", "+") / "repo"
        if not mirror.is_dir():
            cand["outcome"] = "not fetched yet"
            continue
        head = git(mirror, "rev-parse", "HEAD").decode().strip()
        spdx, lic_name, lic_text = licence(mirror, head)
        if spdx is None:
            cand["outcome"] = (f"skipped: licence {lic_name} not of the allowed list"
                               if lic_name else "skipped: no root licence file")
            continue
        paths = git(mirror, "ls-tree", "-r", "--name-only", head).decode().splitlines()
        pathset = set(paths)

        def read(p: str, mirror: Path = mirror, head: str = head) -> bytes:
            return git(mirror, "show", f"{head}:{p}")

        files = family_files(family, paths, read)
        if not files:
            cand["outcome"] = "no file of the family"
            continue
        took = []
        cap = PER_REPO_OF(family) if PER_REPO_OF is not None else PER_REPO
        for path in files:
            if len(took) >= cap:
                break
            blob = read(path)
            digest = hashlib.sha256(blob).hexdigest()
            if digest in taken_hashes:
                continue
            took.append((path, blob, digest))
            taken_hashes.add(digest)
        if not took:
            cand["outcome"] = "skipped: every file byte-identical to one already taken"
            continue
        (LICENSES / f"{repo.replace('/', '+')}.txt").write_bytes(lic_text)
        for path, blob, digest in took:
            part = part_of(repo, path)
            entry = _store(mirror, head, repo, path, blob, part, spdx, family)
            entry.update(role="prompt", sha256=digest)
            taken_bytes += len(blob)
            needs, missing = _closure(family, path, blob, pathset, read)
            if missing:
                entry["missing_includes"] = missing
            manifest.append(entry)
            for inc in needs:
                found = next((m for m in manifest if m["repository"] == repo and
                              m["path"] == inc and m["part"] == part), None)
                if found is None:
                    data_inc = read(inc)
                    taken_bytes += len(data_inc)
                    found = _store(mirror, head, repo, inc, data_inc, part, spdx, family)
                    found.update(role="include", used_by=[],
                                 sha256=hashlib.sha256(data_inc).hexdigest())
                    manifest.append(found)
                if found["role"] == "include":
                    found["used_by"].append(path)
        per_family[family] = per_family.get(family, 0) + len(took)
        cand["outcome"] = f"taken: {len(took)} of {len(files)} prompt files ({spdx})"
    cand_file.write_text(_HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True,
                                                   width=100), encoding="utf-8")
    (SPEED / "manifest.yaml").write_text(
        _MANIFEST_HEADER + yaml.safe_dump({"files": manifest}, sort_keys=False,
                                          allow_unicode=True, width=100),
        encoding="utf-8")
    prompts = [m for m in manifest if m["role"] == "prompt"]
    for part in ("tuning", "heldout"):
        n = sum(1 for m in prompts if m["part"] == part)
        repos = len({m["repository"] for m in prompts if m["part"] == part})
        print(f"{part}: {n} prompt files from {repos} repositories")
    print("per family:", per_family, "repositories:", len({m["repository"] for m in prompts}))


_MANIFEST_HEADER = ("# Every file of the speed corpus (README.md). "
                    "Written by tools/collect_speed.py.\n")
_HEADER = ("# Every candidate repository the speed corpus's rule (README.md) considered, in\n"
           "# order, and what happened to it. Outcomes written by tools/collect_speed.py.\n")


def _closure(family: str, path: str, blob: bytes, paths: set[str],
             read: Any) -> tuple[list[str], list[str]]:
    """Every file a prompt reads, transitively, and the references not found."""
    todo, needs, missing = [(path, blob)], [], []
    while todo:
        cur, data = todo.pop()
        found, miss = includes(family, cur, data.decode("utf-8", "replace"), paths)
        missing.extend(miss)
        for inc in found:
            if inc not in needs and inc != path:
                needs.append(inc)
                todo.append((inc, read(inc)))
    return needs, missing


def _store(mirror: Path, head: str, repo: str, path: str, blob: bytes, part: str, spdx: str,
           family: str) -> dict[str, Any]:
    dest = SPEED / part / repo.replace("/", "+") / path
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(blob)
    commit = git(mirror, "log", "-1", "--format=%H", head, "--", path).decode().strip() or head
    return {"repository": repo, "path": path, "commit": commit, "licence": spdx,
            "family": family, "part": part}


if __name__ == "__main__":
    sys.exit(main())
