"""``refs.trees_of``: the tree ids of many package folders at one commit, in one git call.

serve following 100 packages of one repository asks for each package's tree at every
commit; the answer must be what ``tree_of`` (one ``git rev-parse`` a folder) gives for
every kind of folder name, including the ones ``cat-file --batch-check`` reads specially
(a space, the top folder ``.``, a folder that is not there, a file where a folder was).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repo import commit_files, make_repo

from promptops.git import refs as gitrefs

FILES = {
    "p00/promptops.yaml": "name: a\n",
    "p01/promptops.yaml": "name: b\n",
    "nested/deep/p02/promptops.yaml": "name: c\n",
    "with space/promptops.yaml": "name: d\n",
    "a file": "not a folder\n",
}
PREFIXES = [".", "p00", "p01", "nested/deep/p02", "with space", "a file", "gone", "p00/none",
            "with space missing"]


def test_trees_of_answers_what_tree_of_answers_for_every_prefix(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = make_repo(root, FILES)
    second = commit_files(repo, {"p01/promptops.yaml": "name: b2\n", "p00/promptops.yaml": None})
    where, _ = gitrefs.locate(root)
    for commit in (repo.head.commit.parents[0].hexsha, second):
        one = {p: gitrefs.tree_of(where, commit, p) for p in PREFIXES}
        assert gitrefs.trees_of(where, commit, PREFIXES) == one
        assert one["p01"] is not None and one["gone"] is None  # the oracle tells them apart
    assert gitrefs.trees_of(where, second, ["p00"]) == {"p00": None}  # gone in the second


@pytest.mark.parametrize("prefix", ["bad\nname", "bad\rname"])
def test_a_prefix_git_would_read_as_two_lines_is_asked_alone(tmp_path: Path,
                                                           prefix: str) -> None:
    root = tmp_path / "repo"
    make_repo(root, FILES)
    where, _ = gitrefs.locate(root)
    commit = gitrefs.read_head(where).commit
    assert commit is not None
    got = gitrefs.trees_of(where, commit, ["p00", prefix, "p01"])
    assert got == {p: gitrefs.tree_of(where, commit, p) for p in ("p00", prefix, "p01")}
    assert got["p00"] is not None and got[prefix] is None
