"""What ``promptops init`` writes, and how it joins files a repository already has.

The starter lives once, as real files, in ``templates/`` at the root of the promptops
repository; the wheel carries the same files as the data package ``promptops._starter``
(pyproject.toml maps one to the other, so there is no symlink to break on Windows).

Most repositories already have a ``.gitignore`` and many a ``.pre-commit-config.yaml``,
so init merges instead of refusing: missing ignore lines are appended once, and our hook
entry is added to ``repos:`` through a ruamel.yaml round trip that keeps every comment
and line the file had (checked, not hoped: a merge that would change an existing line is
not written, the snippet is printed instead). A workflow is never overwritten. Every
merge is a pure function of the old text, so running init twice changes nothing.
"""

from __future__ import annotations

import functools
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import promptops
from promptops import __version__
from promptops.about import github_repository, install_spec
from promptops.errors import UsageError
from promptops.pipeline.manifest import NAME_RE

SCHEMA_DIR = ".promptops/schema"
PRECOMMIT = ".pre-commit-config.yaml"
WORKFLOW = ".github/workflows/promptops.yml"
WORKFLOW_ALTERNATE = ".github/workflows/promptops-review.yml"
INTEGRATION = frozenset({PRECOMMIT, WORKFLOW})  # these belong at the repository root
# shipped as an example to copy (docs/channels.md), never scaffolded
EXAMPLES = frozenset({".github/workflows/promptops-channels.yml"})
_SKIP = frozenset({"__pycache__", ".DS_Store"})
_FALLBACK_NAME = "starter-prompts"
_PIN = re.compile(r"promptops-mcp(==| @ git\+https://github\.com/[\w.-]+/[\w.-]+@v)"
                  r"[0-9][0-9A-Za-z.+-]*")
_ACTION = re.compile(r"(?<=uses: )[\w.-]+/[\w.-]+@v\d+\.\d+\.\d+")


def starter_dir() -> Path:
    """The starter package: packaged in the wheel, or templates/ of a source checkout."""
    here = Path(promptops.__file__).resolve().parent
    for candidate in (here / "_starter", here.parent / "templates"):
        if (candidate / "promptops.yaml").is_file():
            return candidate
    raise UsageError("the starter package is missing from this promptops installation")


def package_name(directory: Path) -> str:
    """A valid package name from the folder name, or the starter's own name."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", directory.resolve().name.lower()).strip("._-")[:64]
    return slug if re.match(NAME_RE, slug) else _FALLBACK_NAME


def pinned(text: str) -> str:
    """``text`` with every install pin and Action reference set to this promptops."""
    text = _PIN.sub(install_spec(), text)
    repo = github_repository()
    return _ACTION.sub(f"{repo}@v{__version__}", text) if repo else text


def _starter_files() -> dict[str, bytes]:
    root = starter_dir()
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not _SKIP & set(rel.parts) and path.suffix != ".pyc":
            files[rel.as_posix()] = path.read_bytes()
    return files


def package_files(directory: Path) -> dict[str, bytes]:
    """Package-relative path -> content of every file init writes into the package folder.

    The ``.gitignore`` is among them (merged when one exists); the pre-commit config and
    the workflow are not: they belong at the repository root (:func:`precommit_text`,
    :func:`workflow_text`).
    """
    files = {k: v for k, v in _starter_files().items()
             if k not in INTEGRATION and k not in EXAMPLES}
    manifest = files["promptops.yaml"].decode("utf-8")
    files["promptops.yaml"] = re.sub(
        r"(?m)^name: .*$", f"name: {package_name(directory)}", manifest, count=1
    ).encode("utf-8")
    files.update(schema_files())
    return files


def schema_files() -> dict[str, bytes]:
    """``.promptops/schema/<kind>.json`` -> the editor schema: what init and import write."""
    return dict(_schema_file_bytes())


@functools.cache
def _schema_file_bytes() -> tuple[tuple[str, bytes], ...]:
    """The encoded schema files, made once per process: pydantic's schema generation is
    most of an import's time (0.1 s a file), and the result depends on the code alone.
    Immutable, so no caller can change what the next one gets."""
    return tuple((f"{SCHEMA_DIR}/{kind}.json",
                  (json.dumps(schema, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
                 for kind, schema in _schemas().items())


def modeline(rel: str, kind: str) -> str:
    """The ``# yaml-language-server: $schema=...`` line for the package file ``rel``:
    relative to the file's own folder (yaml-language-server resolves it from the file), so
    ``prompts/team/x.prompt.yaml`` climbs two folders."""
    depth = rel.count("/")
    return f"# yaml-language-server: $schema={'../' * depth}{SCHEMA_DIR}/{kind}.json\n"


def schema_for(kind: str) -> dict[str, object]:
    """The JSON Schema of ``kind`` (manifest, prompt, test, bundle): what init writes
    into a package for editors, and what ``promptops schema`` prints."""
    if kind == "bundle":
        from promptops.pipeline.bundle_schema import BundleFile

        model: Any = BundleFile
    elif kind == "test":
        from promptops.testing.model import TestFile

        model = TestFile
    else:
        from promptops.pipeline.manifest import Manifest
        from promptops.pipeline.model import PromptFile

        model = Manifest if kind == "manifest" else PromptFile
    if kind != "bundle":  # the files people edit get the schema that teaches in editors
        from promptops.pipeline.editor_schema import teaching_schema

        return teaching_schema(model)
    out: dict[str, object] = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    out.update(model.model_json_schema())
    return out


def _schemas() -> dict[str, object]:
    out: dict[str, object] = {k: schema_for(k) for k in ("manifest", "prompt")}
    test = schema_for("test")
    if test != out["prompt"]:  # written once the test file format has its own model
        out["test"] = test
    return out


def _scalar(value: str) -> str:
    """``value`` as a YAML scalar: plain when it is a simple path, else double-quoted."""
    return value if re.fullmatch(r"[\w./-]+", value) else json.dumps(value)


def _replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:  # the starter and this code disagree: a bug, not bad input
        raise AssertionError(f"the starter workflow should contain {old!r} exactly once")
    return text.replace(old, new)


def workflow_text(package: str) -> str:
    """The pull-request workflow for the package at ``package`` (relative to the root)."""
    text = pinned(_starter_files()[WORKFLOW].decode("utf-8"))
    if package == ".":
        return text
    value = _scalar(package)
    name = _scalar(f"promptops {package}")
    text = _replace_once(text, "\nname: promptops\n", f"\nname: {name}\n")
    return _replace_once(text, "\n  PACKAGE: .  ", f"\n  PACKAGE: {value}  ")


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


def _dump(yaml: Any, data: object) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def precommit_text(package: str) -> str:
    """The whole pre-commit config for a repository that has none."""
    text = pinned(_starter_files()[PRECOMMIT].decode("utf-8"))
    if package == ".":
        return text
    yaml = _yaml()
    yaml.indent(mapping=2, sequence=4, offset=2)
    data = yaml.load(text)
    data["repos"][0] = _for_subfolder(data["repos"][0], package)
    return _dump(yaml, data)


def precommit_entry(package: str) -> object:
    """Our ``repo: local`` entry (a ruamel mapping), adjusted for a subfolder package."""
    data = _yaml().load(pinned(_starter_files()[PRECOMMIT].decode("utf-8")))
    entry = data["repos"][0]
    return entry if package == "." else _for_subfolder(entry, package)


def _for_subfolder(entry: Any, package: str) -> object:
    """Hooks run from the repository root: pass the package, match files below it."""
    for hook in entry["hooks"]:
        hook["args"] = [package]
        hook["files"] = "^" + re.escape(package + "/") + hook["files"].removeprefix("^")
    return entry


def snippet(package: str) -> str:
    """Our entry as text, for a config that is left alone."""
    yaml = _yaml()
    yaml.indent(mapping=2, sequence=4, offset=2)
    return _dump(yaml, {"repos": [precommit_entry(package)]})


def _plain(value: object) -> object:
    """ruamel's commented containers as plain dicts and lists, for comparison."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _ours(repo: object) -> bool:
    """Does this ``repos:`` entry already run promptops?"""
    if not isinstance(repo, dict):
        return False
    if "promptops" in str(repo.get("repo", "")).lower():
        return True
    hooks = repo.get("hooks") or []
    return any(isinstance(h, dict) and (str(h.get("id", "")).startswith("promptops")
                                        or str(h.get("entry", "")).startswith("promptops"))
               for h in hooks)


