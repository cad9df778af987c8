"""`promptops lint` and `promptops rules` through the real CLI: configuration, output
formats, suppression, the cache, --ref, and the commands that gate on lint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.repo import REPO_ROOT, commit_files, make_repo, write_files
from lint_helpers import lint_json, promptops

from promptops.lint.registry import RULES

CLEAN = {
    "promptops.yaml": "name: demo\nversion: 1.0.0\n",
    "prompts/greet.prompt.yaml": (
        "description: Greets someone\narguments:\n  - name: who\n    description: Who\n"
        "    required: true\nmessages:\n  - role: user\n    text: Say hello.\n"
        "  - role: user\n    text: \"Greet {{ who }}.\"\n"
    ),
}
UNDECLARED = CLEAN["prompts/greet.prompt.yaml"].replace("{{ who }}", "{{ who }} {{ whom }}")


def test_starter_package_lints_without_errors(tmp_path: Path) -> None:
    pkg = Path(shutil.copytree(REPO_ROOT / "templates", tmp_path / "starter"))
    code, doc = lint_json(pkg)
    assert code == 0, doc
    assert doc["summary"]["errors"] == 0
    assert {f["code"] for f in doc["findings"]} <= {"PO509"}


def test_clean_package_exits_0_and_says_so(tmp_path: Path) -> None:
    write_files(tmp_path, CLEAN)
    proc = promptops("lint", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("no problems found")


def test_text_format_and_summary(tmp_path: Path) -> None:
    write_files(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": UNDECLARED,
                           "resources/notes.md": "note  \n"})
    proc = promptops("lint", str(tmp_path))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert f"{tmp_path}/prompts/greet.prompt.yaml:10:31: PO201 [error] variable 'whom' is not " \
        "a declared argument" in lines[0] or "greet.prompt.yaml:10:31: PO201 [error]" in lines[0]
    assert lines[-1] == "1 error, 1 warning (1 fixable with `promptops lint --fix`)"


def test_colour_shows_excerpt_and_caret(tmp_path: Path) -> None:
    write_files(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": UNDECLARED})
    proc = promptops("--color", "always", "lint", str(tmp_path))
    lines = proc.stdout.splitlines()
    assert '    text: "Greet {{ who }} {{ whom }}."' in lines[1]
    assert lines[2].index("^") > 0


def test_strict_fails_on_warnings(tmp_path: Path) -> None:
    write_files(tmp_path, {**CLEAN, "partials/old.j2": "unused\n"})
    assert promptops("lint", str(tmp_path)).returncode == 0
    assert promptops("lint", str(tmp_path), "--strict").returncode == 1


def test_github_annotations(tmp_path: Path) -> None:
    repo_root = tmp_path / "repo"
    write_files(repo_root / "pkg", {**CLEAN, "prompts/greet.prompt.yaml": UNDECLARED})
    make_repo(repo_root, {"README": "x\n"})
    proc = promptops("lint", str(repo_root / "pkg"), "--format", "github")
    assert proc.stdout.splitlines()[0] == (
        "::error file=pkg/prompts/greet.prompt.yaml,line=10,col=31,"
        "title=PO201 undeclared-variable::variable 'whom' is not a declared argument; "
        "did you mean 'who'?"
    )


def test_select_and_ignore_from_cli_and_manifest(tmp_path: Path) -> None:
    write_files(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": UNDECLARED,
                           "resources/notes.md": "note  \n"})
    codes = lambda *a: {f["code"] for f in lint_json(tmp_path, *a)[1]["findings"]}  # noqa: E731
    assert codes() == {"PO201", "PO504"}
    assert codes("--select", "PO2") == {"PO201"}
    assert codes("--ignore", "undeclared-variable") == {"PO504"}
    write_files(tmp_path, {"promptops.yaml": "name: demo\nversion: 1.0.0\nlint:\n"
                           "  ignore: [trailing-whitespace]\n"})
    assert codes() == {"PO201"}
    assert codes("--select", "PO504,PO201") == {"PO201"}


def test_unknown_codes_are_configuration_errors(tmp_path: Path) -> None:
    write_files(tmp_path, CLEAN)
    proc = promptops("lint", str(tmp_path), "--select", "PO999")
    assert proc.returncode == 2 and "PO999" in proc.stderr
    write_files(tmp_path, {"promptops.yaml": "name: demo\nversion: 1.0.0\nlint:\n"
                           "  ignore: [no-such-rule]\n"})
    proc = promptops("lint", str(tmp_path))
    assert proc.returncode == 2 and "no-such-rule" in proc.stderr
    write_files(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": "# promptops: disable=PO777\n"
                           + CLEAN["prompts/greet.prompt.yaml"]})
    proc = promptops("lint", str(tmp_path))
    assert proc.returncode == 2 and "greet.prompt.yaml:1" in proc.stderr


def test_disable_comment_on_the_line_or_the_line_above(tmp_path: Path) -> None:
    two = UNDECLARED.replace("{{ whom }}.", "{{ whom }} {{ x }}.")
    write_files(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": two})
    assert len(lint_json(tmp_path)[1]["findings"]) == 2
    above = two.replace("  - role: user\n    text: \"Greet",
                        "  - role: user\n    # promptops: disable=PO201\n    text: \"Greet")
    write_files(tmp_path, {"prompts/greet.prompt.yaml": above})
    assert lint_json(tmp_path) == (0, lint_json(tmp_path)[1])
    assert lint_json(tmp_path)[1]["findings"] == []
    inline = two.replace('{{ x }}."', '{{ x }}."  # promptops: disable=undeclared-variable')
    write_files(tmp_path, {"prompts/greet.prompt.yaml": inline})
    assert lint_json(tmp_path)[1]["findings"] == []
    other = two.replace('{{ x }}."', '{{ x }}."  # promptops: disable=PO504')
    write_files(tmp_path, {"prompts/greet.prompt.yaml": other})
    assert len(lint_json(tmp_path)[1]["findings"]) == 2


def test_one_broken_file_does_not_hide_findings_in_others(tmp_path: Path) -> None:
    write_files(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": UNDECLARED,
                           "prompts/broken.prompt.yaml": "messages: [\n"})
    found = {(f["path"], f["code"]) for f in lint_json(tmp_path)[1]["findings"]}
    assert found == {("prompts/broken.prompt.yaml", "PO101"),
                     ("prompts/greet.prompt.yaml", "PO201")}


def test_ref_lints_the_commit_not_the_working_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": UNDECLARED})
    first = repo.head.commit.hexsha
    commit_files(repo, CLEAN, "fix the variable")
    write_files(tmp_path, {"prompts/greet.prompt.yaml": UNDECLARED})  # dirty again
    assert lint_json(tmp_path, "--ref", "HEAD")[1]["findings"] == []
    assert [f["code"] for f in lint_json(tmp_path, "--ref", first)[1]["findings"]] == ["PO201"]
    assert [f["code"] for f in lint_json(tmp_path)[1]["findings"]] == ["PO201"]
    proc = promptops("lint", str(tmp_path), "--ref", "HEAD", "--fix")
    assert proc.returncode == 2


def test_results_are_cached_by_content(tmp_path: Path) -> None:
    make_repo(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": UNDECLARED,
                         "partials/p.j2": "x\n"})
    assert [f["code"] for f in lint_json(tmp_path)[1]["findings"]] == ["PO305", "PO201"]
    entries = [p for p in (tmp_path / ".git" / "promptops" / "lint").glob("*.json")
               if not p.name.startswith(("stat-", "last-"))]
    assert len(entries) == 1
    # Prove the second run reads the cache: plant a finding only the cache knows.
    data = json.loads(entries[0].read_text())
    data["findings"][0]["message"] = "from the cache"
    entries[0].write_text(json.dumps(data))
    assert lint_json(tmp_path)[1]["findings"][0]["message"] == "from the cache"
    assert lint_json(tmp_path, "--no-cache")[1]["findings"][0]["message"] != "from the cache"
    # Any content change (here: a partial) is a different key, even one that keeps the
    # size and lands within the same second (the stat index must not trust it).
    write_files(tmp_path, {"partials/p.j2": "y\n"})
    assert lint_json(tmp_path)[1]["findings"][0]["message"] != "from the cache"
    write_files(tmp_path, {"prompts/greet.prompt.yaml": CLEAN["prompts/greet.prompt.yaml"]})
    assert [f["code"] for f in lint_json(tmp_path)[1]["findings"]] == ["PO305"]


def test_versioning_rules_with_base(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, CLEAN)
    repo.create_tag("v1")
    write_files(tmp_path, {"prompts/greet.prompt.yaml": CLEAN["prompts/greet.prompt.yaml"]
                           .replace("Say hello.", "Say hi.")})
    assert lint_json(tmp_path)[1]["findings"] == []
    code, doc = lint_json(tmp_path, "--base", "v1")
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["PO601"]
    write_files(tmp_path, {"promptops.yaml": "name: demo\nversion: 1.0.1\n"})
    assert lint_json(tmp_path, "--base", "v1") == (0, lint_json(tmp_path, "--base", "v1")[1])


def test_rules_command(tmp_path: Path) -> None:
    listing = promptops("rules")
    assert listing.returncode == 0
    assert len(listing.stdout.splitlines()) == len(RULES)
    by_code = promptops("rules", "PO201")
    by_name = promptops("rules", "undeclared-variable")
    assert by_code.stdout == by_name.stdout and "Passes" in by_code.stdout
    assert promptops("rules", "PO999").returncode == 2


def test_build_refuses_lint_errors_unless_no_lint(tmp_path: Path) -> None:
    make_repo(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": UNDECLARED})
    out = tmp_path / "dist"
    proc = promptops("build", str(tmp_path), "-o", str(out))
    assert proc.returncode == 1 and "PO201" in proc.stderr
    assert not out.exists()
    proc = promptops("build", str(tmp_path), "-o", str(out), "--no-lint")
    assert proc.returncode == 0, proc.stderr
    assert list(out.glob("*.bundle.json"))


def test_release_gate_refuses_lint_errors(tmp_path: Path) -> None:
    from promptops.commands.release import GATES
    from promptops.pipeline.build import Build

    make_repo(tmp_path, {**CLEAN, "prompts/greet.prompt.yaml": UNDECLARED})
    refusals = [gate(Build(tmp_path, "HEAD")) for gate in GATES if gate.__name__ == "_lint_gate"]
    assert refusals and refusals[0] is not None and "PO201" in refusals[0]
