"""Cached lint results are keyed by the code they come from, and tests never share a cache.

With a warm cache a broken validator used to pass the lint tests: the key stamped the lint
folder only, and validation (pipeline/) decides half the findings (every PO1xx-3xx load
problem). The key now stamps every module lint's results come from, checked against the
import graph, and a changed validator misses the cache.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

from promptops import fsutil
from promptops.lint import cache
from promptops.lint.runner import lint_package
from promptops.pipeline.build import Build

MANIFEST = "name: keyed\nversion: 1.0.0\ndescription: d\n"
PROMPT = "name: hello\ndescription: d\nmessages:\n- role: user\n  text: Hello.   \n"


def _file(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).resolve()


def test_the_key_covers_every_module_lint_results_come_from() -> None:
    graph = grimp.build_graph("promptops", cache_dir=None)
    sources = {"promptops.lint.engine", "promptops.lint.registry"}
    modules = set(sources).union(*(graph.find_upstream_modules(m) for m in sources))
    stamped = {p.resolve() for p in cache.code_files()}
    missing = sorted(m for m in modules if _file(m) not in stamped)
    assert not missing, f"lint's results come from modules its cache key ignores: {missing}"
    assert _file("promptops.pipeline.validate") in stamped


@pytest.fixture
def code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the code the key stamps, which the test may edit; the memo cleared."""
    root = tmp_path / "promptops"
    for name in cache.CODE:
        if name.endswith(".py"):
            root.mkdir(exist_ok=True)
            shutil.copy2(cache.ROOT / name, root / name)
        else:
            shutil.copytree(cache.ROOT / name, root / name, copy_function=shutil.copy2)
    monkeypatch.setattr(cache, "ROOT", root)
    cache._code_stamp.cache_clear()
    yield root
    cache._code_stamp.cache_clear()


def test_a_changed_validator_misses_the_cache(tmp_path: Path, code: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "prompts").mkdir(parents=True)
    (pkg / "promptops.yaml").write_text(MANIFEST, encoding="utf-8")
    (pkg / "prompts" / "hello.prompt.yaml").write_text(PROMPT, encoding="utf-8")

    def how() -> str:
        return lint_package(Build(pkg, None)).how

    assert how() == "full"
    assert how() == "cached"
    validator = code / "pipeline" / "validate.py"
    validator.write_text(validator.read_text(encoding="utf-8") + "\n# changed\n",
                         encoding="utf-8")
    cache._code_stamp.cache_clear()  # a new process, with the changed validator
    assert how() == "full"


def test_the_session_caches_in_a_folder_of_its_own(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    assert fsutil.user_cache_dir().is_relative_to(tmp_path_factory.getbasetemp())
    assert not fsutil.user_cache_dir().is_relative_to(Path.home() / ".cache")
