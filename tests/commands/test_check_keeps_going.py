"""`promptops check` keeps going past a file that does not load (issue 15): its problems are
listed, lint and the tests still run on every prompt that loads, and the exit is 1."""

from __future__ import annotations

from pathlib import Path

from helpers.repo import run_cli, write_files

FILES = {
    "promptops.yaml": "name: demo\nversion: 1.0.0\n",
    "prompts/good.prompt.yaml": 'description: d\narguments:\n  - name: who\n    description: Who'
                                '\n    required: true\nmessages:\n  - role: user\n'
                                '    text: "Hi {{ who }}"\n',
    "prompts/lint.prompt.yaml": 'description: d\nmessages:\n  - role: user\n'
                                '    text: "Hi {{ whom }}"\n',
    "prompts/bad.prompt.yaml": "messages: [\n",
    "tests/good.test.yaml": "prompt: good\ncases:\n  - name: greets\n    arguments: {who: Ann}\n"
                            "    expect: {contains: [Hi Ann]}\n",
    "tests/bad.test.yaml": "prompt: bad\ncases:\n  - name: c\n",
}


def test_one_unloadable_file_still_gets_lint_and_tests_for_the_rest(tmp_path: Path) -> None:
    write_files(tmp_path, FILES)
    proc = run_cli("check", str(tmp_path))
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines[:2] == ["prompts/bad.prompt.yaml:2:1: invalid YAML: did not find expected "
                         "node content", "1 problem found"]
    assert "demo 1.0.0: 2 prompts, 0 template files: the rest is checked below" in lines
    # lint ran on the prompts that loaded, and the load problem is not listed twice
    assert any("lint.prompt.yaml" in line and "PO201" in line for line in lines)
    assert sum("bad.prompt.yaml" in line for line in lines) == 1
    assert "lint: 1 error, 0 warnings" in lines
    # the tests of the prompts that loaded ran; the broken prompt's test file is named
    assert "tests: 1 test file of prompts that do not load: not run" in lines
    assert lines[-1].startswith("tests: 2 passed, 1 failed"), lines  # lint's smoke fails


def test_a_package_that_loads_is_checked_as_before(tmp_path: Path) -> None:
    write_files(tmp_path, {k: v for k, v in FILES.items() if "bad" not in k and "lint" not in k})
    proc = run_cli("check", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == "demo 1.0.0: 1 prompt, 0 template files: ok"
