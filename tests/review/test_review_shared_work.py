"""The review's shared work changes nothing a reviewer sees.

Three shortcuts make `promptops diff` fast on a large package, and each is checked here
against the slow way: a prompt whose every input is equal at both ends is counted
unaffected without being rendered (the report equals one that renders every prompt);
the test gate runs inside the review's render pass (its verdict equals run_suite's); and
lint answers through lint's own entry on the review's HEAD build (equal to a fresh lint).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_helpers import fixed_commit, fixed_repo

from promptops.lint.runner import Options, lint_package
from promptops.pipeline.build import Build
from promptops.review import build as review_build
from promptops.review import build_report
from promptops.review import shared as review_shared
from promptops.testing.suite import run_suite

MANIFEST = "name: shared\nversion: 1.0.0\n"
USES_A = ("arguments:\n  - name: who\nmessages:\n  - role: user\n"
          "    text: '{{% include \"partials/a.j2\" %}} {n} {{{{ who }}}}'\n")
USES_B = ("arguments:\n  - name: who\nmessages:\n  - role: user\n"
          "    text: |\n      {{% from \"partials/b.j2\" import hi %}}{{{{ hi(who) }}}} {n}\n")
FILE = "messages:\n  - role: user\n    template: templates/t.md.j2\n"
RESOURCE = ("messages:\n  - role: user\n"
            "    resource: {uri: 'promptops://r', file: resources/r.md}\n"
            "  - role: system\n    text: Be brief.\n")
TESTS = ("prompt: a0\ncases:\n  - name: greets\n    arguments: {who: x}\n"
         "    expect:\n      contains: ['Hi 0 x']\n")


def _files() -> dict[str, str | bytes | None]:
    files: dict[str, str | bytes | None] = {
        "promptops.yaml": MANIFEST, "partials/a.j2": "Hi", "partials/b.j2":
        "{% macro hi(x) %}Hello {{ x }}{% endmacro %}", "templates/t.md.j2": "Plain\n",
        "resources/r.md": "one\n", "prompts/file.prompt.yaml": FILE,
        "prompts/res.prompt.yaml": RESOURCE, "tests/a0.test.yaml": TESTS}
    for n in range(4):
        files[f"prompts/a{n}.prompt.yaml"] = USES_A.format(n=n)
        files[f"prompts/b{n}.prompt.yaml"] = USES_B.format(n=n)
    return files


SCENARIOS = {
    "partial": {"partials/a.j2": "Hello"},
    "macro import": {"partials/b.j2": "{% macro hi(x) %}Hey {{ x }}{% endmacro %}"},
    "template file": {"templates/t.md.j2": "Plainer\n"},
    "resource": {"resources/r.md": "two\n"},
    "whitespace mode": {"promptops.yaml": MANIFEST + "templates: {whitespace: jinja}\n"},
    "system role": {"promptops.yaml": MANIFEST + "serve: {systemRole: assistant}\n"},
    "version only": {"promptops.yaml": "name: shared\nversion: 1.1.0\n"},
    "one prompt": {"prompts/a2.prompt.yaml": USES_A.format(n=22)},
    "new partial use": {"prompts/b1.prompt.yaml": USES_A.format(n=1),
                        "partials/a.j2": "Hi!"},
    "a failing test": {"tests/a0.test.yaml": TESTS.replace("Hi 0 x", "Bye")},
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("shared") / "r"
    repo = fixed_repo(root, _files())
    for n, (name, change) in enumerate(SCENARIOS.items(), 1):
        repo.git.checkout("-q", "-B", name.replace(" ", "-"), "main")
        fixed_commit(repo, change, name, n)
    repo.git.checkout("-q", "main")
    yield root


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_skipping_unaffected_prompts_gives_the_report_of_rendering_all(
        repo: Path, scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    proven: list[str] = []
    real = review_shared.Shared.same_render

    def counting(self: review_shared.Shared, a: object, b: object) -> bool:
        same = real(self, a, b)  # type: ignore[arg-type]
        if same:
            proven.append(b["name"])  # type: ignore[index]
        return same

    monkeypatch.chdir(repo)
    branch = scenario.replace(" ", "-")
    monkeypatch.setattr(review_shared.Shared, "same_render", counting)
    fast = build_report(repo, "main", branch, None)
    monkeypatch.setattr(review_shared.Shared, "same_render", lambda *_: False)
    slow = build_report(repo, "main", branch, None)
    assert fast.model_dump() == slow.model_dump()
    skipped = {"partial": 6, "macro import": 6, "template file": 9, "resource": 9,
               "version only": 10, "one prompt": 9, "new partial use": 5,
               "a failing test": 10}.get(scenario, 0)  # settings changes prove nothing
    assert len(proven) == skipped, proven


@pytest.mark.parametrize("scenario", ["version only", "a failing test"])
def test_the_gates_equal_lint_and_run_suite(repo: Path, scenario: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    branch = scenario.replace(" ", "-")
    pkg = build_report(repo, "main", branch, None).packages[0]
    head = Build(repo, branch)
    suite = run_suite(head, writable=False)
    assert (pkg.tests.status, pkg.tests.detail) == (
        "passed" if suite.ok else "failed", suite.summary())
    assert pkg.tests.status == ("failed" if scenario == "a failing test" else "passed")
    findings = lint_package(Build(repo, branch), Options(use_cache=False)).findings
    errors = sum(1 for f in findings if f.level == "error")
    assert pkg.lint.detail == f"{errors} errors, {len(findings) - errors} warnings"


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_prompt_proven_unaffected_renders_the_same(repo: Path, scenario: str) -> None:
    """The proof on its own, without the diff engine's change list to fall back on:
    every prompt it calls unaffected renders the same smoke case at both ends, and
    every prompt whose smoke render differs is not called unaffected."""
    from promptops.pipeline.templates import TemplateIndex
    from promptops.testing.cases import smoke_case

    old = Build(repo, "main").bundle
    new = Build(repo, scenario.replace(" ", "-")).bundle
    shared = review_shared.Shared(old, new, TemplateIndex())
    before = {p["name"]: p for p in old["prompts"]}
    differ = 0
    for b in new["prompts"]:
        a = before[b["name"]]
        args = smoke_case(b).arguments
        diff = shared.rendered_diff(a["name"], b["name"], args)
        differ += bool(diff)
        if shared.same_render(a, b):
            assert diff == [], b["name"]
    assert differ or scenario in ("version only", "a failing test", "whitespace mode")


def test_the_collector_is_paused_during_a_review_only(repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    seen: list[bool] = []
    real = review_build.review_package

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.chdir(repo)
    monkeypatch.setattr(review_build, "review_package", spy)
    assert gc.isenabled()
    build_report(repo, "main", "partial", None)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:  # a caller that had it off keeps it off
        build_report(repo, "main", "partial", None)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_test_gate_takes_the_rendered_diffs_head_result(tmp_path: Path) -> None:
    """A test case whose request the rendered diff made already (same prompt, same
    arguments, types included) is answered with that render's result, not rendered again;
    any other request renders."""
    from promptops.errors import ArgumentError
    from promptops.render.renderer import Renderer

    files = {"promptops.yaml": MANIFEST, "partials/a.j2": "Hi",
             "prompts/a0.prompt.yaml": USES_A.format(n=0)}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    renderer = Renderer(Build(tmp_path, None).bundle)
    kept: list[tuple[dict[str, object], object]] = []
    old, new = review_shared._render_pair(renderer, renderer, "a0", "a0", {"who": "x"}, kept)
    assert old == new and len(kept) == 1
    replay = review_shared._Replay(renderer, "a0", kept)  # type: ignore[arg-type]
    assert replay.get("a0", {"who": "x"}) is kept[0][1]
    again = replay.get("a0", {"who": "y"})
    assert again is not kept[0][1] and again != kept[0][1]
    assert replay.get("a0", {"who": "x"}, renderer.budget()) is not kept[0][1]
    failed = review_shared._render_pair(renderer, renderer, "a0", "a0", {"who": 1}, kept)
    assert failed[1][0].startswith("error") and len(kept) == 1  # a failure is not kept
    with pytest.raises(ArgumentError):
        replay.get("a0", {"who": 1})
    assert review_shared._same({"who": 1}) != review_shared._same({"who": 1.0})


@pytest.mark.parametrize("scenario", ["partial", "template file", "new partial use"])
def test_the_reached_templates_of_the_diff_engine_give_the_report_of_computing_them(
        repo: Path, scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The templates each prompt reaches at both ends come from the diff engine, which
    found them already; computed again by the review, the report is the same."""
    from promptops.versioning.engine import diff_bundles

    monkeypatch.chdir(repo)
    branch = scenario.replace(" ", "-")
    calls: list[str] = []
    real = review_build.reached_templates

    def counting(bundle: Any, prompt: Any, index: Any = None) -> dict[str, str]:
        calls.append(prompt["name"])
        return real(bundle, prompt, index)

    monkeypatch.setattr(review_build, "reached_templates", counting)
    shared = build_report(repo, "main", branch, None)
    assert calls == []  # every prompt is at both ends under one name
    monkeypatch.setattr(review_build, "diff_bundles",
                        lambda old, new, index, reached: diff_bundles(old, new, index=index))
    again = build_report(repo, "main", branch, None)
    assert calls  # the review's own computation, for every prompt it compared
    assert shared.model_dump() == again.model_dump()


