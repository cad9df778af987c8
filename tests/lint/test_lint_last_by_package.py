"""The last lint record is kept a package folder, not one for a whole repository.

The lint cache is the repository's (``<common git dir>/promptops/lint``) and packages of
one repository share their settings, so one "last" record served them all: linting one
package left the record another package's next edit started from, and that edit was
re-linted in full (serve following 100 packages: ~1.5 s of CPU for a commit touching one
prompt whenever another package was linted last). Each edit below must be re-linted
incrementally after the other package was linted, and find what a run without any cache
finds.
"""

from __future__ import annotations

from pathlib import Path

import git
import pytest
from helpers.repo import commit_files, make_repo

from promptops.lint import runner
from promptops.lint.runner import FollowGate, Linted, Options, lint_package
from promptops.pipeline.build import Build


def files(at: str, name: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {f"{at}/promptops.yaml": f"name: {name}\nversion: 1.0.0\n"}
    for k in range(4):
        out[f"{at}/prompts/{name}{k}.prompt.yaml"] = (
            f"description: prompt {k}\narguments:\n- name: topic\n  description: a topic\n"
            f"  required: true\nmessages:\n- role: user\n  text: 'On {{{{ topic }}}} {k}.  '\n")
    return out


@pytest.fixture
def mono(tmp_path: Path) -> git.Repo:
    return make_repo(tmp_path / "mono", {**files("p1", "one"), **files("p2", "two")})


def edit(repo: git.Repo) -> str:
    return commit_files(repo, {"p1/prompts/one2.prompt.yaml": (
        "description: edited\nmessages:\n- role: user\n  text: 'On {{ subject }}.'\n")})


def same(got: Linted, path: Path, ref: str) -> None:
    want = lint_package(Build(path, ref, keep_asts=True), Options(use_cache=False))
    assert [f.to_json() for f in got.findings] == [f.to_json() for f in want.findings]
    assert want.findings  # the trailing spaces, the undeclared `subject`: something to find


def test_an_edit_is_relinted_from_its_own_package_record(mono: git.Repo) -> None:
    top = Path(mono.working_tree_dir or ".")
    start = mono.head.commit.hexsha
    for pkg in ("p1", "p2"):  # p2 linted last
        assert lint_package(Build(top / pkg, start, keep_asts=True)).how == "full"
    head = edit(mono)
    got = lint_package(Build(top / "p1", head, keep_asts=True))
    assert got.how == "incremental"
    same(got, top / "p1", head)


def test_serve_s_gate_keeps_a_record_a_package(mono: git.Repo,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    top = Path(mono.working_tree_dir or ".")
    start = mono.head.commit.hexsha
    gate = FollowGate()
    for pkg in ("p1", "p2"):
        gate(Build(top / pkg, start, keep_asts=True))
    gate.flush()
    full: list[Path] = []
    real = runner.lint_package
    monkeypatch.setattr(runner, "lint_package", lambda subject, *a, **k: (
        full.append(subject.path) or real(subject, *a, **k)))
    head = edit(mono)
    refused = gate(Build(top / "p1", head, keep_asts=True))
    assert full == []  # relinted from p1's own record, though p2 was linted last
    assert (refused is None) == (not any(
        f.level == "error" for f in real(Build(top / "p1", head, keep_asts=True),
                                         Options(use_cache=False)).findings))
    # a fresh gate (a restarted serve) finds p1's record on disk, not p2's
    fresh = FollowGate()
    fresh.prepare(Build(top / "p1", start, keep_asts=True))
    fresh.prepare(Build(top / "p2", start, keep_asts=True))
    again = edit(mono)
    fresh(Build(top / "p1", again, keep_asts=True))
    assert full == []


def test_the_last_records_are_bounded_and_the_newest_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One record a package path is one for every path a package was ever linted from (git
    worktrees, moved folders, clones): the folder keeps the most recently written ones."""
    import os

    from promptops.lint import cache
    from promptops.lint.settings import LintSettings

    monkeypatch.setattr(cache, "KEEP_LAST", 3)
    folder = tmp_path / "lint"
    folder.mkdir()
    conf = LintSettings(enabled=frozenset({"PO101"}))
    record = cache.Record(blobs={"a": "1"}, findings=[], deps={}, names={}, complete=True)
    packages = [tmp_path / f"pkg{k}" for k in range(6)]
    for k, package in enumerate(packages):
        cache.store_last(folder, conf, package, record)
        written = cache._last(folder, conf, package)  # distinct, increasing times: no tie
        os.utime(written, (1_000_000 + k, 1_000_000 + k))
    assert len(list(folder.glob("last-*.json"))) == 3
    assert [cache.load_last(folder, conf, p) is not None for p in packages] == [
        False, False, False, True, True, True]
    assert cache.load_last(folder, conf, packages[-1]) == record
    # the record just written stays, whatever the others' times say
    os.utime(cache._last(folder, conf, packages[3]), (2_000_000, 2_000_000))
    os.utime(cache._last(folder, conf, packages[4]), (2_000_000, 2_000_000))
    os.utime(cache._last(folder, conf, packages[5]), (2_000_000, 2_000_000))
    cache.store_last(folder, conf, packages[0], record)
    assert cache.load_last(folder, conf, packages[0]) == record
    assert len(list(folder.glob("last-*.json"))) == 3


def test_a_loaded_record_keeps_one_string_a_file_read(tmp_path: Path) -> None:
    """The files a record says each prompt reads are a few partials most prompts share:
    loaded, each is one string however many prompts read it (serve's gate keeps the record
    between commits: 210,000 mentions of 10,000 files at 100,000 prompts), and the record
    is the one stored."""
    from promptops.lint import cache
    from promptops.lint.settings import LintSettings

    folder = tmp_path / "lint"
    folder.mkdir()
    conf = LintSettings(enabled=frozenset({"PO101"}))
    deps = {f"prompts/p{k}.prompt.yaml": ["partials/a.j2", f"templates/t{k % 3}.j2"]
            for k in range(30)}
    record = cache.Record(blobs={p: f"{k:040d}" for k, p in enumerate(deps)}, findings=[],
                          deps=deps, names={p: p[8:-12] for p in deps}, complete=True)
    cache.store_last(folder, conf, tmp_path / "pkg", record)
    loaded = cache.load_last(folder, conf, tmp_path / "pkg")
    assert loaded == record
    assert loaded is not None
    reads = [read for reads in loaded["deps"].values() for read in reads]
    assert len({id(read) for read in reads}) == len(set(reads)) == 4
