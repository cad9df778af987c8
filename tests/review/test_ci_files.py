"""The pull-request workflows, the composite Action and the pre-commit hooks.

actionlint itself runs in ``test_actionlint.py``; this file checks what actionlint does
not: the triggers and exact least permissions these workflows promise, pinned actions,
``action.yml`` against SchemaStore's action metadata schema (vendored in tests/data),
shellcheck on the Action's own ``run:`` steps (actionlint reads only workflows), and the
sticky-comment script itself, executed with node against an in-memory comment store to
prove a second push updates the one comment and two packages keep one comment each.
The pre-commit hooks run through the real ``pre-commit`` on a real repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.repo import REPO_ROOT, cli_env
from jsonschema import Draft7Validator
from review_helpers import fixed_commit, fixed_repo
from test_actionlint import _tool

WORKFLOWS = {
    "starter": (REPO_ROOT / "templates/.github/workflows/promptops.yml", "pull_request"),
    "reusable": (REPO_ROOT / ".github/workflows/promptops-review.yml", "workflow_call"),
}
ALLOWED = {"contents": "read", "security-events": "write", "pull-requests": "write"}
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$")


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data  # type: ignore[no-any-return]


def _steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    (job,) = data["jobs"].values()
    return job["steps"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("which", sorted(WORKFLOWS))
def test_workflow_structure(which: str) -> None:
    path, trigger = WORKFLOWS[which]
    data = _load(path)
    assert list(data["on"]) == [trigger]
    assert data["permissions"] == {}
    (job,) = data["jobs"].values()
    assert job["permissions"] == ALLOWED  # exactly what the steps need, nothing more
    steps = _steps(data)
    for step in steps:
        if "uses" in step:
            assert PINNED.match(step["uses"]), f"unpinned action {step['uses']}"
    assert steps[0]["uses"].startswith("actions/checkout@") and \
        steps[0]["with"]["fetch-depth"] == 0
    if which == "starter":
        # the Action (action.yml) runs every step and installs promptops from its own
        # source: the scaffold installs nothing from a registry (issue 24, item 12)
        from promptops.about import github_repository

        assert [s["uses"].split("@")[0] for s in steps] == [
            "actions/checkout", github_repository()]
        assert steps[1]["with"] == {"package": "${{ env.PACKAGE }}"}
        assert "pip install" not in path.read_text(encoding="utf-8")
        return
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "--format sarif" in runs and "--format github" in runs
    assert "promptops test" in runs and "--junit-xml" in runs
    assert 'promptops diff "origin/$BASE_REF...HEAD"' in runs and "--format markdown" in runs
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif@") for s in steps)
    assert "${{" not in runs, "expressions belong in env:, not inline in shell (injection)"


@pytest.mark.parametrize("which", sorted(WORKFLOWS))
def test_workflow_shell_blocks_parse(which: str) -> None:
    for step in _steps(_load(WORKFLOWS[which][0])):
        if "run" in step:
            done = subprocess.run(["bash", "-n"], input=step["run"], text=True,
                                  capture_output=True, check=False)
            assert done.returncode == 0, f"{step.get('name')}: {done.stderr}"


_HARNESS = """
const store = JSON.parse(process.env.EXISTING);
let next = Math.max(999, ...store.map((c) => c.id)) + 1;
const github = {
  paginate: async (fn, args) => fn(args),
  rest: { issues: {
    listComments: (args) => store.filter((c) => c.issue === args.issue_number),
    updateComment: async ({ comment_id, body }) => {
      store.find((c) => c.id === comment_id).body = body; },
    createComment: async ({ issue_number, body }) => {
      store.push({ id: next++, issue: issue_number, body, user: { type: 'Bot' } }); },
  } },
};
const context = { repo: { owner: 'o', repo: 'r' }, issue: { number: 7 } };
const require = (m) => m === 'fs' ? { readFileSync: () => process.env.REPORT } : null;
(async () => { %s
  console.log(JSON.stringify(store)); })();
