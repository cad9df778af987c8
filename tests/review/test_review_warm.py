"""HEAD's prompt files validated on two cores before the build (review/warm.py) change
nothing in the report: the same problems, positioned the same, the same package, the
same rendered diffs; and the memo the build then reads holds both halves' files."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.hashing import counted_hashes
from review_helpers import fixed_commit, fixed_repo

from promptops.git.objects import blob_id
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import CachingSource, open_source
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import prompt_key
from promptops.review import build_report, to_markdown, warm

MANIFEST = "name: warm\nversion: 1.0.0\n"
PROMPT = ("description: Prompt {n}\narguments:\n  - name: who\n    description: Who\n"
          "messages:\n  - role: user\n"
          "    text: '{{% include \"partials/p.j2\" %}} {n} {{{{ who }}}}'\n")
BROKEN_YAML = "description: [unclosed\n"
BROKEN_MODEL = "description: No messages\nmessages: nope\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("warm") / "r"
    files: dict[str, str | bytes | None] = {"promptops.yaml": MANIFEST, "partials/p.j2": "Hi"}
    files.update({f"prompts/p{n}.prompt.yaml": PROMPT.format(n=n) for n in range(9)})
    repo = fixed_repo(root, files)
    repo.git.checkout("-q", "-B", "change", "main")
    fixed_commit(repo, {"partials/p.j2": "Hello"}, "edit", 1)
    repo.git.checkout("-q", "-B", "broken", "change")
    # two broken files: wherever the split by bytes puts them, the build reports both
    fixed_commit(repo, {"prompts/p1.prompt.yaml": BROKEN_YAML,
                        "prompts/p4.prompt.yaml": BROKEN_MODEL}, "break", 2)
    repo.git.checkout("-q", "change")
    return root


@pytest.mark.parametrize("head", ["change", "broken", None])
def test_the_report_is_the_same_with_prevalidation(repo: Path, head: str | None,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    reports = []
    for threshold in (1, 10**9):
        monkeypatch.setattr(warm, "WARM_PROMPTS", threshold)
        monkeypatch.setattr(warm, "forks", lambda: True)
        shutil.rmtree(repo / ".git" / "promptops", ignore_errors=True)
        report = build_report(repo, "main", head, None)
        reports.append((report.model_dump(), to_markdown(report)))
    assert reports[0] == reports[1]
    package = reports[0][0]["packages"][0]
    if head == "broken":
        assert package["status"] == "invalid"
        assert "prompts/p1.prompt.yaml" in package["error"]
        assert "prompts/p4.prompt.yaml" in package["error"]
    else:
        assert package["status"] == "changed" and len(package["prompts"]) == 9


def test_both_halves_reach_the_memo(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm, "WARM_PROMPTS", 1)
    monkeypatch.setattr(warm, "forks", lambda: True)
    source = CachingSource(open_source(repo, "broken"))
    index = TemplateIndex(FileMemo())
    warm.prevalidate(source, index)
    prompts = [p for p in source.files() if p.startswith("prompts/")]
    kept = {p for p in prompts if index.memo.prompt(prompt_key(source, p)  # type: ignore[arg-type]
                                                    ) is not None}
    assert kept == set(prompts) - {"prompts/p1.prompt.yaml", "prompts/p4.prompt.yaml"}
    assert len(kept) == 7
    for n in (2, 3):  # each half's templates' references too
        assert index.memo.references(PROMPT.format(n=n).split("'")[1]) is not None


def test_the_child_does_not_fork_again(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child validates its half itself: where the build's chunked validation would
    fork (any number of files, two cores, one thread), a grandchild would only split the
    child's core and pickle its quarter twice. A child that forks fails here, and its
    half is then missing from the memo."""
    from promptops.pipeline import prefetch

    def refuse(*args: object) -> None:
        raise AssertionError("forked again")

    monkeypatch.setattr(warm, "WARM_PROMPTS", 1)
    monkeypatch.setattr(warm, "forks", lambda: True)
    monkeypatch.setattr(prefetch, "MIN_FILES", 1)
    monkeypatch.setattr(prefetch, "forkable", lambda: True)
    monkeypatch.setattr(prefetch, "_both_cores", refuse)
    source = CachingSource(open_source(repo, "change"))
    index = TemplateIndex(FileMemo(), keep_asts=True)
    warm.prevalidate(source, index)
    prompts = [p for p in source.files() if p.startswith("prompts/")]
    assert all(index.memo.prompt(prompt_key(source, p)) is not None  # type: ignore[arg-type]
               for p in prompts)


