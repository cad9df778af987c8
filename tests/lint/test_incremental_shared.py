"""A removal or a dropped include re-lints what it can change, and finds what a full run finds.

Serve's lint gate relinted the whole package when a removed prompt shared a file with
others, or an edited prompt stopped reading one (58 s at 100,000 prompts, issue 26 item 3);
promptops.lint.shared now settles the shared files from a few of their other readers. Each
case commits a change to a real git repository, lints the commit from the record the last
run left (as serve's gate and `promptops lint` do) and with no cache at all, and the two
must agree; the cases say whether the fast path was taken, so one that never is proves
nothing. The shared partials carry findings of each kind that meets there: one every
reader finds (trailing whitespace), one each reader finds for itself (an undeclared
variable, named after the prompt), one a FIRST rule (PO105) takes from the first reader by
name. The generated sequences chain random removals, dropped and added includes, edits and
additions, each linted from the record the step before left.

A PO105 declared without FIRST is settled as a union and gives a wrong answer when its
first reader leaves: that is what the declaration is for, and it shows this test can fail.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import git
import pytest
from helpers.repo import commit_files, make_repo

from promptops.lint.cache import Record
from promptops.lint.config import manifest_data, settings
from promptops.lint.engine import lint_source
from promptops.lint.incremental import relint
from promptops.lint.problem import Finding
from promptops.lint.registry import RULES, Rule
from promptops.lint.runner import Options, lint_package
from promptops.pipeline.build import Build
from promptops.pipeline.source import WorktreeSource, blob_id

MANIFEST = "name: shared\nversion: 1.0.0\ndescription: Prompts that share partials\n"
PARTIALS = {
    "partials/preamble.j2": "You are careful.\n",  # no finding
    "partials/ws.j2": "Mind the gap.  \n",  # PO504: every reader finds it
    "partials/vars.j2": "Use {{ extra }} too.\n",  # PO201 for each reader without `extra`
    "partials/code.j2": "Run `{{ branch }}` now.\n",  # PO105 unless the FIRST reader has it
    "partials/opt.j2": "{% if opt %}Maybe {{ opt }}.{% endif %}\n",
}
OWN = "partials/own{}.j2"  # a partial only one prompt includes
Files = dict[str, str | None]


def prompt(args: tuple[str, ...], includes: tuple[str, ...], description: str = "d",
           resource: str | None = None) -> str:
    lines = [f"description: {description}", "arguments:"]
    for a in ("topic", *args):
        lines += [f"- name: {a}", "  description: an argument",
                  f"  required: {'false' if a == 'opt' else 'true'}"]
    lines += ["messages:", "- role: user", "  text: |"]
    lines += [f'    {{% include "{p}" %}}' for p in includes] + ["    On {{ topic }}."]
    if resource is not None:
        lines += ["- role: user", "  resource:", f"    uri: promptops://{resource}",
                  f"    file: {resource}"]
    return "\n".join(lines) + "\n"


def _path(name: str) -> str:
    return f"prompts/{name}.prompt.yaml"


BASE: Files = {
    "promptops.yaml": MANIFEST, **PARTIALS, "notes/guide.md": "A guide.\n",
    OWN.format("a"): "Only a.\n",
    # a: first by name, declares `branch` (no PO105 on code.j2 while it is there)
    _path("a"): prompt(("branch", "extra"), ("partials/preamble.j2", "partials/code.j2",
                                             "partials/vars.j2", OWN.format("a"))),
    _path("b"): prompt((), ("partials/preamble.j2", "partials/code.j2", "partials/ws.j2")),
    _path("c"): prompt(("extra",), ("partials/preamble.j2", "partials/vars.j2",
                                    "partials/ws.j2")),
    _path("d"): prompt(("opt",), ("partials/preamble.j2", "partials/vars.j2",
                                  "partials/opt.j2")),
    _path("e"): prompt(("branch",), ("partials/code.j2",), resource="notes/guide.md"),
    **{_path(f"f{i}"): prompt(("extra",), ("partials/preamble.j2",)) for i in range(6)},
}

CASES: dict[str, tuple[Files, str]] = {
    "a prompt sharing only the clean preamble removed": (
        {_path("f0"): None}, "incremental"),
    "the first reader of code.j2 removed: the next one, without `branch`, judges (PO105)": (
        {_path("a"): None}, "incremental"),
    "the first reader of code.j2 drops that include": (
        {_path("a"): prompt(("branch", "extra"), ("partials/preamble.j2", "partials/vars.j2",
                                                  OWN.format("a")))}, "incremental"),
    "a reader with its own undeclared variable on vars.j2 removed (its PO201 goes)": (
        {_path("d"): None}, "incremental"),
    "a reader of ws.j2 removed: the whitespace finding stays with the other": (
        {_path("b"): None}, "incremental"),
    "the preamble's include dropped": (
        {_path("c"): prompt(("extra",), ("partials/vars.j2", "partials/ws.j2"))},
        "incremental"),
    "the include of a partial only it read dropped (PO305 on it now)": (
        {_path("a"): prompt(("branch", "extra"), ("partials/preamble.j2", "partials/code.j2",
                                                  "partials/vars.j2"))}, "incremental"),
    "an argument added to a reader of vars.j2 (its PO201 there goes)": (
        {_path("d"): prompt(("opt", "extra"), ("partials/preamble.j2", "partials/vars.j2",
                                               "partials/opt.j2"))}, "incremental"),
    "two readers removed at once": (
        {_path("b"): None, _path("d"): None}, "incremental"),
    "an include added: a full run": (
        {_path("f1"): prompt(("extra",), ("partials/preamble.j2", "partials/ws.j2"))},
        "full"),
    "a reader removed whose shared file another reads as a resource: a full run": (
        {_path("b"): None, _path("e"): prompt(("branch",), ("partials/code.j2",),
                                               resource="partials/ws.j2")}, "full"),
}


def _lint(pkg: Path, ref: str, *, cache: bool) -> tuple[list[str], str]:
    linted = lint_package(Build(pkg, ref, keep_asts=True), Options(use_cache=cache))
    return [f"{f.path}:{f.line}:{f.col}:{f.code}:{f.message}" for f in linted.findings], \
        linted.how


def _after(repo: git.Repo, files: Files) -> tuple[list[str], str, list[str]]:
    pkg = Path(repo.working_tree_dir or ".")
    ref = commit_files(repo, files)
    found, how = _lint(pkg, ref, cache=True)
    return found, how, _lint(pkg, ref, cache=False)[0]


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    repo = make_repo(tmp_path / "pkg", BASE)
    found, how = _lint(tmp_path / "pkg", repo.head.commit.hexsha, cache=True)
    assert how == "full"
    codes = {line.split(":")[3] for line in found}
    assert {"PO201", "PO504"} <= codes and "PO105" not in codes, found
    return repo


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_change_to_a_shared_file_s_readers_relints_as_a_full_run_would(
        repo: git.Repo, case: str) -> None:
    files, how = CASES[case]
    found, used, full = _after(repo, files)
    assert found == full
    assert used == how


def test_the_first_reader_leaving_brings_the_next_one_s_judgement(repo: git.Repo) -> None:
    """The case above where the answer changes on the shared file itself."""
    found, how, full = _after(repo, {_path("a"): None})
    assert how == "incremental"
    assert any(line.startswith("partials/code.j2:") and ":PO105:" in line for line in found)
    assert found == full


# -- random sequences -------------------------------------------------------------------

def _includes(text: str) -> list[str]:
    return [line.split('"')[1] for line in text.splitlines() if "{% include" in line]


def _args(text: str) -> tuple[str, ...]:
    return tuple(line.split(": ")[1] for line in text.splitlines()
                 if line.startswith("- name: ") and line != "- name: topic")


def _random_prompt(rng: random.Random, step: int) -> str:
    args = tuple(a for a in ("branch", "extra", "opt") if rng.random() < 0.4)
    includes = tuple(p for p in PARTIALS if rng.random() < (0.8 if "preamble" in p else 0.35))
    resource = "notes/guide.md" if rng.random() < 0.2 else None
    return prompt(args, includes, f"step {step}", resource)


def _step(rng: random.Random, files: dict[str, str], step: int) -> tuple[str, Files]:
    """One random change (its kind, the files it writes or deletes) to ``files``."""
    prompts = sorted(p for p in files if p.startswith("prompts/"))
    with_includes = [p for p in prompts if _includes(files[p])]
    kind = rng.choices(["remove", "drop", "edit", "add", "include"], [4, 4, 2, 2, 1])[0]
    if len(prompts) < 6:
        kind = "add"
    if kind == "drop" and not with_includes:
        kind = "remove"
    target = rng.choice(with_includes if kind == "drop" else prompts)
    text = files.get(target, "")
    if kind == "remove":
        return kind, {target: None}
    if kind == "drop":
        kept = _includes(text)
        kept.remove(rng.choice(kept))
        return kind, {target: prompt(_args(text), tuple(kept), f"step {step}")}
    if kind == "edit":  # an argument more or fewer, the files read unchanged
        args = tuple(sorted(set(_args(text)) ^ {rng.choice(["branch", "extra", "opt"])}))
        return kind, {target: prompt(args, tuple(_includes(text)), f"step {step}")}
    if kind == "include":
        missing = [p for p in PARTIALS if p not in _includes(text)] or list(PARTIALS)
        return kind, {target: prompt(_args(text), (*_includes(text), rng.choice(missing)))}
    return kind, {_path(f"n{step}"): _random_prompt(rng, step)}


@pytest.mark.parametrize("seed", range(3))
def test_random_removals_and_dropped_includes_relint_as_full_runs(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    files: dict[str, str] = {"promptops.yaml": MANIFEST, **PARTIALS,
                             "notes/guide.md": "A guide.\n"}
    files.update({_path(f"p{i:02d}"): _random_prompt(rng, -1) for i in range(14)})
    repo = make_repo(tmp_path / "pkg", dict(files))
    _lint(tmp_path / "pkg", repo.head.commit.hexsha, cache=True)
    fast: dict[str, int] = {}
    for step in range(14):
        kind, change = _step(rng, files, step)
        found, how, full = _after(repo, change)
        assert found == full, (seed, step, kind, sorted(change))
        fast[kind] = fast.get(kind, 0) + (how == "incremental")
        for path, text in change.items():
            if text is None:
                del files[path]
            else:
                files[path] = text
    assert fast.get("remove", 0) + fast.get("drop", 0) >= 4, fast


# -- the declaration is what makes it exact -----------------------------------------------

def _relint_with(root: Path, rules: tuple[Rule, ...], last: Record) -> list[Finding] | None:
    conf = settings(manifest_data(WorktreeSource(root)), [], [])
    source = WorktreeSource(root)
    ids = {p: blob_id(source.read(p)) for p in source.files()}
    found = relint(source, ids, last, lambda subset: lint_source(subset, conf, rules=rules),
                   rules)
    return None if found is None else found.findings


def test_po105_declared_without_first_is_settled_wrongly(repo: git.Repo) -> None:
    """The first reader of code.j2 lacks `branch` (PO105 there), then declares it: the
    finding goes. Settled as a union, the next reader (without `branch`) still gives it."""
    root = Path(repo.working_tree_dir or ".")
    includes = ("partials/preamble.j2", "partials/code.j2", "partials/vars.j2", OWN.format("a"))
    (root / _path("a")).write_text(prompt(("extra",), includes), encoding="utf-8")
    conf = settings(manifest_data(WorktreeSource(root)), [], [])
    result = lint_source(WorktreeSource(root), conf)
    assert result.deps is not None and result.names is not None
    assert any(f.code == "PO105" for f in result.findings)
    source = WorktreeSource(root)
    last = Record(blobs={p: blob_id(source.read(p)) for p in source.files()},
                  findings=result.findings, deps=result.deps, names=result.names,
                  complete=result.package is not None)
    (root / _path("a")).write_text(prompt(("branch", "extra"), includes), encoding="utf-8")
    full = lint_source(WorktreeSource(root), conf).findings
    assert not any(f.code == "PO105" for f in full)
    assert _relint_with(root, RULES, last) == full
    union = tuple(dataclasses.replace(r, first=False) for r in RULES)
    wrong = _relint_with(root, union, last)
    assert wrong is not None and any(f.code == "PO105" for f in wrong)
