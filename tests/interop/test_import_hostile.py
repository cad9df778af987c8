"""`promptops import` on a hostile source folder (issue 23, defects 2, 3 and 4).

2. Only regular files inside the named source are read: a symlink anywhere among the
   sources, a FIFO or a device is refused with exit 2 before anything is read or written;
   the files a prompt names beside it are read only inside the named folder.
3. Foreign frontmatter YAML is held to the package's YAML limits: deep nesting, a recursive
   anchor, a 5,000-digit integer and an alias bomb are that file's positioned refusal,
   never exit 3 and never a huge prompt.
4. A failed import leaves the target exactly as it was.

(The FIFO read that used to hang runs in a subprocess: test_import_fifo.py.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.repo import posix_only, run_cli

from promptops.interop.sources import (
    MAX_SOURCE_BYTES,
    Siblings,
    SourceFile,
    SourceUnreadable,
    read_bytes,
)
from promptops.pipeline.build import Build

pytestmark = posix_only("symlinks, FIFOs and /dev/zero")
SECRET = "TOP-SECRET-TOKEN-4711"
OK = "---\ndescription: Explain\n---\nExplain ${input:topic}\n"


def tree(root: Path) -> dict[str, bytes | str]:
    """Every entry below ``root``, symlinks as their target, files as their bytes."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = path.read_bytes()
            else:
                out[rel] = "dir"
    return out


def everything_under(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace")
                   for p in root.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "secret.txt"
    path.parent.mkdir()
    path.write_text(f"---\ndescription: x\n---\n{SECRET}\n", encoding="utf-8")
    return path


# ---- defect 2: what is read ---------------------------------------------------------------
@pytest.mark.parametrize("where", ["notes.md", "deep/er/notes.prompt.md", "linked-folder"])
def test_a_symlink_in_the_source_is_refused_and_nothing_read(tmp_path: Path, secret: Path,
                                                           where: str) -> None:
    src = tmp_path / "src"
    (src / "deep" / "er").mkdir(parents=True)
    (src / "ok.prompt.md").write_text(OK, encoding="utf-8")
    (src / where).symlink_to(secret if where != "linked-folder" else secret.parent)
    out = tmp_path / "pkg"
    done = run_cli("import", str(src), "-o", str(out))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{src / where}: a symlink" in done.stderr
    assert not out.exists()


def test_a_symlink_named_on_the_command_line_is_refused(tmp_path: Path, secret: Path) -> None:
    link = tmp_path / "innocent.md"
    link.symlink_to(secret)
    done = run_cli("import", str(link), "-o", str(tmp_path / "pkg"))
    assert done.returncode == 2
    assert not (tmp_path / "pkg").exists()


def test_a_symlinked_source_folder_is_refused(tmp_path: Path, secret: Path) -> None:
    """`.github/prompts -> ~/secrets` committed by whoever wrote the repository."""
    (tmp_path / "prompts").symlink_to(secret.parent)
    done = run_cli("import", str(tmp_path / "prompts"), "-o", str(tmp_path / "pkg"))
    assert done.returncode == 2
    assert SECRET not in done.stdout + done.stderr
    assert not (tmp_path / "pkg").exists()


def test_dev_zero_is_refused_without_reading(tmp_path: Path) -> None:
    done = run_cli("import", "/dev/zero", "-o", str(tmp_path / "pkg"), "--from", "claude")
    assert done.returncode == 2
    assert "/dev/zero: a device" in done.stderr


def test_the_reader_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    """The read itself, for a file swapped after discovery: non-blocking, fstat, bounded."""
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    with pytest.raises(SourceUnreadable, match="a FIFO"):
        read_bytes(tmp_path, "fifo.md")  # O_NONBLOCK: returns at once, nobody writing
    with pytest.raises(SourceUnreadable, match="a device"):
        read_bytes(Path("/dev"), "zero")
    (tmp_path / "link.md").symlink_to(tmp_path / "fifo.md")
    with pytest.raises(SourceUnreadable, match="symlink"):
        read_bytes(tmp_path, "link.md")
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "x.md").write_text("x", encoding="utf-8")
    (tmp_path / "via").symlink_to(tmp_path / "real")
    with pytest.raises(SourceUnreadable, match="symlink"):
        read_bytes(tmp_path, "via/x.md")
    big = tmp_path / "big.md"
    with big.open("wb") as fh:
        fh.truncate(MAX_SOURCE_BYTES + 1)
    with pytest.raises(SourceUnreadable, match="over 4 MiB"):
        read_bytes(tmp_path, "big.md")


def test_siblings_are_read_only_inside_the_named_folder(tmp_path: Path, secret: Path) -> None:
    src = tmp_path / "src"
    (src / "p").mkdir(parents=True)
    (src / "p" / "x.prompty").write_text("x", encoding="utf-8")
    (src / "p" / "sample.json").write_text('{"a": 1}', encoding="utf-8")
    (src / "common.json").write_text('{"b": 2}', encoding="utf-8")
    (src / "p" / "link.json").symlink_to(secret)
    siblings = Siblings(SourceFile(str(src / "p" / "x.prompty"), src, "p/x.prompty", False))
    assert siblings.get("sample.json") == '{"a": 1}'
    assert siblings.get("../common.json") == '{"b": 2}'  # inside the named folder
    assert siblings.get("../../home/secret.txt") is None
    assert siblings.get(str(secret)) is None
    assert siblings.get("link.json") is None
    assert siblings.get("x.prompty") is None  # not itself


