"""A file system that refuses a write: exit 1 with the path, and the old file untouched.

ENOSPC (disk full) and EROFS (read-only file system) were reported as "internal error
... This is a bug" (exit 3), and a failed ``build --force`` had already made the old
read-only bundle writable (0644) before the write failed. Now the error names the path
and the reason (exit 1), and the old bundle stays exactly as it was, bytes and mode.

The faults are real where the machine allows: a 64 KiB tmpfs mounted in a private mount
namespace (``unshare -Urm``: root, or an unprivileged user where user namespaces are
enabled), filled up, or remounted read-only, around a real `promptops` process. Where
no namespace can be made, the same failure is injected at the os-call boundary
(``os.fsync`` raising the errno, in-process) and the same outcome is asserted; the test
says which it used.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from content_helpers import MANIFEST, PROMPT, cli
from hardening_helpers import record
from helpers.repo import cli_env, commit_files, make_repo

FILL = "dd if=/dev/zero of=\"$MNT/fill\" bs=1024 2>/dev/null || true"
FAULTS = {"ENOSPC": (FILL, "No space left on device", errno.ENOSPC),
          "EROFS": ("mount -o remount,ro \"$MNT\"", "Read-only file system", errno.EROFS)}


@cache
def namespaces() -> bool:
    """Whether a private mount namespace with a tmpfs can be made here."""
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"promptops-ns-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    try:
        proc = subprocess.run(["unshare", "-Urm", "sh", "-c",
                               f"mount -t tmpfs -o size=64k tmpfs {probe}"],
                              capture_output=True, check=False, timeout=30)
        return proc.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        probe.rmdir()


def in_namespace(script: str, mnt: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh mount namespace with a 64 KiB tmpfs on ``mnt`` ($MNT)."""
    mnt.mkdir(exist_ok=True)
    full = f"set -e\nmount -t tmpfs -o size=64k tmpfs \"$MNT\"\n{script}"
    return subprocess.run(["unshare", "-Urm", "sh", "-c", full], capture_output=True,
                          text=True, env=cli_env(MNT=str(mnt), PY=sys.executable, **env),
                          check=False, timeout=120)


def two_versions(root: Path) -> Path:
    """Two commits of version 1.0.0 with different content: --force must overwrite."""
    repo = make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": PROMPT})
    commit_files(repo, {"prompts/p.prompt.yaml": PROMPT.replace("About", "Regarding")}, "2")
    return root


# "real" falls back to the injected fault where no namespace can be made; "injected"
# always runs, so both ways to the error are exercised wherever a namespace exists.
HOW = ["real", "injected"]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_failed_forced_build_leaves_the_old_bundle_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str, how: str) -> None:
    root = two_versions(tmp_path / "pkg")
    cause, reason, code = FAULTS[fault]
    name = "demo-1.0.0.bundle.json"
    record("write faults", f"{fault} while writing the bundle", "build --force",
           f"exit 1: error: cannot write <out>/{name}: {reason}; the old bundle keeps its "
           "bytes and its 0444 mode, no temp file is left (was: exit 3, and the old bundle "
           "made 0644)", "test_write_faults.py::"
           f"test_a_failed_forced_build_leaves_the_old_bundle_as_it_was[{fault}-real]")
    if how == "real" and namespaces():
        bundle = f"\"$MNT/{name}\""
        script = (f"cd \"$PKG\"\n\"$PY\" -m promptops build --no-lint --ref HEAD~1 -o \"$MNT\" "
                  f">/dev/null 2>&1\necho before=$(sha256sum {bundle} | cut -c1-64)"
                  f":$(stat -c %a {bundle})\n{cause}\nset +e\n"
                  "\"$PY\" -m promptops build --no-lint -o \"$MNT\" --force\necho rc=$?\n"
                  f"echo after=$(sha256sum {bundle} | cut -c1-64):$(stat -c %a {bundle})\n"
                  "echo temps=$(ls -a \"$MNT\" | grep -c '[.]tmp$')\n")
        proc = in_namespace(script, tmp_path / "mnt", PKG=str(root))
        seen = dict(ln.split("=", 1) for ln in proc.stdout.splitlines() if "=" in ln)
        assert seen.get("rc") == "1", (proc.stdout, proc.stderr)
        assert seen["before"].endswith(":444") and seen["after"] == seen["before"], seen
        assert seen["temps"] == "0", seen  # no temp file left behind
        assert f"error: cannot write {tmp_path / 'mnt' / name}: {reason}" in proc.stderr, \
            proc.stderr
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
        return
    # Injected: the old bundle written for real, the second write's fsync fails.
    out = tmp_path / "dist"
    assert cli("build", "--no-lint", "--ref", "HEAD~1", "-o", str(out), at=root).code == 0
    old = (out / name).read_bytes()
    real_fsync = os.fsync

    def failing(fd: int) -> None:
        real_fsync(fd)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", failing)
    run = cli("build", "--no-lint", "-o", str(out), "--force", at=root, allowed=(1,))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert f"error: cannot write {out / name}: {reason}" in run.err, run
    assert (out / name).read_bytes() == old
    assert stat.S_IMODE((out / name).stat().st_mode) == 0o444
    assert [p.name for p in out.iterdir()] == [name]


@pytest.mark.parametrize("how", HOW)
def test_snapshots_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  how: str) -> None:
    """`promptops test` writing new snapshots onto a full file system: exit 1, the path."""
    root = tmp_path / "pkg"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": PROMPT,
                     "tests/p.test.yaml": ("prompt: p\ncases:\n  - name: one\n    arguments: "
                                           "{topic: x}\n    expect: {snapshot: true}\n")})
    snap = "tests/__snapshots__/p/one.json"
    if how == "real" and namespaces():
        script = ("mkdir \"$MNT/pkg\"\ncp -a \"$PKG/promptops.yaml\" \"$PKG/prompts\" "
                  f"\"$PKG/tests\" \"$MNT/pkg/\"\n{FILL}\nset +e\ncd \"$MNT/pkg\"\n"
                  "\"$PY\" -m promptops test\necho \"rc=$?\"\n")
        proc = in_namespace(script, tmp_path / "mnt", PKG=str(root))
        assert "rc=1" in proc.stdout, (proc.stdout, proc.stderr)
        assert (f"error: cannot write {tmp_path / 'mnt' / 'pkg' / snap}: No space left on device"
                in proc.stderr), proc.stderr
        assert "internal error" not in proc.stderr
        return
    real_fsync = os.fsync

    def failing(fd: int) -> None:
        real_fsync(fd)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", failing)
    run = cli("test", str(root), at=tmp_path, allowed=(1,))
    assert f"error: cannot write {root / snap}: No space left on device" in run.err, run
    assert not (root / snap).exists()
