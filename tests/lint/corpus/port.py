"""Port the real-prompt corpus (tests/corpus) to one promptops package, for lint's measurements.

Issue 15 judges lint on prompts other people wrote. The importers of issue 14
(``promptops.interop``) read each corpus entry into the import IR; this script writes that IR
as a promptops package the way an author migrating by hand would: one prompt file per prompt,
a multi-line body moved verbatim into a template file (so every byte the author wrote - tabs,
trailing spaces, a missing final newline - is still there for lint to judge), a one-line body
inline, and every realistic input set of corpus.yaml as a test case (the argument samples the
safe-fix proof renders).

The package is committed (tests/lint/corpus/package), so the suite needs neither the importers
nor their judges; run this to regenerate it when the corpus or the importers change::

    PYTHONPATH=<a checkout with promptops/interop> python tests/lint/corpus/port.py

What the package format cannot say is left out and listed in the package's PORTING.md:
history splices (arguments that are chat transcripts), media parts, and non-string argument
types (MCP arguments are strings; the samples carry JSON text for them). Roles: ``system`` and
``model`` become ``assistant``, the format's place for a persona (docs/format.md).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "corpus"
OUT = HERE / "package"

ECOSYSTEM_IMPORTER = {"prompty": "prompty", "dotprompt": "dotprompt", "copilot": "vscode",
                      "claude": "claude", "promptfoo": "promptfoo", "langchain": "langchain"}
ROLE = {"user": "user", "assistant": "assistant", "system": "assistant", "model": "assistant"}


def ident(name: str) -> str:
    out = re.sub(r"\W", "_", name)
    return out if out[:1].isalpha() or out[:1] == "_" else "_" + out


def rewrite_args(template: str, names: dict[str, str]) -> str:
    """``args['reference-file']`` (the IR's way to read a non-identifier) -> the new name."""
    for old, new in names.items():
        template = template.replace(f"args[{old!r}]", new).replace(f'args["{old}"]', new)
    return re.sub(r"\bargs\.(\w+)", r"\1", template)


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and not re.search(r"[ \t]\n|[ \t]$|\t", value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def string_args(inputs: dict[str, Any], names: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in inputs.items():
        name = key[len("input:"):] if key.startswith("input:") and key not in names else key
        if name not in names:
            continue
        out[names[name]] = value if isinstance(value, str) else json.dumps(value)
    return out


def port() -> None:
    sys.path[:0] = [str(CORPUS / "judges")]
    from judges import entry_dir, load_manifest  # tests/corpus/judges/judges.py

    from promptops.interop import ir
    from promptops.interop.importers import IMPORTERS

    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "prompts").mkdir(parents=True)
    (OUT / "templates").mkdir()
    (OUT / "tests").mkdir()
    (OUT / "promptops.yaml").write_text(dump({
        "name": "real-prompt-corpus", "version": "1.0.0",
        "description": "The prompts of tests/corpus, ported for lint's precision measurement"}))
    left_out: list[str] = []
    for entry in load_manifest():
        folder = entry_dir(entry)
        files = [f["name"] for f in entry["files"]]
        texts = {n: (folder / n).read_bytes().decode("utf-8") for n in files}
        prompts = IMPORTERS[ECOSYSTEM_IMPORTER[entry["ecosystem"]]](
            files[0], texts[files[0]], {n: t for n, t in texts.items() if n != files[0]})
        for prompt in prompts:
            name = ident(f"{entry['id']}-{prompt.name}" if len(prompts) > 1 else entry["id"])
            name = name.replace("_", "-").strip("-")
            names = {a.name: ident(a.name) for a in prompt.arguments}
            messages: list[dict[str, Any]] = []
            flat: list[Any] = []
            dropped: set[str] = set()  # arguments only the left-out constructs read
            for item in prompt.messages:
                if isinstance(item, ir.Loop):
                    left_out.append(f"{name}: messages repeated over {item.argument!r}")
                    dropped.add(item.argument)
                elif isinstance(item, ir.Splice):
                    left_out.append(f"{name}: history splice of {item.argument!r}")
                    dropped.add(item.argument)
                else:
                    flat.append(item)
                    for part in item.parts:
                        if isinstance(part, ir.Media):
                            dropped.update(re.findall(r"\w+", part.url))
            for i, msg in enumerate(flat):
                text = "".join(p.template for p in msg.parts if isinstance(p, ir.Text))
                if any(not isinstance(p, ir.Text) for p in msg.parts):
                    left_out.append(f"{name}: media part in message {i}")
                text = rewrite_args(text, names)
                role = ROLE[msg.role]
                if "\n" in text:
                    rel = f"templates/{name}.{i}.md.j2"
                    (OUT / rel).write_text(text, encoding="utf-8", newline="")
                    messages.append({"role": role, "template": rel})
                else:
                    messages.append({"role": role, "text": text})
            if not messages:
                left_out.append(f"{name}: no message the format can carry")
                continue
            spec: dict[str, Any] = {"name": name}
            if prompt.title:
                spec["title"] = prompt.title
            if prompt.description:
                spec["description"] = prompt.description
            kept = "".join(m.get("text", "") for m in messages) + "".join(
                (OUT / m["template"]).read_text(encoding="utf-8") for m in messages
                if "template" in m)
            args = []
            for a in prompt.arguments:
                if names[a.name] in dropped and not re.search(
                        rf"\b{re.escape(names[a.name])}\b", kept):
                    left_out.append(f"{name}: argument {a.name!r}, read only by what is left out")
                    continue
                arg: dict[str, Any] = {"name": names[a.name]}
                if a.description:
                    arg["description"] = a.description
                if a.required:
                    arg["required"] = True
                elif isinstance(a.default, str):
                    arg["default"] = a.default
                elif a.has_default:
                    arg["default"] = json.dumps(a.default)
                if a.type != "string":
                    left_out.append(f"{name}: argument {a.name!r} is {a.type} upstream")
                args.append(arg)
            if args:
                spec["arguments"] = args
            spec["messages"] = messages
            header = (f"# Ported from {entry['repository']}:{entry['path']} @ "
                      f"{entry['commit'][:12]} ({entry['licence']}) by tests/lint/corpus/port.py\n")
            (OUT / "prompts" / f"{name}.prompt.yaml").write_text(header + dump(spec))
            cases = []
            for n, inputs in enumerate(entry.get("inputs") or [], 1):
                arguments = string_args(inputs, names)
                missing = [a["name"] for a in args if a.get("required") and a["name"]
                           not in arguments]
                if not missing:
                    cases.append({"name": f"corpus input {n}", "arguments": arguments})
            if cases:
                (OUT / "tests" / f"{name}.test.yaml").write_text(
                    dump({"prompt": name, "cases": cases}))
    (OUT / "PORTING.md").write_text(
        "# What the port leaves out\n\nGenerated by tests/lint/corpus/port.py.\n\n"
        + "".join(f"- {line}\n" for line in left_out))


if __name__ == "__main__":
    port()
