"""Invariant 2 for git objects: a missing commit, tree or tag is exit 2 with git's words.

A partial clone, a pruned object store or a disk fault leaves refs naming objects that
are gone. Every command that reads git met them through a different layer (GitPython's
lazy objects, ``git ls-tree``, gitdb's BadName, ``rev-list``) and most let that layer's
exception out: exit 3 and "This is a bug". Now each says what it could not read, in
git's own words, with the hint to run `git fsck`, and exits 2; a running `serve` logs
it and keeps the last good bundles. A command that does not need the missing object
still works.
"""

from __future__ import annotations

from pathlib import Path

import git
import pytest
from content_helpers import MANIFEST, PROMPT, cli, serves_the_next_good_commit
from hardening_helpers import Serve, record
from helpers.repo import commit_files, make_repo

DAMAGED = "(the repository is damaged or a partial clone; `git fsck` lists what is wrong)"


def released_repo(root: Path) -> git.Repo:
    """demo@1.0.0 tagged (annotated) at HEAD~1, a 1.1.0 change committed on top."""
    repo = make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": PROMPT})
    repo.git.tag("-a", "demo@1.0.0", "-m", "release demo 1.0.0")
    commit_files(repo, {"promptops.yaml": MANIFEST.replace("1.0.0", "1.1.0"),
                        "prompts/p.prompt.yaml": PROMPT.replace("About", "Regarding")}, "1.1")
    return repo


def drop(repo: git.Repo, rev: str) -> None:
    sha = repo.git.rev_parse(rev)
    (Path(repo.git_dir) / "objects" / sha[:2] / sha[2:]).unlink()


DAMAGE = {"HEAD's commit": "HEAD", "HEAD's tree": "HEAD^{tree}",
          "HEAD's prompts folder": "HEAD:prompts", "the parent commit": "HEAD~1",
          "the parent's tree": "HEAD~1^{tree}", "the release tag": "refs/tags/demo@1.0.0"}
COMMANDS = {"build": ["build", "-o", "{dist}"], "test --ref": ["test", "--ref", "HEAD"],
            "lint --ref": ["lint", "--ref", "HEAD"], "diff": ["diff", "HEAD~1", "HEAD"],
            "version": ["version"], "release": ["release"]}
# What each command needs: 2 where it must read the missing object, else it works (0).
NEEDS = {
    "HEAD's commit": dict.fromkeys(COMMANDS, 2),
    "HEAD's tree": {**dict.fromkeys(COMMANDS, 2), "version": 0},
    "HEAD's prompts folder": {**dict.fromkeys(COMMANDS, 2), "version": 0},
    "the parent commit": {"build": 0, "test --ref": 0, "lint --ref": 0, "diff": 2,
                          "version": 2, "release": 2},
    "the parent's tree": {"build": 0, "test --ref": 0, "lint --ref": 0, "diff": 2,
                          "version": 2, "release": 2},
    "the release tag": {"build": 0, "test --ref": 0, "lint --ref": 0, "diff": 0,
                        "version": 2, "release": 2},
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_missing_object_is_exit_2_for_every_git_command(tmp_path: Path, damage: str) -> None:
    root = tmp_path / "pkg"
    repo = released_repo(root)
    drop(repo, DAMAGE[damage])
    seen = {}
    for name, argv in COMMANDS.items():
        args = [a.format(dist=tmp_path / f"dist-{name}") for a in argv]
        run = cli(*args, at=root)
        seen[name] = run.code
        if run.code == 2:
            lines = [ln for ln in run.err.splitlines() if ln.strip()]
            assert len(lines) == 1 and lines[0].startswith("error: "), run.err
            assert DAMAGED in lines[0] or "unknown revision" in lines[0], run.err
    assert seen == NEEDS[damage]
    needs = [n for n, c in seen.items() if c == 2]
    record("repository faults", f"missing object: {damage}", ", ".join(COMMANDS),
           f"exit 2 with git's words and the `git fsck` hint from {', '.join(needs)}; the "
           "others do not need it and work (was: exit 3 from most)",
           f"test_git_objects.py::test_a_missing_object_is_exit_2_for_every_git_command"
           f"[{damage}]")


def test_version_in_a_repository_without_commits_is_not_a_damaged_one(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    git.Repo.init(root)
    (root / "promptops.yaml").write_text(MANIFEST)
    (root / "prompts").mkdir()
    (root / "prompts" / "p.prompt.yaml").write_text(PROMPT)
    run = cli("version", at=root)
    assert run.code == 0 and "release   none yet" in run.out, run  # was exit 3 (BadName)
    run = cli("release", at=root, allowed=(1,))
    assert "the repository has no commits yet" in run.err


def test_serve_keeps_its_last_good_bundles_when_an_object_goes_missing(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    repo = make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": PROMPT})
    server = Serve(str(root), cwd=tmp_path)
    try:
        server.initialize()
        assert server.text("p", topic="x") == "About x"
        repo.git.commit("--allow-empty", "-m", "placeholder")
        (root / "prompts" / "q.prompt.yaml").write_text(PROMPT)
        repo.git.add("--all")
        tree = repo.git.write_tree()
        sub = repo.git.rev_parse(f"{tree}:prompts")
        commit = repo.git.commit_tree(tree, "-p", "HEAD", "-m", "q")
        (Path(repo.git_dir) / "objects" / sub[:2] / sub[2:]).unlink()
        repo.git.update_ref("refs/heads/main", commit)
        line = server.wait_log("does not build")
        assert "cannot read the files of" in "".join(server.stderr), line
        assert DAMAGED in "".join(server.stderr)
        assert server.text("p", topic="x") == "About x"
        repo.git.reset("-q", "--soft", "HEAD~1")
        serves_the_next_good_commit(
            server, repo, {"prompts/p.prompt.yaml": PROMPT.replace("About", "Now")}, "p", "Now x")
    finally:
        server.kill()
