"""Prompty (``.prompty``, v1 as prompty 0.1.x runs it): YAML frontmatter + a Jinja body.

What Prompty does, and so what the import reproduces (prompty/renderers.py, parsers.py):

* The body is rendered by Jinja with its defaults (no trim, no lstrip): whitespace ``jinja``.
* The *rendered* text is then split into messages on lines like ``system:``, ``user:``,
  ``assistant:`` (also ``# user``, any case); text before the first is a system message;
  each message's content is ``strip()``ped. The import splits the template on the same lines
  and writes the strip into it: literal blanks at a message's edges are dropped, and a message
  that starts or ends with a tag is wrapped in ``{% filter trim %}`` (``{{ x | trim }}`` for a
  lone value) - exactly ``str.strip``.
* ``{% for item in history %}{{item.role}}:\\n{{item.content}}{% endfor %}`` makes one message
  per item (the marker comes from the value): that is a Splice of ``history`` (trimmed).
* A missing input renders as Jinja's Undefined (empty); ``prepare`` fills missing inputs from
  ``sample:`` and does **not** apply ``inputs.x.default``. So an argument's default is its
  sample value, else what renders as a missing one (``""``, ``[]``); the declared default is a
  note when it differs.

Frontmatter: ``name`` -> title, ``description``; ``inputs`` -> typed arguments (``type``,
``description``; an input the template loops over is an array whatever its declared type);
``sample`` (inline or ``${file:x.json}``) -> defaults and the sample ``sample``;
``model.configuration`` -> model id (``azure_deployment``/``name``/``model``) with the rest
as metadata (``${env:X}`` references kept as written), ``model.parameters`` -> generation
settings, their ``tools`` -> tools and ``response_format`` -> output; anything else -> metadata.
``template: mustache`` bodies are translated to Jinja by :mod:`promptops.interop.mustache`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from promptops.interop import mustache
from promptops.interop.errors import InteropError
from promptops.interop.importers import _common
from promptops.interop.importers._prompty_inputs import arguments_of
from promptops.interop.ir import (
    IRPrompt,
    Json,
    Loss,
    Message,
    MessageItem,
    Model,
    Output,
    Role,
    Sample,
    Splice,
    Text,
    Tool,
)
from promptops.interop.jinja_build import literal
from promptops.sandbox.jinja_source import Token, tokenize

_FRONTMATTER = re.compile(r"^\s*(?:---|\+\+\+)(.*?)(?:---|\+\+\+)\s*(.+)$", re.S | re.M)
_MARKER = re.compile(r"[ \t]*#?[ \t]*(assistant|function|system|user)[ \t]*:[ \t]*\r?\n",
                     re.I)
_OPENERS = frozenset({"if", "for", "macro", "call", "filter", "with", "block", "autoescape"})
_DEFINES = frozenset({"set", "macro", "import", "from", "include", "extends", "block"})
_HISTORY = re.compile(
    r"\{%-?\s*for\s+(\w+)\s+in\s+(\w+)\s*-?%\}(\s*\n[ \t]*)"
    r"\{\{-?\s*\1\.role\s*-?\}\}[ \t]*:[ \t]*\r?\n"
    r"[ \t]*\{\{-?\s*\1\.content\s*-?\}\}\s*\{%-?\s*endfor\s*-?%\}")
_DYNAMIC_MARKER = re.compile(r"^[ \t]*\{\{[^}]*\}\}[ \t]*:[ \t]*\r?$", re.M)
_ENV = re.compile(r"\$\{env:[^}]*\}", re.I)
_FILE = re.compile(r"\A\$\{file:([^}]+)\}\Z")
_KNOWN = ("name", "description", "inputs", "sample", "model", "template", "outputs")


def parse(path: str, text: str, siblings: Mapping[str, str]) -> list[IRPrompt]:
    m = _FRONTMATTER.search(text)
    if not m:
        raise InteropError(path, "no frontmatter: a .prompty file starts with --- YAML ---", 1)
    front = _common.mapping(path, _common.load_yaml(path, m.group(1), 1), "frontmatter")
    body, body_line = m.group(2), text.count("\n", 0, m.start(2)) + 1
    losses: list[Loss] = []
    notes: list[str] = []
    template = front.get("template", "jinja2")
    kind = template.get("type", template.get("format")) if isinstance(template, dict) \
        else template
    if kind == "mustache":
        body = _from_mustache(body, body_line, losses, notes)
    elif kind not in (None, "jinja2", "jinja"):
        losses.append(Loss(f"template: {kind}", "Prompty renders jinja2 and mustache; it "
                           "refuses any other renderer (and only those are translated); the "
                           "body is imported as a Jinja template"))
    if isinstance(front.get("base"), str):
        losses.append(Loss(f"base: {front['base']}", "the body builds on its base prompty "
                           "({% extends %}), whose text is not imported; Prompty's renderer "
                           "refuses the body without it (TemplateNotFound), so the body is "
                           "imported as literal text"))
        body = literal(body)
    sample = _sample(path, front.get("sample"), siblings, notes, losses)
    inputs = front.get("inputs")
    if isinstance(inputs, str):  # inputs: ${file:x.json}, read as prompty reads it
        inputs = _sample(path, inputs, siblings, notes, losses) or None
        for name, spec in (inputs or {}).items():  # their samples are the prompt's sample
            if isinstance(spec, dict) and "sample" in spec and name not in sample:
                sample[name] = spec["sample"]
    sample = _sample_files(path, sample, siblings, notes, losses)
    messages, used, iterated, objects = _messages(body, body_line, losses, notes)
    arguments = arguments_of(inputs, used, iterated, sample, messages, notes, objects)
    losses += _missing_attributes(body, sample)
    known = {a.name for a in arguments}
    dropped = sorted(k for k in sample if k not in known)
    if dropped:
        notes.append(f"sample keys {dropped} are not arguments of the template: left out of "
                     "the sample")
    samples = (Sample("sample", {k: v for k, v in sample.items() if k in known}),) \
        if sample else ()
    model, tools, output, meta = _model(path, front.get("model"), siblings, notes, losses)
    meta.update({k: v for k, v in front.items() if k not in _KNOWN})
    if isinstance(front.get("outputs"), dict):
        meta["prompty.outputs"] = front["outputs"]
    title = front.get("name")
    return [IRPrompt(
        name=_common.prompt_name(path, [".prompty"]), source=path, ecosystem="prompty",
        messages=tuple(messages), arguments=tuple(arguments), whitespace="jinja",
        title=title if isinstance(title, str) else None,
        description=front.get("description") if isinstance(front.get("description"), str)
        else None,
        model=model, tools=tools, output=output, samples=samples, metadata=meta,
        losses=tuple(losses), notes=tuple(notes))]


# --------------------------------------------------------------------------- body

def _from_mustache(body: str, body_line: int, losses: list[Loss], notes: list[str]) -> str:
    """The Jinja of a ``template: mustache`` body (Prompty renders it with its chevron port,
    then splits the roles of the result, as for Jinja)."""
    try:
        done = mustache.to_jinja(body)
    except mustache.MustacheError as e:
        losses.append(Loss("template: mustache", f"{e.message}; the body is imported as "
                           "literal text", body_line + e.line - 1))
        return literal(body)
    notes.append("template: mustache, translated to Jinja")
    notes.extend(done.notes)
    return done.source


def _messages(body: str, first_line: int, losses: list[Loss], notes: list[str]
              ) -> tuple[list[MessageItem], list[str], set[str], set[str]]:
    tokens = tokenize(body)
    names = _common.JinjaNames(body)
    if names.error is not None:
        raise InteropError("", f"Jinja syntax error: {names.error.message}",
                           first_line + (names.error.lineno or 1) - 1)
    cuts, defines = _cuts(body, tokens, first_line, losses)
    segments: list[tuple[Role | str, str]] = []
    start, role = 0, "system"
    for a, b, r in cuts:
        segments.append((role, body[start:a]))
        start, role = b, r
    segments.append((role, body[start:]))
    if defines and len([s for s in segments if s[1].strip()]) > 1:
        losses.append(Loss("{% set %} / {% macro %} / {% import %}", "Prompty renders the whole "
                           "body at once; definitions are not shared between the imported "
                           "messages"))
    items: list[MessageItem] = []
    for role, source in segments:
        if not source.strip():
            continue  # Prompty drops empty chunks
        if role == "function":
            losses.append(Loss("function:", "function messages are not MCP messages; imported "
                               "as user"))
        items.extend(_segment("user" if role == "function" else role, source, notes))  # type: ignore[arg-type]
    return items, names.ordered, names.iterated, names.attributes


def _cuts(body: str, tokens: list[Token], first_line: int, losses: list[Loss]
          ) -> tuple[list[tuple[int, int, str]], bool]:
    """The role marker lines at the top level (start, end, role) and whether the body
    defines anything ({% set %}, a macro) that a split into messages would not share."""
    depth = 0
    cuts: list[tuple[int, int, str]] = []  # (start, end, role) of each marker line
    defines = False
    for i, tok in enumerate(tokens):
        if tok.kind == "block":
            word = (body[tok.open_end:tok.close_start].split() or [""])[0]
            if word in _OPENERS or (word == "set" and "=" not in body[tok.open_end:
                                                                      tok.close_start]):
                depth += 1
            elif word.startswith("end"):
                depth -= 1
            defines = defines or word in _DEFINES
            continue
        if tok.kind not in ("text", "raw_text"):
            continue
        at_line_start = i == 0 or _ends_line(body, tokens[i - 1])
        pos = tok.start
        while pos < tok.end:
            eol = body.find("\n", pos, tok.end)
            end = tok.end if eol < 0 else eol + 1
            line_start = pos > tok.start or at_line_start
            mk = _MARKER.fullmatch(body, pos, end) if line_start else None
            if mk:
                if depth:
                    losses.append(Loss(body[pos:end].strip(), "a role marker inside a block "
                                       "makes the messages depend on the input",
                                       first_line + body.count("\n", 0, pos)))
                else:
                    cuts.append((pos, end, mk.group(1).lower()))
            pos = end
    return cuts, defines


def _ends_line(body: str, tok: Token) -> bool:
    return tok.kind in ("text", "raw_text") and body[tok.end - 1:tok.end] == "\n"


def _segment(role: Role, source: str, notes: list[str]) -> list[MessageItem]:
    """One marker's message (and a trailing history splice), with Prompty's strip built in."""
    out: list[MessageItem] = []
    hist = None
    for m in _HISTORY.finditer(source):
        if not source[m.end():].strip():
            hist = m
    if hist is not None:
        before = source[:hist.start()]
        if before.strip():
            out.append(Message(role, (Text(_stripped(before)),)))
        out.append(Splice(hist.group(2), trim=True))
        notes.append(f"the loop over {hist.group(2)} writes role markers from its items: "
                     f"imported as a splice of {hist.group(2)} (one message per item, content "
                     "trimmed, as Prompty parses it)")
        return out
    if _DYNAMIC_MARKER.search(source):
        notes.append("a line '{{ value }}:' may render as a role marker, which Prompty would "
                     "split on; it is imported as text")
    return [Message(role, (Text(_stripped(source)),))]


def _stripped(source: str) -> str:
    """The template whose output is ``str.strip()`` of ``source``'s output."""
    tokens = tokenize(source)
    head, tail = tokens[0], tokens[-1]
    a, b = 0, len(source)
    if head.kind == "text":
        a = len(source[:head.end]) - len(source[:head.end].lstrip())
    if tail.kind == "text":
        b = tail.start + len(source[tail.start:].rstrip())
        if b < tail.start:
            b = tail.start
    inner = source[a:b]
    first = tokenize(inner) if inner else []
    if not first:
        return ""
    edge_tag = first[0].kind != "text" or first[-1].kind != "text" or (
        inner[:1].isspace() or inner[-1:].isspace())
    if not edge_tag:
        return inner
    if len(first) == 1 and first[0].kind == "var":
        expr = inner[first[0].open_end:first[0].close_start].strip()
        simple = re.fullmatch(r"[\w.]+", expr)
        return "{{ " + (expr if simple else f"({expr})") + " | trim }}"
    return "{% filter trim %}" + inner + "{% endfilter %}"


