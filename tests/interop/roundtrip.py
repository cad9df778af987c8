"""Export every imported corpus prompt to each target, import it back, and render both.

Used by test_export.py; ``python tests/interop/roundtrip.py`` prints per target how many
prompts export with no loss, and that each of those round-trips (and, for Prompty and
Dotprompt, renders the same in that tool's own engine).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fidelity import ROLE_NAMES, arguments_for, import_entry, judges  # noqa: E402
from ir_render import render  # noqa: E402

from promptops.interop import ir  # noqa: E402
from promptops.interop.exporters import EXPORTERS  # noqa: E402
from promptops.interop.importers import IMPORTERS  # noqa: E402

TARGET_IMPORTER = {"vscode": "vscode", "claude": "claude", "prompty": "prompty",
                   "dotprompt": "dotprompt"}


@dataclass
class Case:
    entry: dict[str, Any]
    prompt: ir.IRPrompt
    target: str
    files: dict[str, str]
    losses: list[ir.Loss]
    problems: list[str] = field(default_factory=list)
    engine_checked: int = 0

    @property
    def expressible(self) -> bool:
        return not self.losses


def values_for(case: Case, back: ir.IRPrompt, values: dict[str, Any]) -> dict[str, Any]:
    """The original's argument values, under the names the re-imported prompt uses."""
    names = {a.name for a in back.arguments}
    if case.target == "claude" and len(case.prompt.arguments) == 1 and "ARGUMENTS" in names:
        return {"ARGUMENTS": next(iter(values.values()))} if values else {}
    return {k: v for k, v in values.items() if k in names}


def run(entries: list[dict[str, Any]]) -> list[Case]:
    cases: list[Case] = []
    for entry in entries:
        try:
            prompts = import_entry(entry)
        except Exception:  # reported by the import test
            continue
        for prompt in prompts:
            if prompt.losses and not _renders(entry, prompt):
                continue  # the import named why its inputs cannot render: nothing to compare
            for target, export in EXPORTERS.items():
                files, losses = export(prompt)
                cases.append(Case(entry, prompt, target, files, losses))
    for case in cases:
        if case.expressible:
            _round_trip(case)
    _judge_prompty([c for c in cases if c.expressible and c.target == "prompty"])
    _judge_dotprompt([c for c in cases if c.expressible and c.target == "dotprompt"])
    return cases


def _renders(entry: dict[str, Any], prompt: ir.IRPrompt) -> bool:
    try:
        for inputs in judges.input_sets(entry):
            render(prompt, arguments_for(prompt, inputs))
    except Exception:
        return False
    return True


def _input_sets(case: Case) -> list[dict[str, Any]]:
    return [arguments_for(case.prompt, inputs) for inputs in judges.input_sets(case.entry)]


def _round_trip(case: Case) -> None:
    [(path, text)] = case.files.items()
    try:
        [back] = IMPORTERS[TARGET_IMPORTER[case.target]](path, text, {})
    except Exception as e:
        case.problems.append(f"re-import failed: {type(e).__name__}: {e}")
        return
    if back.losses:
        case.problems.append(f"re-import has losses: {[str(x) for x in back.losses]}")
    for values in _input_sets(case):
        try:
            want = render(case.prompt, values)
        except Exception as e:
            if not case.prompt.losses:  # else the import named why these inputs cannot render
                case.problems.append(f"render failed: {type(e).__name__}: {e}")
            continue
        try:
            got = render(back, values_for(case, back, values))
        except Exception as e:
            case.problems.append(f"render failed: {type(e).__name__}: {e}")
            continue
        if got != want:
            case.problems.append(f"round trip differs: {got!r} vs {want!r}"[:600])


def _judge_prompty(cases: list[Case]) -> None:
    import prompty

    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            [(name, text)] = case.files.items()
            path = Path(tmp) / name
            path.write_text(text, encoding="utf-8")
            saved = dict(os.environ)
            try:  # the exported file loads, no fallback (connection variables are set, as
                # the judge sets them: they never reach the messages)
                for var in re.findall(r"\$\{env:([A-Za-z_]\w*)", text):
                    os.environ.setdefault(var, "https://placeholder.invalid")
                prompty.load(str(path))
            except Exception as e:
                case.problems.append(f"prompty.load refuses the export: {e}")
                continue
            finally:
                os.environ.clear()
                os.environ.update(saved)
            for values in _input_sets(case):
                try:
                    want = render(case.prompt, values)
                except Exception:
                    if case.prompt.losses:  # the import named why these inputs cannot render
                        continue
                    raise
                got = judges.render_prompty(path, values)
                case.engine_checked += 1
                if got != want:
                    case.problems.append(f"prompty renders {got!r}, the IR {want!r}"[:600])


def _judge_dotprompt(cases: list[Case]) -> None:
    jobs, keys = [], []
    for case in cases:
        [text] = case.files.values()
        for values in _input_sets(case):
            data = dict(values)
            messages = data.pop("messages", None)
            jobs.append({"source": text, "partials": {}, "input": data, "messages": messages,
                         "context": None})
            keys.append((case, values))
    for (case, values), answer in zip(keys, judges._run_node("dotprompt_render.js", jobs),
                                      strict=True):
        if "error" in answer:
            case.problems.append(f"dotprompt refuses the export: {answer['error'][:300]}")
            continue
        got = [{"role": ROLE_NAMES.get(m["role"], m["role"]), "text": m["text"]}
               for m in answer["messages"]]
        try:
            want = render(case.prompt, values)
        except Exception:
            if case.prompt.losses:  # the import named why these inputs cannot render
                continue
            raise
        case.engine_checked += 1
        if got != want:
            case.problems.append(f"dotprompt renders {got!r}, the IR {want!r}"[:600])


def summary(cases: list[Case]) -> str:
    per: dict[str, Counter[str]] = {}
    for c in cases:
        n = per.setdefault(c.target, Counter())
        n["prompts"] += 1
        n["expressible"] += c.expressible
        n["round trip"] += c.expressible and not c.problems
        n["engine"] += c.engine_checked > 0 and not c.problems
    lines = ["| target | prompts | exported with no loss | round trip identical | "
             "own engine identical |", "| --- | --- | --- | --- | --- |"]
    for target, n in per.items():
        engine = n["engine"] if target in ("prompty", "dotprompt") else "-"
        lines.append(f"| {target} | {n['prompts']} | {n['expressible']} | {n['round trip']} | "
                     f"{engine} |")
    reasons: Counter[str] = Counter()
    for c in cases:
        for loss in c.losses[:1]:
            reasons[f"{c.target}: {loss.reason}"] += 1
    lines += ["", "Most common first loss per target:"]
    lines += [f"- {n} x {why}" for why, n in reasons.most_common(20)]
    for c in cases:
        for p in c.problems:
            lines.append(f"- PROBLEM {c.target} {c.entry['id']}/{c.prompt.name}: {p}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(run(judges.load_manifest())))
