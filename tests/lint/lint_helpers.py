"""Helpers for the lint tests: rule-case files, case packages and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import yaml
from helpers.repo import REPO_ROOT, make_repo, write_files
from helpers.repo import run_cli as in_process

CASES = Path(__file__).parent / "cases"
PLANTED = Path(__file__).parent / "fixtures" / "planted"
MANIFEST = "name: case\nversion: 1.0.0\n"


def case_files() -> list[Path]:
    return sorted(CASES.glob("PO*.yml"))


def load_cases(path: Path) -> tuple[str, list[dict[str, Any]]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))  # !!binary gives bytes
    return data["rule"], data["cases"]


def build_case(root: Path, case: dict[str, Any]) -> tuple[Path, str | None]:
    """Write a case's package under root; returns (package folder, base revision)."""
    pkg = root / "pkg"
    base = None
    if "base" in case:
        files = {"promptops.yaml": MANIFEST, **case["base"]}
        repo = make_repo(pkg, files, "base")
        repo.create_tag("base")
        base = "base"
    files = dict(case.get("files") or {})
    if base is None:
        files.setdefault("promptops.yaml", MANIFEST)
    write_files(pkg, files)
    for link, target in (case.get("symlinks") or {}).items():
        (root / "outside.md").write_text("outside\n")
        (pkg / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, pkg / link)
    return pkg, base


def lint_positions(pkg: Path, rule: str, base: str | None) -> list[str]:
    """In-process lint of one rule: "path:line:col" of each finding."""
    from promptops.lint.config import settings
    from promptops.lint.engine import lint_source
    from promptops.pipeline.build import Build
    from promptops.pipeline.source import WorktreeSource
    from promptops.pipeline.yamlio.loader import load_yaml

    try:
        manifest = load_yaml("promptops.yaml", (pkg / "promptops.yaml").read_bytes()).data
    except Exception:
        manifest = None
    conf = settings(manifest, [rule], [], base=base)
    result = lint_source(WorktreeSource(pkg), conf,
                         base=(lambda: Build(pkg, base).bundle) if base is not None else None)
    return [f"{f.path}:{f.line}:{f.col}" for f in result.findings]


def lint_case(rule: str, case: dict[str, Any]) -> list[str]:
    """In memory (a ``MemorySource``, the base built from one too): "path:line:col" of each
    finding of ``rule`` on ``case``. Cases with symlinks need a disk: ``build_case``."""
    from promptops.lint.config import settings
    from promptops.lint.engine import lint_source
    from promptops.pipeline.build import Build
    from promptops.pipeline.source import MemorySource
    from promptops.pipeline.yamlio.loader import load_yaml

    files = {"promptops.yaml": MANIFEST, **(case.get("files") or {})}
    base = None
    if "base" in case:
        base_files = {"promptops.yaml": MANIFEST, **case["base"]}
        files = {**base_files, **(case.get("files") or {})}  # the head: the base, edited
        files = {path: text for path, text in files.items() if text is not None}
        base = Build(Path("base"), source=MemorySource(base_files, label="base")).bundle
    try:
        manifest = load_yaml("promptops.yaml", MemorySource(files).read("promptops.yaml")).data
    except Exception:
        manifest = None
    conf = settings(manifest, [rule], [], base="base" if base is not None else None)
    result = lint_source(MemorySource(files), conf,
                         base=(lambda: base) if base is not None else None)
    return [f"{f.path}:{f.line}:{f.col}" for f in result.findings]


def promptops(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI, in-process (``helpers.repo.run_cli``)."""
    return in_process(*args, cwd=cwd or REPO_ROOT)


def run_cli(*args: str) -> tuple[int, str, str]:
    """The CLI in-process (``helpers.repo.run_cli``) as (exit code, stdout, stderr)."""
    run = in_process(*args)
    return run.returncode, run.stdout, run.stderr


def lint_json(pkg: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli("lint", str(pkg), "--format", "json", *extra)
    assert code in (0, 1), err
    return code, json.loads(out)
