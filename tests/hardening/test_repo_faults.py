"""Repository faults: `build` and `serve` on damaged or unusual repositories.

Each either works or is refused with one clear message (no traceback, not exit 3), and
`serve` keeps answering from its last good bundle while HEAD sits on such a state.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import git
import pytest
from hardening_helpers import (
    ABOUT,
    Serve,
    cli,
    normalise,
    one_clear_message,
    package_files,
    record,
    repo_with,
)
from helpers.repo import SYMLINKS, commit_files, posix_only

AREA = "repository faults"
PNG = b"\x89PNG\r\n\x1a\n"


def mid_rebase(root: Path) -> Path:
    repo = repo_with(root)
    repo.git.checkout("-b", "topic")
    commit_files(repo, {"prompts/about.prompt.yaml": ABOUT.replace("About", "Regarding")}, "t")
    repo.git.checkout("main")
    commit_files(repo, {"prompts/about.prompt.yaml": ABOUT.replace("About", "Concerning")}, "m")
    repo.git.checkout("topic")
    with pytest.raises(git.GitCommandError):
        repo.git.rebase("main")  # stops on the conflict, markers in the working tree
    assert (root / ".git" / "rebase-merge").exists() or (root / ".git" / "rebase-apply").exists()
    return root


def detached_head(root: Path) -> Path:
    repo = repo_with(root)
    commit_files(repo, {"prompts/about.prompt.yaml": ABOUT.replace("About", "Later")}, "two")
    repo.git.checkout("--detach", "HEAD~1")
    return root


def shallow_clone(root: Path) -> Path:
    origin = repo_with(root.parent / f"{root.name}-origin")
    commit_files(origin, {"prompts/about.prompt.yaml": ABOUT.replace("About", "Shallow")}, "2")
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{origin.working_tree_dir}",
                    str(root)], check=True)
    assert (root / ".git" / "shallow").exists()
    return root


def missing_object(root: Path) -> Path:
    repo = repo_with(root)
    blob = repo.head.commit.tree / "prompts" / "about.prompt.yaml"
    obj = root / ".git" / "objects" / blob.hexsha[:2] / blob.hexsha[2:]
    obj.chmod(0o644)
    obj.unlink()
    return root


def corrupt_packed_refs(root: Path) -> Path:
    repo = repo_with(root)
    repo.git.pack_refs("--all")
    (root / ".git" / "packed-refs").write_bytes(b"garbage\x00\xff not a ref\n")
    return root


def symlink_outside(root: Path) -> Path:
    repo = repo_with(root, {"prompts/leak.prompt.yaml":
                            "messages:\n  - role: user\n    template: partials/leak.j2\n"})
    (root / "partials").mkdir()
    (root / "partials" / "leak.j2").symlink_to("/etc/passwd")
    commit_files(repo, {}, "a symlink out of the package")
    return root


def submodule(root: Path) -> Path:
    inner = repo_with(root.parent / f"{root.name}-inner")
    repo = repo_with(root)
    repo.git.execute(["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q",
                      str(inner.working_tree_dir), "vendor"])
    repo.git.commit("-q", "-m", "a submodule inside the package")
    return root


def big_binary(root: Path) -> Path:
    data = PNG + bytes(range(256)) * (50 * 1024 * 1024 // 256)
    return Path(repo_with(root, {
        "prompts/big.prompt.yaml": "description: big\nmessages:\n  - role: user\n"
                                   "    image: {file: resources/big.png}\n",
        "resources/big.png": data}).working_tree_dir or root)


def non_utf8_name(root: Path) -> Path:
    repo = repo_with(root)
    (root / "resources").mkdir()
    (root / "resources" / "caf\udce9.txt".encode("utf-8", "surrogateescape").decode(
        "utf-8", "surrogateescape")).write_bytes(b"latin-1 name")
    repo.git.add("--all")
    repo.git.commit("-q", "-m", "a file name that is not UTF-8")
    return root


def non_utf8_content(root: Path) -> Path:
    return Path(repo_with(root, {"prompts/latin.prompt.yaml":
                                 b"messages:\n  - role: user\n    text: \"caf\xe9\"\n"})
                .working_tree_dir or root)


def crlf(root: Path) -> Path:
    files = {k: (v if isinstance(v, bytes) else v.encode()).replace(b"\n", b"\r\n")
             for k, v in package_files().items()}
    repo = repo_with(root)
    commit_files(repo, files, "CRLF line endings")
    assert b"\r\n" in repo.git.show("HEAD:prompts/about.prompt.yaml",
                                    stdout_as_string=False)
    return root


def empty_repository(root: Path) -> Path:
    root.mkdir(parents=True)
    git.Repo.init(root, initial_branch="main")
    (root / "promptops.yaml").write_text("name: demo\nversion: 1.0.0\n")
    return root


CASES: list[tuple[str, Callable[[Path], Path], bool]] = [
    ("mid-rebase (stopped on a conflict)", mid_rebase, True),
    ("detached HEAD", detached_head, True),
    ("shallow clone (parents missing)", shallow_clone, True),
    ("missing object (a blob deleted)", missing_object, False),
    ("corrupt packed-refs", corrupt_packed_refs, False),
    ("symlink pointing outside the package", symlink_outside, False),
    ("a submodule inside the package", submodule, True),
    ("50 MB binary resource", big_binary, True),
    ("non-UTF-8 file name", non_utf8_name, True),
    ("non-UTF-8 file content", non_utf8_content, False),
    ("CRLF line endings", crlf, True),
    ("empty repository (no commits)", empty_repository, False),
]
IDS = [c[1].__name__ for c in CASES]
_NOT_ON_WINDOWS = {symlink_outside: SYMLINKS,
                   non_utf8_name: "NTFS names are Unicode: a file name that is not UTF-8 "
                                  "cannot exist on Windows"}
PARAMS = [pytest.param(*case, id=case[1].__name__, marks=[posix_only(_NOT_ON_WINDOWS[case[1]])]
                       if case[1] in _NOT_ON_WINDOWS else []) for case in CASES]


@pytest.mark.parametrize(("fault", "setup", "works"), PARAMS)
def test_build(tmp_path: Path, fault: str, setup: Callable[[Path], Path], works: bool) -> None:
    root = setup(tmp_path / "pkg")
    proc = cli("build", "-o", str(tmp_path / "dist"), cwd=root)
    out = proc.stdout + proc.stderr
    assert "root:x:" not in out  # nothing from /etc/passwd, whatever happened
    if works:
        assert proc.returncode == 0, out
        bundles = list((tmp_path / "dist").glob("*.bundle.json"))
        assert len(bundles) == 1 and "Traceback" not in out
        notes = [ln for ln in proc.stderr.splitlines() if ln.startswith("note:")]
        behaviour = "works: exit 0, bundle written" + (f" ({notes[0]})" if notes else "")
        if setup is crlf:
            assert b"\\r" not in bundles[0].read_bytes()
            behaviour += "; CR stripped (rendered text has LF only)"
    else:
        behaviour = f"refused: exit {proc.returncode}: " + normalise(
            one_clear_message(proc), root)
    record(AREA, fault, "build", behaviour, f"test_repo_faults.py::test_build[{setup.__name__}]")


@pytest.mark.parametrize(("fault", "setup", "works"), PARAMS)
def test_serve(tmp_path: Path, fault: str, setup: Callable[[Path], Path], works: bool) -> None:
    root = setup(tmp_path / "pkg")
    server = Serve(str(root))
    try:
        if works:
            assert server.initialize()["result"]["protocolVersion"] == "2025-11-25"
            names = [p["name"] for p in server.request("prompts/list")["result"]["prompts"]]
            assert "about" in names
            text = server.text("about", topic="x")
            assert "\r" not in text and text.endswith("x"), text
            rc = server.close()
            assert rc == 0 and "Traceback" not in "".join(server.stderr)
            behaviour = f"works: serves the committed prompts ({', '.join(sorted(names))})"
        else:
            rc = server.proc.wait(timeout=60)
            lines = [ln.strip() for ln in server.stderr if ln.strip()]
            assert rc in (1, 2) and lines and "Traceback" not in "".join(lines), lines
            assert len(lines) <= 3 and not any("root:x:" in ln for ln in lines)
            behaviour = f"refused: exit {rc}: " + normalise(lines[0], root)
    finally:
        server.kill()
    record(AREA, fault, "serve", behaviour, f"test_repo_faults.py::test_serve[{setup.__name__}]")


@posix_only(SYMLINKS)  # one of the broken states it moves through is a symlink
def test_serve_keeps_its_last_good_bundle(tmp_path: Path) -> None:
    """HEAD moves through broken states while serving; answers stay those of the last good
    commit, each state is logged once, and the next good commit is served."""
    root = tmp_path / "pkg"
    repo = repo_with(root)
    server = Serve(str(root))
    seen: list[str] = []
    try:
        server.initialize()
        assert server.text("about", topic="x") == "About x"

        def still_good(log_fragment: str, label: str) -> None:
            line = server.wait_log(log_fragment)
            assert server.text("about", topic="x") == "About x", label
            seen.append(f"{label}: {normalise(line.split(': ', 1)[1], root).splitlines()[0]}")

        commit_files(repo, {"prompts/about.prompt.yaml": b"text: \"caf\xe9\"\n"}, "latin-1")
        still_good("does not build", "non-UTF-8 commit")
        (root / "partials").mkdir()
        (root / "partials" / "leak.j2").symlink_to("/etc/passwd")
        commit_files(repo, {"prompts/about.prompt.yaml": ABOUT, "prompts/leak.prompt.yaml":
                            "messages:\n  - role: user\n    template: partials/leak.j2\n"},
                     "symlink")
        server.wait_log("template 'partials/leak.j2' is a symlink pointing outside")
        assert server.text("about", topic="x") == "About x"
        seen.append("symlink out of the package: refused, still serving")
        repo.git.checkout("--orphan", "void")
        still_good("HEAD has no commit", "orphan branch (no commits)")
        repo.git.checkout("-f", "main")
        repo.git.pack_refs("--all")
        packed = (root / ".git" / "packed-refs").read_bytes()
        (root / ".git" / "packed-refs").write_bytes(b"garbage\xff\n")
        still_good("cannot read HEAD", "corrupt packed-refs")
        (root / ".git" / "packed-refs").write_bytes(packed)
        repo.git.rm("-q", "prompts/leak.prompt.yaml")
        commit_files(repo, {"prompts/about.prompt.yaml": ABOUT.replace("About", "Fixed")}, "ok")
        server.wait_notification("notifications/prompts/list_changed")
        assert server.text("about", topic="x") == "Fixed x"
        assert server.close() == 0
        assert "Traceback" not in "".join(server.stderr)
    finally:
        server.kill()
    record(AREA, "HEAD moves to a broken state while serving", "serve",
           "keeps serving the last good bundle; logged: " + "; ".join(seen)
           + "; the next good commit is served with one list_changed",
           "test_repo_faults.py::test_serve_keeps_its_last_good_bundle")
