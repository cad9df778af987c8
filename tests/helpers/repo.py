"""Helpers every test module may import: real files and real git repositories in tmp dirs.

Import them from here, not from ``conftest``: several conftest.py files exist under
tests/, and which one ``import conftest`` finds depends on what pytest collected first.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import git
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# What Windows cannot do, for `@posix_only(WHY)` on the tests that need it (docs/platforms.md).
SYMLINKS = "creating symlinks needs administrator rights or Developer Mode on Windows"
SIGNALS = ("POSIX signals: on Windows a SIGTERM is TerminateProcess, which a process can "
           "neither catch nor hold back")
MODES = "POSIX permission bits: Windows keeps only a read-only flag"


def peak_rss_mb() -> float:
    """This process's peak resident memory in MiB, on Linux, macOS and Windows alike."""
    if sys.platform == "win32":
        import ctypes
        from ctypes import wintypes

        class Counters(ctypes.Structure):
            _fields_ = [("cb", wintypes.DWORD), ("PageFaultCount", wintypes.DWORD),
                        *((name, ctypes.c_size_t) for name in (
                            "PeakWorkingSetSize", "WorkingSetSize", "QuotaPeakPagedPoolUsage",
                            "QuotaPagedPoolUsage", "QuotaPeakNonPagedPoolUsage",
                            "QuotaNonPagedPoolUsage", "PagefileUsage", "PeakPagefileUsage"))]

        counters = Counters()
        counters.cb = ctypes.sizeof(counters)
        windll = ctypes.windll  # type: ignore[attr-defined]
        ok = windll.psapi.GetProcessMemoryInfo(windll.kernel32.GetCurrentProcess(),
                                               ctypes.byref(counters), counters.cb)
        assert ok, "GetProcessMemoryInfo failed"
        return float(counters.PeakWorkingSetSize) / 2**20
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / (2**20 if sys.platform == "darwin" else 2**10)


def posix_only(reason: str) -> pytest.MarkDecorator:
    """Skip on Windows, saying why: for tests that exercise a POSIX-only mechanism."""
    return pytest.mark.skipif(sys.platform == "win32", reason=reason)


Files = Mapping[str, str | bytes | None]
IDENTITY = {"GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "test@example.com",
            "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "test@example.com"}


def write_files(root: Path, files: Files) -> list[Path]:
    """Write ``files`` (POSIX relative path -> text or bytes; None deletes the file) below
    ``root``; returns the paths written."""
    written: list[Path] = []
    for rel, content in files.items():
        path = root / rel
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


def make_repo(
    root: Path,
    files: Files,
    message: str = "initial commit",
    *,
    branch: str = "main",
    date: str | None = None,
) -> git.Repo:
    """A real git repository at ``root`` holding ``files`` in one commit on ``branch``
    (at ``date``, ISO 8601, when the commit id must be the same on every run)."""
    root.mkdir(parents=True, exist_ok=True)
    repo = git.Repo.init(root)
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", IDENTITY["GIT_AUTHOR_NAME"])
        cfg.set_value("user", "email", IDENTITY["GIT_AUTHOR_EMAIL"])
        cfg.set_value("commit", "gpgsign", "false")
    repo.git.checkout("-q", "-B", branch)
    commit_files(repo, files, message, date=date)
    return repo


def commit_files(repo: git.Repo, files: Files, message: str = "change", *,
                 date: str | None = None) -> str:
    """Write ``files`` into the work tree of ``repo`` (None deletes), commit everything;
    returns the hexsha. With ``date`` (ISO 8601) author, committer and dates are fixed,
    so the same files give the same commit id on every run and machine."""
    root = Path(repo.working_tree_dir or ".")
    write_files(root, files)
    repo.git.add("--all")
    env = {**IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}
    repo.git.commit("--allow-empty", "-q", "-m", message, env=env or None)
    return repo.head.commit.hexsha


def cli_env(**extra: str) -> dict[str, str]:
    """Environment for running ``python -m promptops`` as a subprocess: no colour, no CI."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTOPS_", "GIT_"))}
    env.update({"NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"})
    env.pop("CI", None)
    env.update(extra)
    return env


PYTHON = sys.executable


def run_cli(
    *args: str, cwd: Path | None = None, input: str | None = None, umask: int | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``promptops ARGS`` run in this process, as ``run_cli_process`` would run it.

    The same entry point (``promptops.__main__.main``) with the same environment as
    ``cli_env`` gives the subprocess, stdout and stderr captured apart, but without the
    ~0.3 s interpreter start per call. The current folder, the umask and the terminal
    settings a command may change are restored afterwards, and so are the signal mask and
    the SIGINT/SIGTERM handlers: ``serve`` ends by blocking and ignoring both (its exit is
    the process's), and exec passes a mask and an ignored signal on, so every process this
    worker started later (a module's HTTP server, set up before any per-test fixture runs)
    would never stop on SIGTERM. Use ``run_cli_process`` when the process itself is under
    test (entry point, signals, kills, serve, imports).
    """
    from click.testing import CliRunner

    from promptops.__main__ import main

    strip = {k: None for k in os.environ if k.startswith(("PROMPTOPS_", "GIT_"))}
    overlay: dict[str, str | None] = {**strip, "CI": None, "NO_COLOR": "1", **env}
    saved = os.getcwd()
    old_umask = os.umask(umask) if umask is not None else None
    signals = _SignalState()
    with CliRunner().isolation(input=input, env=overlay) as (out, err, _):
        try:
            if cwd is not None:
                os.chdir(cwd)
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse (serve's options) exits on bad usage
                code = exc.code if isinstance(exc.code, int) else 2
        finally:
            os.chdir(saved)
            if old_umask is not None:
                os.umask(old_umask)
            signals.restore()
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    return subprocess.CompletedProcess(
        ["promptops", *args], code, stdout.decode("utf-8", "replace"),
        stderr.decode("utf-8", "replace"),
    )


class _SignalState:
    """The calling thread's signal mask and the SIGINT/SIGTERM handlers, to put back."""

    NAMES = ("SIGINT", "SIGTERM")

    def __init__(self) -> None:
        self.mask = (signal.pthread_sigmask(signal.SIG_BLOCK, set())
                     if hasattr(signal, "pthread_sigmask") else None)
        self.handlers = {name: signal.getsignal(getattr(signal, name)) for name in self.NAMES}

    def restore(self) -> None:
        if self.mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.mask)
        for name, handler in self.handlers.items():
            if handler is not None:  # None: set from C, not ours to put back
                signal.signal(getattr(signal, name), handler)


def run_cli_process(
    *args: str, cwd: Path | None = None, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """``python -m promptops ARGS`` as a real subprocess, in ``cli_env`` plus ``env``."""
    return subprocess.run(
        [PYTHON, "-m", "promptops", *args], cwd=cwd, env=cli_env(**env),
        capture_output=True, text=True, check=False, timeout=timeout,
    )


def checkout_files() -> list[str]:
    """What a fresh clone of this checkout holds: tracked files, plus new ones not ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    return sorted(rel for rel in listed if rel and (REPO_ROOT / rel).is_file())


def copy_checkout(dest: Path) -> Path:
    """A copy of this checkout's files in ``dest`` (no .git, nothing it ignores)."""
    import shutil

    for rel in checkout_files():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / rel, dest / rel)
    return dest
