"""Invariant 1, reading: nothing outside the package, and nothing of git's, is ever read.

On GitHub the checkout step stores the token in ``.git/config``; a pull request that
includes it (or names it as a resource, or symlinks to it) would print it into the log
and the JUnit artifact. Every way to name git's files is refused with a positioned
problem that names the rule, from the working tree and from a commit: ``.git`` in any
case at any depth (also the ``.git`` *file* of a worktree or submodule), a symlink into
``.git``, a symlinked folder that leads there. Symlinks out of the package are named as
such for every kind of file (manifest, prompt, test file, snapshot), not "not found".
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import git
import pytest
from content_helpers import MANIFEST, PROMPT, SECRET, cli, first_error
from hardening_helpers import record
from helpers.repo import commit_files, make_repo

from promptops.errors import PackageError
from promptops.pipeline.build import Build
from promptops.pipeline.source import GitSource, WorktreeSource

AREA = "package paths"
GIT_RULE = ("is inside a .git folder; git's own files (which can hold credentials) are never "
            "read as package content")
LINK_RULE = ("is a symlink into a .git folder; git's own files (which can hold credentials) "
             "are never read as package content")
OUT_RULE = "is a symlink pointing outside the package; only files inside it are read"


def prompt_naming(kind: str, target: str) -> str:
    if kind == "include":
        return f"messages:\n  - role: user\n    text: \"{{% include '{target}' %}}\"\n"
    if kind == "template":
        return f"messages:\n  - role: user\n    template: {target}\n"
    return f"messages:\n  - role: user\n    resource: {{uri: 'doc://x', file: {target}}}\n"


WHERE = {"include": "3:11", "template": "3:15", "resource": "3:38"}
NOUN = {"include": "template", "template": "template", "resource": "file"}


def leaky_repo(root: Path, prompt: str) -> git.Repo:
    """A package at a repository's top whose .git/config holds a token, as CI has it."""
    repo = make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": prompt})
    with repo.config_writer() as cfg:
        cfg.set_value('http "https://github.com/"', "extraheader",
                      f"AUTHORIZATION: basic {SECRET}")
    return repo


def refused(root: Path, ref: str | None) -> list[str]:
    with pytest.raises(PackageError) as err:
        _ = Build(root, ref).bundle
    found = [str(p) for p in err.value.problems]
    assert not any(SECRET in p for p in found)
    return found


@pytest.mark.parametrize("kind", ["include", "template", "resource"])
@pytest.mark.parametrize("target", [".git/config", ".GIT/config", "vendor/lib/.Git",
                                    "partials/../.git/config"])
def test_worktree_never_reads_git_files(tmp_path: Path, kind: str, target: str) -> None:
    root = tmp_path / "pkg"
    leaky_repo(root, prompt_naming(kind, target))
    (root / ".GIT").mkdir()  # a second spelling, on a case-sensitive file system
    (root / ".GIT" / "config").write_text(SECRET)
    (root / "vendor" / "lib").mkdir(parents=True)  # a submodule's gitlink file
    (root / "vendor" / "lib" / ".Git").write_text(f"gitdir: ../../.git/modules/{SECRET}\n")
    found = refused(root, None)
    if target.startswith("partials/..") and kind != "resource":  # template names must be
        assert len(found) == 1 and "outside the package or not normalised" in found[0]
        return  # normalised: refused before any read
    assert found == [f"prompts/p.prompt.yaml:{WHERE[kind]}: {NOUN[kind]} {target!r} {GIT_RULE}"]
    run = cli("check", str(root), at=tmp_path, allowed=(1,))
    assert SECRET not in run.out + run.err and GIT_RULE in run.err
    lint = cli("lint", str(root), "--format", "json", at=tmp_path, allowed=(1,))
    assert SECRET not in lint.out and ("PO304" if kind != "resource" else "PO306") in lint.out
    if kind == "include":
        record(AREA, f"`{{% include '{target}' %}}` from the working tree (a token in "
               ".git/config)", "check, build, lint", f"refused: exit 1: {found[0]}; the token "
               "is never printed", f"test_package_paths.py::test_worktree_never_reads_git_files"
               f"[{target}-include]")


