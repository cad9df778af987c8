"""`promptops init`: the starter package it writes, the repository it makes, what it refuses."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import git
import pytest
from jsonschema import Draft202012Validator
from repo_helpers import PYTHON, cli_env, make_repo
from ruamel.yaml import YAML
from starter_helpers import mcp_validator

from promptops.commands import init
from promptops.errors import UsageError
from promptops.model import CONTENT_KEYS
from promptops.pipeline import bundle_at, package_at
from promptops.render import Renderer
from promptops.testing.model import RENDER_CHECKS
from promptops.testing.runner import SnapshotPolicy, run_cases
from promptops.testing.snapshots import obsolete, snapshot_files, stored
from promptops.testing.suite import all_cases

_yaml = YAML(typ="safe")
Demo = tuple[Path, subprocess.CompletedProcess[str]]


def promptops(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "promptops", *args], cwd=cwd, env=cli_env(**env),
        capture_output=True, text=True, timeout=120,
    )


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
    assert f"Created a prompt package in demo ({len(init.scaffold(root))} files, 5 prompts)." in (
        proc.stdout
    )
    assert "Initialised a git repository and made the first commit." in proc.stdout
    assert 'promptops render code_review -a code="def f(): pass"' in proc.stdout
    repo = git.Repo(root)
    assert Path(repo.working_tree_dir or "") == root
    commits = list(repo.iter_commits())
    assert len(commits) == 1
    assert commits[0].message.strip() == "Scaffold prompt package with promptops init"
    # No identity was configured, so init's fallback identity signed the commit.
    assert commits[0].author.name == "promptops init"
    assert commits[0].committer.email == "promptops-init@localhost"
    committed = sorted(b.path for b in commits[0].tree.traverse() if b.type == "blob")
    assert committed == sorted(init.scaffold(root))
    assert not repo.is_dirty(untracked_files=True)
    for rel in ("promptops.yaml", ".gitignore", ".pre-commit-config.yaml",
                ".github/workflows/promptops.yml", ".promptops/schema/prompt.json",
                "resources/architecture.png", "tests/code_review.test.yaml"):
        assert (root / rel).is_file(), rel


def test_init_names_package_after_folder(demo: Demo) -> None:
    root, _ = demo
    pkg = package_at(root)
    assert pkg.manifest.name == "demo"
    assert [p.name for p in pkg.prompts] == [
        "code_review", "commit_message", "describe_diagram", "explain_error", "summarize_diff",
    ]
    # --ref reads the first commit and gives the same package
    assert package_at(root, "HEAD").manifest == pkg.manifest


def test_package_name_from_folder() -> None:
    assert init.package_name(Path("My Prompts!")) == "my-prompts"
    assert init.package_name(Path("acme.prompts")) == "acme.prompts"
    assert init.package_name(Path("___")) == "starter-prompts"


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
    renderer = Renderer(bundle_at(init.starter_dir()))
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
    pkg = package_at(init.starter_dir())
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
    from promptops.bundle import compile_bundle
    from promptops.package import load_package
    from promptops.sources import WorktreeSource

    source = WorktreeSource(init.starter_dir())
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


def test_init_inside_existing_repo_makes_no_new_repo(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "mono", {"README.md": "# mono\n"})
    head = repo.head.commit.hexsha
    assert init.run(tmp_path / "mono" / "packages" / "prompts") == 0
    target = tmp_path / "mono" / "packages" / "prompts"
    assert not (target / ".git").exists()
    assert repo.head.commit.hexsha == head
    assert "packages/prompts/promptops.yaml" in repo.untracked_files
    assert package_at(target).manifest.name == "prompts"


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "pk"
    (target / "prompts").mkdir(parents=True)
    mine = target / "prompts" / "code_review.prompt.yaml"
    mine.write_text("my own prompt\n")
    with pytest.raises(UsageError) as err:
        init.run(target)
    assert str(target / "prompts" / "code_review.prompt.yaml") in str(err.value)
    assert err.value.exit_code == 2
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == [
        "prompts", "prompts/code_review.prompt.yaml"]
    assert mine.read_text() == "my own prompt\n"


def test_init_refusal_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "promptops.yaml").write_text("name: x\nversion: 1.0.0\n")
    proc = promptops("init", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: promptops.yaml already exists; init never overwrites files: choose an empty "
        "folder\n"
    )
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / ".git").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["promptops.yaml"]
