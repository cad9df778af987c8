"""Issue 22's failure classes, each imported and served by promptops and judged by its source
engine (tests/corpus/judges): byte identity where the import says exact, a named loss
otherwise, never an exception.

The corpus entries that show a class are named where the grown corpus has one
(``ccs-chat``: object inputs read by attribute; ``mafa-writer``: ``${file:}`` sample values;
``gmu-worktrees``: ``argument-hint``; ``bmb-*``: CRLF files). Classes no corpus file under
the selection rule shows are probed here with small files in the shape the issue reports,
rendered by the same engines.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from fidelity import judges
from test_import_command import served, wire

from promptops.commands import import_
from promptops.commands.choices import Format
from promptops.console import Console
from promptops.interop.importers import IMPORTERS
from promptops.pipeline.build import Build
from promptops.render.renderer import Renderer


def imported(tmp: Path, files: dict[str, str], fmt: str) -> tuple[int, Path]:
    src = tmp / "src"
    src.mkdir(exist_ok=True)
    for name, text in files.items():
        (src / name).write_bytes(text.encode("utf-8"))
    main = src / next(iter(files))
    with contextlib.redirect_stdout(io.StringIO()):
        code = import_.run(sources=[main], out=tmp / "pkg", source_format=fmt,
                           fmt=Format.text, console=Console())
    return code, tmp / "pkg"


def serve(pkg: Path, values: dict[str, Any]) -> list[dict[str, str]]:
    bundle = Build(pkg).bundle
    [prompt] = bundle["prompts"]
    kinds = {a["name"]: a.get("type", "string") for a in prompt["arguments"]}
    args = {k: wire(v, kinds[k]) for k, v in values.items()}
    return served(dict(Renderer(bundle).get(prompt["name"], args)))


def dotprompt_engine(source: str, partials: dict[str, str], values: dict[str, Any]
                     ) -> list[dict[str, str]]:
    [answer] = judges._run_node("dotprompt_render.js", [{
        "source": source, "partials": partials, "messages": None, "context": None,
        "input": values}])
    return [{"role": {"model": "assistant"}.get(m["role"], m["role"]), "text": m["text"]}
            for m in judges._dotprompt_messages(answer)]


# --------------------------------------------------------------------------- Dotprompt

ROLES = ('---\ninput:\n  schema:\n    who: string\n---\n'
         '<<<dotprompt:role:system>>>\nYou answer in one line.\n'
         '{{role "user"}}\nHello, I am {{who}}.\n'
         '<<<dotprompt:role:model>>>\nHi {{who}}!\n'
         '{{role "user"}}\nWhat now?\n')


def test_dotprompt_role_markers_are_separate_messages(tmp_path: Path) -> None:
    """Both spellings - the helper and the marker it prints - split messages, as Dotprompt's
    toMessages splits the rendered text."""
    code, pkg = imported(tmp_path, {"chat.prompt": ROLES}, "dotprompt")
    want = dotprompt_engine(ROLES, {}, {"who": "Ada"})
    assert [m["role"] for m in want] == ["system", "user", "assistant", "user"]
    assert code == 0
    assert serve(pkg, {"who": "Ada"}) == want


PARTIAL_SYSTEM = '{{role "system"}}\nYou are {{persona}}. Be brief.\n'
WITH_PARTIAL = ('---\ninput:\n  schema:\n    persona: string\n    question: string\n---\n'
                '{{>preamble}}\n{{role "user"}}\n{{question}}\n')


def test_a_partial_that_carries_a_system_message_keeps_it(tmp_path: Path) -> None:
    code, pkg = imported(tmp_path, {"ask.prompt": WITH_PARTIAL,
                                    "_preamble.prompt": PARTIAL_SYSTEM}, "dotprompt")
    values = {"persona": "a ranger", "question": "Where can I camp?"}
    want = dotprompt_engine(WITH_PARTIAL, {"preamble": PARTIAL_SYSTEM}, values)
    assert want[0]["role"] == "system"
    assert code == 0
    assert serve(pkg, values) == want


SHORTHANDS = ('---\ninput:\n  schema:\n    tags: string[]\n    scores?: number[], the marks\n'
              '    owner(object):\n      team: Team\n    kind:\n      type: [string, "null"]\n'
              'output:\n  schema:\n    labels: string[]\n    detail: Analysis\n---\n'
              'Label {{kind}} for the {{owner.team}} team.\n')


def test_picoschema_and_json_schema_shorthands_import(tmp_path: Path) -> None:
    """``string[]`` and named schemas used to crash the YAML writer (RepresenterError)."""
    [prompt] = IMPORTERS["dotprompt"]("s.prompt", SHORTHANDS, {})
    tags = prompt.argument("tags")
    assert tags is not None and tags.type == "array" and tags.schema["items"] == {
        "type": "string"}
    scores = prompt.argument("scores")
    assert scores is not None and scores.type == "array" and not scores.required
    code, pkg = imported(tmp_path, {"s.prompt": SHORTHANDS}, "dotprompt")
    assert code in (0, 1)
    values = {"tags": ["a", "b"], "owner": {"team": "search"}, "kind": "bug"}
    assert serve(pkg, values) == dotprompt_engine(SHORTHANDS, {}, values)


# --------------------------------------------------------------------------- promptfoo

def test_a_custom_nunjucks_filter_is_a_named_loss(tmp_path: Path) -> None:
    """promptfoo's config may define filters (JavaScript): not in the file, so the import
    names the loss and prints the value unfiltered - no TemplateAssertionError."""
    text = "Reply to {{ name | shout }} about {{ topic | truncateWords(3) }} in {{ lang }}.\n"
    [prompt] = IMPORTERS["promptfoo"]("p.txt", text, {})
    assert {loss.what for loss in prompt.losses} == {"| shout", "| truncateWords"}
    assert all("custom Nunjucks filter" in loss.reason for loss in prompt.losses)
    code, pkg = imported(tmp_path, {"p.txt": text}, "promptfoo")
    assert code == 1
    assert "shout" in (pkg / "CONVERSION.md").read_text(encoding="utf-8")
    assert serve(pkg, {"name": "Ada", "topic": "tents", "lang": "Welsh"}) == [
        {"role": "user", "text": "Reply to Ada about tents in Welsh."}]


# --------------------------------------------------------------------------- Prompty

def prompty_engine(tmp: Path, files: dict[str, str], values: dict[str, Any]
                   ) -> list[dict[str, str]]:
    folder = tmp / "engine"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return judges.render_prompty(folder / next(iter(files)), values)


TYPED = """---
name: Typed
model:
  api: chat
