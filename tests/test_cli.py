"""The foundation commands through the real CLI: exact output and exit codes (issue 2).

In-process (``helpers.repo.run_cli``) except the entry-point test, which starts the
installed ``promptops`` script and ``python -m promptops`` for real.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
from pathlib import Path

import jsonschema
import pytest
from helpers.mcp_schema import validate
from helpers.repo import cli_env, make_repo, run_cli, run_cli_process

PKG = {
    "promptops.yaml": "name: demo\nversion: 0.1.0\n",
    "prompts/code_review.prompt.yaml": (
        "title: Request Code Review\n"
        "description: Review code\n"
        "arguments:\n"
        "  - name: code\n    required: true\n"
        "  - name: language\n    default: python\n    enum: [python, go]\n"
        "messages:\n"
        "  - role: assistant\n    text: I review {{ language }}.\n"
        "  - role: user\n    text: |\n      Please review:\n      {{ code }}\n"
    ),
}


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "demo", PKG)
    return Path(repo.working_tree_dir or "")


def test_render_text_transcript(pkg: Path) -> None:
    r = cli(pkg, "render", "code_review", "-a", "code=def f(): pass")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        "── assistant\nI review python.\n\n── user\nPlease review:\ndef f(): pass\n"
    )


def test_render_json_is_a_valid_get_prompt_result(pkg: Path) -> None:
    r = cli(
        pkg,
        "render",
        "code_review",
        "-a",
        "code={{ 7*7 }}",
        "-a",
        "language=go",
        "--format",
        "json",
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    validate(result, "GetPromptResult", "2025-11-25")
    assert result == {
        "description": "Review code",
        "messages": [
            {"role": "assistant", "content": {"type": "text", "text": "I review go."}},
            {"role": "user", "content": {"type": "text", "text": "Please review:\n{{ 7*7 }}\n"}},
        ],
    }
    broken = dict(result, messages=[{"role": "system", "content": {"type": "text", "text": ""}}])
    with pytest.raises(jsonschema.ValidationError):  # the judge itself can say no
        validate(broken, "GetPromptResult", "2025-11-25")


def test_render_ref_reads_the_commit_not_the_dirty_tree(pkg: Path) -> None:
    (pkg / "prompts/code_review.prompt.yaml").write_text(
        PKG["prompts/code_review.prompt.yaml"].replace("I review", "DIRTY")
    )
    dirty = cli(pkg, "render", "code_review", "-a", "code=x")
    assert "DIRTY python." in dirty.stdout
    committed = cli(pkg, "render", "code_review", "-a", "code=x", "--ref", "HEAD")
    assert committed.returncode == 0, committed.stderr
    assert "I review python." in committed.stdout and "DIRTY" not in committed.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown prompt 'nope'"),
        (["code_review"], "missing required argument 'code'"),
        (
            ["code_review", "-a", "code=x", "-a", "language=cobol"],
            "argument 'language' must be one of",
        ),
        (["code_review", "-a", "code=x", "-a", "extra=1"], "unknown argument 'extra'"),
    ],
)
def test_render_validation_errors_exit_1(pkg: Path, args: list[str], message: str) -> None:
    r = cli(pkg, "render", *args)
    assert r.returncode == 1
    assert message in r.stderr and "JSON-RPC" not in r.stderr
    assert "Traceback" not in r.stderr


def test_ls_text_and_json(pkg: Path) -> None:
    r = cli(pkg, "ls")
    assert r.returncode == 0
    assert r.stdout == "code_review code [language]  — Review code\n"
    rows = json.loads(cli(pkg, "ls", "--format", "json").stdout)
    assert [a["name"] for a in rows[0]["arguments"]] == ["code", "language"]
    assert rows[0]["title"] == "Request Code Review"


def test_check_finds_the_package_above_cwd(pkg: Path) -> None:
    r = cli(pkg / "prompts", "check")
    assert r.returncode == 0, r.stderr
    assert "demo 0.1.0: 1 prompt" in r.stderr


def test_usage_and_config_errors_exit_2(tmp_path: Path, pkg: Path) -> None:
    assert cli(tmp_path, "check").returncode == 2  # no package anywhere above
    assert cli(pkg, "no-such-command").returncode == 2
    assert cli(pkg, "render", "code_review", "-a", "novalue").returncode == 2
    bad_ref = cli(pkg, "render", "code_review", "-a", "code=x", "--ref", "no-such-branch")
    assert bad_ref.returncode == 2 and "unknown revision" in bad_ref.stderr


def test_minus_c_changes_folder(pkg: Path, tmp_path: Path) -> None:
    r = cli(tmp_path, "-C", str(pkg), "ls")
    assert r.returncode == 0 and r.stdout.startswith("code_review")


def test_version_flag() -> None:
    from promptops import __version__

    r = cli(Path.cwd(), "--version")
    assert r.returncode == 0 and r.stdout == f"promptops {__version__}\n"


def test_the_installed_entry_points_start(pkg: Path) -> None:
    """``python -m promptops`` and the ``promptops`` script of the install, as processes."""
    from promptops import __version__

    module = run_cli_process("--version", cwd=pkg)
    assert (module.returncode, module.stdout) == (0, f"promptops {__version__}\n")
    script = shutil.which("promptops", path=sysconfig.get_path("scripts"))
    assert script, "the install provides a promptops command"
    done = subprocess.run([script, "ls"], cwd=pkg, capture_output=True, text=True,
                          timeout=120, check=False, env=cli_env())
    assert done.returncode == 0 and done.stdout.startswith("code_review"), done.stderr


@pytest.mark.parametrize("kind", ["manifest", "prompt", "bundle"])
def test_schema_is_valid_json_schema(kind: str) -> None:
    r = cli(Path.cwd(), "schema", kind)
    assert r.returncode == 0
    schema = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False


def test_manifest_schema_accepts_and_rejects() -> None:
    schema = json.loads(cli(Path.cwd(), "schema", "manifest").stdout)
    v = jsonschema.Draft202012Validator(schema)
    assert v.is_valid({"name": "acme-prompts", "version": "1.4.0-rc.1+b5"})
    assert not v.is_valid({"name": "Acme", "version": "1.4.0"})
    assert not v.is_valid({"name": "acme", "version": "1.4"})
    assert not v.is_valid({"name": "acme", "version": "1.4.0", "colour": "red"})
