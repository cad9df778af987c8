"""`promptops export` of a hand-written package: what each target gets for includes, comments,
template logic and a package file (issue 22, "What to build" item 5).

The corpus tests (test_export_command.py) cover imported prompts; these cover what only a
hand-written package has. Per target: the written file loads in the target's own engine
where one runs here (``prompty``; Google's ``dotprompt`` under node) or follows the target's
documented substitution (VS Code, Claude Code: target_grammar.py), holds none of our
template syntax where the target has none, and renders what ``promptops`` renders - or the
prompt is refused, nothing written, with its reason.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import target_grammar as grammar
from fidelity import judges
from helpers.repo import make_repo, run_cli

from promptops.interop import ir
from promptops.interop.exporters import EXPORTERS
from promptops.pipeline.build import Build
from promptops.render.renderer import Renderer

MANIFEST = "name: demo\nversion: 1.0.0\n"
FILES = {
    "promptops.yaml": MANIFEST,
    "partials/head.j2": "{# shared #}\nYou review {{ lang }} code.\n",
    "resources/checklist.md": "# Checklist\n- tests pass\n",
    "prompts/review.prompt.yaml": (
        "description: Review code\narguments:\n  - {name: lang, required: true}\n"
        "messages:\n  - role: user\n    text: |\n      {% include \"partials/head.j2\" %}\n"
        "      {# why: keep it short #}\n      Review this {{ lang }} change.\n"),
    "prompts/logic.prompt.yaml": (
        "arguments:\n  - {name: who, required: false}\nmessages:\n  - role: user\n"
        "    text: \"Hello{% if who %} {{ who }}{% endif %}.\"\n"),
    "prompts/filtered.prompt.yaml": (
        "arguments:\n  - {name: who, required: true}\nmessages:\n  - role: user\n"
        "    text: \"Hello {{ who | upper }}.\"\n"),
    "prompts/checklist.prompt.yaml": (
        "arguments:\n  - {name: lang, required: true}\nmessages:\n  - role: user\n"
        "    text: \"Check the {{ lang }} change against this list.\"\n  - role: user\n"
        "    resource: {uri: \"promptops://docs/checklist.md\", file: resources/checklist.md}\n"
        "  - role: user\n    resource: {uri: \"file:///diff\", text: \"{{ diff }}\"}\n"),
}
FILES["prompts/checklist.prompt.yaml"] = FILES["prompts/checklist.prompt.yaml"].replace(
    "  - {name: lang, required: true}\n", "  - {name: lang, required: true}\n"
    "  - {name: diff, required: false}\n")
VALUES = {"lang": "Rust", "who": "Ada"}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Renderer]:
    root = tmp_path_factory.mktemp("pkg") / "pkg"
    make_repo(root, FILES)
    return root, Renderer(Build(root).bundle)


def _export(root: Path, target: str, out: Path) -> dict[str, dict[str, Any]]:
    run = run_cli("export", "--to", target, "-o", str(out), "--format", "json", cwd=root)
    assert run.returncode == 1, run.stderr  # refusals and losses: exit 1
    return {row["prompt"]: row for row in json.loads(run.stdout)}


def _rendered(renderer: Renderer, name: str) -> str:
    args = {k: v for k, v in VALUES.items()
            if k in {a["name"] for a in renderer.bundle["prompts"][_index(renderer, name)]
                     ["arguments"]}}
    messages = renderer.get(name, args)["messages"]
    return "\n\n".join(m["content"]["text"] for m in messages
                       if m["content"]["type"] == "text")


def _index(renderer: Renderer, name: str) -> int:
    return [p["name"] for p in renderer.bundle["prompts"]].index(name)


@pytest.mark.parametrize("target", ["vscode", "claude"])
def test_substitution_targets(target: str, package: tuple[Path, Renderer],
                              tmp_path: Path) -> None:
    root, renderer = package
    report = _export(root, target, tmp_path)
    # the include is inlined, the comments are gone, the argument is the target's own syntax
    review = (tmp_path / report["review"]["files"][0]).read_text()
    _front, body = grammar.split_file(review)
    assert not grammar.TEMPLATE_SYNTAX.search(review), review
    if target == "vscode":
        assert body == "You review ${input:lang} code.\nReview this ${input:lang} change.\n"
        got = grammar.vscode_substitute(body, VALUES)
    else:
        assert body == "You review $ARGUMENTS code.\nReview this $ARGUMENTS change.\n"
        got = grammar.claude_substitute(body, VALUES["lang"])
    assert report["review"]["exact"] and got == _rendered(renderer, "review")
    # template logic and filters: refused, nothing written, the reason named
    for name, why in (("logic", "{% if %} logic"), ("filtered", "| upper")):
        row = report[name]
        assert row["refused"] and row["files"] == []
        assert any(why in loss["reason"] and loss["reason"].startswith("not exported: ")
                   for loss in row["losses"]), row
    assert not any(name.startswith(("logic", "filtered")) for name in
                   (p.name for p in tmp_path.rglob("*") if p.is_file()))
    # a file an earlier export left for a prompt now refused is named, and kept
    stale = tmp_path / (".github/prompts/logic.prompt.md" if target == "vscode"
                        else ".claude/commands/logic.md")
    stale.write_text("Hello{% if who %} {{ who }}{% endif %}.")
    again = _export(root, target, tmp_path)["logic"]
    assert any("earlier export" in loss["reason"] and loss["what"].endswith(stale.name)
               for loss in again["losses"]) and stale.exists()
    # a package file: written beside the prompts and referenced the way the target reads
    # files; the resource whose text came from an argument is named with that argument
    row = report["checklist"]
    prompt_file, copy = (tmp_path / f for f in row["files"])
    assert copy.read_bytes() == (root / "resources/checklist.md").read_bytes()
    _front, body = grammar.split_file(prompt_file.read_text())
    if target == "vscode":
        assert body.endswith("\n\n[checklist.md](../promptops/resources/checklist.md)")
        assert (prompt_file.parent / "../promptops/resources/checklist.md").resolve() == \
            copy.resolve()
    else:
        assert body.endswith("\n\n@.claude/promptops/resources/checklist.md")
        assert (tmp_path / ".claude/promptops/resources/checklist.md") == copy
    reasons = " ".join(f"{x['what']}: {x['reason']}" for x in row["losses"])
    assert "resource resources/checklist.md: written to" in reasons
    assert "resource message (file:///diff)" in reasons and "argument diff" in reasons


def test_prompty_inlines_includes_and_loads(package: tuple[Path, Renderer],
                                             tmp_path: Path) -> None:
    root, renderer = package
    report = _export(root, "prompty", tmp_path)
    for name in ("review", "logic"):
        file = tmp_path / report[name]["files"][0]
        assert "include" not in file.read_text()
        args = {k: v for k, v in VALUES.items() if k in ("lang", "who")}
        [message] = judges.render_prompty(file, args)  # prompty.load + prepare
        assert message["text"] == _rendered(renderer, name).strip()  # Prompty strips


def test_dotprompt_inlines_includes_and_renders(package: tuple[Path, Renderer],
                                               tmp_path: Path) -> None:
    root, renderer = package
    report = _export(root, "dotprompt", tmp_path)
    jobs, names = [], ("review", "logic")
    for name in names:
        text = (tmp_path / report[name]["files"][0]).read_text()
        assert not re.search(r"\{%|(?<!\{)\{#|include", text), text  # {{#if}} is Handlebars
        jobs.append({"source": text, "partials": {}, "input": VALUES, "messages": None,
                     "context": None})
    for name, answer in zip(names, judges._run_node("dotprompt_render.js", jobs), strict=True):
        assert "error" not in answer, answer
        assert [m["text"] for m in answer["messages"]] == [_rendered(renderer, name)]


def test_what_the_substitution_targets_refuse() -> None:
    """At the IR: every refusal names its reason and writes nothing; no other export of
    these holds Jinja."""
    def prompt(template: str, *names: str) -> ir.IRPrompt:
        return ir.IRPrompt("p", "p", "test", (ir.Message("user", (ir.Text(template),)),),
                           tuple(ir.Argument(n) for n in names))
    refused = {
        "{% for x in xs %}{{ x }}{% endfor %}": "{% for %} logic",
        "{% set y = 1 %}{{ y }}": "{% set %} logic",
        "{{ who ~ '!' }}": "not a plain argument",
        '{% include "absent.j2" %}': "not in the package",
        "{{ args['a:b'] }}": "cannot be named",
    }
    for template, why in refused.items():
        for target in ("vscode", "claude"):
            if target == "claude" and why == "cannot be named":
                continue  # Claude Code names no argument: $ARGUMENTS
            files, losses = EXPORTERS[target](prompt(template, "who", "xs", "a:b"))
            assert files == {} and any(why in x.reason for x in losses), (target, losses)
    ok = prompt('{% include "absent.j2" ignore missing %}{{ "{{" }} {# c #}{{ who }}', "who")
    files, losses = EXPORTERS["vscode"](ok)
    assert files == {".github/prompts/p.prompt.md": "{{ ${input:who}"} and losses == []