@dataclass(frozen=True)
class Merge:
    """What to do with an existing file: write ``text`` (None: leave it); say ``status``."""

    text: str | None
    status: str
    snippet: str = ""


def merge_precommit(existing: str, package: str) -> Merge:
    """Add our hook entry to an existing pre-commit config, keeping every line it had."""
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.util import load_yaml_guess_indent

    try:
        data, indent, offset = load_yaml_guess_indent(existing)
    except YAMLError:
        return Merge(None, "is not valid YAML: left unchanged; add this entry yourself",
                     snippet(package))
    repos = data.get("repos") if isinstance(data, dict) else None
    if not isinstance(repos, list):
        return Merge(None, "has no `repos:` list: left unchanged; add this entry yourself",
                     snippet(package))
    entry = precommit_entry(package)
    if any(_plain(r) == _plain(entry) for r in repos):
        return Merge(None, "already runs the promptops hooks")
    if any(_ours(r) for r in repos):
        return Merge(None, "already has promptops hooks of its own: left unchanged; "
                     "for this package the entry would be", snippet(package))
    old_lines = existing.splitlines()
    for mapping in dict.fromkeys((2, indent or 2, 4)):
        yaml = _yaml()
        yaml.indent(mapping=mapping, sequence=indent or 2, offset=offset or 0)
        fresh = yaml.load(existing)
        fresh["repos"].append(precommit_entry(package))
        text = _dump(yaml, fresh)
        if _only_added(old_lines, text.splitlines()):
            return Merge(text, "added the promptops hooks")
    return Merge(None, "could not be extended without reformatting it: left unchanged; "
                 "add this entry yourself", snippet(package))


def _only_added(old: list[str], new: list[str]) -> bool:
    """True if ``new`` is ``old`` with lines inserted (none changed, none removed)."""
    import difflib

    ops = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    return all(tag in ("equal", "insert") for tag, *_ in ops)


def merge_gitignore(existing: str, ours: str) -> Merge:
    """Append the ignore lines ``existing`` lacks, once, under a comment saying why."""
    have = {line.strip() for line in existing.splitlines()}
    wanted = [line for line in ours.splitlines()
              if line.strip() and not line.startswith("#") and line.strip() not in have]
    if not wanted:
        return Merge(None, "already ignores what promptops writes")
    head = existing if existing.endswith("\n") or not existing else existing + "\n"
    block = "# promptops: built bundles and CI reports\n" + "\n".join(wanted) + "\n"
    n = len(wanted)
    return Merge(head + ("\n" if head else "") + block,
                 f"appended {n} line{'s' if n != 1 else ''}")
