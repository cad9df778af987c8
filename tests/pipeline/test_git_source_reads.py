"""A committed package is read in batches: never one git process per file.

The build names only the files its memo has not seen; a later reader of the whole package
(lint hashing every file for its cache key) used to read each remaining file through its
own ``git cat-file``, 2.9 s for 1,000 files on every commit serve's lint gate checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repo import make_repo

import promptops.pipeline.source as source_module
from promptops.pipeline.source import GitSource


def test_reading_what_nobody_named_is_one_more_batch(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"prompts/p{i}.prompt.yaml": f"messages: [{{role: user, text: '{i}'}}]\n"
             for i in range(30)}
    make_repo(tmp_path, {"promptops.yaml": "name: p\nversion: 1.0.0\n", **files})
    singles: list[str] = []
    batches: list[int] = []
    read_blob, read_batch = source_module.read_blob, source_module.read_batch

    def one(git: object, path: str, sha: str) -> bytes:
        singles.append(path)
        return read_blob(git, path, sha)  # type: ignore[arg-type]

    def batch(git_dir: str, shas: set[str]) -> dict[str, bytes]:
        batches.append(len(shas))
        return read_batch(git_dir, shas)

    monkeypatch.setattr(source_module, "read_blob", one)
    monkeypatch.setattr(source_module, "read_batch", batch)
    src = GitSource(tmp_path)
    src.read_ahead(["promptops.yaml", "prompts/p0.prompt.yaml"])  # what a memo'd build names
    texts = {p: src.read(p) for p in src.files()}  # then every file, as lint's hashing does
    assert texts == {p: t.encode() for p, t in
                     {"promptops.yaml": "name: p\nversion: 1.0.0\n", **files}.items()}
    assert singles == [] and batches == [2, 29]


def test_a_paths_normal_form_is_kept_by_path() -> None:
    """Every include of every prompt asks ``inside`` for the same few partials: the
    second ask of a path is the first's answer, not a second normalisation. A long path
    (a template may name any string) is normalised each time: the cache holds none."""
    from promptops.pipeline.source import _inside, inside

    first = inside("partials/./kept-by-path.j2")
    before = _inside.cache_info().hits
    assert inside("partials/./kept-by-path.j2") is first == "partials/kept-by-path.j2"
    assert _inside.cache_info().hits == before + 1
    assert inside("../out.j2") is None and inside("a/../../out.j2") is None
    long = "partials/./" + "x" * 100_000 + ".j2"
    size = _inside.cache_info().currsize
    assert inside(long) == "partials/" + "x" * 100_000 + ".j2" and inside(long) is not None
    assert _inside.cache_info().currsize == size