# --------------------------------------------------------------------------- frontmatter

def _sample(path: str, value: Json, siblings: Mapping[str, str], notes: list[str],
            losses: list[Loss]) -> dict[str, Json]:
    if isinstance(value, str):
        m = _FILE.match(value.strip())
        if not m:
            raise InteropError(path, f"sample: {value!r} is neither a mapping nor ${{file:...}}",
                               1)
        if not _inside(m.group(1).strip()):
            losses.append(Loss(f"sample: {value}", "the sample file is outside the prompt's "
                               "folder; the import reads nothing outside it"))
            return {}
        text = siblings.get(m.group(1).strip())
        if text is None:
            losses.append(Loss(f"sample: {value}", f"the sample file {m.group(1)} is not beside "
                               "the prompt, so its values (Prompty's defaults) are unknown"))
            return {}
        try:
            value = json.loads(text)
        except ValueError as e:
            raise InteropError(m.group(1), f"invalid JSON: {e}", 1) from None
        notes.append(f"sample read from {m.group(1)}")
    return value if isinstance(value, dict) else {}


def _missing_attributes(body: str, sample: Mapping[str, Json]) -> list[Loss]:
    """``{{ research.entities }}`` where the sample's ``research`` has no ``entities``: Prompty
    (Jinja's lenient Undefined) renders it empty, promptops refuses an undefined value - the
    served prompt cannot render as Prompty does with that value, so it is a loss."""
    from jinja2 import Environment, TemplateSyntaxError, nodes

    try:
        ast = Environment().parse(body)
    except TemplateSyntaxError:  # reported by _messages
        return []
    out: list[Loss] = []
    seen: set[str] = set()

    def value_of(node: nodes.Node, scope: Mapping[str, Json]) -> Json:
        if isinstance(node, nodes.Name):
            return scope.get(node.name)
        if isinstance(node, nodes.Getattr):
            base = value_of(node.node, scope)
            return base.get(node.attr) if isinstance(base, dict) else None
        return None

    def check(node: nodes.Node, scope: Mapping[str, Json], alias: tuple[str, str] | None
              ) -> None:
        for get in node.find_all(nodes.Getattr):
            base = value_of(get.node, scope)
            what = f"{name_of(get.node)}.{get.attr}"
            if alias is not None and what.startswith(alias[0] + "."):
                what = alias[1] + what[len(alias[0]):]
            if isinstance(base, dict) and get.attr not in base and what not in seen:
                seen.add(what)
                out.append(Loss(what, f"the sample has no {get.attr!r} there: Prompty renders "
                                "the missing value as empty, promptops refuses to render an "
                                "undefined one"))

    def name_of(node: nodes.Node) -> str:
        if isinstance(node, nodes.Name):
            return node.name
        if isinstance(node, nodes.Getattr):
            return f"{name_of(node.node)}.{node.attr}"
        return "..."

    check(ast, sample, None)
    for loop in ast.find_all(nodes.For):  # {% for item in research.web %}{{ item.title }}
        items = value_of(loop.iter, sample)
        if not isinstance(items, list) or not isinstance(loop.target, nodes.Name):
            continue
        for item in items[:50]:
            check(loop, {**sample, loop.target.name: item},
                  (loop.target.name, f"{name_of(loop.iter)}[]"))
    return out


