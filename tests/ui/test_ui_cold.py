"""The UI costs nothing to anyone who does not run it: `promptops`, `promptops serve` and
`serve --http` without `--ui` import no module of promptops.ui (a fresh interpreter, since
this one may have)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("entry", ["promptops.cli", "promptops.serve.main",
                                   "promptops.serve.http"])
def test_no_ui_module_is_imported(entry: str) -> None:
    code = (f"import sys, {entry}; "
            "print(sorted(m for m in sys.modules if m.startswith('promptops.ui')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