inputs:
  customer:
    type: object
  orders:
    type: array
  budget:
    type: number
sample:
  customer:
    name: Ada
  orders:
    - Tent
    - Stove
  budget: 120.5
---
system:
You help {{ customer.name }} within {{ budget }} euros.

user:
{% for o in orders %}
- {{ o }}
{% endfor %}


assistant:
Noted.



user:
Anything else?
"""


def test_typed_prompty_inputs_and_the_blank_lines_around_messages(tmp_path: Path) -> None:
    """Object, array and number inputs keep their types and sample defaults (the package
    accepts them), and the blank lines around each message are stripped as Prompty does."""
    code, pkg = imported(tmp_path, {"typed.prompty": TYPED}, "prompty")
    assert code == 0
    spec = {a["name"]: a for a in Build(pkg).bundle["prompts"][0]["arguments"]}
    assert spec["customer"]["type"] == "object" and spec["orders"]["type"] == "array"
    assert spec["budget"]["type"] == "number" and spec["budget"]["default"] == 120.5
    values = {"customer": {"name": "Grace"}, "orders": ["Map"], "budget": 80}
    for given in (values, {}):
        want = prompty_engine(tmp_path, {"typed.prompty": TYPED}, given)
        assert serve(pkg, given) == want


FILE_REFS = """---
name: Writer
model:
  api: chat
  parameters:
    tools: ${file:tools.json}
sample:
  research: ${file:research.json}
  topic: winter camping
