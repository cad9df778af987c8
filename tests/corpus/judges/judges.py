"""The ecosystems' own engines, driven as judges of what a corpus prompt renders to.

Issue 14's importer must render every corpus prompt byte for byte as its source tool does, and
the only trustworthy statement of "what the source tool does" is the tool itself. So each
ecosystem is judged by its own engine, never by a re-implementation of ours:

* Prompty      - ``prompty`` 0.1.x from PyPI (``prompty.load`` + ``prompty.prepare``), in process.
* LangChain    - ``langchain-core`` from PyPI (``load_prompt`` + ``format_prompt().to_messages()``).
* Dotprompt    - Google's ``dotprompt`` npm package (``Dotprompt.render``), one Node process.
* promptfoo    - the ``nunjucks`` npm package configured as promptfoo configures it, one Node
  process, plus promptfoo's own file rules (``---`` separators, JSON chat arrays).
* Copilot / Claude Code - the tools have no library; their documented rule is plain text
  substitution, implemented here once and documented in NOTES.md.

``render_reference(entry, inputs)`` renders one entry; ``render_all(entries)`` renders every
input set of every entry with one Node process per Node ecosystem (the test stays fast).
Each message is ``{"role": ..., "text": ...}``; promptfoo text files with ``---`` separators hold
several alternative prompts, so their messages also carry ``"prompt": index``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import re
import subprocess
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parent.parent
JUDGES = Path(__file__).resolve().parent
MANIFEST = CORPUS / "corpus.yaml"

# Pinned Node judges; .ci/run installs the same versions into the shared test cache.
NODE_PACKAGES = {"dotprompt": "1.1.2", "nunjucks": "3.2.4"}

Message = dict[str, Any]


class JudgeError(RuntimeError):
    """The source's own engine refused to render an entry (the message says why)."""


@functools.cache
def _manifest() -> list[dict[str, Any]]:
    # libyaml's parser when PyYAML has it: the pure-Python one took ~0.8 s per parse, and
    # five test modules parse the manifest at import, in each worker of both CI runs
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(MANIFEST.read_text(encoding="utf-8"), Loader=loader)
    entries: list[dict[str, Any]] = data["entries"]
    return entries


def load_manifest() -> list[dict[str, Any]]:
    """The corpus entries of corpus.yaml, in file order (a fresh copy: callers may change
    it; the file is parsed once per process)."""
    return copy.deepcopy(_manifest())


def entry_dir(entry: dict[str, Any]) -> Path:
    return CORPUS / entry["ecosystem"] / entry["id"]


def main_file(entry: dict[str, Any]) -> Path:
    """The prompt file itself (the first file listed); the others are partials or sidecars."""
    return entry_dir(entry) / entry["files"][0]["name"]


def corpus_path(entry: dict[str, Any]) -> str:
    """The main file's path in the corpus, ``<ecosystem>/<id>/<file name>`` (the split's key)."""
    return f"{entry['ecosystem']}/{entry['id']}/{entry['files'][0]['name']}"


HELD_OUT_PERCENT = 30


def part(entry: dict[str, Any]) -> str:
    """``"held-out"`` or ``"tuning"``: README.md's rule, a hash of the main file's corpus path.

    Fixes are made against tuning files only; the held-out figure is the one that counts.
    """
    digest = hashlib.sha256(corpus_path(entry).encode("utf-8")).hexdigest()
    return "held-out" if int(digest[:8], 16) % 100 < HELD_OUT_PERCENT else "tuning"


# Files are read as bytes: Path.read_text would turn CRLF into LF, which no engine does
# (Node's readFileSync, VS Code and Claude Code hand the file's text over as it is).


def input_sets(entry: dict[str, Any]) -> list[dict[str, Any]]:
    sets: list[dict[str, Any]] = entry["inputs"]
    return sets


