"""Following HEAD in real repositories: checkout, commit, reset, rebase, broken commits."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import git
import pytest
from follow_helpers import BROKEN, Recorder, package, texts
from helpers.repo import commit_files, make_repo, write_files

from promptops.errors import GitError, UsageError
from promptops.git import refs as gitrefs
from promptops.pipeline.bundle import parse_bundle, serialise
from promptops.serve.follow import Follower

Follow = Callable[..., Follower]


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    return make_repo(tmp_path / "repo", package({"greet": "Hello"}))


def root(repo: git.Repo) -> Path:
    return Path(repo.working_tree_dir or ".")


def test_initial_serves_the_committed_head_not_the_working_tree(
    repo: git.Repo, follow: Follow
) -> None:
    write_files(root(repo), {"prompts/greet.prompt.yaml": "uncommitted: [broken"})
    write_files(root(repo), {"prompts/extra.prompt.yaml": "also: uncommitted"})
    [bundle] = follow([root(repo)]).initial()
    assert texts(bundle) == {"greet": "Hello {{ topic }}"}
    assert bundle["source"] == {
        "commit": repo.head.commit.hexsha,
        "tree": repo.head.commit.tree.hexsha,
        "dirty": False,
        "path": ".",
    }
    assert parse_bundle(serialise(bundle), "served") == bundle


def test_checkout_commit_and_reset_each_notify_once(
    repo: git.Repo, follow: Follow, recorder: Recorder
) -> None:
    first = repo.head.commit.hexsha
    repo.git.checkout("-q", "-b", "other")
    other = commit_files(
        repo, {"prompts/greet.prompt.yaml": package({"greet": "Hi"})["prompts/greet.prompt.yaml"]}
    )
    repo.git.checkout("-q", "main")
    follower = follow([root(repo)])
    follower.initial()
    follower.start(recorder.on_change)

    repo.git.checkout("-q", "other")
    assert texts(recorder.wait_change(other)[0]) == {"greet": "Hi {{ topic }}"}

    newer = commit_files(repo, package({"greet": "Hi", "bye": "Bye"}))
    assert set(texts(recorder.wait_change(newer)[0])) == {"greet", "bye"}

    repo.git.reset("-q", "--hard", first)
    assert texts(recorder.wait_change(first)[0]) == {"greet": "Hello {{ topic }}"}
    recorder.settle()
    assert recorder.commits() == [other[:12], newer[:12], first[:12]]


def test_broken_commit_keeps_serving_and_the_next_good_commit_recovers(
    repo: git.Repo, follow: Follow, recorder: Recorder
) -> None:
    follower = follow([root(repo)])
    follower.initial()
    follower.start(recorder.on_change)
    broken = commit_files(repo, {"prompts/greet.prompt.yaml": BROKEN}, "break it")
    line = recorder.wait_log("does not build")
    assert broken[:12] in line
    assert "prompts/greet.prompt.yaml:" in line  # the positioned problem reaches the log
    recorder.settle()
    assert recorder.changes == []
    fixed = commit_files(repo, package({"greet": "Fixed"}), "fix it")
    assert texts(recorder.wait_change(fixed)[0]) == {"greet": "Fixed {{ topic }}"}


def test_a_burst_of_commits_is_one_rebuild_ending_on_the_last(
    repo: git.Repo, follow: Follow, recorder: Recorder
) -> None:
    follower = follow([root(repo)])
    follower.initial()
    follower.start(recorder.on_change)
    # One shell loop of real commits: no Python between them, as a script or a rebase does.
    script = (
        "for i in 0 1 2 3 4; do "
        'sed -i "s/Hello[ 0-9]*{/Hello $i {/" prompts/greet.prompt.yaml && '
        'git commit -q -am "commit $i"; done'
    )
    subprocess.run(["sh", "-c", script], cwd=root(repo), check=True)
    last = repo.head.commit.hexsha
    assert repo.git.rev_list("--count", "HEAD") == "6"
    assert texts(recorder.wait_change(last)[0]) == {"greet": "Hello 4 {{ topic }}"}
    recorder.settle()
    assert 1 <= len(recorder.changes) <= 2
    assert recorder.changes[-1][0]["source"]["commit"] == last


def test_a_rebase_is_one_change(repo: git.Repo, follow: Follow, recorder: Recorder) -> None:
    repo.git.checkout("-q", "-b", "topic")
    for i in range(4):
        commit_files(
            repo, {f"prompts/p{i}.prompt.yaml": package({"x": f"P{i}"})["prompts/x.prompt.yaml"]}
        )
    repo.git.checkout("-q", "main")
    commit_files(repo, {"README.md": "upstream work\n"}, "upstream")
    repo.git.checkout("-q", "topic")
    follower = follow([root(repo)])
    follower.initial()
    follower.start(recorder.on_change)
    repo.git.rebase("-q", "main")
    rebased = repo.head.commit.hexsha
    assert set(texts(recorder.wait_change(rebased)[0])) == {"greet", "p0", "p1", "p2", "p3"}
    recorder.settle()
    assert 1 <= len(recorder.changes) <= 2
    assert recorder.changes[-1][0]["source"]["commit"] == rebased


def test_uncommitted_edits_are_never_served(
    repo: git.Repo, follow: Follow, recorder: Recorder
) -> None:
    follower = follow([root(repo)])
    follower.initial()
    follower.start(recorder.on_change)
    write_files(root(repo), package({"greet": "Edited but not committed"}))
    recorder.settle()
    assert recorder.changes == []
    write_files(root(repo), {"notes.txt": "unrelated\n"})
    repo.git.add("notes.txt")  # only the note is committed; the prompt edit stays local
    repo.git.commit("-q", "-m", "notes")
    other = repo.head.commit.hexsha
    assert texts(recorder.wait_change(other)[0]) == {"greet": "Hello {{ topic }}"}


def test_detached_head_and_packed_refs(repo: git.Repo, follow: Follow, recorder: Recorder) -> None:
    first = repo.head.commit.hexsha
    second = commit_files(repo, package({"greet": "Second"}))
    repo.git.pack_refs("--all")
    assert not (root(repo) / ".git" / "refs" / "heads" / "main").exists()
    git_repo, prefix = gitrefs.locate(root(repo))
    assert (prefix, gitrefs.read_head(git_repo)) == (".", gitrefs.Head(second, "refs/heads/main"))
    follower = follow([root(repo)])
    follower.initial()
    follower.start(recorder.on_change)
    repo.git.checkout("-q", "--detach", first)
    assert gitrefs.read_head(git_repo) == gitrefs.Head(first, None)
    assert texts(recorder.wait_change(first)[0]) == {"greet": "Hello {{ topic }}"}
    repo.git.checkout("-q", "main")
    recorder.wait_change(second)
    third = commit_files(repo, package({"greet": "Third"}))  # a loose ref, next to packed-refs
    recorder.wait_change(third)


def test_linked_worktree_is_followed(
    repo: git.Repo, follow: Follow, recorder: Recorder, tmp_path: Path
) -> None:
    wt = tmp_path / "wt"
    repo.git.worktree("add", "-q", "-b", "feature", str(wt))
    follower = follow([wt])
    [bundle] = follower.initial()
    assert bundle["source"]["commit"] == repo.head.commit.hexsha
    follower.start(recorder.on_change)
    wt_repo = git.Repo(wt)
    moved = commit_files(wt_repo, package({"greet": "From the worktree"}))
    assert texts(recorder.wait_change(moved)[0]) == {"greet": "From the worktree {{ topic }}"}
    commit_files(repo, package({"greet": "main moved"}))  # the main checkout's HEAD is not ours
    recorder.settle()
    assert len(recorder.changes) == 1


def test_packages_in_two_repositories_are_followed_together(
    tmp_path: Path, follow: Follow, recorder: Recorder
) -> None:
    a = make_repo(tmp_path / "a", package({"alpha": "A"}, name="pa"))
    b = make_repo(tmp_path / "b", package({"beta": "B"}, name="pb", at="pkg/"))
    follower = follow([root(a), root(b) / "pkg"])
    assert [texts(x) for x in follower.initial()] == [
        {"alpha": "A {{ topic }}"},
        {"beta": "B {{ topic }}"},
    ]
    follower.start(recorder.on_change)
    b_new = commit_files(b, package({"beta": "B2"}, name="pb", at="pkg/"))
    deadline_bundles = None
    for _ in range(100):
        if recorder.changes:
            deadline_bundles = recorder.changes[-1]
            if deadline_bundles[1]["source"]["commit"] == b_new:
                break
        recorder.settle(0.05)
    assert deadline_bundles is not None
    assert [texts(x) for x in deadline_bundles] == [
        {"alpha": "A {{ topic }}"},
        {"beta": "B2 {{ topic }}"},
    ]
    assert deadline_bundles[1]["source"]["path"] == "pkg"


def test_a_prompt_name_in_two_packages_is_an_error(tmp_path: Path, follow: Follow) -> None:
    a = make_repo(tmp_path / "a", package({"same": "A"}, name="pa"))
    b = make_repo(tmp_path / "b", package({"same": "B"}, name="pb"))
    with pytest.raises(UsageError, match="'same' is defined by both package 'pa' and package 'pb'"):
        follow([root(a), root(b)]).initial()


def test_fixed_ref_is_built_and_never_followed(
    repo: git.Repo, follow: Follow, recorder: Recorder
) -> None:
    first = repo.head.commit.hexsha
    repo.create_tag("v1")
    commit_files(repo, package({"greet": "Later"}))
    follower = follow([root(repo)], ref="v1")
    [bundle] = follower.initial()
    assert bundle["source"]["commit"] == first
    follower.start(recorder.on_change)
    assert "promptops-follow" not in {t.name for t in threading.enumerate()}
    with pytest.raises(GitError, match="unknown revision 'nope'"):
        follow([root(repo)], ref="nope").initial()


def test_a_branch_without_the_package_is_a_logged_failure(
    repo: git.Repo, follow: Follow, recorder: Recorder
) -> None:
    follower = follow([root(repo)])
    follower.initial()
    follower.start(recorder.on_change)
    repo.git.checkout("-q", "--orphan", "empty")
    repo.git.rm("-rqf", ".")
    empty = commit_files(repo, {}, "nothing")
    recorder.wait_log(empty[:12])
    recorder.settle()
    assert recorder.changes == []


def test_not_a_repository_and_an_unborn_branch(tmp_path: Path, follow: Follow) -> None:
    write_files(tmp_path / "plain", package({"greet": "x"}))
    with pytest.raises(GitError, match="not inside a git repository"):
        follow([tmp_path / "plain"])
    git.Repo.init(tmp_path / "plain")
    with pytest.raises(GitError, match="has no commits yet"):
        follow([tmp_path / "plain"]).initial()


def _moves(checkout: git.Repo, name: str) -> list[Callable[[], object]]:
    """Every kind of move a followed checkout makes, in an order where each changes HEAD
    or a watched file."""
    branch = checkout.active_branch.name
    first = checkout.head.commit.hexsha
    git_dir = Path(checkout.git_dir)
    return [
        lambda: commit_files(checkout, package({"greet": "Second"})),
        lambda: checkout.git.checkout("-q", "--detach", first),
        lambda: checkout.git.checkout("-q", branch),
        lambda: checkout.git.pack_refs("--all"),
        lambda: commit_files(checkout, package({"greet": "Third"})),
        lambda: checkout.git.checkout("-q", "-b", f"other-{name}"),
        lambda: commit_files(checkout, package({"greet": "Fourth"})),
        lambda: (git_dir / "rebase-merge").mkdir(),
        lambda: (git_dir / "rebase-merge").rmdir(),
    ]


def test_a_watch_gives_the_signature_of_the_moment_through_every_kind_of_move(
    repo: git.Repo, tmp_path: Path
) -> None:
    """The follower's poll (gitrefs.Watch) lists the watched files only when HEAD itself
    changed: after each move it must still equal a signature made from scratch, and it
    must differ from the one before whenever that did (a commit, a switch, a detach,
    packed refs, a branch created and checked out, a rebase directory)."""
    wt = tmp_path / "wt"
    repo.git.worktree("add", "-q", "-b", "feature", str(wt))
    for top in (root(repo), wt):
        git_repo, _ = gitrefs.locate(top)
        watch = gitrefs.Watch(git_repo)
        last = watch.signature()
        assert last == gitrefs.signature(git_repo)
        for move in _moves(git.Repo(top), top.name):
            move()
            now = watch.signature()
            assert now == gitrefs.signature(git_repo)
            assert now != last
            last = now
