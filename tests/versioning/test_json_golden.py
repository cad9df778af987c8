"""`promptops version --format json` and `promptops diff --format json`, byte for byte.

(And `promptops version`'s text, whose one line per change is what a release's tag
message lists too.)

Both are read by machines (CI gates, bots, dashboards), so the change-kind names, the
levels, the counts and the key order are a contract: a renamed ``Kind`` member or a
miscounted level must fail here, not in someone's pipeline. The other tests compare enum
members, which move with a rename; these compare the bytes the CLI prints.

The outputs come from a real git repository (fixed commit dates, so the commit ids are
the same on every run) going through real changes that cover every change kind:

- v1 -> v2: every kind a package edit can produce but the three below (``version`` and
  ``diff`` both), released at v1 with `promptops release`;
- v2 -> v3: the package renamed (``diff``; ``version`` finds no release of the new name);
- v3 -> v4: only the request limits changed (``other_changed``: served content differs
  but no classified change explains it).

Regenerate after an intended change of the output, then read the diff of the files::

    PROMPTOPS_UPDATE_GOLDEN=1 python -m pytest -n 0 tests/versioning/test_json_golden.py
    git diff tests/versioning/golden/
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import commit_files, make_repo, run_cli

from promptops.versioning import Kind

GOLDEN = Path(__file__).parent / "golden"


def _prompt(**spec: Any) -> str:
    return json.dumps(spec, indent=2) + "\n"


MANIFEST_V1 = ("name: demo\nversion: 1.0.0\ndescription: Demo prompts\n"
               "instructions: Use them well.\n")
MANIFEST_V2 = (
    "name: demo\nversion: 1.0.0\ndescription: Demo prompts, reviewed\n"
    "instructions: Use them with care.\n"
    "serve:\n  cacheScope: private\n  systemRole: assistant\n  tools: catalog\n"
    "templates:\n  whitespace: jinja\n"
)

_ARGS_V1: list[dict[str, Any]] = [
    {"name": "code", "required": True, "maxLength": 5000},
    {"name": "language", "default": "python", "enum": ["python", "go"]},
    {"name": "style", "pattern": "[a-z]+", "description": "house style"},
    {"name": "level", "enum": ["low", "high"]},
    {"name": "mood", "enum": ["calm", "brisk"]},
    {"name": "tone", "default": "warm"},
    {"name": "count", "type": "integer"},
    {"name": "limit", "type": "integer", "schema": {"minimum": 1}, "examples": ["1"]},
    {"name": "gone"},
]
_ARGS_V2: list[dict[str, Any]] = [
    {"name": "language", "default": "python", "enum": ["python"]},  # narrowed; moved up
    {"name": "code", "maxLength": 4000},  # optional now, and shorter
    {"name": "style", "required": True, "pattern": "[a-z]{1,8}", "description": "house style"},
    {"name": "level", "enum": ["low", "high", "max"]},
    {"name": "mood", "enum": ["calm", "sharp"]},
    {"name": "tone", "default": "kind", "description": "how it sounds"},
    {"name": "count", "type": "number", "title": "Count"},
    {"name": "limit", "type": "integer", "schema": {"minimum": 2}, "examples": ["2", "3"]},
    {"name": "focus", "required": True},
    {"name": "note"},
]

REVIEW_V1: dict[str, Any] = {
    "title": "Review",
    "description": "Review code",
    "icons": [{"src": "https://example.com/review.png", "mimeType": "image/png"}],
    "arguments": _ARGS_V1,
    "model": {"id": "model-a"},
    "tools": [{"name": "search"}],
    "output": {"format": "text"},
    "samples": [{"name": "short", "arguments": {"code": "x = 1"}},
                {"name": "long", "arguments": {"code": "x = 2"}}],
    "metadata": {"team": "core"},
    "messages": [{"role": "assistant", "template": "templates/review.j2"},
                 {"role": "user", "text": "Review:\n{{ code }}"}],
}
REVIEW_V2: dict[str, Any] = {
    **REVIEW_V1,
    "title": "Code review",
    "description": "Review code carefully",
    "icons": [{"src": "https://example.com/review2.png", "mimeType": "image/png"}],
    "whitespace": "standalone",
    "arguments": _ARGS_V2,
    "model": {"id": "model-b"},
    "tools": [{"name": "search"}, {"name": "fetch"}],
    "output": {"format": "json"},
    "samples": [{"name": "long", "arguments": {"code": "x = 3", "style": "pep",
                                               "focus": "bugs"}},
                {"name": "tiny", "arguments": {"style": "pep", "focus": "bugs"}}],
    "metadata": {"team": "platform"},
}
SUMMARY = {
    "description": "Summarise",
    "arguments": [{"name": "text", "required": True}],
    "messages": [{"role": "user", "text": "Summarise {{ text }}"},
                 {"role": "user", "resource": {"uri": "file:///guide.md",
                                               "file": "docs/guide.md"}}],
}
HELLO = {"description": "Say hello", "messages": [{"role": "user", "text": "Hello there"}]}
OLD = {"description": "Old news", "messages": [{"role": "user", "text": "Yesterday"}]}
FRESH = {"description": "New", "messages": [{"role": "user", "text": "Today"}]}

V1 = {
    "promptops.yaml": MANIFEST_V1,
    "prompts/review.prompt.yaml": _prompt(**REVIEW_V1),
    "prompts/summary.prompt.yaml": _prompt(**SUMMARY),
    "prompts/hello.prompt.yaml": _prompt(**HELLO),
    "prompts/old.prompt.yaml": _prompt(**OLD),
    "templates/review.j2": "You review {{ language }} code.\n",
    "docs/guide.md": "# Guide\n",
}
V2: dict[str, str | None] = {
    "promptops.yaml": MANIFEST_V2,
    "prompts/review.prompt.yaml": _prompt(**REVIEW_V2),
    "prompts/hello.prompt.yaml": None,
    "prompts/greet.prompt.yaml": _prompt(**HELLO, name="greet"),  # renamed, same content
    "prompts/old.prompt.yaml": None,
    "prompts/fresh.prompt.yaml": _prompt(**FRESH),
    "templates/review.j2": '{% include "partials/rules.j2" %}'
                           "You review {{ language }} code, line by line.\n",
    "partials/rules.j2": "Be kind.\n",  # reached in v2 only
    "docs/guide.md": "# Guide\n\nRead me first.\n",
}
V3 = {"promptops.yaml": MANIFEST_V2.replace("name: demo", "name: demo-kit")}
V4 = {"promptops.yaml": V3["promptops.yaml"] + "limits:\n  maxOutputChars: 50000\n"}


def _out(*args: str, cwd: Path, code: int) -> str:
    result = run_cli(*args, cwd=cwd)
    assert result.returncode == code, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("golden") / "repo"
    repo = make_repo(root, V1, "v1", date="2026-01-01T00:00:00Z")
    _out("release", cwd=root, code=0)
    commit_files(repo, V2, "v2", date="2026-01-02T00:00:00Z")
    out = {"version.json": _out("version", "--format", "json", cwd=root, code=1),
           "version.txt": _out("version", cwd=root, code=1)}
    diffs = {"v1..v2": json.loads(_out("diff", "HEAD~1", "HEAD", "--format", "json", cwd=root,
                                       code=0))}
    commit_files(repo, V3, "v3", date="2026-01-03T00:00:00Z")
    diffs["v2..v3"] = json.loads(_out("diff", "HEAD~1", "HEAD", "--format", "json", cwd=root,
                                      code=0))
    commit_files(repo, V4, "v4", date="2026-01-04T00:00:00Z")
    diffs["v3..v4"] = json.loads(_out("diff", "HEAD~1", "HEAD", "--format", "json", cwd=root,
                                      code=0))
    out["diff.json"] = json.dumps(diffs, indent=2, ensure_ascii=False) + "\n"
    return out


@pytest.mark.parametrize("name", ["version.json", "version.txt", "diff.json"])
def test_json_output_is_the_golden_file(outputs: dict[str, str], name: str) -> None:
    golden = GOLDEN / name
    if os.environ.get("PROMPTOPS_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(outputs[name], encoding="utf-8")
    assert outputs[name] == golden.read_text(encoding="utf-8"), (
        f"`promptops {name.split('.')[0]}` output changed; inspect it and rerun with "
        "PROMPTOPS_UPDATE_GOLDEN=1 (see the top of this file)")


def _kinds(report: Any) -> set[str]:
    if isinstance(report, dict):
        found = {report["kind"]} if isinstance(report.get("kind"), str) else set()
        return found.union(*(_kinds(v) for v in report.values()))
    if isinstance(report, list):
        return set().union(*(_kinds(v) for v in report))
    return set()


def test_the_golden_files_cover_every_change_kind(outputs: dict[str, str]) -> None:
    """A new kind must show up here, so its name gets pinned too."""
    assert _kinds(json.loads(outputs["diff.json"])) == {k.value for k in Kind}
    version = json.loads(outputs["version.json"])
    shown = {k.value for k in Kind} - {"package_renamed", "other_changed"}
    assert _kinds(version) == shown
    # counts agree with the list, level by level, major first
    levels = [c["level"] for c in version["changes"]]
    assert version["counts"] == {lv: levels.count(lv) for lv in ("major", "minor", "patch")}
    assert list(version["counts"]) == ["major", "minor", "patch"]