# --------------------------------------------------------------------------- frontmatter

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.S)


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter, body) of a Markdown prompt file; frontmatter is None when there is none.

    A file whose opening ``---`` is never closed has no frontmatter: the whole file is the
    body (that is how VS Code and Claude Code treat it; see NOTES.md).
    """
    m = _FRONTMATTER.match(text)
    if not m:
        return None, text
    return m.group(1) or "", text[m.end():]


# --------------------------------------------------------------------------- Copilot

_COPILOT_VAR = re.compile(r"\$\{(input:([^}:]+)(?::[^}]*)?|[A-Za-z]+)\}")
COPILOT_EDITOR_VARIABLES = frozenset({
    "workspaceFolder", "workspaceFolderBasename", "selection", "selectedText", "file",
    "fileBasename", "fileDirname", "fileBasenameNoExtension",
})


def render_copilot(text: str, inputs: dict[str, Any]) -> list[Message]:
    """VS Code prompt file: the body after the frontmatter, ``${...}`` variables replaced.

    ``@typed`` is what the user typed after the command (the file's ``argument-hint`` says
    what to type): VS Code sends it as the chat request, after the prompt file - a second
    user message here. ``${input:name}`` and ``${input:name:placeholder}`` take
    ``inputs["input:name"]`` (the placeholder is only the hint VS Code shows when it asks);
    editor variables
    (``${selection}``, ``${file}``, ``${workspaceFolder}`` ...) take ``inputs[name]``. Any other
    ``${...}`` is left as written, and so is ``{{...}}``: VS Code does not template it.
    """
    _, body = split_frontmatter(text)

    def sub(m: re.Match[str]) -> str:
        if m.group(2) is not None:
            key = "input:" + m.group(2)
        elif m.group(1) in COPILOT_EDITOR_VARIABLES:
            key = m.group(1)
        else:
            return m.group(0)
        if key not in inputs:
            raise JudgeError(f"no value for ${{{m.group(1)}}}")
        return str(inputs[key])

    typed = inputs.get("@typed")  # what the user typed after /command (argument-hint)
    return [{"role": "user", "text": _COPILOT_VAR.sub(sub, body)},
            *([{"role": "user", "text": str(typed)}] if typed else [])]


# --------------------------------------------------------------------------- Claude Code

_CLAUDE_VAR = re.compile(r"\$(ARGUMENTS\[([0-9]+)\]|ARGUMENTS|([0-9]))")


def render_claude(text: str, inputs: dict[str, Any]) -> list[Message]:
    """Claude Code command: the body after the frontmatter with ``$ARGUMENTS``, ``$0``..``$9``
    and ``$ARGUMENTS[N]``.

    ``inputs["ARGUMENTS"]`` is what the user typed after the command; ``$N`` and
    ``$ARGUMENTS[N]`` are its whitespace-separated words, **0-based** (``$0`` is the first
    word; Claude Code's current skills/commands docs, NOTES.md), an absent word empty. When
    the body uses none of these and arguments were given, Claude Code appends
    ``\\n\\nARGUMENTS: <value>``. ``!`cmd``` and ``@file`` are run / read by Claude Code at
    invocation and are kept verbatim here.
    """
    _, body = split_frontmatter(text)
    args = str(inputs.get("ARGUMENTS", ""))
    words = args.split()
    if not _CLAUDE_VAR.search(body):
        return [{"role": "user", "text": body + (f"\n\nARGUMENTS: {args}" if args else "")}]

    def sub(m: re.Match[str]) -> str:
        if m.group(1) == "ARGUMENTS":
            return args
        i = int(m.group(2) if m.group(2) is not None else m.group(3))
        return words[i] if i < len(words) else ""

    return [{"role": "user", "text": _CLAUDE_VAR.sub(sub, body)}]


# --------------------------------------------------------------------------- Prompty

_PROMPTY_ENV = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::[^}]*)?\}")


def _prompty_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    # Inline images make a list of parts; keep the text parts and mark the images.
    return "".join(p["text"] if p.get("type") == "text" else "<image>" for p in content)


def render_prompty(path: Path, inputs: dict[str, Any]) -> list[Message]:
    """``prompty.load`` + ``prompty.prepare`` (0.1.x), with placeholders for ``${env:X}``.

    Connection settings never reach the messages, so an unset ``${env:X}`` gets a placeholder
    value instead of failing the load. When prompty refuses the frontmatter itself (an
    ``${ENV:X}`` written for older prompty, an unknown input key, a missing ``${file:}``
    sample), the entry's manifest says ``judge: prompty-body`` and the body is rendered by
    prompty's own renderer and parser with the frontmatter's inline sample.
    """
    import prompty  # the judge; deferred so other ecosystems do not pay for it
    from prompty.core import ModelSettings, Prompty, TemplateSettings
    from prompty.utils import load_prompty

    text = path.read_text(encoding="utf-8")
    saved = dict(os.environ)
    try:
        for name in _PROMPTY_ENV.findall(text):
            os.environ.setdefault(name, f"https://{name.lower()}.invalid")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                p = prompty.load(str(path))
            except (ValueError, FileNotFoundError, TypeError):
                raw = load_prompty(str(path))
                attrs = raw.get("attributes", {})
                sample = attrs.get("sample") if isinstance(attrs.get("sample"), dict) else {}
                template = attrs.get("template", "jinja2")
                p = Prompty(
                    model=ModelSettings(api="chat"),
                    template=TemplateSettings(
                        type=template if isinstance(template, str) else
                        template.get("type", template.get("format", "jinja2")),
                        parser="prompty"),
                    content=raw["body"], file=path, sample=sample or {})
            messages = prompty.prepare(p, dict(inputs))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return [{"role": m["role"], "text": _prompty_text(m["content"])} for m in messages]


# --------------------------------------------------------------------------- LangChain

_LC_ROLES = {"human": "user", "ai": "assistant", "system": "system"}


def render_langchain(path: Path, inputs: dict[str, Any]) -> list[Message]:
    """``langchain_core.prompts.load_prompt`` then ``format_prompt(**inputs).to_messages()``.

    A string prompt becomes one human message, exactly as LangChain hands it to a chat model.
    The loader resolves ``template_path`` / ``examples`` files relative to the working
    directory, so the judge runs it from the entry's folder.
    """
    from langchain_core.prompts import load_prompt

    cwd = Path.cwd()
    try:
        os.chdir(path.parent)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prompt = load_prompt(path.name)
        value = prompt.format_prompt(**inputs)
    finally:
        os.chdir(cwd)
    return [{"role": _LC_ROLES.get(m.type, m.type), "text": str(m.content)}
            for m in value.to_messages()]


# --------------------------------------------------------------------------- Node judges

def node_deps() -> Path:
    """The shared npm prefix with the pinned judges, installed there if missing."""
    from helpers.node import NODE_DEPS, npm_package

    for name, version in NODE_PACKAGES.items():
        npm_package(name, version)
    return NODE_DEPS


def _run_node(script: str, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not jobs:
        return []
    env = dict(os.environ, PROMPTOPS_NODE_DEPS=str(node_deps()))
    proc = subprocess.run(["node", str(JUDGES / script)], input=json.dumps({"jobs": jobs}),
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    if proc.returncode != 0:
        raise JudgeError(f"{script} failed: {proc.stderr.strip()[:2000]}")
    answers: list[dict[str, Any]] = json.loads(proc.stdout)
    return answers


def _dotprompt_job(entry: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
    """Partials are the ``_name.prompt`` files beside the prompt, as Genkit registers them."""
    folder = entry_dir(entry)
    partials = {f["name"][1:-len(".prompt")]: (folder / f["name"]).read_bytes().decode("utf-8")
                for f in entry["files"][1:] if f["name"].startswith("_")}
    data = dict(inputs)
    return {"source": main_file(entry).read_bytes().decode("utf-8"), "partials": partials,
            "messages": data.pop("@messages", None), "context": data.pop("@context", None),
            "input": data}


def _dotprompt_messages(answer: dict[str, Any]) -> list[Message]:
    if "error" in answer:
        raise JudgeError(answer["error"])
    return [{"role": m["role"], "text": m["text"],
             **({"parts": m["parts"]} if any("text" not in p for p in m["parts"]) else {})}
            for m in answer["messages"]]


# promptfoo ---------------------------------------------------------------------------

PROMPT_DELIMITER = "---"


def promptfoo_raw_prompts(path: Path) -> list[str]:
    """The raw prompts promptfoo reads from a prompt file (its processors' rules).

    ``.txt``: lines whose trimmed text is ``---`` separate prompts, each joined with ``\\n`` and
    trimmed, empty ones dropped. ``.json``: the file re-serialised compactly when it parses
    (``JSON.stringify(JSON.parse(...))``), else verbatim. ``.yaml``/``.yml``: the parsed YAML as
    JSON. Anything else (``.j2``, ``.md``): the file verbatim.
    """
    text = path.read_bytes().decode("utf-8")
    suffix = path.suffix
    if suffix == ".txt":
        prompts: list[str] = []
        buffer: list[str] = []
        for line in re.split(r"\r?\n", text):
            if line.strip() == PROMPT_DELIMITER:
                prompts.append("\n".join(buffer).strip())
                buffer = []
            else:
                buffer.append(line)
        prompts.append("\n".join(buffer).strip())
        return [p for p in prompts if p]
    if suffix == ".json":
        try:
            return [json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)]
        except ValueError:
            return [text]
    if suffix in (".yaml", ".yml"):
        return [json.dumps(yaml.safe_load(text), separators=(",", ":"), ensure_ascii=False)]
    return [text]


def _promptfoo_part_text(part: Any) -> str:
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return part["text"]
    return json.dumps(part, ensure_ascii=False)


def promptfoo_messages(rendered: str, index: int) -> list[Message]:
    """A rendered prompt as the chat messages promptfoo's providers send.

    A prompt that parses as a JSON array of messages is that chat (``content`` strings, or
    Gemini-style ``parts`` whose text parts are joined); anything else is one user message.
    """
    try:
        parsed = json.loads(rendered)
    except ValueError:
        parsed = None
    if isinstance(parsed, list) and all(isinstance(m, dict) and "role" in m for m in parsed):
        out: list[Message] = []
        for m in parsed:
            if isinstance(m.get("content"), str):
                text = m["content"]
            elif "parts" in m:
                text = "".join(_promptfoo_part_text(p) for p in m["parts"])
            else:
                text = json.dumps(m.get("content"), ensure_ascii=False)
            out.append({"role": m["role"], "text": text, "prompt": index})
        return out
    return [{"role": "user", "text": rendered, "prompt": index}]


# --------------------------------------------------------------------------- entry points

_RUN_CACHE: dict[str, dict[tuple[str, int], list[Message] | str]] = {}


def render_all(entries: Iterable[dict[str, Any]]) -> dict[tuple[str, int], list[Message] | str]:
    """Every input set of every entry rendered by its own engine, once per test run.

    Keys are ``(entry id, input-set index)``; a value is the message list, or the engine's
    error text when it refused. Node ecosystems cost one process each; the same entries
    asked for again in the same process (several test modules judge the whole corpus) are
    answered from a cache keyed by the entries themselves, files included.
    """
    entries = list(entries)
    key = json.dumps([[e, [hashlib.sha256((entry_dir(e) / f["name"]).read_bytes()).hexdigest()
                           for f in e["files"]]] for e in entries], sort_keys=True, default=str)
    if key not in _RUN_CACHE:
        _RUN_CACHE[key] = _render_all(entries)
    return {k: (list(v) if isinstance(v, list) else v) for k, v in _RUN_CACHE[key].items()}


def _render_all(entries: list[dict[str, Any]]) -> dict[tuple[str, int], list[Message] | str]:
    results: dict[tuple[str, int], list[Message] | str] = {}
    dot_keys: list[tuple[str, int]] = []
    dot_jobs: list[dict[str, Any]] = []
    pf_keys: list[tuple[tuple[str, int], int]] = []
    pf_jobs: list[dict[str, Any]] = []
    for entry in entries:
        for i, inputs in enumerate(input_sets(entry)):
            key = (entry["id"], i)
            eco = entry["ecosystem"]
            if eco == "dotprompt":
                dot_keys.append(key)
                dot_jobs.append(_dotprompt_job(entry, inputs))
            elif eco == "promptfoo":
                results[key] = []
                for n, raw in enumerate(promptfoo_raw_prompts(main_file(entry))):
                    pf_keys.append((key, n))
                    pf_jobs.append({"raw": raw, "vars": inputs})
            else:
                try:
                    results[key] = render_reference(entry, inputs)
                except Exception as e:  # the engine's refusal is the result
                    results[key] = f"{type(e).__name__}: {e}"
    for key, answer in zip(dot_keys, _run_node("dotprompt_render.js", dot_jobs), strict=True):
        try:
            results[key] = _dotprompt_messages(answer)
        except JudgeError as e:
            results[key] = str(e)
    for (key, n), answer in zip(pf_keys, _run_node("nunjucks_render.js", pf_jobs), strict=True):
        done = results[key]
        if isinstance(done, str):
            continue
        if "error" in answer:
            results[key] = answer["error"]
        else:
            done.extend(promptfoo_messages(answer["text"], n))
    return results


def render_reference(entry: dict[str, Any], inputs: dict[str, Any]) -> list[Message]:
    """The messages ``entry``'s own engine renders for ``inputs``, text byte for byte."""
    eco = entry["ecosystem"]
    path = main_file(entry)
    if eco == "prompty":
        return render_prompty(path, inputs)
    if eco == "langchain":
        return render_langchain(path, inputs)
    if eco == "copilot":
        return render_copilot(path.read_bytes().decode("utf-8"), inputs)
    if eco == "claude":
        return render_claude(path.read_bytes().decode("utf-8"), inputs)
    if eco == "dotprompt":
        return _dotprompt_messages(_run_node("dotprompt_render.js",
                                             [_dotprompt_job(entry, inputs)])[0])
    if eco == "promptfoo":
        messages: list[Message] = []
        raws = promptfoo_raw_prompts(path)
        answers = _run_node("nunjucks_render.js", [{"raw": r, "vars": inputs} for r in raws])
        for n, answer in enumerate(answers):
            if "error" in answer:
                raise JudgeError(answer["error"])
            messages.extend(promptfoo_messages(answer["text"], n))
        return messages
    raise JudgeError(f"unknown ecosystem {eco!r}")
