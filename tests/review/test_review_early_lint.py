"""The lint gate started early in a forked child (review/early.py) says what an in-process
lint says: the same status and detail, the same whole report, and lint's cache written as
an in-process lint writes it; a child that dies without answering falls back to linting
in this process."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from review_helpers import fixed_commit, fixed_repo

from promptops.lint.runner import lint_package
from promptops.pipeline.build import Build
from promptops.review import build_report, early, gates
from promptops.review import shared as review_shared

MANIFEST = "name: early\nversion: 1.0.0\n"
# one warning per prompt file (an unused argument) and, in bad.prompt.yaml, an error
PROMPT = ("description: Prompt {n}\narguments:\n  - name: who\n    description: Who\n"
          "  - name: unused\n    description: Never read\nmessages:\n  - role: user\n"
          "    text: '{{% include \"partials/p.j2\" %}} {n} {{{{ who }}}}'\n")
BAD = "description: Bad\nmessages:\n  - role: user\n    text: '{{ nobody | nosuchfilter }}'\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("early") / "r"
    files: dict[str, str | bytes | None] = {"promptops.yaml": MANIFEST, "partials/p.j2": "Hi"}
    files.update({f"prompts/p{n}.prompt.yaml": PROMPT.format(n=n) for n in range(6)})
    repo = fixed_repo(root, files)
    repo.git.checkout("-q", "-B", "change", "main")
    fixed_commit(repo, {"partials/p.j2": "Hello", "prompts/bad.prompt.yaml": BAD}, "edit", 1)
    repo.git.checkout("-q", "main")
    return root


def _no_cache(repo: Path) -> None:
    import shutil

    shutil.rmtree(repo / ".git" / "promptops", ignore_errors=True)


def test_a_forked_lint_gives_the_in_process_status(repo: Path) -> None:
    _no_cache(repo)
    here = gates.lint_status(Build(repo, "change"))
    _no_cache(repo)
    gate = early.Lint(Build(repo, "change"), fork=True)
    assert gate.forked
    assert gate.status() == here
    assert here.status == "failed" and here.detail != "0 errors, 0 warnings"
    # the child wrote lint's cache as an in-process lint does: the next lint is a hit
    assert lint_package(Build(repo, "change")).how == "cached"


def test_a_child_that_dies_falls_back_to_linting_here(repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def dies(head: Build) -> bytes:
        os._exit(3)

    monkeypatch.setattr(early, "_lint_child", dies)
    _no_cache(repo)
    gate = early.Lint(Build(repo, "change"), fork=True)
    assert gate.forked
    _no_cache(repo)
    assert gate.status() == gates.lint_status(Build(repo, "change"))


def test_the_report_is_the_same_with_the_early_lint(repo: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked lint with a real pool of two (the prompts diffed as each chunk arrives) and
    without a pool (this process renders while the child lints), against lint in process
    and no pool: the same report."""
    monkeypatch.chdir(repo)
    forks: list[bool] = []
    readies: list[list[int]] = []
    real_init, real_render_all = early.Lint.__init__, review_shared.Shared.render_all

    def spy(self: early.Lint, head: Build | None, *, fork: bool) -> None:
        real_init(self, head, fork=fork)
        forks.append(self.forked)

    def render_all(self: review_shared.Shared, units: Any, plan: Any, jobs: int | None = None,
                   ready: Callable[[int], None] | None = None) -> None:
        seen: list[int] = []
        readies.append(seen)

        def told(n: int) -> None:
            seen.append(n)
            assert ready is not None
            ready(n)

        real_render_all(self, units, plan, jobs, told)

    monkeypatch.setattr(early.Lint, "__init__", spy)
    monkeypatch.setattr(review_shared.Shared, "render_all", render_all)
    reports = []
    for threshold, jobs in ((1, 2), (1, 1), (10**9, 1)):  # forked: pooled, not; neither
        monkeypatch.setattr(early, "EARLY_LINT_PROMPTS", threshold)
        monkeypatch.setattr(review_shared, "auto_jobs", lambda n, jobs=jobs: jobs)
        _no_cache(repo)
        reports.append(build_report(repo, "main", "change", None).model_dump())
    assert forks == [True, True, False]
    assert reports[0] == reports[1] == reports[2]
    assert reports[0]["packages"][0]["lint"]["status"] == "failed"
    assert len(reports[0]["packages"][0]["prompts"]) == 6
    pooled, forked_here, alone = readies
    assert pooled == sorted(pooled) and len(set(pooled)) > 2  # chunk by chunk, in order
    assert forked_here == alone == [6]


def test_a_review_that_cannot_compare_stops_the_child(repo: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """HEAD is built (and its lint child forked) before BASE; when BASE then does not load,
    the report says so as before and the child is ended, not left running."""
    import git

    monkeypatch.chdir(repo)
    monkeypatch.setattr(early, "EARLY_LINT_PROMPTS", 1)
    made: list[tuple[early.Lint, bool]] = []
    real_start = early.Lint.start.__func__  # type: ignore[attr-defined]

    def start(cls: type[early.Lint], head: Build | None, prompts: int) -> early.Lint:
        gate: early.Lint = real_start(cls, head, prompts)
        made.append((gate, gate.forked))
        return gate

    monkeypatch.setattr(early.Lint, "start", classmethod(start))
    handle = git.Repo(repo)
    handle.git.checkout("-q", "-B", "broken-base", "main")
    fixed_commit(handle, {"prompts/p0.prompt.yaml": "messages: [\n"}, "break", 2)
    handle.git.checkout("-q", "main")
    _no_cache(repo)
    report = build_report(repo, "broken-base", "change", None).model_dump()
    package = report["packages"][0]
    assert package["status"] == "invalid" and package["error"].startswith("BASE: ")
    [(gate, forked)] = made
    assert forked and not gate.forked  # forked when HEAD was built, stopped since


def test_the_gate_forks_before_head_bundle_is_compiled(repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Lint reads HEAD's package, never its bundle: the child starts once the package
    validates, and this process compiles HEAD's bundle while it lints."""
    monkeypatch.chdir(repo)
    monkeypatch.setattr(early, "EARLY_LINT_PROMPTS", 1)
    seen: list[tuple[bool, bool, int]] = []
    real_start = early.Lint.start.__func__  # type: ignore[attr-defined]

    def start(cls: type[early.Lint], head: Build | None, prompts: int) -> early.Lint:
        gate: early.Lint = real_start(cls, head, prompts)
        assert head is not None
        seen.append(("bundle" in vars(head), gate.forked, prompts))
        return gate

    monkeypatch.setattr(early.Lint, "start", classmethod(start))
    _no_cache(repo)
    report = build_report(repo, "main", "main", None).model_dump()
    assert seen == [(False, True, 6)]
    assert report["packages"][0]["lint"]["status"] == "passed"
