"""Snapshots: create, compare, update and obsolete flows, CI, and the file-name rule."""

from __future__ import annotations

import json
from pathlib import Path

from testing_helpers import package, promptops

from promptops.pipeline.build import Build
from promptops.render.renderer import Renderer
from promptops.testing.cases import slug
from promptops.testing.suite import run_suite

TESTS = """\
prompt: greet
cases:
  - name: Warm Ada!
    arguments: {who: Ada}
    expect: {snapshot: true}
  - name: cold
    arguments: {who: Bob, tone: cold}
    expect: [{snapshot: true}, {message: 1, contains: [Bob]}]
"""
WARM = "tests/__snapshots__/greet/warm_ada.json"
COLD = "tests/__snapshots__/greet/cold.json"


def test_slug_rule() -> None:
    assert slug("go_snapshot") == "go_snapshot"
    assert slug("Warm Ada!") == "warm_ada"
    assert slug("rejects an unknown language") == "rejects_an_unknown_language"
    assert slug("../../etc/passwd") == "etc_passwd"
    assert slug("a/b\\c:d") == "a_b_c_d"
    assert slug("???") == "case"
    assert slug("x" * 300) == "x" * 100


def test_missing_snapshots_are_written_then_compared(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": TESTS})
    first = promptops("test", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.splitlines() == [  # in case order
        f"wrote new snapshot {WARM}", f"wrote new snapshot {COLD}", "4 passed, 0 failed"]
    # the exact GetPromptResult, pretty-printed with sorted keys and a final newline
    expected = Renderer(Build(tmp_path).bundle).get("greet", {"who": "Ada"})
    text = (tmp_path / WARM).read_text(encoding="utf-8")
    assert text == json.dumps(expected, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert not list((tmp_path / "tests" / "__snapshots__" / "greet").glob(".*"))  # no temp files
    again = promptops("test", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == "4 passed, 0 failed\n"


def test_changed_output_fails_with_diff_until_updated(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": TESTS})
    assert promptops("test", cwd=tmp_path).returncode == 0
    prompt = tmp_path / "prompts" / "greet.prompt.yaml"
    prompt.write_text(prompt.read_text().replace("in a {{ tone }} way", "in a {{ tone }} tone"))
    before = (tmp_path / WARM).read_bytes()
    fail = promptops("test", cwd=tmp_path)
    assert fail.returncode == 1
    out = fail.stdout
    assert "FAILED greet::Warm Ada!\n  at tests/greet.test.yaml:3:5\n" in out
    assert '  arguments: {"who": "Ada"}\n' in out
    assert f"rendered result differs from snapshot {WARM}" in out
    assert f"    --- {WARM}\n    +++ rendered\n" in out
    assert "    -Say hello to Ada in a warm way.\n    +Say hello to Ada in a warm tone.\n" in out
    assert out.endswith("2 passed, 2 failed\n")
    assert (tmp_path / WARM).read_bytes() == before  # a failing compare never writes
    update = promptops("test", "--update-snapshots", cwd=tmp_path)
    assert update.returncode == 0
    assert f"updated snapshot {WARM}" in update.stdout
    assert "Ada in a warm tone." in (tmp_path / WARM).read_text()
    assert promptops("test", cwd=tmp_path).returncode == 0


def test_description_only_change_diffs_the_json(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": TESTS})
    run_suite(Build(tmp_path), ci=False)
    prompt = tmp_path / "prompts" / "greet.prompt.yaml"
    prompt.write_text(prompt.read_text().replace("Greets someone", "Greets anyone"))
    result = run_suite(Build(tmp_path), ci=False, patterns=["warm"])
    diff = result.outcomes[0].failures[0].diff or ""
    assert '-  "description": "Greets someone",\n+  "description": "Greets anyone",\n' in diff


def test_missing_snapshot_fails_in_ci(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": TESTS})
    proc = promptops("test", "-k", "warm", cwd=tmp_path, CI="true")
    assert proc.returncode == 1
    assert f"snapshot {WARM} is missing (CI=true" in proc.stdout
    assert not (tmp_path / "tests" / "__snapshots__").exists()
    # --update-snapshots is an explicit request: it writes even in CI
    assert promptops("test", "--update-snapshots", cwd=tmp_path, CI="true").returncode == 0
    assert (tmp_path / WARM).is_file()


def test_obsolete_snapshots_reported_and_removed_only_on_update(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": TESTS})
    assert promptops("test", cwd=tmp_path).returncode == 0
    (tmp_path / "tests" / "greet.test.yaml").write_text(TESTS.replace("name: cold", "name: icy"))
    stale = tmp_path / "tests" / "__snapshots__" / "gone" / "old.json"
    stale.parent.mkdir()
    stale.write_text("{}\n")
    proc = promptops("test", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout  # obsolete is reported, not a failure
    assert proc.stdout.splitlines() == [
        "wrote new snapshot tests/__snapshots__/greet/icy.json",
        "obsolete snapshot tests/__snapshots__/gone/old.json: no case uses it (remove it with "
        "--update-snapshots)",
        f"obsolete snapshot {COLD}: no case uses it (remove it with --update-snapshots)",
        "4 passed, 0 failed",
    ]
    assert (tmp_path / COLD).exists() and stale.exists()
    # -k narrows what runs, never what counts as obsolete
    narrow = run_suite(Build(tmp_path), patterns=["icy"], ci=False)
    assert narrow.snapshots.obsolete == ["tests/__snapshots__/gone/old.json", COLD]
    update = promptops("test", "--update-snapshots", cwd=tmp_path)
    assert f"removed obsolete snapshot {COLD}" in update.stdout
    assert not (tmp_path / COLD).exists() and not stale.parent.exists()
    assert (tmp_path / WARM).exists()
    assert promptops("test", cwd=tmp_path).stdout == "4 passed, 0 failed\n"


def test_invalid_snapshot_file_is_an_error(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": TESTS, WARM: "{not json"})
    result = run_suite(Build(tmp_path), ci=False, patterns=["warm"])
    assert [o.status for o in result.outcomes] == ["error"]
    assert result.summary() == "0 passed, 0 failed, 1 errors"
