"""`promptops init DIR`: scaffold the starter package, alone or inside a repository.

Outside any repository init makes one and commits the package. Inside one (a monorepo,
an application repository) it writes the package into DIR, puts the pull-request
workflow and the pre-commit hooks where git and GitHub look for them (the repository
root, with ``PACKAGE`` set to DIR), and joins what is already there: the merges are in
:mod:`promptops.scaffold`. It commits there only when asked (``--commit``): build,
serve and diff read commits, so the "Next:" lines say how.

Everything is decided before anything is written: a file of the package that exists
with other content refuses the whole init and leaves the folder as it was. Running init
again changes nothing and says so.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from promptops import scaffold
from promptops.console import Console
from promptops.errors import PromptopsError, UsageError

_FIRST_COMMIT = "Scaffold prompt package with promptops init"


@dataclass
class Plan:
    """What init will do: files to write, and a line to say about each file it touched."""

    directory: Path
    root: Path  # the repository's top folder (DIR itself for a new repository)
    package: str  # DIR relative to root, POSIX, "." at the root
    new_repo: bool
    package_exists: bool = False
    created: list[str] = field(default_factory=list)  # package files written
    writes: dict[Path, bytes] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)  # snippets for the user to apply
    owned: list[Path] = field(default_factory=list)  # what --commit commits


def run(*, directory: Path, commit: bool, console: Console) -> int:
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} exists and is not a folder")
    plan = _plan(directory)
    for path, data in plan.writes.items():
        _write(plan.root, path, data)
    if plan.new_repo:
        owned = dict.fromkeys([*plan.owned, *plan.writes])
        _git_init(plan.root, [p.relative_to(plan.root).as_posix() for p in owned if p.exists()])
        committed: str | None = _FIRST_COMMIT
    else:
        committed = _commit(plan) if commit else None
    _report(plan, committed, console)
    return 0


def _repository_top(directory: Path) -> Path | None:
    from promptops.git import Repo

    repo = Repo.find(directory)
    return repo.top if repo is not None else None


def _plan(directory: Path) -> Plan:
    top = _repository_top(directory)
    root = top if top is not None else directory.resolve()
    package = Path(os.path.relpath(directory.resolve(), root)).as_posix()
    if package.startswith(".."):
        raise UsageError(f"{directory} is outside the repository at {root}")
    plan = Plan(directory=directory, root=root, package=package, new_repo=top is None)
    _plan_package(plan)
    _plan_precommit(plan)
    _plan_workflow(plan)
    return plan


def _plan_package(plan: Plan) -> None:
    files = scaffold.package_files(plan.directory)
    folder = plan.root / plan.package
    plan.package_exists = (folder / "promptops.yaml").is_file()
    if not plan.package_exists:
        clash = [rel for rel, data in files.items() if rel != ".gitignore"
                 and os.path.lexists(folder / rel)
                 and (not (folder / rel).is_file() or (folder / rel).read_bytes() != data)]
        if clash:
            more = f" (and {len(clash) - 1} more)" if len(clash) > 1 else ""
            raise UsageError(
                f"{_label(plan, folder / clash[0])} already exists{more}; init never overwrites "
                "files: move them away or choose another folder"
            )
        for rel, data in files.items():
            if rel != ".gitignore" and not (folder / rel).exists():
                plan.writes[folder / rel] = data
                plan.created.append(rel)
    plan.owned += [folder / rel for rel in files if rel != ".gitignore"
                   and (folder / rel in plan.writes or (folder / rel).is_file())]
    ignore = folder / ".gitignore"
    ours = files[".gitignore"].decode("utf-8")
    label = _label(plan, ignore)
    if ignore.is_file():
        merge = scaffold.merge_gitignore(ignore.read_text(encoding="utf-8"), ours)
        plan.notes.append(f"{label}: {merge.status}")
        if merge.text is not None:
            plan.writes[ignore] = merge.text.encode("utf-8")
    else:
        plan.writes[ignore] = ours.encode("utf-8")
        plan.notes.append(f"{label}: created")
    plan.owned.append(ignore)


def _plan_precommit(plan: Plan) -> None:
    path = plan.root / scaffold.PRECOMMIT
    label = _label(plan, path)
    if not path.exists():
        plan.writes[path] = scaffold.precommit_text(plan.package).encode("utf-8")
        plan.notes.append(f"{label}: created")
        plan.owned.append(path)
        return
    merge = scaffold.merge_precommit(path.read_text(encoding="utf-8"), plan.package)
    plan.notes.append(f"{label}: {merge.status}")
    if merge.text is not None:
        plan.writes[path] = merge.text.encode("utf-8")
    if merge.snippet:
        plan.printed.append(f"# {label}\n{merge.snippet}")
    else:
        plan.owned.append(path)


def _plan_workflow(plan: Plan) -> None:
    text = scaffold.workflow_text(plan.package).encode("utf-8")
    where = "" if plan.package == "." else f" (PACKAGE: {plan.package})"
    taken: list[str] = []
    for name in (scaffold.WORKFLOW, scaffold.WORKFLOW_ALTERNATE):
        path = plan.root / name
        label = _label(plan, path)
        if not path.exists():
            plan.writes[path] = text
            first = f" ({_label(plan, plan.root / taken[0])} exists)" if taken else ""
            plan.notes.append(f"{label}: created{where}{first}")
            plan.owned.append(path)
            return
        if path.read_bytes() == text:
            plan.notes.append(f"{label}: already the promptops workflow{where}")
            plan.owned.append(path)
            return
        taken.append(name)
    names = " and ".join(_label(plan, plan.root / n) for n in taken)
    plan.notes.append(f"{names} exist with other content: left unchanged; "
                      "the workflow for this package is printed below")
    plan.printed.append(f"# .github/workflows/promptops-<name>.yml\n{text.decode('utf-8')}")


def _label(plan: Plan, path: Path) -> str:
    """A path as the user wrote DIR: absolute if DIR was, else relative to the current folder."""
    if not plan.directory.is_absolute():
        try:
            return Path(os.path.relpath(path, Path.cwd())).as_posix()
        except ValueError:  # another drive on Windows
            pass
    return str(path)


def _write(root: Path, path: Path, data: bytes) -> None:
    """Write atomically, never through a symlink (a file or any folder up to ``root``)."""
    from promptops.fsutil import atomic_write

    for part in (path, *path.parents):
        if part == root or root not in part.parents:
            break
        if part.is_symlink():
            raise UsageError(f"{part} is a symlink; init writes only real files and folders")
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    atomic_write(path, data, mode=mode)


def _git_init(root: Path, paths: list[str]) -> None:
    """Make ``root`` a repository whose first commit is the package."""
    from promptops.git.history import init_and_commit

    init_and_commit(root, paths, _FIRST_COMMIT)


def _commit(plan: Plan) -> str | None:
    """Commit exactly the files init owns (other staged work stays staged); the message."""
    from promptops.git.history import CommitRefused, History

    repo = History.open(plan.root, "init commits only inside a repository")
    paths = [p.relative_to(plan.root).as_posix() for p in plan.owned if p.exists()]
    if not repo.status(*paths):
        return None
    message = f"Add prompt package {scaffold.package_name(plan.directory)} with promptops init"
    try:
        repo.commit_paths(paths, message)
    except CommitRefused as exc:
        raise PromptopsError(
            f"the files are written but git refused the commit:\n{exc}\n"
            f"fix that, then: {_commit_hint(plan)}"
        ) from exc
    return message


def _uncommitted(plan: Plan) -> bool:
    from promptops.git.history import History

    repo = History.open(plan.root, "init commits only inside a repository")
    paths = [p.relative_to(plan.root).as_posix() for p in plan.owned if p.exists()]
    return bool(paths) and bool(repo.status(*paths))


def _collapse(root: Path, owned: list[Path]) -> list[Path]:
    """``owned`` with every folder whose files are all owned named once, as the folder."""
    mine = set(owned)
    out: list[Path] = []
    for top in sorted({root / p.relative_to(root).parts[0] for p in owned}):
        if top in mine or (top.is_dir() and all(
                f in mine for f in top.rglob("*") if f.is_file() or f.is_symlink())):
            out.append(top)
        else:
            out += sorted(p for p in owned if top in p.parents)
    return out


def _commit_hint(plan: Plan) -> str:
    """The git commands that commit what init wrote, runnable from the current folder."""
    folder = plan.root / plan.package
    if plan.package == ".":
        paths = _collapse(plan.root, [p for p in plan.owned if p.exists()])
    else:
        paths = [folder, *(p for p in plan.owned if folder not in p.parents)]
    cwd = Path.cwd().resolve()
    inside = cwd == plan.root or plan.root in cwd.parents
    git_cmd = "git" if inside else f"git -C {shlex.quote(str(plan.root))}"
    base = cwd if inside else plan.root
    rels = " ".join(shlex.quote(Path(os.path.relpath(p, base)).as_posix()) for p in paths)
    name = scaffold.package_name(plan.directory)
    return (f"{git_cmd} add -- {rels} && "
            f"{git_cmd} commit -m {shlex.quote(f'Add prompt package {name}')}")


def _report(plan: Plan, committed: str | None, console: Console) -> None:
    if console.verbosity < 0:
        return
    where = _label(plan, plan.directory)
    nothing = not plan.writes and not committed
    if nothing:
        console.echo(f"Nothing to do: {where} already holds a prompt package, and its .gitignore, "
             "pre-commit hooks and workflow are in place.")
    elif plan.created:
        prompts = sum(rel.startswith("prompts/") for rel in plan.created)
        console.echo(f"Created a prompt package in {where} "
             f"({len(plan.created)} files, {prompts} prompts).")
    elif plan.package_exists:
        console.echo(f"{where} already holds a prompt package (promptops.yaml); its files are "
             "left as they are.")
    if not nothing:
        for note in plan.notes:
            console.echo(f"  {note}")
    if plan.new_repo:
        console.echo("Initialised a git repository and made the first commit.")
    elif committed:
        console.echo(f'Committed the package and its CI files: "{committed}".')
    for text in plan.printed:
        console.echo("\n" + text.rstrip("\n"))
    steps = []
    if not plan.new_repo and not committed and _uncommitted(plan):
        console.echo("Nothing is committed yet: build, serve and diff read commits, so commit the "
             "package first.")
        steps += [_commit_hint(plan),
                  f"(or let init commit them: promptops init {shlex.quote(where)} --commit)"]
    if nothing and not steps:
        return
    cd = "" if plan.directory.resolve() == Path.cwd().resolve() else f"cd {shlex.quote(where)}"
    steps += [s for s in (cd,) if s]
    steps += ["promptops ls", 'promptops render code_review -a code="def f(): pass"',
              "promptops check"]
    console.echo("\nNext:\n" + "\n".join(f"  {s}" for s in steps))