def test_the_child_sends_no_bytes_and_nothing_is_hashed_twice(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's pickles leave out the files' bytes (this process holds them), and the
    blob ids it hashed come back with its entries: the build that reads the memo next
    (a working tree's memo keys are the ids of the bytes) hashes no prompt file again,
    nor do the review's source diffs (``CachingSource.blob_id``)."""
    from promptops.pipeline.validate import validate

    hashed = counted_hashes(monkeypatch)
    monkeypatch.setattr(warm, "WARM_PROMPTS", 1)
    monkeypatch.setattr(warm, "forks", lambda: True)
    source = CachingSource(open_source(repo, None))  # the working tree ("change")
    sent: list[bytes] = []
    delta = warm._delta

    def kept(*args: Any) -> tuple[bytes, tuple[int, int]]:
        got = delta(*args)
        sent.append(got[0])
        return got

    class InProcess:
        """``Forked`` without the fork: the child takes every part before this process
        starts, and what it hashed is forgotten (a forked child's memory stays there)."""

        def __init__(self, child: Callable[[], bytes]) -> None:
            ids = dict(source._ids)
            child()
            source._ids.clear()
            source._ids.update(ids)

        def wait(self) -> None:
            return None

    monkeypatch.setattr(warm, "_delta", kept)
    monkeypatch.setattr(warm, "Forked", InProcess)
    index = TemplateIndex(FileMemo(), keep_asts=True)
    warm.prevalidate(source, index)
    prompts = [p for p in source.files() if p.startswith("prompts/")]
    raw = {p: source.read(p) for p in prompts}
    assert sent and not any(raw[p] in data for data in sent for p in prompts)
    assert sorted(hashed) == sorted(raw.values())  # each once, by one side or the other
    hashed.clear()
    checked = validate(source, memo=index.memo, index=index)
    assert checked.complete and not hashed
    assert all(source.blob_id(p) == blob_id(raw[p]) for p in prompts)


def test_the_process_done_first_takes_the_parts_left(repo: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The parts go to whichever process asks first, not half to each: a child held up
    (its core busy with something else, or its files dearer) leaves this process the
    parts it has not taken, and the memo still holds every file, the child's included."""
    parent = os.getpid()
    mine: list[str] = []
    validate_some = warm.validate_some

    def timed(source: Any, prompts: list[str], *args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            time.sleep(0.3)  # the child's first part takes as long as every other
        else:
            mine.extend(prompts)
        return validate_some(source, prompts, *args, **kwargs)

    monkeypatch.setattr(warm, "WARM_PROMPTS", 1)
    monkeypatch.setattr(warm, "forks", lambda: True)
    monkeypatch.setattr(warm, "validate_some", timed)
    source = CachingSource(open_source(repo, None))
    index = TemplateIndex(FileMemo(), keep_asts=True)
    warm.prevalidate(source, index)
    prompts = [p for p in source.files() if p.startswith("prompts/")]
    assert all(index.memo.prompt(prompt_key(source, p)) is not None  # type: ignore[arg-type]
               for p in prompts)
    # the child: its first part at most (none when this process was done before it began)
    assert len(mine) >= len(prompts) - 3


def test_empty_files_make_one_part_not_one_each() -> None:
    """The parts are cut by bytes: 20,000 empty prompt files made 20,000 parts, whose
    numbers (80 KB) did not fit the pipe they are written to before anyone reads it, and
    the review hung. Files of no bytes go into one part."""
    from promptops.pipeline.source import MemorySource

    paths = [f"prompts/p{i}.prompt.yaml" for i in range(20_000)]
    source = CachingSource(MemorySource(dict.fromkeys(paths, b"")))
    assert warm._parts(source, paths) == [paths]
    some = CachingSource(MemorySource({**dict.fromkeys(paths, b""), paths[-1]: b"x" * 64}))
    assert len(warm._parts(some, paths)) <= warm.SMALLEST + 1
