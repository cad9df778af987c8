"""`promptops export` writes only inside its output folder, whatever symlinks that folder holds.

Issue 23, defect 1: a repository can commit ``.claude/commands -> ../../victim`` (or
``.github/prompts -> ...``); ``promptops export --to claude`` run in its checkout (``-o .``,
the default) wrote the commands wherever the link pointed. Every export write now goes
through the confined atomic write (:func:`promptops.fsutil.atomic_write` with ``root`` the
output folder): each folder from the output folder down is opened without following a
symlink, so the export is refused with exit 1 naming the link, and nothing outside is
written. Each test snapshots everything around the output folder before and after.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.repo import make_repo, run_cli

MANIFEST = "name: demo\nversion: 1.0.0\n"
PROMPT = ("description: d\narguments:\n  - {name: who, required: true}\n"
          "messages:\n  - role: user\n    text: \"Hello {{ who }}\"\n")
FOLDERS = {"claude": ".claude/commands", "vscode": ".github/prompts"}
NAMES = {"claude": "p.md", "vscode": "p.prompt.md", "prompty": "p.prompty",
         "dotprompt": "p.prompt"}


def _tree(around: Path, skip: Path) -> dict[str, object]:
    """Every entry below ``around`` except below ``skip``: mode and bytes or link target."""
    found: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(around):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d != skip]
        for name in dirnames + filenames:
            path = here / name
            if path.is_symlink():
                found[str(path)] = os.readlink(path)
            elif path.is_file():
                found[str(path)] = path.read_bytes()
            else:
                found[str(path)] = "dir"
    return found


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": PROMPT})
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "keep.txt").write_text("precious\n")
    return root


def _refused(tmp_path: Path, root: Path, link: str, *args: str) -> str:
    before = _tree(tmp_path, root)
    run = run_cli("export", *args, cwd=root)
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert f"{link} is a symlink" in run.stderr, run.stderr
    assert _tree(tmp_path, root) == before  # nothing outside the repository changed
    assert sorted(p.name for p in (tmp_path / "victim").iterdir()) == ["keep.txt"]
    return run.stderr


@pytest.mark.parametrize("target", list(FOLDERS))
def test_a_committed_symlinked_target_folder_is_never_written_through(
        tmp_path: Path, target: str) -> None:
    root = _package(tmp_path)
    folder = root / FOLDERS[target]
    folder.parent.mkdir(parents=True)
    os.symlink("../../victim", folder)
    err = _refused(tmp_path, root, FOLDERS[target], "--to", target)
    assert f"cannot write {FOLDERS[target]}/{NAMES[target]}" in err


@pytest.mark.parametrize("target", list(FOLDERS))
def test_a_symlinked_parent_folder_is_never_written_through(tmp_path: Path,
                                                            target: str) -> None:
    root = _package(tmp_path)
    top = FOLDERS[target].split("/")[0]
    os.symlink("../victim", root / top)
    _refused(tmp_path, root, top, "--to", target)


@pytest.mark.parametrize("target", list(NAMES))
def test_a_symlinked_file_is_never_written_through(tmp_path: Path, target: str) -> None:
    root = _package(tmp_path)
    rel = f"{FOLDERS[target]}/{NAMES[target]}" if target in FOLDERS else NAMES[target]
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(tmp_path / "victim" / "keep.txt", root / rel)
    _refused(tmp_path, root, rel, "--to", target)
    assert (tmp_path / "victim" / "keep.txt").read_text() == "precious\n"


def test_inside_a_named_output_folder_too(tmp_path: Path) -> None:
    """``-o out``: the operator's folder is followed as given, nothing below it."""
    root = _package(tmp_path)
    out = root / "out"
    (out / ".claude").mkdir(parents=True)
    os.symlink("../../../victim", out / ".claude" / "commands")
    _refused(tmp_path, root, ".claude/commands", "--to", "claude", "-o", "out")


def test_a_plain_folder_is_written(tmp_path: Path) -> None:
    root = _package(tmp_path)
    run = run_cli("export", "--to", "claude", cwd=root)
    assert run.returncode == 0, run.stderr
    assert (root / ".claude/commands/p.md").read_text() == (
        "---\ndescription: d\nargument-hint: '[who]'\n---\nHello $ARGUMENTS")


@pytest.mark.parametrize("rel", ["../escape.md", "/tmp/abs.md", "a/../../escape.md", "."])
def test_a_name_that_leaves_the_folder_is_refused(tmp_path: Path, rel: str) -> None:
    from promptops.errors import WriteError
    from promptops.fsutil import write_below

    out = tmp_path / "out"
    with pytest.raises(WriteError, match="is not a file name inside"):
        write_below(out, rel, b"x")
    assert not (tmp_path / "escape.md").exists()
