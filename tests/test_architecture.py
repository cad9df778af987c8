"""The import graph is the data flow: the contracts in pyproject.toml hold.

`lint-imports` (import-linter) reads them from ``[tool.importlinter]``: the layers from
``cli`` down to ``errors``, serve's cold path free of pydantic, typer, GitPython,
ruamel and PyYAML, lint neither building nor calling git itself, lint's engine and
incremental lint naming no rule module, commands never importing one another. Running it
here makes CI (`.ci/run`) run it too. An ignored edge is a hole in a contract, so the list
of them is pinned: adding one is a visible change to this file.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")  # the test extra installs it

# The only holes, each documented where it is declared. The follower imports the build
# on its first rebuild (or idle warm-up), never on the cold path (docs/following.md).
IGNORED: dict[str, list[str]] = {
    "serve's cold path stays light": [
        "promptops.serve.follow -> promptops.pipeline.build",
        "promptops.serve.follow -> promptops.pipeline.rebuild",  # on the same first rebuild
        "promptops.serve.watch -> promptops.pipeline.build",  # serve --worktree builds
        "promptops.serve.http -> promptops.ui.mount",  # serve --http --ui, only with --ui
    ],
    "data flows down": [
        "promptops.serve.http -> promptops.ui.mount",  # the UI mounted behind serve's auth
    ],
}


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def lint_imports(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--config", str(config), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, check=False)


def test_the_import_contracts_hold() -> None:
    run = lint_imports(CONFIG)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_only_the_documented_edges_are_ignored() -> None:
    found = {str(c["name"]): list(c.get("ignore_imports", [])) for c in _contracts()}  # type: ignore[call-overload]
    assert {k: v for k, v in found.items() if v} == IGNORED


def test_serve_may_not_load_the_heavy_libraries() -> None:
    serve = next(c for c in _contracts() if c.get("source_modules") == ["promptops.serve"])
    assert serve["type"] == "forbidden"
    assert set(serve["forbidden_modules"]) >= {"pydantic", "typer", "git", "ruamel", "yaml"}  # type: ignore[arg-type]


def assert_broken(tmp_path: Path, source: str, forbidden: str, extra: str = "") -> None:
    """A forbidden contract ``source`` -> ``forbidden`` that the code breaks is reported."""
    config = tmp_path / "broken.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "promptops"\n\n'
        '[[tool.importlinter.contracts]]\nname = "a contract the code breaks"\n'
        f'type = "forbidden"\nsource_modules = ["{source}"]\n'
        f'forbidden_modules = ["{forbidden}"]\n{extra}',
        encoding="utf-8",
    )
    run = lint_imports(config)
    assert run.returncode == 1 and "a contract the code breaks BROKEN" in run.stdout, run.stdout


def test_a_broken_contract_fails_the_check(tmp_path: Path) -> None:
    """The check can fail: serve does import the renderer, so forbidding it must break."""
    assert_broken(tmp_path, "promptops.serve", "promptops.render")


def test_serve_is_layered_from_the_envelope_up() -> None:
    """The review's serve order: jsonrpc < catalog/session < methods < server < transports."""
    layered = next(c for c in _contracts() if str(c["name"]).startswith("serve is layered"))
    layers = [str(x) for x in layered["layers"]]  # type: ignore[attr-defined]
    order = ["promptops.serve.transports", "promptops.serve.server", "promptops.serve.methods",
             "promptops.serve.session", "promptops.serve.catalog", "promptops.serve.jsonrpc"]
    where = [next(i for i, layer in enumerate(layers) if name in layer) for name in order]
    assert where == sorted(where) and len(set(where)) == len(where)
    assert not layered.get("ignore_imports")


def test_lint_engines_may_not_import_a_rule_module(tmp_path: Path) -> None:
    """Incremental lint and the engine read what rules declare (Rule.scope), never a rule
    module by name; the same contract on the registry, which does import them, breaks."""
    lint = next(c for c in _contracts() if c.get("forbidden_modules") == ["promptops.lint.rules"])
    assert set(lint["source_modules"]) == {  # type: ignore[arg-type]
        "promptops.lint.engine", "promptops.lint.incremental", "promptops.lint.shared"}
    assert_broken(tmp_path, "promptops.lint.registry", "promptops.lint.rules",
                  "allow_indirect_imports = true\n")
