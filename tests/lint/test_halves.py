"""Cold lint on both cores (``promptops.lint.halves``) finds what one core finds.

A forked child lints every other prompt file (with the manifest and every other file) and
hands back the validator's memo and the rules' answers by text (not the ASTs); this process
lints the other half the same way, then the whole package with all of it. Whatever the
files (the real-prompt corpus package, and generated prompts with broken YAML, a schema
violation, a template that does not parse, a missing include, a duplicate name, hygiene
findings), the findings must be the one-process run's, and the child's half must really
arrive (or the comparison would prove nothing). The comparison runs in a fresh interpreter
(``test_halves_process.py``): a fork needs no other thread alive, and a test process may
hold threads earlier tests left.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from helpers.broken import BROKEN

from promptops.errors import UsageError
from promptops.lint import halves
from promptops.lint.config import manifest_data, settings
from promptops.lint.context import Tables
from promptops.lint.engine import lint_source
from promptops.lint.settings import LintSettings
from promptops.pipeline import prefetch
from promptops.pipeline.source import CachingSource, MemorySource, Source, WorktreeSource
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import validate

CORPUS = Path(__file__).parent / "corpus" / "package"
MANIFEST = "name: demo\nversion: 1.0.0\n"
SOUND = ("description: prompt {k}\narguments:\n  - name: who\n    required: true\n"
         "  - name: unused\n  - name: maybe\n"
         "messages:\n  - role: system\n    text: |\n      Copy {k}.   \n"
         "      <!-- note {k} -->\n"
         "      {{% if who %}}Hello {{{{ who | shout }}}} {{{{ nobody }}}}{{% endif %}}\n"
         "      {{% include 'partials/p.j2' %}}\n"
         "  - role: user\n    template: partials/t{k}.j2\n")

Findings = list[tuple[str, int, int, str, str]]


def _generated(n: int) -> dict[str, str]:
    files = {"promptops.yaml": MANIFEST, "partials/p.j2": "Shared {{ who }}.\t\n",
             "partials/unused.j2": "Nobody includes me.\n"}
    for k in range(n):
        files[f"prompts/p-{k}.prompt.yaml"] = BROKEN.get(k, SOUND.format(k=k))
        # an optional argument printed unguarded (PO207), a sandbox escape (PO510), a range
        # over the sandbox's limit (PO511): answers a rule keeps by text, which the child
        # computes for its share and the whole run reads without the AST
        files[f"partials/t{k}.j2"] = (f"Template {k} for {{{{ who }}}} {{{{ maybe }}}} "
                                      "{{ who.__class__ }} {{ range(10 ** 9) | length }}  \n")
    return files


def _corpus() -> dict[str, str]:
    return {p.relative_to(CORPUS).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(CORPUS.rglob("*")) if p.is_file()}


def _lint(files: dict[str, str], fork: bool) -> tuple[Findings, Tables | None]:
    """What the runner does (``runner._lint_package``): the findings, and the tables."""
    source = CachingSource(MemorySource(files))
    conf: LintSettings = settings(manifest_data(source), [], [], strict=False, base=None)
    index = TemplateIndex(keep_asts=True)
    saved = prefetch.MIN_FILES
    prefetch.MIN_FILES = 1 if fork else 10**9
    try:
        warmed = halves.warm(source, conf, index)
    finally:
        prefetch.MIN_FILES = saved
    validated = validate(source, memo=index.memo, index=index)
    if warmed is None:
        found = lint_source(source, conf, validated=validated).findings
    else:
        found = halves.finish(source, conf, validated, warmed)[1]
    return ([(f.path, f.line, f.col, f.code, f.message) for f in found],
            warmed.tables if warmed else None)


def unknown_code_errors() -> tuple[str, str]:
    """(one process's error, both halves' error) for a package whose prompt files in both
    halves silence an unknown rule: the first such file of the package (the child's share)
    must be the one named, not the first of this process's share; a fresh process calls it
    (``test_halves_process.py``)."""
    files = _generated(30)
    source = CachingSource(MemorySource(files))
    prompts = [p for p in source.files() if p.startswith("prompts/")]
    mine, theirs = halves.split(source, prompts)
    # the child's first and a later one of this process's: the package's first such file
    # is the child's
    later = next(p for p in mine if prompts.index(p) > prompts.index(theirs[0]))
    for path in (theirs[0], later):
        files[path] = "# promptops: disable=PO999\n" + files[path]

    def error(fork: bool) -> str:
        try:
            _lint(files, fork)
        except UsageError as exc:
            return str(exc)
        return "no error"

    return error(False), error(True)


def one_and_both() -> list[tuple[Findings, Findings]]:
    """(one process, both halves) of the corpus package and of generated prompts; a fresh
    process calls it (``test_halves_process.py``: no fork beside other threads)."""
    out = []
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    for files, codes in ((_corpus(), {"PO504"}),
                         (_generated(60), {"PO101", "PO102", "PO103", "PO106", "PO301",
                                           "PO104", "PO201", "PO202", "PO305", "PO503", "PO504",
                                           "PO207", "PO510", "PO511"})):
        one, none = _lint(files, fork=False)
        assert none is None  # below MIN_FILES: nothing linted ahead
        both, tables = _lint(files, fork=True)
        # a fresh process with two cores must fork (or the comparison proves nothing)
        assert (tables is not None) == (prefetch.forkable() and cores >= 2)
        assert codes <= {f[3] for f in one}, sorted({f[3] for f in one})
        out.append((one, both))
    test_no_fork_while_a_file_is_not_in_this_process()  # where a fork is allowed, too
    for where in ("memory", "folder"):
        with tempfile.TemporaryDirectory() as tmp:
            test_no_fork_where_the_prompt_files_repeat_their_texts(where, Path(tmp))
    return out


def test_the_childs_half_arrives() -> None:
    """The child's answers reach the memo, the index and the tables (in the process
    that runs the tests a fork may be refused; then this checks nothing arrives)."""
    files = _generated(40)
    source = CachingSource(MemorySource(files))
    conf = settings(manifest_data(source), [], [], strict=False, base=None)
    index = TemplateIndex(keep_asts=True)
    saved = prefetch.MIN_FILES
    prefetch.MIN_FILES = 1
    try:
        warmed = halves.warm(source, conf, index)
    finally:
        prefetch.MIN_FILES = saved
    if not prefetch.forkable():
        assert warmed is None
        return
    assert warmed is not None
    tables = warmed.tables
    prompts = sorted(p for p in files if p.startswith("prompts/"))
    held = {key[1] for key in index.memo.entries()[0]}
    child = set(halves.split(source, prompts)[1]) - {f"prompts/p-{k}.prompt.yaml" for k in BROKEN}
    assert child and child <= held  # validated by the child only
    # the answers of the rules the whole run runs (PO105 of every template)
    assert any("Copy 1." in text for text in tables.memo["PO105"])
    assert any("Template 1 " in text for text in tables.memo["PO105"])
    # not those of the rules whose findings the halves give it: it does not run them
    # (this process's half computed its own share's, which stay)
    child_texts = [text for table in tables.memo.values() for text in table]
    child_texts += list(tables.facts)
    for kind, table in tables.memo.items():
        if kind[:5] in halves.SPLIT or kind in ("trailing", "suppressions"):
            assert not any(f"Copy {k}." in text or f"Template {k} " in text
                           for text in table for k in _child_numbers(child)), kind
    assert not any(f"Copy {k}." in text for text in tables.facts
                   for k in _child_numbers(child))
    # not the ASTs themselves (the whole run parses none)
    assert not any("Copy 1." in src or "Template 1 " in src for src in index.kept())


def _child_numbers(child: set[str]) -> list[int]:
    return [int(p.removeprefix("prompts/p-").removesuffix(".prompt.yaml")) for p in child]


def test_no_fork_below_the_file_count_or_with_a_base() -> None:
    files = _generated(5)
    source = CachingSource(MemorySource(files))
    conf = settings(manifest_data(source), [], [], strict=False, base=None)
    assert halves.warm(source, conf, TemplateIndex(keep_asts=True)) is None  # few files
    saved = prefetch.MIN_FILES
    prefetch.MIN_FILES = 1
    try:
        based = settings(manifest_data(source), [], [], strict=False, base="main")
        assert halves.warm(source, based, TemplateIndex(keep_asts=True)) is None
        assert halves.warm(source, conf, TemplateIndex()) is None  # no ASTs kept: no use
    finally:
        prefetch.MIN_FILES = saved


@pytest.mark.parametrize("where", ["memory", "folder"])
def test_no_fork_where_the_prompt_files_repeat_their_texts(where: str, tmp_path: Path) -> None:
    """Forty prompt files of two contents (copies, as issue 26's replication makes) are
    linted in one process; forty of forty contents fork (where a fork is allowed). A
    folder knows a file's id only once read: the sample compares bytes there."""
    for kinds, forks in ((2, False), (40, True)):
        files = {"promptops.yaml": MANIFEST, "partials/p.j2": "Shared.\n",
                 **{f"prompts/p-{k}.prompt.yaml": SOUND.format(k=k % kinds).replace(
                     f"template: partials/t{k % kinds}.j2", "text: hi") for k in range(40)}}
        inner: Source = MemorySource(files)
        if where == "folder":
            root = tmp_path / f"pkg{kinds}"
            for path, text in files.items():
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_text(text, encoding="utf-8")
            inner = WorktreeSource(root)
        source = CachingSource(inner)
        conf = settings(manifest_data(source), [], [], strict=False, base=None)
        saved = prefetch.MIN_FILES
        prefetch.MIN_FILES = 1
        try:
            warmed = halves.warm(source, conf, TemplateIndex(keep_asts=True))
        finally:
            prefetch.MIN_FILES = saved
        assert (warmed is not None) == (forks and prefetch.forkable()), (kinds, where)


def test_no_fork_while_a_file_is_not_in_this_process() -> None:
    """A child must not read through its parent's git processes: a source whose files are
    not all held in this process (here one that is neither a folder, memory nor a commit
    read ahead) is linted in one process."""
    from promptops.lint.incremental import Subset

    files = _generated(40)
    inner = MemorySource(files)
    source = CachingSource(Subset(inner, set(files)))
    conf = settings(manifest_data(source), [], [], strict=False, base=None)
    saved = prefetch.MIN_FILES
    prefetch.MIN_FILES = 1
    try:
        assert halves.warm(source, conf, TemplateIndex(keep_asts=True)) is None
    finally:
        prefetch.MIN_FILES = saved


def test_the_split_weighs_each_prompt_file_by_what_it_costs() -> None:
    """Prompt files of very different sizes (a few large ones among many small, as real
    prompts are): each half gets about the same work by :data:`halves.PER_PROMPT` and the
    bytes, the child's weighing :data:`halves.CHILD_WEIGHT`, every file once, in order. A
    share of the count gave the process whose share held the large files most of the work."""
    sizes = [200_000 if k % 9 == 8 else 1_000 for k in range(90)]  # the large ones land
    files = {f"prompts/p-{k:02}.prompt.yaml": "x" * size  # where a 4-in-9 count put them
             for k, size in enumerate(sizes)}
    source = CachingSource(MemorySource(files))
    paths = sorted(files)
    mine, theirs = halves.split(source, paths)
    assert sorted(mine + theirs) == paths and mine == sorted(mine) and theirs == sorted(theirs)

    def cost(share: list[str]) -> int:
        return sum(len(files[p]) + halves.PER_PROMPT for p in share)

    here, there = cost(mine), halves.CHILD_WEIGHT * cost(theirs)
    assert abs(here - there) <= halves.CHILD_WEIGHT * (200_000 + halves.PER_PROMPT)
    assert 0.8 < here / there < 1.25
