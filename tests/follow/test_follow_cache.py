"""The build cache: a restart on a built commit neither builds nor imports the build stack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import git
import pytest
from follow_helpers import Recorder, package, texts
from helpers.repo import commit_files, make_repo

from promptops.pipeline import build as pipeline
from promptops.pipeline.bundle import compile_bundle, digest, parse_bundle, serialise
from promptops.pipeline.bundle_types import Bundle
from promptops.serve.cache import GENERATION, BuildCache
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


def test_a_commit_leaves_the_other_packages_as_served_restamped(
    tmp_path: Path, follow: Follow, recorder: Recorder, builds: list[str | None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two packages in one repository; commits touch only the first. The second is served
    as it was (never built again, never loaded from the cache again) with the new commit's
    provenance and a digest equal to the whole bundle's digest, and the commit's index
    records both packages' trees in one file (a restart needs no git)."""
    repo = make_repo(tmp_path / "mono", {**package({"greet": "Hi"}, name="one", at="p1/"),
                                         **package({"bye": "Bye"}, name="two", at="p2/")})
    p1, p2 = root(repo) / "p1", root(repo) / "p2"
    follower = follow([p1, p2])
    _, second = follower.initial()
    loads: list[str] = []
    load = BuildCache.load
    monkeypatch.setattr(BuildCache, "load",
                        lambda self, tree: loads.append(tree) or load(self, tree))
    follower.start(recorder.on_change)
    heads = []
    for n in range(2):
        head = commit_files(repo, {"p1/prompts/greet.prompt.yaml": f"description: d{n}\n"
                                   "messages:\n  - role: user\n    text: hello\n"})
        heads.append(head)
        new_first, new_second = recorder.wait_change(head)
        assert texts(new_first) == {"greet": "hello"}
        assert new_second == {**second, "source": {**second["source"], "commit": head},
                              "digest": new_second["digest"]}
        assert new_second["digest"] == digest(new_second) != second["digest"]
        assert parse_bundle(serialise(new_second), "restamped") == new_second
        assert follower.how[p2.resolve()] == "cached"
        # stored after the listeners heard, the edited package's tree with its bundle
        path = cache_dir(repo) / "commits" / f"{head}.json"
        want = {"p1": new_first["source"]["tree"], "p2": second["source"]["tree"]}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (
                path.exists() and json.loads(path.read_text()) == want):
            time.sleep(0.01)
        assert json.loads(path.read_text()) == want
    assert second["source"]["tree"] not in loads  # as served: not read from the cache again
    start = second["source"]["commit"]
    assert builds == [start, start, *heads]  # both at start, then only the edited package