def test_the_pools_answers_are_found_by_the_requests_themselves(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The review asks for each rendered diff with the argument set it gave the render
    (no JSON key made per request, at either end of the pool); an equal argument set
    that is another object still finds it. A partial's source diff is one item, however
    many prompts reach it."""
    from promptops.pipeline.templates import TemplateIndex
    from promptops.review import gates

    monkeypatch.chdir(repo)
    keys: list[object] = []
    real = review_shared._key
    monkeypatch.setattr(review_shared, "_key", lambda args: keys.append(args) or real(args))
    prompts = build_report(repo, "main", "partial", None).packages[0].prompts
    assert keys == []
    partial = [d for p in prompts for d in p.source_diffs if d.new_path == "partials/a.j2"]
    assert len(partial) == 4 and all(d is partial[0] for d in partial)
    shared = review_shared.Shared(Build(repo, "main").bundle, Build(repo, "partial").bundle,
                                  TemplateIndex())
    asked = {"who": "x"}
    shared.render_all([("a1", "a1", [asked])], gates.NO_HEAD, jobs=1)
    assert shared.rendered_diff("a1", "a1", {"who": "x"}) == shared.rendered_diff(
        "a1", "a1", asked) != []


def test_bases_smoke_cases_are_not_made(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BASE's cases are read for the test cases only HEAD lacks; its smoke cases, which
    the review never shows (HEAD's stand for them), are not made."""
    from promptops.review import cases

    monkeypatch.chdir(repo)
    made: list[str] = []
    real = cases.smoke_case
    monkeypatch.setattr(cases, "smoke_case", lambda p: made.append(p["name"]) or real(p))
    report = build_report(repo, "main", "a-failing-test", None)
    assert made == []
    assert report.packages[0].tests.status == "failed"