---
system:
Write about {{ topic }} using {{ research.findings[0] }}.
"""


def test_prompty_file_references_are_read_inside_the_folder(tmp_path: Path) -> None:
    files = {"writer.prompty": FILE_REFS,
             "research.json": json.dumps({"findings": ["tents sell out in December"]}),
             "tools.json": json.dumps([{"type": "function", "function": {"name": "search"}}])}
    [prompt] = IMPORTERS["prompty"]("writer.prompty", FILE_REFS, {
        k: v for k, v in files.items() if k != "writer.prompty"})
    assert [t.name for t in prompt.tools] == ["search"]
    assert prompt.losses == ()
    code, pkg = imported(tmp_path, files, "prompty")
    assert code == 0
    assert serve(pkg, {}) == prompty_engine(tmp_path, files, {})


@pytest.mark.parametrize("ref", ["../secret.json", "/etc/passwd", "sub/../../x.json"])
def test_prompty_file_references_outside_the_folder_are_refused(ref: str) -> None:
    text = FILE_REFS.replace("research.json", ref).replace("tools.json", ref)
    siblings = {ref: json.dumps({"findings": ["read from outside"]})}  # offered, never read
    [prompt] = IMPORTERS["prompty"]("writer.prompty", text, siblings)
    outside = [loss for loss in prompt.losses if "outside the prompt's folder" in loss.reason]
    assert len(outside) == 2, prompt.losses
    assert "read from outside" not in json.dumps([s.arguments for s in prompt.samples])
    assert prompt.tools == ()


def test_object_inputs_read_by_attribute_are_objects() -> None:
    """ccs-chat (corpus): ``{{ customer.firstName }}`` with no declared input is an object."""
    entry = next(e for e in judges.load_manifest() if e["id"] == "ccs-chat")
    main = judges.main_file(entry)
    [prompt] = IMPORTERS["prompty"](str(main), main.read_text(encoding="utf-8"), {})
    customer = prompt.argument("customer")
    assert customer is not None and customer.type == "object"


# --------------------------------------------------------------------------- Claude Code

@pytest.mark.parametrize(("line", "hint"), [
    ("argument-hint: [agent-name] [type: readonly|write] [purpose?]",
     "[agent-name] [type: readonly|write] [purpose?]"),
    ("argument-hint: [issue-number]", "[issue-number]"),
    ("argument-hint:   {a|b}  ", "{a|b}"),
    ('argument-hint: "[quoted]"', "[quoted]"),
])
def test_claude_argument_hint_is_text_as_claude_code_reads_it(line: str, hint: str) -> None:
    """Claude Code's docs write ``argument-hint: [pr-number] [priority]``: two YAML flow
    sequences, no YAML at all, and one bracketed word is a list. Claude Code reads the value
    as text (its runtime coerces it since 2026-02); the import refused such a command
    (speed corpus: bsamiee/Parametric_Portal) or described its argument with a list."""
    text = f"---\ndescription: d\n{line}\nallowed-tools: Bash\n---\nGo $ARGUMENTS\n"
    [prompt] = IMPORTERS["claude"]("c.md", text, {})
    assert prompt.metadata["argument-hint"] == hint
    assert prompt.arguments[0].description == f"What is typed after the command: {hint}."
    assert prompt.description == "d"
    assert [t.name for t in prompt.tools] == ["Bash"]


def test_claude_frontmatter_errors_keep_their_line_after_a_bracketed_hint() -> None:
    from promptops.interop.errors import InteropError

    text = "---\nargument-hint: [a] [b]\ndescription: a: b\n---\nGo\n"
    with pytest.raises(InteropError) as e:
        IMPORTERS["claude"]("c.md", text, {})
    assert (e.value.line, e.value.col) == (3, 15), e.value


# --------------------------------------------------------------------------- VS Code

HINTED = ('---\ndescription: Start a worktree\nargument-hint: "branch name and base"\n---\n'
          'Create a worktree for ${input:branch:the new branch} off ${input:base}.\n')


def test_copilot_argument_hint_and_input_placeholders(tmp_path: Path) -> None:
    [prompt] = IMPORTERS["vscode"]("wt.prompt.md", HINTED, {})
    names = {a.name: a for a in prompt.arguments}
    assert set(names) == {"branch", "base", "input"}
    assert names["branch"].description == "the new branch"
    assert "branch name and base" in (names["input"].description or "")
    code, pkg = imported(tmp_path, {"wt.prompt.md": HINTED}, "vscode")
    assert code == 0
    inputs = {"input:branch": "feature/x", "input:base": "main", "@typed": "please hurry"}
    want = judges.render_copilot(HINTED, inputs)
    assert serve(pkg, {"branch": "feature/x", "base": "main", "input": "please hurry"}) == want
    without = {k: v for k, v in inputs.items() if k != "@typed"}
    assert serve(pkg, {"branch": "feature/x", "base": "main"}) == judges.render_copilot(
        HINTED, without)