def test_a_prompty_file_reference_cannot_leave_the_source(tmp_path: Path, secret: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "leak.prompty").write_text(
        "---\nname: Leak\nsample: ${file:../home/secret.txt}\n---\nuser:\nHi {{x}}\n",
        encoding="utf-8")
    out = tmp_path / "pkg"
    done = run_cli("import", str(src), "-o", str(out))
    assert done.returncode in (0, 1), done.stderr
    assert SECRET not in everything_under(out) + done.stdout


# ---- defect 3: foreign YAML within the package's limits ----------------------------------
NEST = "[" * 200 + "]" * 200
BOMB = "".join(f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n"
               for p, c in zip("abcdef", "bcdefg", strict=True))
HOSTILE_YAML = {
    "deep.prompty": f"---\nname: Deep\nmetadata: {NEST}\n---\nuser:\nhi\n",
    "recursive.prompt.md": "---\ndescription: &a [*a]\n---\nhi\n",
    "bigint.prompt": "---\nconfig:\n  temperature: " + "9" * 5000 + "\n---\nhi\n",
    "bomb.md": "---\na: &a [\"" + "x" * 200 + "\"]\n" + BOMB + "description: x\n---\nhi\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_YAML))
def test_hostile_frontmatter_is_a_positioned_refusal(tmp_path: Path, name: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / name).write_text(HOSTILE_YAML[name], encoding="utf-8")
    (src / "ok.prompt.md").write_text(OK, encoding="utf-8")
    out = tmp_path / "pkg"
    done = run_cli("import", str(src), "-o", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    refusal = [line for line in done.stdout.splitlines() if "refused" in line and name in line]
    assert refusal, done.stdout
    assert f"{src / name}:" in refusal[0]
    assert "internal error" not in done.stdout
    assert sorted(p.name for p in (out / "prompts").iterdir()) == ["ok.prompt.yaml"]
    assert sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) < 200_000


# ---- defect 4: a failed import changes nothing -------------------------------------------
def test_a_failed_write_leaves_the_target_as_it_was(tmp_path: Path) -> None:
    """The target's editor-schema folder is a symlink (a write through it is refused):
    before, the prompts written before that failure stayed in the package."""
    src = tmp_path / "src"
    src.mkdir()
    for n in range(5):
        (src / f"p{n}.prompt.md").write_text(OK, encoding="utf-8")
    out = tmp_path / "pkg"
    out.mkdir()
    (out / "promptops.yaml").write_text("name: mine\nversion: 1.0.0\n", encoding="utf-8")
    (out / "prompts").mkdir()
    (out / "prompts" / "keep.prompt.yaml").write_text(
        "messages:\n- role: user\n  text: keep\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / ".promptops").symlink_to(elsewhere)
    before = tree(out)
    done = run_cli("import", str(src), "-o", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "symlink" in done.stderr
    assert tree(out) == before
    assert list(elsewhere.iterdir()) == []
    Build(out).bundle  # noqa: B018 - still builds


def test_a_new_package_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    """A new target is staged beside it and renamed: no stage is left behind."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.prompt.md").write_text(OK, encoding="utf-8")
    out = tmp_path / "parent" / "pkg"
    done = run_cli("import", str(src), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.parent.iterdir()) == ["pkg"]
    Build(out).bundle  # noqa: B018


def test_an_empty_folder_target_is_filled_not_replaced(tmp_path: Path) -> None:
    """The current folder may be the target: it is written into, never renamed over."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.prompt.md").write_text(OK, encoding="utf-8")
    here = tmp_path / "here"
    here.mkdir()
    inode = here.stat().st_ino
    done = run_cli("import", str(src), "-o", ".", cwd=here)
    assert done.returncode == 0, done.stderr
    assert here.stat().st_ino == inode
    Build(here).bundle  # noqa: B018


def test_names_and_errors_from_the_source_reach_the_terminal_inert(tmp_path: Path) -> None:
    """A file name carrying a terminal escape (retitle, clear screen) is shown escaped, in the
    report, the refusal and CONVERSION.md (issue 23, invariant 4)."""
    src = tmp_path / "src"
    src.mkdir()
    evil = "x\x1b]0;pwned\x07\x1b[2J\u202e.prompty"
    (src / evil).write_text("---\nname: [unclosed\n---\nuser:\nhi\n", encoding="utf-8")
    (src / "ok.prompt.md").write_text(OK, encoding="utf-8")
    out = tmp_path / "pkg"
    done = run_cli("import", str(src), "-o", str(out))
    assert done.returncode == 1, done.stderr
    for text in (done.stdout, (out / "CONVERSION.md").read_text(encoding="utf-8")):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        assert "x\\x1b]0;pwned\\x07\\x1b[2J\\u202e.prompty" in text


def test_a_run_is_bounded_in_bytes_before_anything_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from promptops.interop import sources

    monkeypatch.setattr(sources, "MAX_TOTAL_BYTES", 1000)
    src = tmp_path / "src"
    src.mkdir()
    for n in range(3):
        (src / f"p{n}.prompt.md").write_text(OK * 10, encoding="utf-8")
    done = run_cli("import", str(src), "-o", str(tmp_path / "pkg"))
    assert done.returncode == 2
    assert "import them in parts" in done.stderr
    assert not (tmp_path / "pkg").exists()
