"""The UI costs nothing to anyone who does not run it: `promptops`, `promptops serve` and
`serve --http` without `--ui` import no module of promptops.ui (a fresh interpreter, since
this one may have)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("entry", ["promptops.cli", "promptops.serve.main",
                                   "promptops.serve.http"])
def test_no_ui_module_is_imported(entry: str) -> None:
    code = (f"import sys, {entry}; "
            "print(sorted(m for m in sys.modules if m.startswith('promptops.ui')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_ui_stops_on_sigterm_even_when_started_with_it_blocked(tmp_path: Path) -> None:
    """A parent that held SIGTERM back (a test worker after an in-process serve) passes
    its mask on; the UI still stops when told to."""
    from ui_helpers import make_package

    make_package(tmp_path / "pkg")
    proc = subprocess.Popen(
        [sys.executable, "-m", "promptops", "ui", str(tmp_path / "pkg"), "--port", "0",
         "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK,
                                                  {signal.SIGINT, signal.SIGTERM}))
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("promptops ui: ")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
