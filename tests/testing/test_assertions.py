"""Every assertion kind passes when it should and fails when it should, in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing_helpers import package

from promptops.pipeline.build import Build
from promptops.testing.suite import SuiteResult, run_suite

EQUALS_OK = """
        - role: assistant
          content: {type: text, text: I greet people politely.}
        - role: user
          content: {type: text, text: Say hello to Ada in a warm way.}"""

# kind -> (expect that holds, expect that does not, words of the failure message)
KINDS = {
    "messages": ("messages: 2", "messages: 3", "expected 3 messages, got 2"),
    "roles": ("roles: [assistant, user]", "roles: [user, user]",
              "expected roles ['user', 'user'], got ['assistant', 'user']"),
    "contains": ('contains: ["hello to Ada"]', 'contains: ["goodbye"]',
                 "does not contain 'goodbye'"),
    "not_contains": ('not_contains: ["{{"]', 'not_contains: ["Ada"]',
                     "contains 'Ada', which it must not"),
    "matches": ('matches: ["(?s)greet.*Ada"]', 'matches: ["^Ada"]',
                "no match for regex '^Ada'"),
    "equals": (f"equals:{EQUALS_OK}", f"equals:{EQUALS_OK.replace('warm way', 'cold way')}",
               "messages differ from `equals`"),
    "max_chars": ("max_chars: 100", "max_chars: 10",
                  "rendered text is 56 characters, over max_chars 10"),
    "message": ("- {message: 0, contains: [greet], not_contains: [Ada]}",
                "- {message: 0, contains: [Ada]}", "message 0: does not contain 'Ada'"),
}


def run(tmp_path: Path, expect: str, arguments: str = "{who: Ada}") -> SuiteResult:
    body = "\n".join("      " + line if i else line for i, line in enumerate(expect.splitlines()))
    test = f"prompt: greet\ncases:\n  - name: the case\n    arguments: {arguments}\n" \
           f"    expect:\n      {body}\n"
    package(tmp_path, {"tests/greet.test.yaml": test})
    return run_suite(Build(tmp_path), patterns=["greet::the case"], ci=False)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_assertion_passes(tmp_path: Path, kind: str) -> None:
    result = run(tmp_path, KINDS[kind][0])
    assert [o.status for o in result.outcomes] == ["passed"], result.outcomes
    assert result.summary() == "1 passed, 0 failed"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_assertion_fails(tmp_path: Path, kind: str) -> None:
    result = run(tmp_path, KINDS[kind][1])
    (outcome,) = result.outcomes
    assert outcome.status == "failed"
    assert [f.message for f in outcome.failures] == [KINDS[kind][2]]
    assert result.summary() == "0 passed, 1 failed"


def test_equals_failure_is_a_readable_diff_of_rendered_text(tmp_path: Path) -> None:
    (outcome,) = run(tmp_path, KINDS["equals"][1]).outcomes
    diff = outcome.failures[0].diff
    assert diff is not None
    assert "--- equals\n+++ rendered\n" in diff
    assert "-Say hello to Ada in a cold way.\n+Say hello to Ada in a warm way.\n" in diff
    assert " ── [1] user\n" in diff  # roles are part of the compared text
    assert "\\n" not in diff and '"text"' not in diff  # not escaped JSON


def test_several_failures_of_one_case_are_all_reported(tmp_path: Path) -> None:
    (outcome,) = run(tmp_path, "messages: 1\ncontains: [nope, Ada, zzz]").outcomes
    assert [f.message for f in outcome.failures] == [
        "expected 1 messages, got 2", "does not contain 'nope'", "does not contain 'zzz'"]
    assert outcome.rendered is not None and "Say hello to Ada" in outcome.rendered


ERRORS = [
    # (expect, arguments, status, failure)
    ("error: {code: -32602, message_contains: tone}", "{who: Ada, tone: hot}", "passed", None),
    ("error: {code: -32602, message: \"argument 'tone' must be one of 'warm', 'cold'; got "
     "'hot'\"}", "{who: Ada, tone: hot}", "passed", None),
    ("error: {code: -32603}", "{who: Ada, tone: hot}", "failed",
     "error code is -32602, expected -32603 (argument 'tone' must be one of 'warm', 'cold'; "
     "got 'hot')"),
    ("error: {message_contains: who}", "{who: Ada, tone: hot}", "failed",
     "error message \"argument 'tone' must be one of 'warm', 'cold'; got 'hot'\" does not "
     "contain 'who'"),
    ("error: {message: nope}", "{tone: warm}", "failed",
     "error message is \"missing required argument 'who' for prompt 'greet'\", expected 'nope'"),
    ("error: {code: -32602}", "{who: Ada}", "failed",
     "expected error -32602, but the prompt rendered"),
    ("messages: 2", "{who: Ada, tone: hot}", "failed",
     "render failed with error -32602: argument 'tone' must be one of 'warm', 'cold'; "
     "got 'hot'"),
]


@pytest.mark.parametrize(("expect", "arguments", "status", "failure"), ERRORS)
def test_error_expectations(
    tmp_path: Path, expect: str, arguments: str, status: str, failure: str | None
) -> None:
    (outcome,) = run(tmp_path, expect, arguments).outcomes
    assert outcome.status == status
    assert [f.message for f in outcome.failures] == ([failure] if failure else [])


def test_template_failure_is_an_internal_error_code(tmp_path: Path) -> None:
    package(tmp_path, {"tests/fragile.test.yaml": """\
        prompt: fragile
        cases:
          - name: division by zero
            arguments: {who: zero}
            expect: {error: {code: -32603, message_contains: ZeroDivisionError}}
          - name: unexpected crash
            arguments: {who: zero}
    """})
    result = run_suite(Build(tmp_path), patterns=["fragile::d*", "crash"], ci=False)
    assert [o.status for o in result.outcomes] == ["passed", "failed"]
    assert result.outcomes[1].failures[0].message.startswith(
        "render failed with error -32603: prompt 'fragile' message 0 failed to render")


def test_skip_and_smoke_cases(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": """\
        prompt: greet
        cases:
          - {name: later, arguments: {who: x}, skip: not written yet}
          - {name: no checks renders, arguments: {who: x}}
    """}, **{"prompts/strict.prompt.yaml": (
        "arguments:\n  - {name: key, required: true, pattern: '[A-Z]+-[0-9]+'}\n"
        "messages:\n  - {role: user, text: '{{ key }}'}\n")})
    result = run_suite(Build(tmp_path), ci=False)
    got = [(c.id, c.smoke, o.status) for c, o in zip(result.cases, result.outcomes, strict=True)]
    assert got == [
        ("greet::later", False, "skipped"), ("greet::no checks renders", False, "passed"),
        ("fragile::smoke", True, "passed"), ("greet::smoke", True, "passed"),
        ("strict::smoke", True, "failed"),
    ]
    # smoke arguments: first example, else first enum value or the default, else a placeholder
    assert [c.arguments for c in result.cases if c.smoke] == [
        {"who": "Ada"}, {"who": "Ada", "tone": "warm"}, {"key": "example key"}]
    assert result.summary() == "3 passed, 1 failed, 1 skipped"
    assert "does not match its pattern" in result.outcomes[-1].failures[0].message
