"""`promptops init`: the starter package it writes, the repository it makes, what it refuses.

And init inside repositories people already have: real git repositories with their own
``.gitignore``, ``.pre-commit-config.yaml`` and workflows, which init joins, never
overwrites, and leaves exactly as they are on a second run. The CLI runs in-process
(``helpers.repo.run_cli``); git, pre-commit and bash run for real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import git
import pytest
from helpers.repo import commit_files, make_repo, run_cli, write_files
from helpers.starter import mcp_validator
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from promptops import __version__, scaffold
from promptops.about import github_repository
from promptops.commands import init
from promptops.console import Console
from promptops.errors import UsageError
from promptops.pipeline.build import Build
from promptops.pipeline.model import CONTENT_KEYS
from promptops.render.renderer import Renderer
from promptops.testing.model import RENDER_CHECKS
from promptops.testing.runner import SnapshotPolicy, run_cases
from promptops.testing.snapshots import obsolete, snapshot_files, stored
from promptops.testing.suite import all_cases

_yaml = YAML(typ="safe")
Demo = tuple[Path, subprocess.CompletedProcess[str]]
NO_IDENTITY = {"GIT_CONFIG_NOSYSTEM": "1"}


def promptops(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, **env)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` except git's own, by POSIX path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """`promptops init demo` run for real, with no git identity configured anywhere."""
    home = tmp_path_factory.mktemp("home")
    work = tmp_path_factory.mktemp("work")
    proc = promptops("init", "demo", cwd=work, HOME=str(home), GIT_CONFIG_NOSYSTEM="1",
                     XDG_CONFIG_HOME=str(home / ".config"))
    return work / "demo", proc


def test_init_fresh_dir_creates_repo_and_first_commit(
    demo: Demo,
) -> None:
    root, proc = demo
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    created = len(scaffold.package_files(root)) - 1  # the .gitignore is listed on its own
    assert f"Created a prompt package in demo ({created} files, 5 prompts)." in proc.stdout
    assert "  demo/.gitignore: created\n" in proc.stdout
    assert "  demo/.github/workflows/promptops.yml: created\n" in proc.stdout
    assert "Initialised a git repository and made the first commit." in proc.stdout
    assert proc.stdout.endswith(
        "\nNext:\n  cd demo\n  promptops ls\n"
        '  promptops render code_review -a code="def f(): pass"\n  promptops check\n')
    repo = git.Repo(root)
    assert Path(repo.working_tree_dir or "") == root
    commits = list(repo.iter_commits())
    assert len(commits) == 1
    assert commits[0].message.strip() == "Scaffold prompt package with promptops init"
    # No identity was configured, so init's fallback identity signed the commit.
    assert commits[0].author.name == "promptops init"
    assert commits[0].committer.email == "promptops-init@localhost"
    committed = sorted(b.path for b in commits[0].tree.traverse() if b.type == "blob")
    assert committed == sorted([*scaffold.package_files(root), scaffold.PRECOMMIT,
                                scaffold.WORKFLOW])
    assert not repo.is_dirty(untracked_files=True)
    for rel in ("promptops.yaml", ".gitignore", ".pre-commit-config.yaml",
                ".github/workflows/promptops.yml", ".promptops/schema/prompt.json",
                "resources/architecture.png", "tests/code_review.test.yaml"):
        assert (root / rel).is_file(), rel


def test_a_second_init_changes_nothing_and_says_so(demo: Demo) -> None:
    root, _ = demo
    before = tree(root)
    head = git.Repo(root).head.commit.hexsha
    again = promptops("init", ".", cwd=root)
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        "Nothing to do: . already holds a prompt package, and its .gitignore, pre-commit "
        "hooks and workflow are in place.\n")
    assert tree(root) == before
    assert git.Repo(root).head.commit.hexsha == head


def test_the_scaffold_pins_the_promptops_that_wrote_it(demo: Demo) -> None:
    root, _ = demo
    workflow = (root / scaffold.WORKFLOW).read_text(encoding="utf-8")
    # the Action, which installs promptops from its own source: no registry involved
    assert f"uses: {github_repository()}@v{__version__}" in workflow
    assert "pip install" not in workflow and "promptops-mcp==" not in workflow
    hooks = (root / scaffold.PRECOMMIT).read_text(encoding="utf-8")
    assert (f'pip install "promptops-mcp @ git+https://github.com/{github_repository()}'
            f'@v{__version__}"') in hooks
    assert "promptops-mcp==" not in hooks


def test_init_names_package_after_folder(demo: Demo) -> None:
    root, _ = demo
    pkg = Build(root).package
    assert pkg.manifest.name == "demo"
    assert [p.name for p in pkg.prompts] == [
        "code_review", "commit_message", "describe_diagram", "explain_error", "summarize_diff",
    ]
    # --ref reads the first commit and gives the same package
    assert Build(root, "HEAD").package.manifest == pkg.manifest


def test_package_name_from_folder() -> None:
    assert scaffold.package_name(Path("My Prompts!")) == "my-prompts"
    assert scaffold.package_name(Path("acme.prompts")) == "acme.prompts"
    assert scaffold.package_name(Path("___")) == "starter-prompts"


def test_check_and_render_on_the_starter(demo: Demo) -> None:
    root, _ = demo
    for cwd, args in ((root.parent, ("check", "demo")), (root, ("check",))):
        check = promptops(*args, cwd=cwd)
        assert check.returncode == 0, check.stderr
        assert "demo 0.1.0: 5 prompts" in check.stderr
    text = promptops("render", "code_review", "-a", "code=def f(): pass", cwd=root)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("── assistant\nI am a senior code reviewer.")
    assert "── user\nPlease review the following python code." in text.stdout
    assert "```python\ndef f(): pass\n```" in text.stdout
    js = promptops("render", "code_review", "-a", "code=def f(): pass", "--format", "json",
                   cwd=root)
    assert js.returncode == 0, js.stderr
    result = json.loads(js.stdout)
    mcp_validator("GetPromptResult").validate(result)
    assert [m["role"] for m in result["messages"]] == ["assistant", "user"]


def test_starter_renders_valid_mcp_for_every_prompt() -> None:
    renderer = Renderer(Build(scaffold.starter_dir()).bundle)
    validator = mcp_validator("GetPromptResult")
    kinds = set()
    for name, prompt in renderer.prompts.items():
        args = {a["name"]: (a.get("examples") or ["x"])[0]
                for a in prompt["arguments"] if a.get("required")}
        result = renderer.get(name, args)
        validator.validate(result)
        kinds |= {m["content"]["type"] for m in result["messages"]}
    assert kinds == {"text", "image", "audio", "resource", "resource_link"}


def test_starter_shows_every_feature_of_the_format() -> None:
    pkg = Build(scaffold.starter_dir()).package
    specs = [p.spec for p in pkg.prompts]
    messages = [m for s in specs for m in s.messages]
    assert {m.kind for m in messages} == set(CONTENT_KEYS)
    assert any(m.resource and m.resource.text for m in messages)
    assert any(m.resource and m.resource.file for m in messages)
    assert any(m.image and m.image.mimeType is None for m in messages)  # inferred
    assert {k for m in messages if m.annotations
            for k, v in m.annotations.model_dump().items() if v is not None} == {
        "audience", "priority", "lastModified"}
    assert any(s.title and s.description and s.icons for s in specs)
    assert any(p.spec.name for p in pkg.prompts)  # an explicit name
    args = [a for s in specs for a in s.arguments]
    set_fields = {k for a in args for k in a.model_fields_set}
    assert set_fields >= {"name", "title", "description", "required", "default", "enum",
                          "examples", "pattern", "maxLength"}
    assert "partials/reviewer_persona.j2" in pkg.templates
    assert "partials/house_style.j2" in pkg.templates  # included from a template file
    assert pkg.manifest.instructions


def test_starter_tests_cover_every_assertion_kind_and_pass() -> None:
    from promptops.pipeline.bundle import compile_bundle
    from promptops.pipeline.source import WorktreeSource
    from promptops.pipeline.validate import load_package

    source = WorktreeSource(scaffold.starter_dir())
    pkg = load_package(source)
    bundle = compile_bundle(pkg)
    cases = all_cases(pkg, source, bundle)
    existing = snapshot_files(pkg.files)
    # Read-only: the starter's snapshot must already be there, nothing is written.
    policy = SnapshotPolicy(stored=stored(source, existing, cases), writable=False)
    outcomes = run_cases(bundle, cases, policy)
    failures = {c.id: [f.message for f in o.failures]
                for c, o in zip(cases, outcomes, strict=True) if o.status != "passed"}
    assert failures == {}
    seen = {k for c in cases for e in c.expectations for k in e.model_fields_set}
    assert seen >= {*RENDER_CHECKS, "error", "message"}
    assert obsolete(existing, cases) == []
    assert {c.prompt for c in cases if not c.smoke} == {p["name"] for p in bundle["prompts"]}
    assert sum(c.smoke for c in cases) == len(bundle["prompts"])


def test_every_yaml_file_points_at_a_schema_it_validates_against(
    demo: Demo,
) -> None:
    root, _ = demo
    yamls = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml")
                   and ".git" not in p.parts)
    assert len(yamls) >= 12
    for path in yamls:
        first = path.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), path
        target = first.split("=", 1)[1]
        if target.startswith("https://"):
            continue
        schema_path = (path.parent / target).resolve()
        schema = json.loads(schema_path.read_text())
        Draft202012Validator(schema).validate(_yaml.load(path.read_text()))


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "pk"
    (target / "prompts").mkdir(parents=True)
    mine = target / "prompts" / "code_review.prompt.yaml"
    mine.write_text("my own prompt\n")
    with pytest.raises(UsageError) as err:
        init.run(directory=target, commit=False, console=Console())
    assert str(err.value).startswith(
        f"{target / 'prompts' / 'code_review.prompt.yaml'} already exists; init never overwrites")
    assert err.value.exit_code == 2
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == [
        "prompts", "prompts/code_review.prompt.yaml"]
    assert mine.read_text() == "my own prompt\n"


def test_init_refusal_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "summarize_diff.prompt.yaml").write_text("mine\n")
    proc = promptops("init", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: prompts/summarize_diff.prompt.yaml already exists; init never overwrites "
        "files: move them away or choose another folder\n"
    )
    assert not (tmp_path / ".git").exists()
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")] == [
        "prompts", "prompts/summarize_diff.prompt.yaml"]


# --- init inside repositories that already exist ------------------------------------------

THEIR_GITIGNORE = "# build output\nnode_modules/\ndist/\n*.log"  # no final newline
THEIR_HOOKS = """\
# yaml-language-server: $schema=https://json.schemastore.org/pre-commit-config.json
# Our hooks. Keep the black pin in step with requirements-dev.txt.
default_stages: [pre-commit]
repos:
  # formatting
  - repo: https://github.com/psf/black
    rev: 24.1.0   # pinned on purpose
    hooks:
      - id: black
        args: ["--line-length=100"]
