"""`promptops import PATH... [-o DIR] [--from FORMAT] [--commit]`: prompts of other tools.

Teams arrive with prompts written for VS Code, Prompty, Dotprompt, Claude Code, promptfoo
or LangChain, usually as a folder (``.github/prompts``, ``.claude/commands``). Each PATH is
a file or a folder (read recursively; ``-`` reads a list of paths from stdin), and each
prompt file found becomes one prompt (a promptfoo file of several ``---`` sections,
several) in the package at DIR, created with a ``promptops.yaml`` when there is none. The
translation is the importers' (:mod:`promptops.interop.importers`); this module is the
front: finding and reading the files (:mod:`promptops.interop.sources`, which reads only
regular files inside the named paths), keeping each file's import apart from the others',
checking the result with the real build, and writing it all or not at all
(:mod:`promptops.interop.staging`).

Every file ends as exactly one of: imported exact, imported with named losses, or refused
with its reason (file, line, what). Nothing one file does (a parse error, a YAML bomb, a bug
in an importer) reaches another file, and no file is written that would not build: a
prompt the package format refuses is refused, with the problem. Exit 0 when every file is
exact, 1 when any is lossy or refused, 2 for a bad command line or a source that is not a
regular file (a symlink, a FIFO, a device: nothing is read then); never 3 for a file.
"""

from __future__ import annotations

import posixpath
import sys
from dataclasses import dataclass, field
from pathlib import Path

from promptops.commands._import_report import CONVERSION, Report, conversion, inert, print_reports
from promptops.commands.choices import Format
from promptops.console import Console
from promptops.errors import ExitCode, Problem, PromptopsError, UsageError
from promptops.interop import jinja_tree, staging
from promptops.interop.detect import prompt_place, sniff
from promptops.interop.errors import InteropError
from promptops.interop.importers import IMPORTERS
from promptops.interop.package import dump, in_order, prompt_name, to_document
from promptops.interop.sources import (
    MAX_LIST,
    MAX_SOURCE_BYTES,
    Discovery,
    Siblings,
    SourceFile,
    SourceUnreadable,
    discover,
    read_path_list,
    read_text,
)
from promptops.interop.timebound import TooSlow, time_bound
from promptops.scaffold import modeline, schema_files

FORMATS = tuple(IMPORTERS)
MAX_SOURCE_BYTES = MAX_SOURCE_BYTES  # re-exported: the bound on one source file


def run(*, sources: list[Path], out: Path, source_format: str | None,
        fmt: Format, console: Console, commit: bool = False) -> int:
    if not sources:
        raise UsageError("import needs at least one PATH (a file, a folder, or - for a list "
                         "on stdin)")
    source_format = str(source_format) if source_format is not None else None
    if source_format is not None and source_format not in IMPORTERS:
        raise UsageError(f"--from {source_format!r}: expected one of {', '.join(FORMATS)}")
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder")
    paths = _expand_stdin(sources)
    found = discover(paths, skip=out)  # NotRegular (exit 2) before anything is read
    manifest = out / "promptops.yaml"
    mode = _package_mode(manifest)
    reports: list[Report] = []
    taken = _Names(_existing_prompts(out))
    tree = jinja_tree.plan(found.files, lambda rel: (out / rel).exists(), source_format)
    with console.progress("import", "files") as start:  # a bar on a terminal only
        todo = _with_templates(found, tree)
        tick = start(len(todo))
        for source in todo:
            report = _isolated(source, source_format, mode, taken, tree)
            if report is None:
                found.skipped.append(source.shown)
            else:
                reports.append(report)
            tick(1)
    files = _package_files(out, reports, mode)
    with console.status("import: checking that the package builds"):
        files = _validated(out, reports, files)
    written = [r for r in reports if r.written()]
    if written:
        if any(r.outcome != "exact" for r in reports):
            files[CONVERSION] = inert(conversion(reports)).encode()
        staging.write(out, files)
    committed = _commit(out, sorted(files)) if commit and written else None
    print_reports(reports, found.skipped, out, fmt, console, committed=committed,
                  commit_asked=commit)
    return ExitCode.OK if all(r.outcome == "exact" for r in reports) and reports \
        else ExitCode.FAILED


def _with_templates(found: Discovery, tree: jinja_tree.Plan) -> list[SourceFile]:
    """The files to import: those found, and the templates they reach that are no prompt
    file by name (``header.html``, a ``.md`` partial): each gets its own report line."""
    listed = {(s.root, s.rel) for s in found.files}
    extra = [SourceFile(t.shown, t.key[0], t.key[1], named=False)
             for key, t in tree.templates.items() if key not in listed]
    shown = {s.shown for s in extra}
    found.skipped[:] = [s for s in found.skipped if s not in shown]
    return [*found.files, *extra]


