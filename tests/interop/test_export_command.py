"""`promptops export` on imported corpus packages: files the tools load, and the round trip.

Each corpus entry is imported into a package (the command), then exported to every target by
the command. Exit 0 exactly when the exporter reports no loss, and then the written file,
imported back by ``promptops import`` into a fresh package, is served byte-identically to
the original package on the entry's realistic inputs: import(export(p)) renders as p.
Exit 1 lists every loss; the file is written anyway. Prompty and Dotprompt files are also
loaded by those tools' own libraries in test_export.py (the IR-level round trip).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import target_grammar as grammar
from fidelity import arguments_for, judges
from test_import_command import Imported, served, untimed, wire

from promptops.commands import export, import_
from promptops.commands.choices import Format
from promptops.console import Console
from promptops.pipeline.build import Build
from promptops.render.renderer import Renderer

ENTRIES = judges.load_manifest()
TARGET_FILES = {"vscode": ".prompt.md", "claude": ".md", "prompty": ".prompty",
                "dotprompt": ".prompt"}


@pytest.fixture(scope="module")
def packages(corpus_imported: dict[str, Imported]) -> dict[str, Imported]:
    return corpus_imported  # the import test_import_command.py judges (conftest.py)


Exported = tuple[int, list[dict[str, Any]], Path]  # exit code, JSON report, output folder


class _BuiltOnce:
    """``Build`` as the export command calls it, one build per package folder and ref.

    The command builds the package it exports; the four targets export the same unchanged
    folder, so the second to fourth builds of each corpus package (1,020 of the module's
    1,360, about a quarter of its CPU) could only repeat the first. The first target's
    export still builds it through the command, and every export runs on that real build.
    """

    def __init__(self) -> None:
        self.built: dict[tuple[Path, str | None], Build] = {}

    def __call__(self, path: Path, ref: str | None = None) -> Build:
        key = (Path(path).resolve(), ref)
        if key not in self.built:
            self.built[key] = Build(path, ref)
        return self.built[key]


@pytest.fixture(scope="module")
def exported(packages: dict[str, Imported],
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, str], Exported]]:
    """``exported(target, entry id)``: the command's export of that entry's package, run
    once per module. Both tests below judge the VS Code and Claude Code exports of the
    whole corpus (one by the round trip, one by the written text); the command's output is
    the same both times, so it is made once (two corpus-wide exports less)."""
    root = tmp_path_factory.mktemp("exports")
    made: dict[tuple[str, str], Exported] = {}

    def export_of(target: str, entry_id: str) -> Exported:
        if (target, entry_id) not in made:
            out = root / target / entry_id
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                code = export.run(target=target, out=out, prompts=[],
                                  path=packages[entry_id].folder, ref=None, fmt=Format.json,
                                  console=Console())
            made[target, entry_id] = code, json.loads(printed.getvalue()), out
        return made[target, entry_id]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(export, "Build", _BuiltOnce())
        yield export_of


@pytest.mark.parametrize("target", list(TARGET_FILES))
def test_export_round_trips(target: str, packages: dict[str, Imported],
                            exported: Callable[[str, str], Exported], tmp_path: Path) -> None:
    exact = lossy = 0
    problems = []
    for entry in ENTRIES:
        imp = packages[entry["id"]]
        if imp.error is not None:
            continue
        code, report, out = exported(target, entry["id"])
        assert code == (1 if any(not r["exact"] for r in report) else 0)
        for row in report:
            assert all((out / f).is_file() for f in row["files"])
            assert all(loss["what"] and loss["reason"] for loss in row["losses"])
            if row["refused"]:  # the target would not run it as the package does: why
                assert not row["files"] and any(loss["reason"].startswith("not exported: ")
                                                for loss in row["losses"]), row
                lossy += 1
                continue
            if not row["exact"]:
                lossy += 1
                continue
            exact += 1
            problems += _round_trip(entry, imp, row["prompt"], out / row["files"][0], target,
                                    tmp_path / f"back{exact}")
    print(f"\n{target}: {exact} exact exports round-trip checked, {lossy} lossy")
    assert problems == []
    assert exact >= 20


def _round_trip(entry: dict[str, Any], imp: Imported, name: str, file: Path, target: str,
                back: Path) -> list[str]:
    code = import_.run(sources=[file], out=back, source_format=target, fmt=Format.text,
                       console=Console())
    if code != 0 and imp.code != 0:
        return []  # the original import was lossy too: both name their losses
    if code != 0:
        return [f"{entry['id']}/{name}: re-import of {file.name} exit {code}"]
    again = Build(back).bundle
    [prompt] = again["prompts"]
    renderer = Renderer(again)
    original = next(p for p in imp.bundle["prompts"] if p["name"] == name)
    ir_prompt = imp.ir[[p["name"] for p in imp.bundle["prompts"]].index(name)]
    kinds = {a["name"]: a.get("type", "string") for a in original["arguments"]}
    names = {a["name"] for a in prompt["arguments"]}
    problems = []
    for inputs in judges.input_sets(entry):
        args = {k: wire(v, kinds[k]) for k, v in arguments_for(ir_prompt, inputs).items()}
        want = served(untimed(imp.renderer, name, args))
        if target == "claude" and names == {"ARGUMENTS"} and set(args) - names:
            args = {"ARGUMENTS": next(iter(args.values()))} if args else {}  # one text
        got = served(untimed(renderer, prompt["name"], {k: v for k, v in args.items()
                                                        if k in names}))
        if got != want:
            problems.append(f"{entry['id']}/{name} via {target}: {got!r} != {want!r}")
    return problems


# Losses after which the target's text differs from the package's by what the loss names;
# every other written file must substitute to exactly what the package renders.
_CHANGES_TEXT = re.compile(r"no defaults|not written|cannot be expressed|would substitute|"
                           r"would replace|would run|would read|does not use its arguments|"
                           r"referenced|strips|media|Claude Code form")


@pytest.mark.parametrize("target", ["vscode", "claude"])
def test_written_files_run_as_the_package_does(
        target: str, packages: dict[str, Imported],
        exported: Callable[[str, str], Exported]) -> None:
    """Issue 22: no Jinja left in a VS Code or Claude Code file; its frontmatter parses; its
    body uses only the documented substitution syntax (target_grammar.py, citing the docs);
    and substituting realistic values as the tool documents gives what `render` gives - the
    messages joined by a blank line, as the one message these tools send."""
    checked = refused = 0
    problems: list[str] = []
    for entry in ENTRIES:
        imp = packages[entry["id"]]
        if imp.error is not None:
            continue
        _, report, out = exported(target, entry["id"])
        for row in report:
            if row["refused"]:
                refused += 1
                continue
            problems += _substitutes(entry, imp, row, out / row["files"][0], target)
            checked += 1
    print(f"\n{target}: {checked} files checked, {refused} prompts refused")
    assert problems == [], "\n".join(problems)
    assert checked >= 100


def _substitutes(entry: dict[str, Any], imp: Imported, row: dict[str, Any], file: Path,
                 target: str) -> list[str]:
    name = row["prompt"]
    # bytes as the tool reads them: a CRLF source keeps its CRLF through import and export
    _front, body = grammar.split_file(file.read_bytes().decode("utf-8"))
    if target == "vscode":
        grammar.vscode_names(body)  # only documented variables
    original = next(p for p in imp.bundle["prompts"] if p["name"] == name)
    ir_prompt = imp.ir[[p["name"] for p in imp.bundle["prompts"]].index(name)]
    kinds = {a["name"]: a.get("type", "string") for a in original["arguments"]}
    order = [a["name"] for a in original["arguments"]]
    exact_text = not any(_CHANGES_TEXT.search(f"{loss['what']}: {loss['reason']}")
                         for loss in row["losses"])
    problems = []
    for inputs in judges.input_sets(entry):
        args = {k: wire(v, kinds[k]) for k, v in arguments_for(ir_prompt, inputs).items()}
        messages = served(untimed(imp.renderer, name, args))
        want = "\n\n".join(m.get("text", "") for m in messages)
        leftover = set(grammar.TEMPLATE_SYNTAX.findall(body)) - \
            set(grammar.TEMPLATE_SYNTAX.findall(want))
        if leftover:  # Jinja the package does not output itself (a {% raw %} text may)
            problems.append(f"{entry['id']}/{name}: template syntax {leftover} in {file.name}")
        if not exact_text or any("media" in m for m in messages):
            continue
        values = {k: str(v) for k, v in args.items()}
        if target == "vscode":
            got = grammar.vscode_substitute(body, values)
        else:
            texts = [values.get(n, "") for n in order]
            typed = texts[0] if len(texts) == 1 else grammar.claude_text(texts)
            got = grammar.claude_substitute(body, typed if any(texts) else "")
        if got != want:
            at = next(i for i, (a, b) in enumerate(zip(got + "\0", want + "\0", strict=False))
                      if a != b)
            near = slice(max(0, at - 80), at + 80)
            problems.append(f"{entry['id']}/{name} via {target}: differs at {at}: "
                            f"{got[near]!r} != {want[near]!r} ({row['losses']})"[:900])
    return problems
