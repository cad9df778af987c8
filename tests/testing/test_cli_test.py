"""`promptops test` end to end: real subprocesses, real git repositories, real reports."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.repo import commit_files, make_repo
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML
from testing_helpers import GREET, MANIFEST, junit_errors, package, promptops

from promptops.commands.schema import schema_for
from promptops.pipeline.build import Build
from promptops.testing.report import junit_xml
from promptops.testing.suite import run_suite

GOOD = """\
prompt: greet
cases:
  - name: hello ada
    arguments: {who: Ada}
    expect: {contains: [Ada], snapshot: true}
  - name: rejects hot
    arguments: {who: Ada, tone: hot}
    expect: {error: {code: -32602, message_contains: tone}}
  - name: wrong on purpose
    arguments: {who: Bob}
    expect: {contains: [Alice]}
  - name: later
    arguments: {who: Bob}
    skip: true
"""


def test_text_report_and_exit_code(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": GOOD})
    proc = promptops("test", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.endswith("\n4 passed, 1 failed, 1 skipped\n")
    assert (
        "FAILED greet::wrong on purpose\n"
        "  at tests/greet.test.yaml:9:5\n"
        '  arguments: {"who": "Bob"}\n'
        "  - does not contain 'Alice'\n"
        "  rendered:\n"
        "    ── [0] assistant\n"
        "    I greet people politely.\n"
        "    ── [1] user\n"
        "    Say hello to Bob in a warm way.\n"
    ) in proc.stdout
    assert proc.stderr == ""  # no progress bar: stderr is not a terminal
    ok = promptops("test", "-k", "hello", "-k", "REJECTS", cwd=tmp_path)
    assert (ok.returncode, ok.stdout) == (0, "2 passed, 0 failed\n")
    verbose = promptops("-v", "test", "-k", "greet::*", cwd=tmp_path)
    assert "PASSED greet::hello ada\n" in verbose.stdout
    assert "SKIPPED greet::later (skipped)\n" in verbose.stdout
    quiet = promptops("-q", "test", "-k", "hello", cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout) == (0, "")


def test_json_format(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": GOOD})
    proc = promptops("test", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["ok"] is False
    assert data["summary"] == {"passed": 4, "failed": 1, "skipped": 1, "errors": 0}
    assert [(c["prompt"], c["name"], c["status"], c["smoke"]) for c in data["cases"]] == [
        ("greet", "hello ada", "passed", False), ("greet", "rejects hot", "passed", False),
        ("greet", "wrong on purpose", "failed", False), ("greet", "later", "skipped", False),
        ("fragile", "smoke", "passed", True), ("greet", "smoke", "passed", True)]
    wrong = data["cases"][2]
    assert (wrong["path"], wrong["line"], wrong["col"]) == ("tests/greet.test.yaml", 9, 5)
    assert wrong["failures"] == [{"message": "does not contain 'Alice'"}]
    assert data["snapshots"]["written"] == ["tests/__snapshots__/greet/hello_ada.json"]


BAD_FILES = {
    "unknown key": ("prompt: greet\ncases:\n  - name: a\n    expcet: {messages: 2}\n",
                    "tests/bad.test.yaml:4:5: unknown key 'expcet'; did you mean 'expect'?"),
    "unknown prompt": ("prompt: gret\ncases:\n  - name: a\n",
                       "tests/bad.test.yaml:1:9: unknown prompt 'gret'; did you mean 'greet'?"),
    "bad message index": (
        "prompt: greet\ncases:\n  - name: a\n    expect:\n      - {message: 5, contains: [x]}\n",
        "tests/bad.test.yaml:5:19: message 5 does not exist: prompt 'greet' renders 2 messages "
        "(0-1)"),
    "duplicate name": (
        "prompt: greet\ncases:\n  - {name: a, arguments: {who: x}}\n  - name: a\n",
        "tests/bad.test.yaml:4:11: case 'a' has the same name for prompt 'greet' "
        "(tests/bad.test.yaml:3:5); rename one"),
    "slug clash": (
        "prompt: greet\ncases:\n  - {name: A b}\n  - {name: a-b}\n  - {name: a!b}\n",
        "tests/bad.test.yaml:5:12: case 'a!b' has the same snapshot file as 'A b' for prompt "
        "'greet' (tests/bad.test.yaml:3:5); rename one"),
    "bad regex": ("prompt: greet\ncases:\n  - name: a\n    expect: {matches: ['(']}\n",
                  "tests/bad.test.yaml:4:23: cases.0.expect.matches: '(' is not a valid regular "
                  "expression: missing ), unterminated subpattern at position 0\n1 problem"),
    "yaml syntax": ("prompt: greet\ncases:\n  - name: 'a\n",
                    "tests/bad.test.yaml:3:11: this '...' string is never closed: add the "
                    "closing ' at the end of the value on line 3, or, for text over several "
                    "lines, use a block scalar (`key: |`)"),
    "number argument": ("prompt: greet\ncases:\n  - name: a\n    arguments: {who: 3}\n",
                        "tests/bad.test.yaml:4:22: cases.0.arguments.who: Input should be a "
                        "valid string; quote it to keep it text: '3'"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_bad_test_file_is_exit_1_with_position(tmp_path: Path, kind: str) -> None:
    text, message = BAD_FILES[kind]
    package(tmp_path, {"tests/bad.test.yaml": text})
    proc = promptops("test", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_ref_tests_a_commit_with_its_snapshots(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    tests = {"tests/greet.test.yaml": GOOD.split("  - name: wrong")[0]}
    package(root, tests)
    assert promptops("test", cwd=root).returncode == 0  # writes the snapshot
    repo = make_repo(root, {}, "v1 with a snapshot")
    repo.create_tag("v1")
    # Break the working tree, then commit a second, also broken, revision on a branch.
    prompt = root / "prompts" / "greet.prompt.yaml"
    prompt.write_text(GREET.replace("Say hello", "Wave"))
    assert promptops("test", cwd=root, CI="true").returncode == 1
    assert promptops("test", "--ref", "HEAD", cwd=root, CI="true").returncode == 0
    repo.git.checkout("-b", "broken")
    commit_files(repo, {}, "v2 breaks the snapshot")
    (root / "prompts" / "greet.prompt.yaml").write_text(GREET)  # working tree good again
    broken = promptops("test", "--ref", "broken", cwd=root)
    assert broken.returncode == 1
    assert "rendered result differs from snapshot tests/__snapshots__/greet/hello_ada.json" in (
        broken.stdout)
    assert promptops("test", "--ref", "v1", cwd=root).returncode == 0
    assert promptops("test", cwd=root).returncode == 0
    # a snapshot the commit lacks fails and is never written, whatever CI says
    (root / "tests" / "__snapshots__" / "greet" / "hello_ada.json").unlink()
    repo.git.add("-A")
    repo.git.commit("-m", "drop the snapshot")
    gone = promptops("test", "--ref", "HEAD", cwd=root)
    assert gone.returncode == 1
    assert "never written with --ref" in gone.stdout
    assert not (root / "tests" / "__snapshots__" / "greet" / "hello_ada.json").exists()
    refused = promptops("test", "--ref", "HEAD", "--update-snapshots", cwd=root)
    assert refused.returncode == 2 and "cannot be combined with --ref" in refused.stderr


FRAGILE_TESTS = "prompt: fragile\ncases:\n  - {name: crash, arguments: {who: zero}}\n"


def test_junit_xml_validates_against_the_junit_schema(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": GOOD, "tests/fragile.test.yaml": FRAGILE_TESTS})
    out = tmp_path / "reports" / "junit.xml"
    proc = promptops("test", "--junit-xml", str(out), cwd=tmp_path)
    assert proc.returncode == 1
    data = out.read_bytes()
    assert junit_errors(data) == []
    import xml.etree.ElementTree as ET

    root = ET.fromstring(data)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("7", "2", "0")
    assert [s.get("name") for s in root] == ["greetings.fragile", "greetings.greet"]
    assert [(s.get("tests"), s.get("skipped")) for s in root] == [("2", "0"), ("5", "1")]
    failure = root.find("./testsuite/testcase[@name='wrong on purpose']/failure")
    assert failure is not None and failure.get("message") == "does not contain 'Alice'"
    assert "tests/greet.test.yaml:9:5" in (failure.text or "")
    assert root.find("./testsuite/testcase[@name='crash']/failure") is not None
    skipped = root.find("./testsuite/testcase[@name='later']/skipped")
    assert skipped is not None and skipped.text == "skipped" and not skipped.attrib


def test_junit_schema_rejects_broken_reports(tmp_path: Path) -> None:
    """The validation can fail: the real report, broken in the ways importers trip over."""
    package(tmp_path, {"tests/greet.test.yaml": GOOD, "tests/fragile.test.yaml": FRAGILE_TESTS})
    data = junit_xml(run_suite(Build(tmp_path), jobs=1, ci=False))
    assert junit_errors(data) == []

    def rejected(broken: bytes) -> str:
        assert broken != data, "the mutation must change the document"
        errors = junit_errors(broken)
        assert errors, broken.decode()
        return "\n".join(errors)

    assert "'bogus' is not allowed" in rejected(
        data.replace(b"<testcase ", b'<testcase bogus="1" ', 1))
    assert "'name' is required" in rejected(
        data.replace(b'<testsuite name="greetings.fragile"', b"<testsuite", 1))
    # attributes on <skipped>, or a skip total on <testsuites>, are outside the schema
    assert "'message' is not allowed" in rejected(
        data.replace(b"<skipped>", b'<skipped message="later">', 1))
    assert "'skipped' is not allowed" in rejected(
        data.replace(b"<testsuites ", b'<testsuites skipped="1" ', 1))
    # children in the wrong order: <system-out> must follow <failure>
    case = b'<testcase name="x"><system-out>o</system-out><failure message="m"/></testcase>'
    assert "'failure': This element is not expected" in rejected(
        data.replace(b"</testsuite>", case + b"</testsuite>", 1))
    assert "'testsuites': This element is not expected" in rejected(
        b'<testsuites><testsuites><testsuite name="a" tests="0"/></testsuites></testsuites>')
    assert "'tests' is required" in rejected(b'<testsuites><testsuite name="a"/></testsuites>')


def test_parallel_gives_the_serial_results_in_order(tmp_path: Path) -> None:
    cases = "".join(
        f"  - name: case {i}\n    arguments: {{who: {'zero' if i % 7 == 0 else f'n{i}'}}}\n"
        f"    expect: {{contains: ['n{i}']}}\n" for i in range(120))
    package(tmp_path, {"tests/fragile.test.yaml": f"prompt: fragile\ncases:\n{cases}"})
    serial = run_suite(Build(tmp_path), jobs=1, ci=False)
    parallel = run_suite(Build(tmp_path), jobs=2, ci=False)
    assert parallel.cases == serial.cases
    assert [replace(o, seconds=0) for o in parallel.outcomes] == [
        replace(o, seconds=0) for o in serial.outcomes]
    assert serial.summary() == "104 passed, 18 failed"
    cli = promptops("test", "-j", "2", "--format", "json", cwd=tmp_path)
    assert [c["status"] for c in json.loads(cli.stdout)["cases"]] == [
        o.status for o in serial.outcomes]


def test_check_runs_the_tests_and_release_refuses(tmp_path: Path) -> None:
    package(tmp_path, {"tests/greet.test.yaml": GOOD})
    check = promptops("check", cwd=tmp_path)
    assert check.returncode == 1
    assert "FAILED greet::wrong on purpose" in check.stderr
    assert check.stderr.endswith("tests: 4 passed, 1 failed, 1 skipped\n")
    make_repo(tmp_path, {}, "failing tests")
    release = promptops("release", cwd=tmp_path)
    assert release.returncode == 1
    assert "the prompt tests fail at HEAD (4 passed, 1 failed, 1 skipped: greet::wrong on " \
           "purpose); run `promptops test --ref HEAD`" in release.stderr
    fixed = GOOD.replace("contains: [Alice]", "contains: [Bob]")
    commit_files(__import__("git").Repo(tmp_path), {"tests/greet.test.yaml": fixed}, "fix")
    assert promptops("check", cwd=tmp_path).returncode == 0
    ok = promptops("release", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "released greetings@1.0.0" in ok.stdout


def test_schema_test_kind_matches_the_loader(tmp_path: Path) -> None:
    proc = promptops("schema", "test", cwd=tmp_path)
    assert proc.returncode == 0
    schema = json.loads(proc.stdout)
    assert schema == schema_for("test")
    validator = Draft202012Validator(schema)
    yaml = YAML(typ="safe")
    assert list(validator.iter_errors(yaml.load(GOOD))) == []
    for text, _ in BAD_FILES.values():
        if "unknown key" in _ or "number argument" in _:
            assert list(validator.iter_errors(yaml.load(text))) != []
    assert MANIFEST  # the helper package is what the other tests run against
