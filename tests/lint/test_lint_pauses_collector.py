"""A lint run validates and runs its rules with Python's cycle collector paused (a fifth of a
cold lint's CPU on 10,000 real prompts: promptops/pipeline/collector.py says why), and gives
it back as it found it, on success and on a package that does not load."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from helpers.repo import write_files

from promptops.lint import engine
from promptops.lint.runner import Options, lint_package
from promptops.pipeline.build import Build


def test_the_rules_run_paused_and_the_collector_comes_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"promptops.yaml": "name: c\nversion: 1.0.0\n",
                           "prompts/p.prompt.yaml": "messages:\n  - role: user\n    text: hi\n"})
    seen: list[bool] = []
    real = engine.lint_source
    monkeypatch.setattr(engine, "lint_source",
                        lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    found = lint_package(Build(tmp_path, None, keep_asts=True), Options(use_cache=False))
    assert [f.code for f in found.findings] == ["PO401"]
    assert seen == [False] and gc.isenabled()
    write_files(tmp_path, {"prompts/p.prompt.yaml": "messages: [\n"})
    found = lint_package(Build(tmp_path, None, keep_asts=True), Options(use_cache=False))
    assert [f.code for f in found.findings] == ["PO101"]
    assert seen == [False, False] and gc.isenabled()