def _expand_stdin(sources: list[Path]) -> list[Path]:
    """The operands with ``-`` replaced by the paths listed on stdin."""
    if Path("-") not in sources:
        return sources
    data = sys.stdin.buffer.read(MAX_LIST + 1)
    listed = [Path(p) for p in read_path_list(data)]
    out: list[Path] = []
    for path in sources:
        out.extend(listed if path == Path("-") else [path])
    if not out:
        raise UsageError("the path list on stdin is empty")
    return out


def _package_mode(manifest: Path) -> str:
    """The whitespace mode of the package being added to (standalone for a new one)."""
    if not manifest.exists():
        return "standalone"
    from promptops.pipeline.source import WorktreeSource
    from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

    try:  # read as the build reads it: a FIFO or a symlink out of the package is absent
        data = load_yaml(str(manifest), WorktreeSource(manifest.parent).read(
            manifest.name)).data
    except FileNotFoundError:
        return "standalone"  # the build before writing says what is wrong with it
    except YamlProblem as exc:
        raise UsageError(str(exc.problem)) from exc
    templates = data.get("templates") if isinstance(data, dict) else None
    mode = templates.get("whitespace") if isinstance(templates, dict) else None
    return mode if mode in ("standalone", "jinja") else "standalone"


def _existing_prompts(out: Path) -> set[str]:
    """Package paths of the prompt files the target already holds (never replaced)."""
    folder = out / "prompts"
    if not folder.is_dir():
        return set()
    return {p.relative_to(out).as_posix() for p in folder.rglob("*.prompt.yaml")}


def detect(path: Path, text: str) -> str:
    """The format of a source file, from its name and, where names are ambiguous, content."""
    found = sniff(path.name, text, named=True)
    if found is None:
        raise UsageError(f"{path}: cannot tell its format from the name; pass --from "
                         f"({', '.join(FORMATS)})")
    return found


@dataclass
class _Names:
    """Prompt files taken: by the target before the import (never replaced) or by this run."""

    existing: set[str]
    batch: set[str] = field(default_factory=set)

    def __contains__(self, rel: object) -> bool:
        return rel in self.existing or rel in self.batch


class _NotAPrompt(Exception):
    """A file found in a folder whose content is no prompt (a JSON sample, a config)."""


class _Refused(Exception):
    """A file refused with a reason that already names it, ``file:line:col: what``."""


PER_FILE_SECONDS = 30.0  # one file's import; measured: about 10 ms for a corpus file


def _isolated(source: SourceFile, forced: str | None, mode: str,
              taken: _Names, tree: jinja_tree.Plan) -> Report | None:
    """One file's import, whatever happens in it: an error is this file's refusal.
    None for a file found in a folder that turns out to be no prompt."""
    report = Report(source.shown, forced)
    try:
        with time_bound(PER_FILE_SECONDS):
            return _guarded(source, forced, mode, taken, report, tree)
    except TooSlow:  # also when it lands while the bound is being lifted
        return report.refuse(f"{source.shown}: took more than {PER_FILE_SECONDS:g} s to "
                             "import; refused (a bound, SECURITY.md)")