@pytest.mark.parametrize("kind", ["include", "resource"])
@pytest.mark.parametrize("how", ["file link", "folder link"])
def test_worktree_never_follows_a_symlink_into_git(tmp_path: Path, kind: str, how: str) -> None:
    root = tmp_path / "pkg"
    target = "partials/cfg.j2" if how == "file link" else "gitdir/config"
    leaky_repo(root, prompt_naming(kind, target))
    if how == "file link":
        (root / "partials").mkdir()
        os.symlink("../.git/config", root / "partials" / "cfg.j2")
    else:
        os.symlink(".git", root / "gitdir")
    found = refused(root, None)
    assert found == [f"prompts/p.prompt.yaml:{WHERE[kind]}: {NOUN[kind]} {target!r} {LINK_RULE}"]
    assert not any("config" in p and "gitdir" in p for p in WorktreeSource(root).files())
    if kind == "include":
        record(AREA, f"a symlink into .git ({how})", "check, build, lint",
               f"refused: exit 1: {found[0]}",
               f"test_package_paths.py::test_worktree_never_follows_a_symlink_into_git"
               f"[{how}-include]")


def hand_made_commit(repo: git.Repo, extra: dict[str, tuple[str, bytes]]) -> str:
    """A commit whose tree holds paths `git add` refuses (``.git/...``): plumbing only."""
    def plumb(*args: str, data: bytes) -> str:
        return subprocess.run(["git", *args], input=data, cwd=repo.working_tree_dir,
                              capture_output=True, check=True).stdout.decode().strip()

    def blob(data: bytes) -> str:
        return plumb("hash-object", "-w", "--stdin", data=data)

    def tree(entries: dict[str, tuple[str, str]]) -> str:
        lines = "".join(f"{mode} {kind} {sha}\t{name}\n"
                        for name, (mode, sha) in sorted(entries.items())
                        for kind in ["tree" if mode == "040000" else "blob"])
        return plumb("mktree", data=lines.encode())

    top: dict[str, tuple[str, str]] = {}
    for line in repo.git.ls_tree("HEAD").splitlines():
        meta, name = line.split("\t")
        mode, _, sha = meta.split()
        top[name] = (mode, sha)
    folders: dict[str, dict[str, tuple[str, str]]] = {}
    for path, (mode, data) in extra.items():
        folder, _, name = path.rpartition("/")
        folders.setdefault(folder, {})[name] = (mode, blob(data))
    for folder, entries in folders.items():
        if folder:
            top[folder] = ("040000", tree(entries))
        else:
            top.update(entries)
    commit: str = repo.git.commit_tree(tree(top), "-p", "HEAD", "-m", "hand-made")
    repo.git.update_ref("refs/heads/main", commit)
    return commit


@pytest.mark.parametrize("kind", ["include", "template", "resource"])
@pytest.mark.parametrize("spelling", [".git", ".GiT"])
def test_a_commit_never_yields_git_files(tmp_path: Path, kind: str, spelling: str) -> None:
    root = tmp_path / "pkg"
    repo = make_repo(root, {"promptops.yaml": MANIFEST,
                            "prompts/p.prompt.yaml": prompt_naming(kind, f"{spelling}/config")})
    hand_made_commit(repo, {f"{spelling}/config": ("100644", SECRET.encode())})
    assert f"{spelling}/config" in repo.git.ls_tree("-r", "--name-only", "HEAD").splitlines()
    assert f"{spelling}/config" not in GitSource(root, "HEAD").files()
    assert refused(root, "HEAD") == [
        f"prompts/p.prompt.yaml:{WHERE[kind]}: {NOUN[kind]} '{spelling}/config' {GIT_RULE}"]
    run = cli("build", str(root), "-o", str(tmp_path / "dist"), at=tmp_path, allowed=(1,))
    assert SECRET not in run.out + run.err and not (tmp_path / "dist").exists()
    if kind == "include":
        record(AREA, f"a commit whose (hand-made) tree holds `{spelling}/config`", "build",
               f"refused: exit 1: {first_error(run.err)}",
               f"test_package_paths.py::test_a_commit_never_yields_git_files[{spelling}-include]")


