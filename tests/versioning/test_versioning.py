"""SemVer rules and the `version`, `bump` and `release` commands on real repositories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import git
import pytest
from helpers.repo import FIXTURES, MODES, commit_files, make_repo, posix_only
from versioning_helpers import (
    PLAIN,
    REVIEW,
    apply,
    base_files,
    prompt_file,
    promptops,
    spec,
)

from promptops.commands import release as release_cmd
from promptops.console import Console
from promptops.pipeline.build import Build
from promptops.versioning.changes import Change, Kind
from promptops.versioning.history import Release, tag_message
from promptops.versioning.manifest_edit import set_version
from promptops.versioning.semver import Level, Version

# ---------------------------------------------------------------- bump


@posix_only(MODES)  # checks that bump keeps the file's mode (0o640)
@pytest.mark.parametrize(("kind", "new"), [("major", "2.0.0"), ("minor", "1.5.0"),
                                           ("patch", "1.4.3")])
def test_bump_golden_keeps_every_other_byte(tmp_path: Path, kind: str, new: str) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    original = (FIXTURES / "bump" / "promptops.yaml").read_bytes()
    (pkg / "promptops.yaml").write_bytes(original)
    (pkg / "promptops.yaml").chmod(0o640)
    result = promptops("bump", kind, str(pkg), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"1.4.2 -> {new}"
    after = (pkg / "promptops.yaml").read_bytes()
    assert after == (FIXTURES / "bump" / f"expected-{kind}.yaml").read_bytes()
    changed = [i for i, (x, y) in enumerate(zip(original.splitlines(), after.splitlines(),
                                                strict=True)) if x != y]
    assert changed == [5]
    assert (pkg / "promptops.yaml").stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize(
    ("text", "expected", "method"),
    [
        ("name: a\r\nversion: 1.0.0  # c\r\n", "name: a\r\nversion: 1.1.0  # c\r\n",
         "in-place"),
        ("{name: a, version: 1.0.0}\n", "{name: a, version: 1.1.0}\n", "ruamel round-trip"),
        ("\ufeffname: a\nversion: '1.0.0'\n", "\ufeffname: a\nversion: '1.1.0'\n",
         "ruamel round-trip"),
        ("name: a\nversion:   1.0.0\nlist:\n- x\n-   y\n",
         "name: a\nversion:   1.1.0\nlist:\n- x\n-   y\n", "in-place"),
    ],
)
def test_set_version_layouts(text: str, expected: str, method: str) -> None:
    """The result, and which edit made it (`bump -v` says: ruamel's own when it keeps the
    layout, the in-place one when ruamel would reflow)."""
    assert set_version(text, "1.1.0") == (expected, method)


def test_bump_pre_release_series(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    apply(pkg, {"promptops.yaml": "name: demo\nversion: 1.4.2  # v\n"})
    steps = [(["minor", "--pre", "rc"], "1.5.0-rc.1"), (["minor", "--pre", "rc"], "1.5.0-rc.2"),
             (["minor"], "1.5.0"), (["patch"], "1.5.1")]
    for args, want in steps:
        result = promptops("bump", *args, str(pkg), cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert (pkg / "promptops.yaml").read_text() == f"name: demo\nversion: {want}  # v\n"


def test_bump_auto_uses_changes_since_release(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, base_files(), "v1")
    refused = promptops("bump", "auto", cwd=root)
    assert refused.returncode == 2 and "no release tag yet" in refused.stderr
    assert promptops("release", cwd=root).returncode == 0
    quiet = promptops("bump", "auto", cwd=root)
    assert quiet.returncode == 0 and "no served content changed" in quiet.stdout
    s = spec(REVIEW)
    s["arguments"].append({"name": "focus"})
    apply(root, {"prompts/review.prompt.yaml": prompt_file(s)})  # optional argument: minor
    result = promptops("bump", "auto", cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1.0.0 -> 1.1.0"
    again = promptops("bump", "auto", cwd=root)
    assert again.returncode == 0 and "already covers" in again.stdout
    assert "version: 1.1.0\n" in (root / "promptops.yaml").read_text()


# ---------------------------------------------------------------- version


def _breaking(root: Path) -> None:
    s = spec(REVIEW)
    s["arguments"] = [a for a in s["arguments"] if a["name"] != "style"]
    apply(root, {"prompts/review.prompt.yaml": prompt_file(s)})


def _set_version(root: Path, version: str) -> None:
    text = (root / "promptops.yaml").read_text()
    (root / "promptops.yaml").write_text(set_version(text, version)[0])


def test_version_exit_codes_and_json(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, base_files(), "v1")
    first = promptops("version", str(root), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "none yet" in first.stdout
    assert promptops("release", cwd=root).returncode == 0
    _breaking(root)
    low = promptops("version", "--format", "json", cwd=root)
    assert low.returncode == 1
    assert "content changed since demo@1.0.0" in low.stderr and "bump auto" in low.stderr
    data = json.loads(low.stdout)
    assert data["release"]["tag"] == "demo@1.0.0" and data["version"] == "1.0.0"
    assert (data["required_bump"], data["suggested_version"], data["ok"]) == ("major", "2.0.0",
                                                                             False)
    assert [(c["kind"], c["argument"]) for c in data["changes"]] == [("argument_removed",
                                                                      "style")]
    _set_version(root, "1.1.0")
    text = promptops("version", cwd=root)
    assert text.returncode == 1 and "too low" in text.stderr and "major bump" in text.stderr
    assert "major: prompt 'review': argument 'style' removed" in text.stdout
    _set_version(root, "2.0.0")
    ok = promptops("version", cwd=root)
    assert ok.returncode == 0, ok.stderr
    assert "required  major bump" in ok.stdout and "status    ok" in ok.stdout


def test_version_lower_than_release_fails(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, base_files(), "v1")
    assert promptops("release", cwd=root).returncode == 0
    _set_version(root, "0.9.0")
    result = promptops("version", cwd=root)
    assert result.returncode == 1 and "lower than the released demo@1.0.0" in result.stderr


# ---------------------------------------------------------------- release


def _tag_message(root: Path, tag: str) -> str:
    obj = git.Repo(root).tags[tag].tag
    assert obj is not None, "release tags must be annotated"
    return str(obj.message)


def test_release_happy_path_then_idempotent(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, base_files(), "v1")
    result = promptops("release", cwd=root)
    assert result.returncode == 0, result.stderr
    digest = Build(root, "HEAD").bundle["digest"]
    message = _tag_message(root, "demo@1.0.0")
    assert f"bundle-digest: {digest}\n" in message and "First release." in message
    assert git.Repo(root).tags["demo@1.0.0"].commit.hexsha == git.Repo(root).head.commit.hexsha
    again = promptops("release", cwd=root)
    assert again.returncode == 0 and "already released" in again.stdout


def test_second_release_records_changes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = make_repo(root, base_files(), "v1")
    assert promptops("release", cwd=root).returncode == 0
    apply(root, {"prompts/extra.prompt.yaml": prompt_file(PLAIN)})
    assert promptops("bump", "auto", cwd=root).returncode == 0
    commit_files(repo, {}, "add extra")
    result = promptops("release", cwd=root)
    assert result.returncode == 0, result.stderr
    message = _tag_message(root, "demo@1.1.0")
    assert "previous: demo@1.0.0\nrequired-bump: minor\n" in message
    assert message.endswith("\nChanges since demo@1.0.0:\n- minor: prompt 'extra': prompt added")
    listed = promptops("version", "--format", "json", cwd=root)
    assert json.loads(listed.stdout)["release"]["tag"] == "demo@1.1.0"


def test_release_refuses_dirty_tree(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, base_files(), "v1")
    apply(root, {"partials/header.j2": "edited\n", "notes.txt": "untracked\n"})
    result = promptops("release", cwd=root)
    assert result.returncode == 1
    assert "uncommitted changes" in result.stderr and "commit" in result.stderr
    assert "partials/header.j2" in result.stderr
    assert not git.Repo(root).tags


def test_release_refuses_package_that_does_not_load(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, base_files() | {"prompts/bad.prompt.yaml": "messages: []\nbogus: 1\n"}, "v1")
    result = promptops("release", cwd=root)
    assert result.returncode == 1
    assert "does not load" in result.stderr and "promptops check" in result.stderr
    assert "prompts/bad.prompt.yaml" in result.stderr
    assert not git.Repo(root).tags


def test_release_refuses_changed_content_with_same_version(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = make_repo(root, base_files(), "v1")
    assert promptops("release", cwd=root).returncode == 0
    commit_files(repo, {"partials/header.j2": "changed\n"}, "edit partial")
    result = promptops("release", cwd=root)
    assert result.returncode == 1
    assert "content changed since demo@1.0.0" in result.stderr
    assert "promptops bump auto" in result.stderr


def test_release_refuses_same_version_on_another_commit(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = make_repo(root, base_files(), "v1")
    assert promptops("release", cwd=root).returncode == 0
    commit_files(repo, {"partials/unused.j2": "still unused\n"}, "unrelated edit")
    result = promptops("release", cwd=root)
    assert result.returncode == 1
    assert "immutable" in result.stderr and "bump the version" in result.stderr


def test_release_refuses_too_small_or_backwards_bump(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = make_repo(root, base_files(), "v1")
    assert promptops("release", cwd=root).returncode == 0
    _breaking(root)
    _set_version(root, "1.0.1")
    commit_files(repo, {}, "breaking with a patch bump")
    small = promptops("release", cwd=root)
    assert small.returncode == 1
    assert "need a major bump (at least 2.0.0)" in small.stderr and "bump auto" in small.stderr
    _set_version(root, "0.9.0")
    commit_files(repo, {}, "backwards")
    back = promptops("release", cwd=root)
    assert back.returncode == 1 and "not above the latest release demo@1.0.0" in back.stderr
    assert sorted(t.name for t in repo.tags) == ["demo@1.0.0"]


def test_release_runs_registered_gates(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, base_files(), "v1")
    seen: list[str] = []

    def gate(head: Build) -> str | None:
        seen.append(head.bundle["digest"])
        return "lint found 1 error: fix it, commit, and release again"

    with pytest.raises(release_cmd.ReleaseRefused, match="lint found 1 error"):
        release_cmd.run(path=root, console=Console(), gates=(*release_cmd.GATES, gate))
    assert seen == [Build(root, "HEAD").bundle["digest"]]
    assert not git.Repo(root).tags


def test_release_of_package_in_a_subfolder(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    files = {f"pkgs/demo/{k}": v for k, v in base_files().items()}
    make_repo(root, files | {"README.md": "top\n"}, "v1")
    apply(root, {"README.md": "edited outside the package\n"})
    result = promptops("release", "pkgs/demo", cwd=root)
    assert result.returncode == 0, result.stderr
    assert [t.name for t in git.Repo(root).tags] == ["demo@1.0.0"]
    assert "prefix" not in _tag_message(root, "demo@1.0.0")
    assert Build(root / "pkgs" / "demo", "HEAD").bundle["source"]["path"] == "pkgs/demo"


def test_a_tag_message_lists_at_most_200_changes() -> None:
    head: Any = {"package": {"name": "demo", "version": "2.0.0"}, "digest": "sha256:" + "a" * 64,
                 "source": {"commit": "c" * 40}}
    prev = Release("demo@1.0.0", Version.parse("1.0.0"), "b" * 40)
    changes = [Change(Kind.prompt_added, Level.minor, "prompt added", prompt=f"p{i:03d}")
               for i in range(203)]
    lines = tag_message(head, "sha256:" + "d" * 64, prev, changes).splitlines()
    assert lines[:9] == ["demo 2.0.0", "", f"bundle-digest: sha256:{'a' * 64}",
                         f"content-digest: sha256:{'d' * 64}", f"commit: {'c' * 40}",
                         "previous: demo@1.0.0", "required-bump: minor", "",
                         "Changes since demo@1.0.0:"]
    assert lines[9] == "- minor: prompt 'p000': prompt added"
    assert lines[208:] == ["- minor: prompt 'p199': prompt added", "- ... and 3 more"]
    assert tag_message(head, "sha256:x", None, []).endswith("required-bump: none\n\n"
                                                            "First release.\n")
    assert tag_message(head, "sha256:x", prev, []).endswith(
        "\nNo changes to served content since demo@1.0.0.\n")