ci:
  autofix_prs: false  # trailing comment
"""


THEIR_LOCAL_HOOKS = """\
repos:
  # house rules (no network needed)
  - repo: local
    hooks:
      - id: no-todo
        name: no TODO
        entry: TODO
        language: pygrep
        files: \\.py$
"""


def _app_repo(root: Path, **extra: str) -> git.Repo:
    return make_repo(root, {"README.md": "# app\n", "src/app.py": "print('hi')\n",
                            ".gitignore": THEIR_GITIGNORE, ".pre-commit-config.yaml": THEIR_HOOKS,
                            **extra})


def _only_added(old: str, new: str) -> bool:
    return scaffold._only_added(old.splitlines(), new.splitlines())


def test_init_at_the_root_of_an_existing_repository_joins_its_files(tmp_path: Path) -> None:
    repo = _app_repo(tmp_path / "app")
    root = tmp_path / "app"
    head = repo.head.commit.hexsha
    proc = promptops("init", ".", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "  .gitignore: appended 5 lines\n" in proc.stdout  # dist/ was there already
    assert "  .pre-commit-config.yaml: added the promptops hooks\n" in proc.stdout
    assert "  .github/workflows/promptops.yml: created\n" in proc.stdout
    ignore = (root / ".gitignore").read_text()
    assert ignore.startswith(THEIR_GITIGNORE + "\n")
    for line in ("promptops.sarif", "promptops-junit.xml", "promptops-diff.md",
                 "__pycache__/", ".venv/"):
        assert ignore.splitlines().count(line) == 1, line
    assert ignore.splitlines().count("dist/") == 1
    hooks = (root / ".pre-commit-config.yaml").read_text()
    assert _only_added(THEIR_HOOKS, hooks)  # every line, comment and pin kept, in order
    from pre_commit.clientlib import load_config

    config = load_config(str(root / ".pre-commit-config.yaml"))
    assert [r["repo"] for r in config["repos"]] == ["https://github.com/psf/black", "local"]
    assert [h["id"] for h in config["repos"][1]["hooks"]] == ["promptops-lint", "promptops-test"]
    # Inside a repository nothing is committed unless asked, and the Next: lines say so.
    assert repo.head.commit.hexsha == head
    assert "Nothing is committed yet: build, serve and diff read commits" in proc.stdout
    assert "(or let init commit them: promptops init . --commit)" in proc.stdout
    # A second run is a no-op that says so.
    before = tree(root)
    again = promptops("init", ".", cwd=root)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("Nothing to do: . already holds a prompt package")
    assert tree(root) == before


def test_the_printed_commit_command_works_and_then_build_reads_the_commit(
    tmp_path: Path,
) -> None:
    repo = _app_repo(tmp_path / "app")
    root = tmp_path / "app"
    write_files(root, {"src/wip.py": "# unrelated work in progress\n"})
    proc = promptops("init", "prompts/support", cwd=root)
    assert proc.returncode == 0, proc.stderr
    build = promptops("build", "prompts/support", cwd=root)
    assert build.returncode == 2
    assert "prompts/support does not exist at HEAD" in build.stderr
    assert "it is not committed yet; commit it (git add -- prompts/support && git commit" in (
        build.stderr)
    (hint,) = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip().startswith("git add")]
    assert hint == ("git add -- prompts/support .pre-commit-config.yaml "
                    ".github/workflows/promptops.yml && git commit -m 'Add prompt package "
                    "support'")
    done = subprocess.run(["bash", "-c", hint], cwd=root, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert repo.head.commit.message.strip() == "Add prompt package support"
    assert "src/wip.py" in repo.untracked_files  # the user's own work is not swept in
    assert promptops("build", "prompts/support", cwd=root).returncode == 0


def test_commit_flag_commits_exactly_what_init_owns(tmp_path: Path) -> None:
    repo = _app_repo(tmp_path / "app")
    root = tmp_path / "app"
    write_files(root, {"src/app.py": "print('staged, not ours')\n"})
    repo.git.add("src/app.py")
    proc = promptops("init", "prompts", "--commit", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert 'Committed the package and its CI files: "Add prompt package prompts with ' in (
        proc.stdout)
    assert "Nothing is committed yet" not in proc.stdout
    changed = sorted(repo.head.commit.stats.files)
    assert changed == sorted([f"prompts/{rel}" for rel in scaffold.package_files(root / "prompts")]
                             + [".pre-commit-config.yaml", ".github/workflows/promptops.yml"])
    assert [d.a_path for d in repo.index.diff("HEAD")] == ["src/app.py"]  # still staged
    assert promptops("build", "prompts", cwd=root).returncode == 0
    # Asking again commits nothing (there is nothing left) and says nothing is to be done.
    again = promptops("init", "prompts", "--commit", cwd=root)
    assert again.returncode == 0 and again.stdout.startswith("Nothing to do:"), again.stdout


def test_commit_after_a_plain_init_commits_the_files_it_wrote_before(tmp_path: Path) -> None:
    repo = _app_repo(tmp_path / "app")
    root = tmp_path / "app"
    assert promptops("init", "prompts", cwd=root).returncode == 0
    proc = promptops("init", "prompts", "--commit", cwd=root)  # what the Next: line offers
    assert proc.returncode == 0, proc.stderr
    assert "Committed the package and its CI files" in proc.stdout
    assert not repo.is_dirty(untracked_files=True)


def test_a_subfolder_package_gets_the_workflow_and_hooks_at_the_repository_root(
    tmp_path: Path,
) -> None:
    """GitHub reads workflows, and pre-commit its config, only at the repository root."""
    repo = _app_repo(tmp_path / "mono", **{".pre-commit-config.yaml": THEIR_LOCAL_HOOKS})
    root = tmp_path / "mono"
    proc = promptops("init", "packages/prompts", "--commit", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "  .github/workflows/promptops.yml: created (PACKAGE: packages/prompts)\n" in (
        proc.stdout)
    assert not (root / "packages/prompts/.github").exists()
    assert not (root / "packages/prompts/.pre-commit-config.yaml").exists()
    workflow = yaml_safe(root / ".github/workflows/promptops.yml")
    assert workflow["env"] == {"PACKAGE": "packages/prompts"}
    assert workflow["name"] == "promptops packages/prompts"
    # The root .gitignore is theirs; the package's own .gitignore scopes dist/ to it.
    assert (root / ".gitignore").read_text() == THEIR_GITIGNORE
    assert "dist/" in (root / "packages/prompts/.gitignore").read_text().splitlines()
    # The hooks run from the root on the subfolder package, through the real pre-commit.
    hooks = pre_commit_run(root, tmp_path)
    assert hooks.returncode == 0, hooks.stdout
    ran = [ln for ln in hooks.stdout.splitlines() if ln.endswith(("Passed", "Failed"))]
    assert [ln.split(".")[0] for ln in ran] == ["no TODO", "promptops lint", "promptops test"]
    assert all(ln.endswith("Passed") for ln in ran), hooks.stdout
    # ... and they do look at the package: a broken prompt fails the lint hook.
    write_files(root, {"packages/prompts/prompts/code_review.prompt.yaml": "messages: [\n"})
    broken = pre_commit_run(root, tmp_path)
    assert broken.returncode == 1 and "packages/prompts/prompts/code_review.prompt.yaml" in (
        broken.stdout), broken.stdout
    assert repo.head.commit.message.startswith("Add prompt package prompts")


def yaml_safe(path: Path) -> dict[str, object]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))
    return data  # type: ignore[no-any-return]


def pre_commit_run(root: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``pre-commit run --all-files`` with promptops on PATH and a cache of its own."""
    import shutil

    from helpers.repo import cli_env

    exe = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
    assert exe, "pre-commit is in the test extra"
    env = cli_env(PRE_COMMIT_HOME=str(tmp_path / "pc-cache"),
                  PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run([exe, "run", "--all-files"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_hooks_that_already_run_promptops_are_left_alone_with_a_snippet(tmp_path: Path) -> None:
    theirs = THEIR_HOOKS.replace("repos:\n", "repos:\n  - repo: https://github.com/x/promptops\n"
                                 "    rev: v0.0.9\n    hooks:\n      - id: promptops-lint\n")
    _app_repo(tmp_path / "app", **{".pre-commit-config.yaml": theirs})
    root = tmp_path / "app"
    proc = promptops("init", ".", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (root / ".pre-commit-config.yaml").read_text() == theirs
    assert "  .pre-commit-config.yaml: already has promptops hooks of its own: left unchanged" in (
        proc.stdout)
    snippet = proc.stdout.split("# .pre-commit-config.yaml\n", 1)[1].split("\n\n", 1)[0]
    assert _yaml.load(snippet)["repos"][0]["hooks"][0]["entry"] == "promptops lint"


def test_an_existing_workflow_is_never_overwritten(tmp_path: Path) -> None:
    mine = "name: promptops\non: push\njobs: {}\n"
    _app_repo(tmp_path / "app", **{".github/workflows/promptops.yml": mine})
    root = tmp_path / "app"
    first = promptops("init", "a", cwd=root)
    assert first.returncode == 0, first.stderr
    assert (root / ".github/workflows/promptops.yml").read_text() == mine
    assert ("  .github/workflows/promptops-review.yml: created (PACKAGE: a) "
            "(.github/workflows/promptops.yml exists)\n") in first.stdout
    review = (root / ".github/workflows/promptops-review.yml").read_text()
    assert review == scaffold.workflow_text("a")
    # A third package finds both names taken: the workflow is printed, nothing is written.
    second = promptops("init", "b", cwd=root)
    assert second.returncode == 0, second.stderr
    assert (root / ".github/workflows/promptops.yml").read_text() == mine
    assert (root / ".github/workflows/promptops-review.yml").read_text() == review
    assert "exist with other content: left unchanged" in second.stdout
    assert scaffold.workflow_text("b") in second.stdout


def test_a_commit_refused_by_a_hook_is_a_clear_error(tmp_path: Path) -> None:
    repo = _app_repo(tmp_path / "app")
    root = tmp_path / "app"
    hook = root / ".git" / "hooks" / "commit-msg"
    hook.write_text("#!/bin/sh\necho 'commit messages must start with feat:' >&2\nexit 1\n")
    hook.chmod(0o755)
    proc = promptops("init", "prompts", "--commit", cwd=root)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: the files are written but git refused the commit:\n")
    assert "commit messages must start with feat:" in proc.stderr
    assert "fix that, then: git add -- prompts .pre-commit-config.yaml" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (root / "prompts/promptops.yaml").is_file()
    assert len(list(repo.iter_commits())) == 1


@pytest.mark.skipif(sys.platform == "win32",
                    reason="creating symlinks needs administrator rights on Windows")
def test_init_never_writes_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    _app_repo(tmp_path / "app")
    root = tmp_path / "app"
    (root / ".github").symlink_to(outside, target_is_directory=True)
    proc = promptops("init", "prompts", cwd=root)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {root / '.github'} is a symlink; init writes only real " \
        "files and folders\n"
    assert list(outside.iterdir()) == []


def test_init_inside_existing_repo_makes_no_new_repo(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "mono", {"README.md": "# mono\n"})
    head = repo.head.commit.hexsha
    assert init.run(directory=tmp_path / "mono" / "packages" / "prompts", commit=False,
                    console=Console()) == 0
    target = tmp_path / "mono" / "packages" / "prompts"
    assert not (target / ".git").exists()
    assert repo.head.commit.hexsha == head
    assert "packages/prompts/promptops.yaml" in repo.untracked_files
    assert Build(target).package.manifest.name == "prompts"


# --- the merges, one file style at a time ---------------------------------------------------

@pytest.mark.parametrize("text", [
    "repos:\n- repo: https://github.com/psf/black\n  rev: 24.1.0\n  hooks:\n  - id: black\n",
    "repos:\n-   repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks:\n"
    "    -   id: black\n",
    "# top\nrepos:\n    - repo: local\n      hooks:\n          - id: mine\n            name: m\n"
    "            entry: 'true'\n            language: system\n",
])
def test_merge_keeps_every_line_in_any_indentation(text: str) -> None:
    merged = scaffold.merge_precommit(text, ".")
    assert merged.text is not None and merged.status == "added the promptops hooks"
    assert _only_added(text, merged.text)
    again = scaffold.merge_precommit(merged.text, ".")
    assert (again.text, again.status) == (None, "already runs the promptops hooks")


@pytest.mark.parametrize(("text", "status"), [
    ("repos: [\n", "is not valid YAML"),
    ("ci:\n  autofix_prs: false\n", "has no `repos:` list"),
])
def test_merge_leaves_what_it_cannot_read_and_prints_the_entry(text: str, status: str) -> None:
    merged = scaffold.merge_precommit(text, "pk")
    assert merged.text is None and merged.status.startswith(status)
    assert _yaml.load(merged.snippet)["repos"][0]["hooks"][0]["args"] == ["pk"]


def test_gitignore_merge_appends_once() -> None:
    ours = (scaffold.starter_dir() / ".gitignore").read_text()
    merged = scaffold.merge_gitignore("dist/\n.venv/", ours)
    assert merged.text is not None and merged.text.startswith("dist/\n.venv/\n\n# promptops:")
    assert merged.status == "appended 4 lines"
    assert scaffold.merge_gitignore(merged.text, ours).text is None
    assert scaffold.merge_gitignore("", ours).text == (
        "# promptops: built bundles and CI reports\n" + "".join(
            f"{ln}\n" for ln in ours.splitlines() if ln and not ln.startswith("#")))


def test_commit_flag_commits_on_top_of_the_existing_history(tmp_path: Path) -> None:
    """init --commit in a repository with history: the new commit's parent is the old HEAD."""
    repo = _app_repo(tmp_path / "app")
    commit_files(repo, {"src/more.py": "x = 1\n"}, "more")
    parent = repo.head.commit.hexsha
    assert promptops("init", "p", "--commit", cwd=tmp_path / "app").returncode == 0
    assert repo.head.commit.parents[0].hexsha == parent
