"""Export to VS Code, Claude Code, Prompty and Dotprompt: round trips, and the tools' own engines.

For every corpus prompt (as imported) and every target: the export either says what the target
cannot express (each loss with its reason) or is exact - and then importing the written file
back renders identically to the original on the entry's realistic inputs, and for Prompty and
Dotprompt the written file also loads and renders the same text in that tool's own library
(``prompty.load`` + ``prepare``; Google's ``dotprompt``). ``python tests/interop/roundtrip.py``
prints the table.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest
from roundtrip import Case, judges, run, summary

from promptops.interop import ir
from promptops.interop.exporters import EXPORTERS


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return run(judges.load_manifest())


def test_every_target_is_exercised(cases: list[Case]) -> None:
    per = Counter(c.target for c in cases if c.expressible)
    print("\n" + summary(cases))
    assert set(per) == set(EXPORTERS)
    # Each target can express a real share of the corpus (what it cannot is a stated loss).
    assert min(per.values()) >= 20, per


def test_exact_exports_round_trip(cases: list[Case]) -> None:
    problems = [f"{c.target} {c.entry['id']}/{c.prompt.name}: {p}"
                for c in cases if c.expressible for p in c.problems]
    assert problems == []


def test_prompty_and_dotprompt_exports_render_in_their_own_engines(cases: list[Case]) -> None:
    for target in ("prompty", "dotprompt"):
        exact = [c for c in cases if c.target == target and c.expressible]
        assert exact and all(c.engine_checked for c in exact), target


def test_lossy_exports_say_why(cases: list[Case]) -> None:
    for c in cases:
        assert all(loss.what and len(loss.reason) > 15 for loss in c.losses), c.losses
        # a lossy export still writes its file, unless the prompt is refused, with why
        assert c.files or any(loss.reason.startswith("not exported: ") for loss in c.losses)


def test_what_each_target_cannot_express() -> None:
    """Small prompts that each target must refuse to call exact."""
    system = ir.IRPrompt("p", "p", "test", (ir.Message("system", (ir.Text("Be brief."),)),
                                            ir.Message("user", (ir.Text("Q: {{ q }}?"),))),
                         (ir.Argument("q"),))
    logic = ir.IRPrompt("p", "p", "test", (ir.Message("user", (ir.Text(
        "{% if q %}Q: {{ q }}{% endif %}"),)),), (ir.Argument("q"),))
    edge = ir.IRPrompt("p", "p", "test", (ir.Message("user", (ir.Text("\n{{ q }}"),)),),
                       (ir.Argument("q"),))
    dollar = ir.IRPrompt("p", "p", "test", (ir.Message("user", (ir.Text(
        "costs $1 or ${input:x} or !`rm -rf x`"),)),))
    assert any("system" in loss.what for loss in EXPORTERS["vscode"](system)[1])
    assert any("system" in loss.what for loss in EXPORTERS["claude"](system)[1])
    assert EXPORTERS["prompty"](system)[1] == []  # Prompty has a system role
    assert EXPORTERS["dotprompt"](system)[1] == []
    assert EXPORTERS["vscode"](logic)[1] and EXPORTERS["claude"](logic)[1]
    assert EXPORTERS["dotprompt"](logic)[1] == []
    assert any("strips" in loss.reason for loss in EXPORTERS["prompty"](edge)[1])
    claude = {loss.what for loss in EXPORTERS["claude"](dollar)[1]}
    assert {"$1", "!`rm -rf x`"} <= claude
    assert {loss.what for loss in EXPORTERS["vscode"](dollar)[1]} == {"${input:x}"}


def test_every_written_prompty_and_dotprompt_file_loads(cases: list[Case],
                                                        tmp_path: Path) -> None:
    """Lossy exports too (issue 22): a written file the tool refuses to load is no export.
    Prompty: ``prompty.load`` (0.1, its own frontmatter validation); Dotprompt: Google's
    ``dotprompt`` renders it with the entry's first realistic input set."""
    import prompty

    written = [c for c in cases if c.files and c.target == "prompty"]
    refused = []
    for n, case in enumerate(written):
        [(name, text)] = case.files.items()
        path = tmp_path / f"{n}-{name}"
        path.write_text(str(text), encoding="utf-8")
        saved = dict(os.environ)
        try:
            for var in re.findall(r"\$\{env:([A-Za-z_]\w*)", str(text)):
                os.environ.setdefault(var, "https://placeholder.invalid")
            prompty.load(str(path))
        except Exception as e:
            refused.append(f"prompty {case.entry['id']}/{case.prompt.name}: {e}"[:300])
        finally:
            os.environ.clear()
            os.environ.update(saved)
    dot = [c for c in cases if c.files and c.target == "dotprompt"]
    jobs = []
    for case in dot:
        [text] = case.files.values()
        values = dict(next(iter(_inputs(case)), {}))
        messages = values.pop("messages", None)
        jobs.append({"source": text, "partials": {}, "input": values, "messages": messages,
                     "context": None})
    for case, answer in zip(dot, judges._run_node("dotprompt_render.js", jobs), strict=True):
        if "error" in answer:
            refused.append(f"dotprompt {case.entry['id']}/{case.prompt.name}: "
                           f"{answer['error']}"[:300])
    assert len(written) > 200 and len(dot) > 200
    assert refused == [], "\n".join(refused)


def _inputs(case: Case) -> list[dict[str, object]]:
    from fidelity import arguments_for
    return [arguments_for(case.prompt, inputs) for inputs in judges.input_sets(case.entry)]
