"""The bundle written as it is compiled (pipeline/bundle_stream.py): the bytes ``serialise``
makes, written as ``write_bundle`` writes them, and no thread left behind however it ends."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest
from helpers.repo import make_repo

from promptops.errors import UsageError, WriteError
from promptops.pipeline import bundle as bundle_mod
from promptops.pipeline import bundle_stream
from promptops.pipeline.build import Build
from promptops.pipeline.bundle import parse_bundle, serialise
from promptops.pipeline.bundle_stream import write_streamed
from promptops.pipeline.validate import Package

LONG_TEXT = ("<p class=\"x\">naïve \\ ✓ 😀\ttab</p>\n" * 400)  # long: escaped by bytes


def _package(tmp_path: Path, prompts: int = 12) -> Package:
    files: dict[str, str | bytes] = {
        "pkg/promptops.yaml": "name: acme\nversion: 1.2.0\n",
        "pkg/templates/t.j2": "{{ x }} \u2028 done\n",
    }
    for i in range(prompts):
        body = "".join(f"      {line}\n" for line in (LONG_TEXT + f"#{i}").splitlines())
        files[f"pkg/prompts/p{i}.prompt.yaml"] = (
            f"description: 'prompt {i} \"q\"'\nmessages:\n  - role: user\n    text: |\n{body}"
            "  - role: user\n    template: templates/t.j2\n")
    repo = make_repo(tmp_path / "r", files)
    return Build(Path(repo.working_tree_dir or "") / "pkg", "HEAD").package


def _expected(package: Package) -> bytes:
    from promptops.pipeline.bundle import compile_bundle

    return serialise(compile_bundle(package))


def _no_writer() -> bool:
    """No writer thread alive (other tests of this process may have started threads of
    their own, such as the sandbox's watchdog)."""
    return not any(t.name == "promptops-bundle-writer" for t in threading.enumerate())


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.mark.parametrize("batch", [bundle_stream.BATCH, 1, 5000])
def test_streamed_bytes_are_serialise_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        batch: int) -> None:
    """Whatever the batches (one, one a part, a few parts each), the file is ``serialise``
    of the bundle it returns, whose digest verifies, and the writer thread is gone."""
    monkeypatch.setattr(bundle_stream, "BATCH", batch)
    package = _package(tmp_path)
    bundle, path, written = write_streamed(package, tmp_path / "out", force=False, root=None)
    data = path.read_bytes()
    assert written and data == _expected(package) == serialise(bundle)
    assert parse_bundle(data, "streamed") == bundle
    assert len(bundle["prompts"]) == 12 and path.stat().st_mode & 0o777 == 0o444
    assert _no_writer()
    assert _files(tmp_path / "out") == [path.name]


def test_an_existing_file_is_compared_whole(tmp_path: Path) -> None:
    """The same bytes there: unchanged; other bytes: refused without force, replaced with."""
    package = _package(tmp_path, prompts=3)
    out = tmp_path / "out"
    _, path, _ = write_streamed(package, out, force=False, root=None)
    assert write_streamed(package, out, force=False, root=None)[2] is False
    path.chmod(0o644)
    path.write_bytes(b"{}\n")
    with pytest.raises(UsageError, match="exists with different content"):
        write_streamed(package, out, force=False, root=None)
    assert path.read_bytes() == b"{}\n"
    assert write_streamed(package, out, force=True, root=None)[2] is True
    assert path.read_bytes() == _expected(package)


def test_a_failed_write_leaves_nothing_and_no_thread(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's OSError (a full disk) is the write's WriteError; no file, no temp."""
    monkeypatch.setattr(bundle_stream, "BATCH", 1)
    package = _package(tmp_path, prompts=3)
    calls = 0
    pwritev = os.pwritev

    def full(fd: int, buffers: list[bytes], at: int) -> int:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return pwritev(fd, buffers, at)

    monkeypatch.setattr(bundle_stream.os, "pwritev", full)
    with pytest.raises(WriteError, match="No space left"):
        write_streamed(package, tmp_path / "out", force=False, root=None)
    assert _files(tmp_path / "out") == [] and _no_writer()


def test_a_failed_compile_leaves_nothing_and_no_thread(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A prompt that fails to encode half way: its exception, no file, no thread."""
    monkeypatch.setattr(bundle_stream, "BATCH", 1)
    package = _package(tmp_path, prompts=4)
    compile_prompt = bundle_mod.compile_prompt
    seen = 0

    def third_fails(*args: object) -> object:
        nonlocal seen
        seen += 1
        if seen == 3:
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return compile_prompt(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(bundle_mod, "compile_prompt", third_fails)
    with pytest.raises(UnicodeEncodeError):
        write_streamed(package, tmp_path / "out", force=False, root=None)
    assert _files(tmp_path / "out") == [] and _no_writer()


def test_short_writes_are_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``pwritev`` that writes less than asked (a signal) is followed by the rest."""
    package = _package(tmp_path, prompts=3)
    pwritev = os.pwritev

    def short(fd: int, buffers: list[bytes], at: int) -> int:
        return pwritev(fd, [buffers[0][: max(1, len(buffers[0]) // 3)]], at)

    monkeypatch.setattr(bundle_stream.os, "pwritev", short)
    _, path, _ = write_streamed(package, tmp_path / "out", force=False, root=None)
    assert path.read_bytes() == _expected(package)


def test_written_again_by_name_when_the_temp_cannot_be_linked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without /proc the unnamed temp is not linked and the named one is written: the
    bundle is compiled a second time for it, the same bytes."""
    from promptops import fsutil

    package = _package(tmp_path, prompts=3)
    link = os.link

    def no_proc(src: str, dst: str, **kw: object) -> None:
        if str(src).startswith("/proc/self/fd/"):
            raise OSError(errno.ENOENT, "no /proc")
        link(src, dst, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(fsutil.os, "link", no_proc)
    bundle, path, _ = write_streamed(package, tmp_path / "out", force=False, root=None)
    assert path.read_bytes() == _expected(package) == serialise(bundle)
    assert _files(tmp_path / "out") == [path.name]