def _guarded(source: SourceFile, forced: str | None, mode: str, taken: _Names,
             report: Report, tree: jinja_tree.Plan) -> Report | None:
    try:
        _import(source, forced, mode, taken, report, tree)
    except _NotAPrompt:
        return None
    except (InteropError, _Refused) as exc:
        report.refuse(str(exc))
    except SourceUnreadable as exc:
        where = f":{exc.line}:{exc.col}" if exc.line else ""
        report.refuse(f"{source.shown}{where}: {exc.message}")
    except RecursionError:
        report.refuse(f"{source.shown}: nested too deeply to read")
    except MemoryError:
        report.refuse(f"{source.shown}: too large to import")
    except Exception as exc:  # a bug in an importer: this file's, never the batch's
        report.refuse(f"{source.shown}: internal error ({type(exc).__name__}: "
                      f"{_short(str(exc))}); this is a promptops bug, please report it")
    return report


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _import(source: SourceFile, forced: str | None, mode: str, taken: _Names,
            report: Report, tree: jinja_tree.Plan) -> None:
    key = (source.root, source.rel)
    blocked = tree.blocked(key)
    if blocked is not None:
        raise _Refused(blocked)
    template = tree.templates.get(key)
    if template is not None:
        if template.refused:
            raise _Refused(template.refused)
        report.ecosystem = forced or "promptfoo"
        report.templates[template.path] = template.text
        report.losses.extend(template.losses)
        users = sorted({posixpath.basename(u) for u in template.used_by})
        report.notes.append(f"a template that {len(users)} files reach "
                            f"({', '.join(users[:3])}{', ...' if len(users) > 3 else ''}): "
                            f"written as {template.path}, not as a prompt (docs/interop.md)")
        if not source.named:
            return
    place = f"{source.root.absolute().name}/{source.rel}"
    text = tree.texts[key] if key in tree.texts else _read(source, forced, place)
    ecosystem = forced or sniff(source.rel.rsplit("/", 1)[-1], text, named=source.named,
                                place=place)
    if ecosystem is None and not source.named:
        raise _NotAPrompt
    if ecosystem is None:
        raise InteropError(source.shown, "cannot tell its format from the name; pass --from "
                           f"({', '.join(FORMATS)})")
    report.ecosystem = ecosystem
    prompts = IMPORTERS[ecosystem](source.shown, text, Siblings(source))
    if key in tree.texts:
        prompts = [jinja_tree.complete(p, key, tree, whole=template is not None)
                   for p in prompts]
        report.needs.update({t.path: tree.via(key, t, "which is refused")
                             for t in tree.reach(key)})
    for prompt in prompts:
        name = prompt_name(prompt.name)
        rel = f"prompts/{name}.prompt.yaml"
        if rel in taken.existing:
            raise InteropError(source.shown, f"prompt {name!r} already exists in the package "
                               f"({rel}); import never replaces a prompt: remove it first or "
                               "import into another folder")
        if rel in taken or rel in report.documents:
            unique = _unique(name, source, taken.existing | taken.batch | set(report.documents))
            report.notes.append(f"prompt name {name!r} is taken by another file of this "
                                f"import: written as {unique!r}")
            name, rel = unique, f"prompts/{unique}.prompt.yaml"
        doc, losses = to_document(prompt, mode)
        if name != prompt.name:
            doc = {"name": name, **doc}
            if name == prompt_name(prompt.name):
                report.notes.append(f"name {prompt.name!r} is not an MCP-safe prompt name: "
                                    f"written as {name!r}")
        report.documents[rel] = dump(in_order(doc))
        report.prompts.append(name)
        report.mapped.extend(f"{name}: {k}" for k in doc if k not in ("messages", "name"))
        report.losses.extend((*prompt.losses, *losses))
        report.notes.extend(prompt.notes)
    taken.batch.update(report.documents)


def _read(source: SourceFile, forced: str | None, place: str) -> str:
    """The file's text. A ``.txt`` found outside a prompt's place is read only to look for a
    template tag, so one that cannot be read as text is no prompt, not a refusal."""
    try:
        return read_text(source)
    except SourceUnreadable:
        if source.named or forced or not source.rel.lower().endswith(".txt") or \
                prompt_place(place):
            raise
        raise _NotAPrompt from None


def _unique(name: str, source: SourceFile, taken: set[str]) -> str:
    """``name`` made unique with the source's folder names (``sub-name``), else a number."""
    folders = [p for p in posixpath.dirname(source.rel).split("/") if p]
    folders = folders or [source.root.absolute().name]
    candidate = name
    for folder in reversed(folders):
        candidate = prompt_name(f"{folder}-{candidate}")
        if f"prompts/{candidate}.prompt.yaml" not in taken:
            return candidate
    n = 2
    while f"prompts/{name}-{n}.prompt.yaml" in taken:
        n += 1
    return f"{name}-{n}"


def _package_files(out: Path, reports: list[Report], mode: str) -> dict[str, bytes]:
    """Everything the import would write: the prompts, and for a new package its manifest
    and the editor schemas its modelines name."""
    files: dict[str, bytes] = {}
    for r in reports:
        for rel, text in r.documents.items():
            files[rel] = (modeline(rel, "prompt") + text).encode()
        for rel, text in r.templates.items():
            files[rel] = text.encode()
    if not (out / "promptops.yaml").exists():
        name = prompt_name(out.resolve().name.lower()).strip("._-") or "imported"
        files["promptops.yaml"] = (modeline("promptops.yaml", "manifest") + dump({
            "name": name if name[:1].isalnum() else "imported", "version": "0.1.0",
            "description": "Prompts imported by promptops import",
            "templates": {"whitespace": mode}})).encode()
    for rel, data in schema_files().items():
        if not (out / rel).exists():
            files[rel] = data
    return files