def _inside(name: str) -> bool:
    """A ``${file:}`` reference that stays inside the prompt's folder (no ``..``, not
    absolute): the only ones the import reads (never a file outside the source folder)."""
    parts = name.replace("\\", "/").split("/")
    return bool(name) and not name.startswith(("/", "~")) and ":" not in name \
        and ".." not in parts


def _sample_files(path: str, sample: dict[str, Json], siblings: Mapping[str, str],
                  notes: list[str], losses: list[Loss]) -> dict[str, Json]:
    """Sample values written ``${file:x.json}``: Prompty loads them (JSON) when it loads the
    prompt, so the value is the file's content; read only inside the source folder."""
    out = dict(sample)
    for key, value in sample.items():
        m = _FILE.match(value.strip()) if isinstance(value, str) else None
        if m is None:
            continue
        name = m.group(1).strip()
        text = siblings.get(name) if _inside(name) else None
        if not _inside(name):
            losses.append(Loss(f"sample.{key}: {value}", "the file is outside the prompt's "
                               "folder; the import reads nothing outside it, so the sample "
                               "value is left out"))
        elif text is None:
            losses.append(Loss(f"sample.{key}: {value}", f"{name} is not beside the prompt, "
                               "so Prompty's value for it is unknown; left out of the sample"))
        else:
            try:
                out[key] = json.loads(text) if name.lower().endswith(".json") else text
                notes.append(f"sample.{key} read from {name}")
                continue
            except ValueError as e:
                losses.append(Loss(f"sample.{key}: {value}", f"{name} is not valid JSON "
                                   f"({e}); left out of the sample"))
        del out[key]
    return out


