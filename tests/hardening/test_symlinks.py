"""A symlink that leaves the package is refused with a message that says so.

"not found in the package" about a file the author can see in their editor sends them
hunting; the loader says it is a symlink pointing outside, for templates and for
resources, from the working tree and from a commit alike. A symlink that stays inside
the package keeps working, and one that is merely dangling inside stays "not found".
"""

from __future__ import annotations

import os
from pathlib import Path

import git
import pytest
from hardening_helpers import MANIFEST
from helpers.repo import SYMLINKS, commit_files, make_repo, posix_only

from promptops.errors import PackageError
from promptops.pipeline.build import Build

PROMPT = ("messages:\n  - role: user\n    template: partials/leak.j2\n"
          "  - role: user\n    resource: {uri: 'doc://x', file: resources/leak.md}\n")
OUT = "is a symlink pointing outside the package; only files inside it are read"


def package(tmp: Path, template_target: str, resource_target: str) -> Path:
    (tmp / "secret.txt").write_text("s3cret\n")
    root = tmp / "pkg"
    repo = make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": PROMPT,
                            "inside.md": "inside\n"})
    for link, target in (("partials/leak.j2", template_target),
                         ("resources/leak.md", resource_target)):
        (root / link).parent.mkdir(exist_ok=True)
        os.symlink(target, root / link)
    commit_files(repo, {}, "symlinks")
    return root


def problems(root: Path, ref: str | None) -> list[str]:
    with pytest.raises(PackageError) as err:
        _ = Build(root, ref).bundle
    return [str(p) for p in err.value.problems]


@posix_only(SYMLINKS)
@pytest.mark.parametrize("ref", [None, "HEAD"], ids=["worktree", "git"])
@pytest.mark.parametrize("target", ["absolute", "relative"])
def test_symlink_out_is_named_as_such(tmp_path: Path, ref: str | None, target: str) -> None:
    secret = tmp_path / "secret.txt"
    dest = str(secret) if target == "absolute" else "../../secret.txt"
    root = package(tmp_path, dest, dest)
    found = problems(root, ref)
    assert found == [
        f"prompts/p.prompt.yaml:3:15: template 'partials/leak.j2' {OUT}",
        f"prompts/p.prompt.yaml:5:38: file 'resources/leak.md' {OUT}",
    ]
    assert not any("s3cret" in p for p in found)


@posix_only(SYMLINKS)
@pytest.mark.parametrize("ref", [None, "HEAD"], ids=["worktree", "git"])
def test_symlink_inside_works_and_dangling_is_not_found(tmp_path: Path, ref: str | None) -> None:
    root = package(tmp_path, "../inside.md", "../nowhere.md")
    assert problems(root, ref) == [
        "prompts/p.prompt.yaml:5:38: file 'resources/leak.md' not found in the package"]
    os.unlink(root / "resources" / "leak.md")
    os.symlink("../inside.md", root / "resources" / "leak.md")
    commit_files(git.Repo(root), {}, "fixed")
    bundle = Build(root, ref).bundle
    assert bundle["resources"]["resources/leak.md"]["text"] == "inside\n"
    assert bundle["templates"]["partials/leak.j2"] == "inside\n"