def _validated(out: Path, reports: list[Report], files: dict[str, bytes]) -> dict[str, bytes]:
    """``files`` without those of any source whose prompts would not build, each such
    source refused with the build's problem; PromptopsError when the package would not
    build for a reason no imported file explains (nothing is written then)."""
    owner = {rel: r for r in reports for rel in r.written()}
    for _ in range(len(reports) + 1):
        problems = _problems(out, files, owner) if owner else []
        mine = [(p, r) for p in problems if (r := _culprit(p, owner)) is not None]
        if not mine:
            break
        for p, r in mine:
            if r.refused:
                continue
            _drop(r, files, owner)
            what = "template" if p.path in r.templates else "prompt"
            r.refuse(p.message if p.code == _CRASH else
                     f"{r.source}: the package format refuses the imported {what}: {p}")
        _refuse_dependents(reports, files, owner)
    else:  # pragma: no cover - every round refuses at least one source
        problems = []
    if problems:
        before = staging.problems(out, {}) if (out / "promptops.yaml").exists() else []
        if before:
            raise UsageError(f"the package in {out} does not build as it is, so import cannot "
                             "tell whether what it adds would:\n" + _lines(before))
        raise PromptopsError("import would write a package that does not build, so nothing "
                             "was written (a promptops bug, please report it):\n"
                             + _lines(problems))
    return files


_CRASH = "import-crash"


def _drop(r: Report, files: dict[str, bytes], owner: dict[str, Report]) -> None:
    for rel in r.written():
        files.pop(rel, None)
        owner.pop(rel, None)


def _refuse_dependents(reports: list[Report], files: dict[str, bytes],
                       owner: dict[str, Report]) -> None:
    """Each source whose prompts reach a template that is no longer written (its own file
    was refused) refused too, naming that file rather than the build's "not found"."""
    changed = True
    while changed:
        changed = False
        for r in reports:
            lost = sorted(rel for rel in r.needs if rel not in files)
            if r.refused or not lost:
                continue
            _drop(r, files, owner)
            r.refuse(r.needs[lost[0]])
            changed = True


def _culprit(problem: Problem, owner: dict[str, Report]) -> Report | None:
    """The source whose imported prompt a build problem is about: the file it is in, or
    one it names (``prompt name 'ask' is already used by prompts/ask.prompt.yaml``, found
    in the prompt the package already had)."""
    if problem.path in owner:
        return owner[problem.path]
    named = [rel for rel in owner if rel in problem.message]
    return owner[named[0]] if named else None


def _problems(out: Path, files: dict[str, bytes], owner: dict[str, Report]) -> list[Problem]:
    """The build's problems with ``files``; when the build itself fails (a bug), the
    sources whose prompts make it fail, each built alone, as problems of their own, so
    one prompt that trips a bug of the build is refused and the others still written."""
    try:
        return staging.problems(out, files)
    except PromptopsError:
        raise
    except Exception:
        base = {rel: data for rel, data in files.items() if rel not in owner}
        crashed: list[Problem] = []
        for r in {id(r): r for r in owner.values()}.values():
            mine = {rel: files[rel] for rel in r.documents if rel in files}
            try:
                staging.problems(out, {**base, **mine})
            except PromptopsError:
                raise
            except Exception as exc:
                crashed.append(Problem(
                    next(iter(mine)), 0, 0, f"{r.source}: internal error while building the "
                    f"imported prompt ({type(exc).__name__}: {_short(str(exc))}); this is a "
                    "promptops bug, please report it", _CRASH))
        if not crashed:
            raise  # only the files together fail: a bug no single file explains
        return crashed


def _lines(problems: list[Problem]) -> str:
    return "\n".join(f"  {p}" for p in problems[:20])


def _commit(out: Path, paths: list[str]) -> str:
    """Commit what the import wrote (a new repository at ``out`` outside any); the message."""
    from promptops.git import Repo
    from promptops.git.history import CommitRefused, History, init_and_commit

    message = f"Import {len([p for p in paths if p.startswith('prompts/')])} prompts with " \
              "promptops import"
    repo = Repo.find(out)
    if repo is None:
        init_and_commit(out, paths, message)
        return message
    history = History.open(out, "import --commit commits inside a repository")
    top = Path(history.top).resolve()
    rels = [(out.resolve() / p).relative_to(top).as_posix() for p in paths]
    try:
        history.commit_paths(rels, message)
    except CommitRefused as exc:
        raise PromptopsError(f"the files are written but git refused the commit:\n{exc}\n"
                             f"fix that, then commit {out}") from exc
    return message