def _model(path: str, model: Json, siblings: Mapping[str, str], notes: list[str],
           losses: list[Loss]
           ) -> tuple[Model | None, tuple[Tool, ...], Output | None, dict[str, Json]]:
    meta: dict[str, Json] = {}
    if not isinstance(model, dict):
        return None, (), None, meta
    config = model.get("configuration") or model.get("connection") or {}
    config = config if isinstance(config, dict) else {}
    model_id = next((config[k] for k in ("azure_deployment", "name", "model")
                     if isinstance(config.get(k), str)), None)
    if model_id is not None and _ENV.search(model_id):
        notes.append(f"the model is {model_id}, read from the environment at load: no model id")
        model_id = None
    params = dict(model.get("parameters") or {})
    tools = _tools(params.pop("tools", None), siblings, notes, losses)
    output = None
    fmt = params.pop("response_format", None)
    if isinstance(fmt, dict) and isinstance(fmt.get("type"), str):
        output = Output(fmt["type"], fmt.get("json_schema"))
    meta["prompty.model"] = {k: v for k, v in model.items() if k != "parameters"}
    if any(_ENV.search(str(v)) for v in config.values()):
        notes.append("model.configuration reads ${env:...} at load: kept as written in metadata "
                     "prompty.model (never served)")
    return Model(model_id, params), tools, output, meta