def test_a_committed_symlink_into_git_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    repo = make_repo(root, {"promptops.yaml": MANIFEST,
                            "prompts/p.prompt.yaml": prompt_naming("include", "partials/c.j2")})
    hand_made_commit(repo, {".git/config": ("100644", SECRET.encode()),
                            "partials/c.j2": ("120000", b"../.git/config")})
    assert refused(root, "HEAD") == [
        f"prompts/p.prompt.yaml:3:11: template 'partials/c.j2' {LINK_RULE}"]


@pytest.mark.parametrize("ref", [None, "HEAD"], ids=["worktree", "git"])
def test_a_symlinked_folder_is_followed_only_inside(tmp_path: Path, ref: str | None) -> None:
    """Links on the way to a file count like the file's own: inside works, out is named."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.j2").write_text(SECRET)
    root = tmp_path / "pkg"
    repo = make_repo(root, {"promptops.yaml": MANIFEST, "shared/real/x.j2": "inside\n",
                            "prompts/p.prompt.yaml": (
                                "messages:\n  - role: user\n    text: \"{% include 'in/x.j2' %}\"\n"
                                "  - role: user\n    text: \"{% include 'out/x.j2' %}\"\n")})
    os.symlink("shared/real", root / "in")
    os.symlink("../elsewhere", root / "out")
    commit_files(repo, {}, "links")
    assert refused(root, ref) == [f"prompts/p.prompt.yaml:5:11: template 'out/x.j2' {OUT_RULE}"]
    os.unlink(root / "out")
    os.symlink("in", root / "out")  # a link to a link, inside
    commit_files(repo, {}, "inside")
    assert Build(root, ref).bundle["templates"] == {"in/x.j2": "inside\n", "out/x.j2": "inside\n"}


@pytest.mark.parametrize("ref", [None, "HEAD"], ids=["worktree", "git"])
def test_a_symlink_loop_is_named(tmp_path: Path, ref: str | None) -> None:
    root = tmp_path / "pkg"
    repo = make_repo(root, {"promptops.yaml": MANIFEST,
                            "prompts/p.prompt.yaml": prompt_naming("include", "partials/a.j2")})
    (root / "partials").mkdir()
    os.symlink("b.j2", root / "partials" / "a.j2")
    os.symlink("a.j2", root / "partials" / "b.j2")
    commit_files(repo, {}, "loop")
    found = refused(root, ref)
    assert found == ["prompts/p.prompt.yaml:3:11: template 'partials/a.j2' is a symlink loop "
                     "(more than 8 links followed)"]
    record(AREA, "a symlink loop", f"build ({'working tree' if ref is None else 'git'})",
           f"refused: exit 1: {found[0]}",
           "test_package_paths.py::test_a_symlink_loop_is_named"
           f"[{'worktree' if ref is None else 'git'}]")


@pytest.mark.parametrize("ref", [None, "HEAD"], ids=["worktree", "git"])
@pytest.mark.parametrize("which", ["promptops.yaml", "prompts/p.prompt.yaml"])
def test_a_manifest_or_prompt_linked_out_is_named(tmp_path: Path, ref: str | None,
                                                  which: str) -> None:
    (tmp_path / "elsewhere.yaml").write_text(MANIFEST if which == "promptops.yaml" else PROMPT)
    root = tmp_path / "pkg"
    repo = make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": PROMPT})
    (root / which).unlink()
    os.symlink(tmp_path / "elsewhere.yaml", root / which)
    commit_files(repo, {}, "linked out")
    assert refused(root, ref) == [f"{which}:1:1: this file {OUT_RULE}"]
    run = cli("check", str(root), *(["--ref", ref] if ref else []), at=tmp_path, allowed=(1,))
    assert f"{which}:1:1: this file {OUT_RULE}" in run.err
    source = "worktree" if ref is None else "git"
    record(AREA, f"{which} is a symlink out of the package", f"check ({source})",
           f"refused: exit 1: {which}:1:1: this file {OUT_RULE} (was: exit 3 or 'file not "
           "found')", f"test_package_paths.py::test_a_manifest_or_prompt_linked_out_is_named"
           f"[{which}-{source}]")


def test_a_test_file_linked_out_is_named(tmp_path: Path) -> None:
    (tmp_path / "cases.test.yaml").write_text("prompt: p\ncases:\n  - name: one\n")
    root = tmp_path / "pkg"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": PROMPT})
    (root / "tests").mkdir()
    os.symlink(tmp_path / "cases.test.yaml", root / "tests" / "p.test.yaml")
    run = cli("test", str(root), at=tmp_path, allowed=(1,))  # a test file problem: exit 1
    assert f"tests/p.test.yaml:1:1: this file {OUT_RULE}" in run.err


def test_a_committed_symlink_target_that_is_not_utf8(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    repo = make_repo(root, {"promptops.yaml": MANIFEST,
                            "prompts/p.prompt.yaml": prompt_naming("include", "partials/x.j2")})
    (root / "partials").mkdir()
    os.symlink(b"\xff\xfe-not-utf8", os.fsencode(root / "partials" / "x.j2"))
    commit_files(repo, {}, "a link with a latin-1 target")
    assert refused(root, "HEAD") == [
        "prompts/p.prompt.yaml:3:11: template 'partials/x.j2' not found in the package"]
    for args in (["build", str(root), "-o", str(tmp_path / "d")], ["lint", str(root), "--ref",
                                                                      "HEAD"]):
        cli(*args, at=tmp_path, allowed=(1,))
    record(AREA, "a committed symlink whose target is not UTF-8", "build, lint --ref HEAD",
           "refused: exit 1: prompts/p.prompt.yaml:3:11: template 'partials/x.j2' not found in "
           "the package (was: exit 3, UnicodeDecodeError)",
           "test_package_paths.py::test_a_committed_symlink_target_that_is_not_utf8")


def test_a_fifo_test_file_is_a_positioned_problem_not_a_crash(tmp_path: Path) -> None:
    """A test file that is not a regular file (found by the content fuzz: a FIFO named
    ``tests/f.test.yaml`` beside a good one) reads as absent, as a prompt file does: a
    positioned "file not found" naming it, exit 1, never ``internal error`` (exit 3)."""
    root = tmp_path / "pkg"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": PROMPT,
                     "tests/p.test.yaml": "prompt: p\ncases:\n  - name: one\n"
                                          "    arguments: {topic: x}\n"})
    os.mkfifo(root / "tests" / "f.test.yaml")
    for command in ("check", "test"):
        run = cli(command, str(root), at=root)
        assert run.code == 1, (command, run)
        assert "tests/f.test.yaml:1:1: file not found" in run.out + run.err, (command, run)


def test_a_fifo_in_the_package_does_not_hang_the_reader(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    make_repo(root, {"promptops.yaml": MANIFEST,
                     "prompts/p.prompt.yaml": prompt_naming("include", "partials/x.j2")})
    (root / "partials").mkdir()
    os.mkfifo(root / "partials" / "x.j2")
    os.mkfifo(root / "notes.md")  # read by lint's hygiene rules and its cache key
    os.mkfifo(root / "prompts" / "fifo.prompt.yaml")
    for args in (["check"], ["lint"], ["build", "--worktree", "-o", "dist"], ["test"]):
        proc = subprocess.run(["timeout", "20", sys.executable, "-m", "promptops", *args,
                               str(root)] if args[0] != "build" else
                              ["timeout", "20", sys.executable, "-m", "promptops", *args],
                              capture_output=True, text=True, check=False, cwd=root)
        assert proc.returncode == 1, (args, proc)  # 124 would be the timeout: a hang
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
        assert "template 'partials/x.j2' not found in the package" in proc.stdout + proc.stderr
        said = proc.stdout + proc.stderr
        assert re.search(r"prompts/fifo.prompt.yaml:1:1: (PO102 \[error\] )?file not found",
                         said), said
