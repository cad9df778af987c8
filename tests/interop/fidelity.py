"""Import every corpus prompt, render it from the IR, and compare with its own engine.

Used by test_corpus_import.py, and runnable on its own to print the per-ecosystem table and
every mismatch or loss with its reason (``python tests/interop/fidelity.py``).

How an entry's realistic inputs reach the IR's arguments (the only translation the test does):
Copilot's ``input:x`` is argument ``x``; Dotprompt's ``@messages`` is the history argument; a
value for a string argument that the corpus wrote as a YAML number or boolean is sent as the
text a caller would type (MCP carries strings); inputs the prompt does not read are dropped.
The judges' role names are ours: Dotprompt's and Gemini's ``model`` is ``assistant``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "corpus" / "judges"))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import judges  # noqa: E402
from ir_render import ArgumentError, render  # noqa: E402

from promptops.interop import ir  # noqa: E402
from promptops.interop.importers import IMPORTERS  # noqa: E402

ECOSYSTEM_IMPORTER = {"prompty": "prompty", "dotprompt": "dotprompt", "copilot": "vscode",
                      "claude": "claude", "promptfoo": "promptfoo", "langchain": "langchain"}
ROLE_NAMES = {"model": "assistant"}


def entry_files(entry: dict[str, Any]) -> tuple[str, str, dict[str, str]]:
    """(main file name, its text, the other files by name)."""
    folder = judges.entry_dir(entry)
    names = [f["name"] for f in entry["files"]]
    texts = {n: (folder / n).read_bytes().decode("utf-8") for n in names}
    main = names[0]
    return main, texts[main], {n: t for n, t in texts.items() if n != main}


def import_entry(entry: dict[str, Any]) -> list[ir.IRPrompt]:
    main, text, siblings = entry_files(entry)
    return IMPORTERS[ECOSYSTEM_IMPORTER[entry["ecosystem"]]](main, text, siblings)


def arguments_for(prompt: ir.IRPrompt, inputs: dict[str, Any]) -> dict[str, Any]:
    names = {a.name: a for a in prompt.arguments}
    out: dict[str, Any] = {}
    context = inputs.get("@context")
    if isinstance(context, dict):  # Dotprompt's render context: @state, @auth...
        inputs = {**{k: v for k, v in inputs.items() if k != "@context"},
                  **{"@" + k: v for k, v in context.items()}}
    for key, value in inputs.items():
        name = key
        if key.startswith("input:") and key not in names:
            name = key[len("input:"):]
        elif key == "@messages":
            name = "messages"
        elif key == "@typed":  # Copilot's argument-hint: what is typed after the command
            name = "input"
        if name not in names:
            continue
        if names[name].type == "string" and not isinstance(value, str):
            value = json.dumps(value) if isinstance(value, bool | int | float) else value
        out[name] = value
    return out


def reference_messages(result: list[dict[str, Any]], index: int | None
                       ) -> list[dict[str, str]]:
    return [{"role": ROLE_NAMES.get(m["role"], m["role"]), "text": m["text"]}
            for m in result if index is None or m.get("prompt") == index]


def served_messages(result: list[dict[str, Any]], index: int | None) -> list[dict[str, str]]:
    """The engine's messages as promptops serves them: a message of text and media parts is
    one MCP message per part (docs/format.md, "Messages of several parts"), a media part as
    its URL (``{"role", "media"}``)."""
    out: list[dict[str, str]] = []
    for m in result:
        if index is not None and m.get("prompt") != index:
            continue
        role = ROLE_NAMES.get(m["role"], m["role"])
        if "parts" not in m:
            out.append({"role": role, "text": m["text"]})
            continue
        out += [{"role": role, "text": p["text"]} if "text" in p
                else {"role": role, "media": p.get("media", repr(p))} for p in m["parts"]]
    return out


@dataclass
class EntryResult:
    entry: dict[str, Any]
    prompts: list[ir.IRPrompt] = field(default_factory=list)
    error: str | None = None  # the importer failed
    mismatches: list[str] = field(default_factory=list)
    compared: int = 0  # input sets (x alternative prompts) compared with the judge
    refused: str | None = None  # the source engine refuses the entry

    @property
    def losses(self) -> list[ir.Loss]:
        return [loss for p in self.prompts for loss in p.losses]

    @property
    def renders_identically(self) -> bool:
        return self.error is None and not self.mismatches and self.compared > 0

    @property
    def exact(self) -> bool:
        """Imported with no loss and every rendering byte-identical (``exit 0``)."""
        return self.renders_identically and not self.losses


def run(entries: list[dict[str, Any]]) -> list[EntryResult]:
    rendered = judges.render_all(entries)
    results = []
    for entry in entries:
        res = EntryResult(entry)
        results.append(res)
        try:
            res.prompts = import_entry(entry)
        except Exception as e:  # the report says which entry and why
            res.error = f"{type(e).__name__}: {e}"
            continue
        for i, inputs in enumerate(judges.input_sets(entry)):
            expected = rendered[(entry["id"], i)]
            if isinstance(expected, str):
                res.refused = expected
                continue
            several = entry["ecosystem"] == "promptfoo"
            for n, prompt in enumerate(res.prompts):
                want = reference_messages(expected, n if several else None)
                try:
                    got = render(prompt, arguments_for(prompt, inputs))
                except (ArgumentError, Exception) as e:
                    res.mismatches.append(f"input set {i}, {prompt.name}: render failed: "
                                          f"{type(e).__name__}: {e}")
                    continue
                res.compared += 1
                if got != want:
                    res.mismatches.append(f"input set {i}, {prompt.name}: "
                                          f"{_first_difference(got, want)}")
            if not several and len(res.prompts) != 1:
                res.mismatches.append(f"{len(res.prompts)} prompts imported, expected 1")
    return results


def _first_difference(got: list[dict[str, str]], want: list[dict[str, str]]) -> str:
    if len(got) != len(want):
        return (f"{len(got)} messages, engine has {len(want)}: "
                f"{[m['role'] for m in got]} vs {[m['role'] for m in want]}")
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if g != w:
            if g["role"] != w["role"]:
                return f"message {k}: role {g['role']!r}, engine {w['role']!r}"
            a, b = g["text"], w["text"]
            at = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]),
                      min(len(a), len(b)))
            return (f"message {k} differs at {at}: ours {a[max(0, at - 30):at + 30]!r}, "
                    f"engine {b[max(0, at - 30):at + 30]!r}")
    return "equal"


def summary(results: list[EntryResult]) -> str:
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        c = per[r.entry["ecosystem"]]
        c["entries"] += 1
        c["identical"] += r.renders_identically
        c["exact"] += r.exact
        c["refused"] += r.refused is not None
    lines = ["| ecosystem | entries | render identical | exact (no loss) | engine refuses |",
             "| --- | --- | --- | --- | --- |"]
    total: Counter[str] = Counter()
    for eco, c in per.items():
        total.update(c)
        lines.append(f"| {eco} | {c['entries']} | {c['identical']} | {c['exact']} | "
                     f"{c['refused']} |")
    lines.append(f"| all | {total['entries']} | {total['identical']} | {total['exact']} | "
                 f"{total['refused']} |")
    lines.append("")
    for r in results:
        if r.exact:
            continue
        lines.append(f"- {r.entry['ecosystem']}/{r.entry['id']}:")
        if r.error:
            lines.append(f"  - import failed: {r.error}")
        if r.refused:
            lines.append(f"  - the source engine refuses it: {r.refused[:160]}")
        lines += [f"  - mismatch: {m}" for m in r.mismatches]
        lines += [f"  - loss: {loss}" for loss in r.losses]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(run(judges.load_manifest())))
