"""The build cache: a restart on a built commit neither builds nor imports the build stack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import git
import pytest
from follow_helpers import (  # noqa: F401  (fixtures)
    Recorder,
    follow_fixture,
    package,
    recorder_fixture,
    texts,
    user_cache_fixture,
)
from helpers.repo import commit_files, make_repo

from promptops.pipeline import build as pipeline
from promptops.pipeline.bundle import Bundle, compile_bundle, parse_bundle, serialise
from promptops.serve.cache import GENERATION
from promptops.serve.follow import Follower

Follow = Callable[..., Follower]


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    return make_repo(tmp_path / "repo", package({"greet": "Hello", "bye": "Bye"}))


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str | None]]:
    """Every real build the follower starts, by commit."""
    calls: list[str | None] = []

    class Counting(pipeline.Build):
        @property
        def bundle(self) -> Bundle:  # type: ignore[override]
            calls.append(self.ref)
            return compile_bundle(self.package)

    monkeypatch.setattr(pipeline, "Build", Counting)
    yield calls


def root(repo: git.Repo) -> Path:
    return Path(repo.working_tree_dir or ".")


def cache_dir(repo: git.Repo) -> Path:
    return root(repo) / ".git" / "promptops" / GENERATION


def test_a_second_follower_on_the_same_commit_does_not_build(
    repo: git.Repo, follow: Follow, builds: list[str | None]
) -> None:
    head = repo.head.commit.hexsha
    first = follow([root(repo)]).initial()
    assert builds == [head]
    tree = first[0]["source"]["tree"]
    assert json.loads((cache_dir(repo) / "commits" / f"{head}.json").read_text()) == {".": tree}
    assert (cache_dir(repo) / "trees" / f"{tree}.bundle.json").read_bytes() == serialise(first[0])
    assert follow([root(repo)]).initial() == first
    assert builds == [head]


def test_cached_start_imports_neither_git_nor_the_build_stack(
    repo: git.Repo, follow: Follow
) -> None:
    [built] = follow([root(repo)]).initial()
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from promptops.serve.follow import Follower\n"
        "[b] = Follower([Path(sys.argv[1])], ref=None, log=print).initial()\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'git', 'pydantic', 'ruamel', 'jinja2', 'typer', 'subprocess'})\n"
        # what `serve --bundle` does not import either (tests/serve/test_plain_options.py):
        # dataclasses with inspect, ast and dis was ~15% of the floor's start in repo mode
        "stdlib = sorted({'dataclasses', 'inspect', 'argparse'} & set(sys.modules))\n"
        "print(json.dumps({'digest': b['digest'], 'heavy': heavy, 'stdlib': stdlib}))\n"
    )
    # An empty PATH: the cached start may not even spawn git.
    env = {**os.environ, "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", script, str(root(repo))],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    assert json.loads(done.stdout) == {"digest": built["digest"], "heavy": [], "stdlib": []}


def test_a_new_commit_outside_the_package_reuses_the_tree_bundle(
    tmp_path: Path, follow: Follow, builds: list[str | None]
) -> None:
    repo = make_repo(tmp_path / "mono", package({"greet": "Hi"}, at="prompts-pkg/"))
    pkg = root(repo) / "prompts-pkg"
    [old] = follow([pkg]).initial()
    new_head = commit_files(repo, {"service/main.py": "print('unrelated')\n"})
    [new] = follow([pkg]).initial()
    assert builds == [old["source"]["commit"]]  # no second build
    assert new["source"] == {**old["source"], "commit": new_head}
    assert new["digest"] != old["digest"]
    assert parse_bundle(serialise(new), "restamped") == new  # the digest is recomputed
    assert {k: v for k, v in new.items() if k not in ("source", "digest")} == {
        k: v for k, v in old.items() if k not in ("source", "digest")
    }
    # ...and is now indexed by its own commit: a third start needs no git at all.
    index = cache_dir(repo) / "commits" / f"{new_head}.json"
    assert json.loads(index.read_text()) == {"prompts-pkg": old["source"]["tree"]}


def test_a_damaged_cache_entry_is_rebuilt(
    repo: git.Repo, follow: Follow, builds: list[str | None], recorder: Recorder
) -> None:
    [good] = follow([root(repo)]).initial()
    entry = cache_dir(repo) / "trees" / f"{good['source']['tree']}.bundle.json"
    tampered = json.loads(entry.read_text())
    tampered["prompts"][0]["messages"][0]["text"] = "tampered"
    entry.write_text(json.dumps(tampered))
    assert follow([root(repo)]).initial() == [good]
    assert len(builds) == 2
    assert entry.read_bytes() == serialise(good)
    assert any(
        "damaged cache entry" in line and "digest mismatch" in line for line in recorder.logs
    )
    entry.write_bytes(b"\x00 not json")
    assert texts(follow([root(repo)]).initial()[0]) == texts(good)
    assert len(builds) == 3


def test_an_unwritable_git_dir_falls_back_to_theuser_cache(
    repo: git.Repo, follow: Follow, builds: list[str | None], user_cache: Path
) -> None:
    (root(repo) / ".git" / "promptops").write_text("a file where the cache folder would go")
    [first] = follow([root(repo)]).initial()
    cached = list(user_cache.glob(f"promptops/*/{GENERATION}/trees/*.bundle.json"))
    assert [p.name for p in cached] == [f"{first['source']['tree']}.bundle.json"]
    assert follow([root(repo)]).initial() == [first]
    assert len(builds) == 1
