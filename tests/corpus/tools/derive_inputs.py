"""Realistic input sets for a corpus prompt, derived mechanically from what the file reads.

Issue 22's selection rule says inputs are never hand-tuned to make a comparison pass, so they
are made here by rule: the file's own samples first (Prompty ``sample:``), then its declared
inputs (Prompty ``inputs:`` types and defaults, Dotprompt ``input.schema`` Picoschema or JSON
Schema types), then the variables its template reads (Jinja for Prompty, Handlebars names for
Dotprompt, ``${input:x}`` and editor variables for Copilot, ``$ARGUMENTS``/``$1`` for Claude
Code). A value's type follows the declaration; its text is plausible for its name
(``question`` gets a question, ``language`` a language) and always contains the name's words,
so a rendering that drops it is visible. Two sets per prompt where that exercises something:
everything given, and (Dotprompt, Claude Code) the optional inputs left out.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import yaml

PLAUSIBLE = [
    ("question", "What sleeping bag suits winter camping in Norway?"),
    ("query", "waterproof hiking boots under 150 euros"),
    ("language", "Italian"), ("lang", "German"), ("locale", "fr-FR"),
    ("name", "Ada Lovelace"), ("firstname", "Priya"), ("lastname", "Okafor"),
    ("email", "ada@example.com"), ("topic", "solar-powered water pumps"),
    ("subject", "quarterly sales review"), ("title", "Winter camping for beginners"),
    ("code", "def add(a, b):\n    return a + b"), ("diff", "- x = 1\n+ x = 2"),
    ("file", "src/app/main.py"), ("path", "src/app/main.py"), ("url", "https://example.com/docs"),
    ("date", "2026-11-30"), ("time", "14:30"), ("city", "Lisbon"), ("country", "Kenya"),
    ("context", "The store sells tents, sleeping bags and stoves; returns within 30 days."),
    ("document", "Solar pumps cut irrigation costs by 40% in a 2024 field trial."),
    ("text", "The meeting moved to Thursday because the venue flooded."),
    ("content", "Our new tent weighs 1.2 kg and packs to the size of a water bottle."),
    ("answer", "The CozyNights bag is rated to -5C."), ("response", "Yes, it ships on Monday."),
    ("input", "Summarise the attached release notes."), ("message", "Can I change my order?"),
    ("instruction", "Answer in two sentences."), ("feedback", "Cite a source for the figure."),
    ("style", "friendly and concise"), ("tone", "formal"), ("persona", "a patient tutor"),
    ("product", "TrailMaster X4 tent"), ("ingredient", "chickpeas"), ("food", "risotto"),
    ("genre", "jazz"), ("task", "write unit tests for the parser"), ("goal", "reduce churn"),
    ("description", "A lightweight two-person tent for alpine routes."),
    ("summary", "Sales rose 12% on winter gear."), ("ticket", "PROJ-1423"),
    ("issue", "Login fails after password reset"), ("branch", "feature/login-fix"),
    ("version", "2.4.1"), ("id", "ord-20931"), ("user", "priya"), ("audience", "new hires"),
]


def plausible(name: str) -> str:
    key = re.sub(r"[^a-z]", "", name.lower())
    for word, value in PLAUSIBLE:
        if word in key:
            return value
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " ")
    return f"sample {words.strip().lower()} value"


def typed(name: str, kind: str | None, schema: Any = None) -> Any:
    """A value of ``kind`` (JSON Schema type) for ``name``."""
    if kind in ("integer",):
        return 3
    if kind in ("number",):
        return 2.5
    if kind in ("boolean", "bool"):
        return True
    if kind in ("array", "list"):
        items = schema.get("items") if isinstance(schema, dict) else None
        if isinstance(items, dict) and items.get("type") == "object":
            return [obj_for(items, name, i) for i in (1, 2)]
        inner = items.get("type") if isinstance(items, dict) else "string"
        return [typed(f"{name} {i}", inner) for i in (1, 2)]
    if kind in ("object", "dict"):
        return obj_for(schema if isinstance(schema, dict) else {}, name, 1)
    return plausible(name)


def obj_for(schema: dict[str, Any], name: str, n: int) -> dict[str, Any]:
    props = schema.get("properties") or {}
    if not props:
        return {"name": f"{plausible(name)} {n}", "value": f"detail {n}"}
    return {k: typed(k, (v or {}).get("type") if isinstance(v, dict) else "string", v)
            for k, v in props.items()}


# ----------------------------------------------------------------------------- per format

def _frontmatter(text: str) -> tuple[dict[str, Any], str]:
    m = re.match(r"\A---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", text, re.S)
    if not m:
        return {}, text
    try:
        data = yaml.safe_load(m.group(1) or "") or {}
    except yaml.YAMLError:
        data = {}
    return (data if isinstance(data, dict) else {}), text[m.end():]


def _jinja_names(body: str) -> tuple[list[str], dict[str, set[str]], set[str]]:
    """(free variables in order, attributes read per loop variable's iterable, iterated)."""
    from jinja2 import Environment, meta, nodes

    try:
        ast = Environment().parse(body)
    except Exception:
        return [], {}, set()
    free = meta.find_undeclared_variables(ast)
    ordered = []
    for node in ast.find_all(nodes.Name):
        if node.ctx == "load" and node.name in free and node.name not in ordered:
            ordered.append(node.name)
    attrs: dict[str, set[str]] = {}
    iterated = set()
    for loop in ast.find_all(nodes.For):
        if isinstance(loop.iter, nodes.Name) and loop.iter.name in free:
            iterated.add(loop.iter.name)
            target = loop.target.name if isinstance(loop.target, nodes.Name) else None
            for get in loop.find_all(nodes.Getattr):
                if isinstance(get.node, nodes.Name) and get.node.name == target:
                    attrs.setdefault(loop.iter.name, set()).add(get.attr)
    for loop in ast.find_all(nodes.For):  # for item in customer.orders: a list attribute
        it = loop.iter
        if isinstance(it, nodes.Getattr) and isinstance(it.node, nodes.Name) \
                and it.node.name in free:
            target = loop.target.name if isinstance(loop.target, nodes.Name) else None
            inner = {g.attr for g in loop.find_all(nodes.Getattr)
                     if isinstance(g.node, nodes.Name) and g.node.name == target}
            attrs.setdefault(it.node.name + "." + it.attr, set()).update(inner or {""})
    for get in ast.find_all(nodes.Getattr):
        if isinstance(get.node, nodes.Name) and get.node.name in free:
            attrs.setdefault(get.node.name, set()).add(get.attr)
    return ordered, attrs, iterated


def prompty_inputs(path: Path, folder: Path) -> list[dict[str, Any]]:
    meta, body = _frontmatter(path.read_text(encoding="utf-8"))
    sample = meta.get("sample")
    if isinstance(sample, str) and sample.startswith("${file:"):
        f = folder / Path(sample[7:-1].strip()).name
        try:
            sample = json.loads(f.read_text(encoding="utf-8")) if f.is_file() else None
        except ValueError:
            sample = None
    values: dict[str, Any] = dict(sample) if isinstance(sample, dict) else {}
    for key, value in list(values.items()):  # prompty reads ${file:x} sample values too
        if isinstance(value, str) and value.startswith("${file:") and value.endswith("}"):
            f = folder / Path(value[7:-1].strip()).name
            with contextlib.suppress(OSError, ValueError):
                values[key] = json.loads(f.read_text(encoding="utf-8"))
    declared = meta.get("inputs") if isinstance(meta.get("inputs"), dict) else {}
    for name, spec in declared.items():
        if name in values:
            continue
        spec = spec if isinstance(spec, dict) else {"default": spec}
        if "sample" in spec:
            values[name] = spec["sample"]
        elif "default" in spec and spec["default"] not in (None, ""):
            values[name] = spec["default"]
        else:
            values[name] = typed(name, spec.get("type"), spec)
    names, attrs, iterated = _jinja_names(body)
    for name in names:
        if name in values:
            continue
        if name in iterated:
            keys = sorted(attrs.get(name, set()))
            if {"role", "content"} <= set(keys) or name in ("history", "chat_history"):
                values[name] = [{"role": "user", "content": "Do you sell sleeping bags?"},
                                {"role": "assistant", "content": "Yes, the CozyNights bag."}]
            elif keys:
                values[name] = [{k: f"{plausible(k)} {i}" for k in keys} for i in (1, 2)]
            else:
                values[name] = [f"{plausible(name)} {i}" for i in (1, 2)]
        elif name in attrs:
            obj: dict[str, Any] = {}
            for k in sorted(attrs[name]):
                listed = attrs.get(f"{name}.{k}")
                if listed is not None:
                    keys = sorted(x for x in listed if x)
                    obj[k] = ([{a: f"{plausible(a)} {i}" for a in keys} for i in (1, 2)]
                              if keys else [f"{plausible(k)} {i}" for i in (1, 2)])
                else:
                    obj[k] = plausible(k)
            values[name] = obj
        else:
            values[name] = plausible(name)
    return [values]


_HB_SKIP = {"if", "unless", "each", "with", "else", "this", "role", "media", "history",
            "section", "json", "ifEquals", "unlessEquals", "true", "false", "null", "lookup",
            "log"}


def _picoschema_fields(schema: Any) -> dict[str, tuple[str, bool, Any]]:
    """name -> (type, optional, sub-schema) of a Picoschema or JSON Schema object."""
    out: dict[str, tuple[str, bool, Any]] = {}
    if not isinstance(schema, dict):
        return out
    if isinstance(schema.get("properties"), dict):
        req = set(schema.get("required") or [])
        for k, v in schema["properties"].items():
            kind = v.get("type", "string") if isinstance(v, dict) else "string"
            if isinstance(kind, list):
                kind = next((t for t in kind if t != "null"), "string")
            out[k] = (kind, k not in req, v)
        return out
    for key, value in schema.items():
        m = re.match(r"^([\w-]+)(\?)?(?:\((\w+)[^)]*\))?$", str(key))
        if not m:
            continue
        name, opt, paren = m.group(1), bool(m.group(2)), m.group(3)
        if paren in ("array",):
            sub = value if isinstance(value, dict) else None
            kind = "array"
            if isinstance(value, str):
                sub = {"items": {"type": value.split(",")[0].strip()}}
            elif isinstance(value, dict):
                sub = {"items": {"type": "object", "properties": {
                    k2.split("(")[0].rstrip("?"): {"type": (
                        str(v2).split(",")[0].strip() if isinstance(v2, str) else "object")}
                    for k2, v2 in value.items()}}}
            out[name] = (kind, opt, sub)
        elif paren in ("object",):
            props = {k2.split("(")[0].rstrip("?"): {"type": (
                str(v2).split(",")[0].strip() if isinstance(v2, str) else "object")}
                for k2, v2 in (value or {}).items()} if isinstance(value, dict) else {}
            out[name] = ("object", opt, {"properties": props})
        elif paren == "enum":
            out[name] = ("enum", opt, value)
        else:
            kind = str(value).split(",")[0].strip() if isinstance(value, str) else "object"
            if kind.endswith("[]"):
                out[name] = ("array", opt, {"items": {"type": kind[:-2]}})
            else:
                out[name] = (kind if kind in ("string", "number", "integer", "boolean", "any")
                             else "string", opt, None)
    return out


def dotprompt_inputs(path: Path, folder: Path, entry: dict[str, Any]) -> list[dict[str, Any]]:
    text = "\n".join((folder / f["name"]).read_text(encoding="utf-8") for f in entry["files"])
    meta, _ = _frontmatter(path.read_text(encoding="utf-8"))
    inp = meta.get("input") if isinstance(meta.get("input"), dict) else {}
    fields = _picoschema_fields(inp.get("schema"))
    full: dict[str, Any] = {}
    minimal: dict[str, Any] = {}
    for name, (kind, optional, sub) in fields.items():
        if kind == "enum":
            value: Any = sub[0] if isinstance(sub, list) and sub else plausible(name)
        elif kind == "any":
            value = plausible(name)
        else:
            value = typed(name, kind, sub)
        full[name] = value
        if not optional:
            minimal[name] = value
    each_attrs: dict[str, set[str]] = {}
    for m in re.finditer(r"\{\{#each\s+([\w.]+)[^}]*\}\}(.*?)\{\{/each\}\}", text, re.S):
        each_attrs.setdefault(m.group(1), set()).update(
            re.findall(r"\{\{\{?\s*(?:this\.)?(\w+)", m.group(2)))
    outside = re.sub(r"\{\{#each\s+[\w.]+[^}]*\}\}.*?\{\{/each\}\}",
                     lambda m: m.group(0).split("}}", 1)[0] + "}}", text, flags=re.S)
    for m in re.finditer(
            r"\{\{\{?[#^]?\s*(?:(?:if|unless|each|with)\s+)?([A-Za-z_]\w*((?:\.\w+)*))",
            outside):
        name, dotted = m.group(1).split(".")[0], m.group(2)
        if name in _HB_SKIP or name.startswith("@"):
            continue
        if dotted:  # {{demo.id}}: an object with the fields read (a mere {{#if demo}} too)
            if not isinstance(full.get(name), dict):
                full[name] = {}
            cur = full[name]
            parts = dotted.strip(".").split(".")
            for k in parts[:-1]:
                if parts[-1] == "length" and k == parts[-2]:
                    break
                cur = cur.setdefault(k, {}) if isinstance(cur.get(k, {}), dict) else {}
            leaf = parts[-2] if parts[-1] == "length" and len(parts) > 1 else parts[-1]
            path = m.group(1)
            keys = sorted(k for k in each_attrs.get(path, each_attrs.get(
                path.rsplit(".length", 1)[0], set())) if k not in _HB_SKIP)
            if path in each_attrs or path.rsplit(".length", 1)[0] in each_attrs \
                    or parts[-1] == "length":
                cur[leaf] = [{k: f"{plausible(k)} {i}" for k in keys} for i in (1, 2)] if keys \
                    else [f"{plausible(leaf)} {i}" for i in (1, 2)]
            else:
                cur.setdefault(leaf, plausible(leaf))
            continue
        if name in full:
            continue
        if name in each_attrs:
            keys = sorted(k for k in each_attrs[name] if k not in _HB_SKIP)
            full[name] = ([{k: f"{plausible(k)} {i}" for k in keys} for i in (1, 2)] if keys
                          else [f"{plausible(name)} {i}" for i in (1, 2)])
        else:
            full[name] = plausible(name)
    if "{{history" in text or "{{ history" in text:
        full["@messages"] = [{"role": "user", "content": [{"text": "Hi, I need help."}]},
                             {"role": "model", "content": [{"text": "Sure, what about?"}]}]
    sets = [full]
    if minimal != full and minimal:
        sets.append(minimal)
    return sets


_COPILOT_EDITOR = {"workspaceFolder": "/home/dev/shop", "workspaceFolderBasename": "shop",
                   "selection": "total = price * qty", "selectedText": "total = price * qty",
                   "file": "/home/dev/shop/src/cart.ts", "fileBasename": "cart.ts",
                   "fileDirname": "/home/dev/shop/src", "fileBasenameNoExtension": "cart"}


def copilot_inputs(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    values: dict[str, Any] = {}
    for m in re.finditer(r"\$\{(input:([^}:]+)(?::[^}]*)?|[A-Za-z]+)\}", text):
        if m.group(2) is not None:
            values.setdefault("input:" + m.group(2), plausible(m.group(2)))
        elif m.group(1) in _COPILOT_EDITOR:
            values.setdefault(m.group(1), _COPILOT_EDITOR[m.group(1)])
    meta, _ = _frontmatter(text)
    if meta.get("argument-hint"):  # what the user types after the command
        return [{**values, "@typed": f"as the hint asks: {meta['argument-hint']}"}, values]
    return [values]


def claude_inputs(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if re.search(r"\$[1-9]", text):
        return [{"ARGUMENTS": "src/auth.py high"}, {"ARGUMENTS": ""}]
    return [{"ARGUMENTS": "fix the login redirect loop"}, {"ARGUMENTS": ""}]


def derive(entry: dict[str, Any], folder: Path) -> list[dict[str, Any]]:
    path = folder / entry["files"][0]["name"]
    eco = entry["ecosystem"]
    if eco == "prompty":
        return prompty_inputs(path, folder)
    if eco == "dotprompt":
        return dotprompt_inputs(path, folder, entry)
    if eco == "copilot":
        return copilot_inputs(path)
    return claude_inputs(path)