"""


ACTION = REPO_ROOT / "action.yml"


def _action() -> dict[str, Any]:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _comment_script(which: str) -> str:
    steps = (_action()["runs"]["steps"] if which == "action"
             else _steps(_load(WORKFLOWS[which][0])))
    (step,) = [s for s in steps if s.get("uses", "").startswith("actions/github-script@")]
    return str(step["with"]["script"])


@pytest.mark.parametrize("which", ["reusable", "action"])  # the starter calls the Action
def test_sticky_comment_is_updated_not_duplicated(which: str) -> None:
    node = shutil.which("node")
    assert node, "node is needed to execute the github-script step"
    script = _HARNESS % _comment_script(which)
    human = {"id": 1, "issue": 7, "body": "<!-- promptops-diff -->\nquoted by a human",
             "user": {"type": "User"}}
    comments: list[dict[str, Any]] = [human]
    # Two packages of one repository review the same pull request: one comment each.
    for push in ("first", "second", "third"):
        for package in (".", "packages/support"):
            env = dict(os.environ, EXISTING=json.dumps(comments), PACKAGE=package,
                       REPORT=f"{push} report of {package}")
            done = subprocess.run([node, "-e", script], env=env, capture_output=True,
                                  text=True, timeout=60, check=True)
            comments = json.loads(done.stdout)
    bots = sorted(c["body"] for c in comments if c["user"]["type"] == "Bot")
    assert bots == ["<!-- promptops-diff -->\nthird report of .",
                    "<!-- promptops-diff packages/support -->\nthird report of packages/support"]
    assert human in comments


def test_action_metadata_validates_against_schemastore() -> None:
    schema = json.loads((REPO_ROOT / "tests/data/github-action.json").read_text("utf-8"))
    validator = Draft7Validator(schema)
    data = _action()
    assert list(validator.iter_errors(data)) == []
    assert data["runs"]["using"] == "composite"
    assert set(data["inputs"]) == {"package", "base-ref", "comment", "sarif", "python-version",
                                   "fail-on"}
    # The schema can fail: a misspelt key and a run step without its shell are errors.
    broken = json.loads(json.dumps(data))
    broken["inputs"]["package"]["defualt"] = "."
    broken["runs"]["steps"][1].pop("shell")
    assert len(list(validator.iter_errors(broken))) == 2


def test_action_installs_its_own_source_and_runs_every_job() -> None:
    steps = _action()["runs"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert '-m pip install --disable-pip-version-check -q "$GITHUB_ACTION_PATH"' in runs
    assert "--format sarif" in runs and "--format github" in runs
    assert "--junit-xml" in runs and "--format markdown" in runs
    uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
    assert set(uses) == {"actions/setup-python", "github/codeql-action/upload-sarif",
                         "actions/upload-artifact", "actions/github-script"}
    for step in uses.values():
        assert PINNED.match(step["uses"]), step["uses"]
    assert "inputs.sarif == 'true'" in next(s for s in steps if s.get("id") == "sarif")["if"]
    assert "inputs.comment == 'true'" in uses["actions/github-script"]["if"]
    assert "${{" not in runs, "expressions belong in env:, not inline in shell (injection)"


def test_action_shell_steps_pass_shellcheck(tmp_path: Path) -> None:
    shellcheck = _tool("shellcheck")
    for step in _action()["runs"]["steps"]:
        if "run" not in step:
            continue
        assert step["shell"] == "bash"
        script = tmp_path / "step.sh"
        script.write_text("#!/bin/bash\n" + step["run"], encoding="utf-8")
        done = subprocess.run([shellcheck, "-s", "bash", str(script)], capture_output=True,
                              text=True, check=False)
        assert done.returncode == 0, f"{step.get('name', step.get('id'))}: {done.stdout}"


def _hooks() -> list[dict[str, Any]]:
    from pre_commit.clientlib import load_manifest

    return load_manifest(str(REPO_ROOT / ".pre-commit-hooks.yaml"))  # type: ignore[no-any-return]


def test_pre_commit_manifest_is_valid_and_runs_lint_and_test() -> None:
    entries = {h["id"]: h["entry"] for h in _hooks()}
    assert entries["promptops-lint"] == "promptops lint"
    assert entries["promptops-test"] == "promptops test"


def test_pre_commit_hooks_run_on_a_real_repository(tmp_path: Path) -> None:
    """The published hooks, as `repo: local` + `language: system` so no network is needed
    (a `language: python` install would pip-install promptops' dependencies)."""
    exe = shutil.which("pre-commit", path=str(Path(os.sys.executable).parent))
    assert exe, "pre-commit is in the test extra"
    hooks = [dict(h, language="system") for h in _hooks()]
    for h in hooks:
        h.pop("description", None)
        h.pop("minimum_pre_commit_version", None)
    config = yaml.safe_dump({"repos": [{"repo": "local", "hooks": [
        {k: v for k, v in h.items() if k in ("id", "name", "entry", "language",
                                            "pass_filenames", "files")} for h in hooks]}]})
    package = {
        "promptops.yaml": "name: hooks\nversion: 1.0.0\n",
        "prompts/hi.prompt.yaml": "arguments:\n  - name: who\n    required: true\n"
                                  "messages:\n  - role: user\n    text: 'Hello {{ who }}.'\n",
        "tests/hi.test.yaml": "prompt: hi\ncases:\n  - name: greets\n    arguments: {who: Ada}\n"
                              "    expect: {contains: [Hello Ada.]}\n",
    }
    repo = fixed_repo(tmp_path / "pc", {**package, ".pre-commit-config.yaml": config})
    root = Path(repo.working_tree_dir or ".")
    env = cli_env(PRE_COMMIT_HOME=str(tmp_path / "cache"),
                  PATH=f"{Path(os.sys.executable).parent}{os.pathsep}{os.environ['PATH']}")

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, "run", "--all-files"], cwd=root, env=env,
                              capture_output=True, text=True, timeout=300, check=False)

    ok = run()
    assert ok.returncode == 0, ok.stdout + ok.stderr
    for hook in ("promptops lint", "promptops test", "promptops check"):
        assert re.search(rf"{hook}\.+Passed", ok.stdout), ok.stdout
    fixed_commit(repo, {"prompts/hi.prompt.yaml": "messages: [\n"}, "break", 1)
    bad = run()
    assert bad.returncode == 1
    assert re.search(r"promptops check\.+Failed", bad.stdout), bad.stdout
    assert "prompts/hi.prompt.yaml" in bad.stdout