def _tools(raw_tools: Json, siblings: Mapping[str, str], notes: list[str],
           losses: list[Loss]) -> tuple[Tool, ...]:
    """``model.parameters.tools``: inline, or ``${file:x.json}`` inside the prompt's folder."""
    if isinstance(raw_tools, str) and _FILE.match(raw_tools.strip()):
        name = _FILE.match(raw_tools.strip()).group(1).strip()  # type: ignore[union-attr]
        text = siblings.get(name) if _inside(name) else None
        try:
            raw_tools = json.loads(text) if text is not None else None
        except ValueError:
            raw_tools = None
        if raw_tools is None:
            losses.append(Loss(f"tools: ${{file:{name}}}", "the tools file is not a JSON file "
                               "inside the prompt's folder, so the tools are unknown"
                               if _inside(name) else "the tools file is outside the prompt's "
                               "folder; the import reads nothing outside it"))
        else:
            notes.append(f"tools read from {name}")
    if isinstance(raw_tools, list):
        return tuple(Tool(_tool_name(t), t if isinstance(t, dict) else None)
                      for t in raw_tools)
    return ()


def _tool_name(tool: Json) -> str:
    if isinstance(tool, dict):
        fn = tool.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return str(fn["name"])
        if isinstance(tool.get("name"), str):
            return str(tool["name"])
        return json.dumps(tool)
    return str(tool)
