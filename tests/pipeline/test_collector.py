"""Builds pause Python's cycle collector and always give it back as they found it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from promptops.errors import PackageError
from promptops.pipeline import collector
from promptops.pipeline.build import Build


def test_a_pause_nests_and_restores_even_on_error() -> None:
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause leaves the outer one paused
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector.paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_a_build_runs_paused_and_restores_it(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "promptops.yaml").write_text("name: c\nversion: 1.0.0\n")
    (tmp_path / "prompts" / "p.prompt.yaml").write_text(
        "messages:\n  - role: user\n    text: hi\n")
    from promptops.pipeline import bundle

    seen: list[bool] = []
    real = bundle.compile_bundle
    monkeypatch.setattr(bundle, "compile_bundle",
                        lambda package, kept=None: seen.append(gc.isenabled())
                        or real(package, kept))
    assert Build(tmp_path).bundle["prompts"][0]["name"] == "p"
    assert seen == [False] and gc.isenabled()
    (tmp_path / "prompts" / "p.prompt.yaml").write_text("messages: [\n")
    with pytest.raises(PackageError):
        Build(tmp_path).bundle  # noqa: B018 - a failing build restores it too
    assert gc.isenabled()
