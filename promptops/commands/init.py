"""`promptops init DIR`: scaffold the starter package, then make it a git repository.

Every existing file is checked before anything is written, so a refused init leaves
the folder exactly as it was. The JSON Schemas the scaffolded YAML files point at
(`# yaml-language-server: $schema=...`) are generated from the installed models at
init time rather than copied, so they always match the promptops that wrote them.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import promptops
from promptops.console import echo, settings
from promptops.errors import UsageError
from promptops.model import NAME_RE

SCHEMA_DIR = ".promptops/schema"
_SKIP = frozenset({"__pycache__", ".DS_Store"})
_FALLBACK_NAME = "starter-prompts"
_COMMIT_MESSAGE = "Scaffold prompt package with promptops init"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "promptops init",
    "GIT_AUTHOR_EMAIL": "promptops-init@localhost",
    "GIT_COMMITTER_NAME": "promptops init",
    "GIT_COMMITTER_EMAIL": "promptops-init@localhost",
}


def starter_dir() -> Path:
    """The starter package: packaged with promptops, or the repository's templates/."""
    here = Path(promptops.__file__).resolve().parent
    for candidate in (here / "_templates", here.parent / "templates"):
        if (candidate / "promptops.yaml").is_file():
            return candidate
    raise UsageError("the starter package is missing from this promptops installation")


def package_name(directory: Path) -> str:
    """A valid package name from the folder name, or the starter's own name."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", directory.resolve().name.lower()).strip("._-")[:64]
    return slug if re.match(NAME_RE, slug) else _FALLBACK_NAME


def scaffold(directory: Path) -> dict[str, bytes]:
    """Package-relative path -> content of every file init writes into ``directory``."""
    root = starter_dir()
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not _SKIP & set(rel.parts):
            files[rel.as_posix()] = path.read_bytes()
    name = package_name(directory)
    manifest = files["promptops.yaml"].decode("utf-8")
    files["promptops.yaml"] = re.sub(
        r"(?m)^name: .*$", f"name: {name}", manifest, count=1
    ).encode("utf-8")
    for kind, schema in _schemas().items():
        text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        files[f"{SCHEMA_DIR}/{kind}.json"] = text.encode("utf-8")
    return files


def _schemas() -> dict[str, object]:
    from promptops.commands.schema import schema_for

    out: dict[str, object] = {k: schema_for(k) for k in ("manifest", "prompt")}
    test = schema_for("test")
    if test != out["prompt"]:  # written once the test file format has its own model
        out["test"] = test
    return out


def run(directory: Path) -> int:
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} exists and is not a folder")
    files = scaffold(directory)
    existing = [rel for rel in files if os.path.lexists(directory / rel)]
    if existing:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise UsageError(
            f"{directory / existing[0]} already exists{more}; init never overwrites files: "
            "choose an empty folder"
        )
    for rel, content in files.items():
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    created_repo = _git_init(directory, list(files))
    _report(directory, files, created_repo)
    return 0


def _git_init(directory: Path, paths: list[str]) -> bool:
    """Make ``directory`` a repository with a first commit unless it is inside one."""
    import git

    try:
        git.Repo(directory, search_parent_directories=True)
        return False
    except git.InvalidGitRepositoryError:
        pass
    repo = git.Repo.init(directory)
    repo.git.add("-f", "--", *paths)
    env = {} if _has_identity(repo) else _IDENTITY
    with repo.git.custom_environment(**env):
        repo.git.commit("--no-verify", "-q", "-m", _COMMIT_MESSAGE)
    return True


def _has_identity(repo: object) -> bool:
    import git

    assert isinstance(repo, git.Repo)
    if all(os.environ.get(k) for k in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL")):
        return True
    reader = repo.config_reader()
    return bool(reader.get_value("user", "name", "")) and bool(
        reader.get_value("user", "email", "")
    )


def _report(directory: Path, files: dict[str, bytes], created_repo: bool) -> None:
    if settings.verbosity < 0:
        return
    prompts = sorted(p for p in files if p.startswith("prompts/"))
    echo(f"Created a prompt package in {directory} ({len(files)} files, {len(prompts)} prompts).")
    if created_repo:
        echo("Initialised a git repository and made the first commit.")
    else:
        echo("The folder is inside a git repository: review and commit the new files.")
        echo("Note: GitHub runs .github/workflows/ only at the repository root; move the")
        echo("workflow there and set its PACKAGE variable to this folder.")
    cd = "" if directory.resolve() == Path.cwd().resolve() else f"cd {directory}\n  "
    echo(
        "\nNext:\n"
        f"  {cd}promptops ls\n"
        '  promptops render code_review -a code="def f(): pass"\n'
        "  promptops check"
    )
