"""Add one extension to Goose's ``config.yaml``, changing nothing else in it.

Goose keeps its MCP servers under ``extensions:`` in ``~/.config/goose/config.yaml``
(``%APPDATA%\\Block\\goose\\config\\config.yaml`` on Windows), next to the provider,
model and every other setting, often with the user's comments. A load/dump round trip
would re-flow all of it, so the entry is spliced in as text (JSON flow values are valid
YAML), at the end of the ``extensions:`` block with that block's indentation, and the
result is parsed again with the package's bounded YAML loader: the new document must
equal the old one plus exactly this entry, or nothing is written and the block to paste
is shown instead.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from promptops.install.jsonedit import ConfigError, EntryExists

GOOSE_TIMEOUT = 300  # seconds; Goose's own default for an extension

Value = dict[str, object]


def goose_extension(name: str, entry: dict[str, str | list[str] | dict[str, str]]) -> Value:
    """Goose's stdio extension (its config docs' shape) for the generic entry."""
    return {
        "enabled": True,
        "type": "stdio",
        "name": name,
        "description": "MCP prompts served by promptops",
        "cmd": entry["command"],
        "args": entry["args"],
        "envs": entry.get("env", {}),
        "env_keys": [],
        "timeout": GOOSE_TIMEOUT,
    }


def _parse(path: Path, text: str) -> object:
    from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

    if not text.strip():
        return {}
    try:
        data = load_yaml(str(path), text.encode("utf-8")).data
    except YamlProblem as exc:
        raise ConfigError(str(exc.problem).replace(" for a package", "")) from None
    return {} if data is None else data


def _block(name: str, value: Value, indent: str, unit: str) -> str:
    lines = [f"{indent}{json.dumps(name)}:"]
    lines += [f"{indent}{unit}{key}: {json.dumps(val)}" for key, val in value.items()]
    return "\n".join(lines) + "\n"


def merge(path: Path, text: str, key: str, name: str, value: Value, *,
          force: bool) -> tuple[str, bool]:
    """``text`` with ``value`` at ``key.name``, and whether it replaced an entry."""
    before = _parse(path, text)
    if not isinstance(before, dict):
        raise ConfigError(f"{path}: the file's top level is not a mapping")
    section = before.get(key)
    if section is not None and not isinstance(section, dict):
        raise ConfigError(f"{path}: `{key}` is not a mapping")
    replaced = isinstance(section, dict) and name in section
    if replaced and not force:
        raise EntryExists(f"{path}: an extension named {name!r} is already configured "
                          f"(in {key}); use --force to replace it")
    after = _splice(text, key, name, value, replaced=replaced)
    expected = dict(before)
    expected[key] = {**(section or {}), name: value}
    try:
        same = after is not None and _parse(path, after) == expected
    except ConfigError:  # e.g. a second `extensions:` key next to a flow-style one
        same = False
    if after is None or not same:
        raise ConfigError(f"{path}: cannot add the entry without touching the rest of the "
                          f"file; add it under `{key}:` by hand:\n"
                          f"{_block(name, value, '  ', '  ').rstrip()}")
    return after, replaced


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _splice(text: str, key: str, name: str, value: Value, *, replaced: bool) -> str | None:
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.replace("\r\n", "\n").split("\n")
    head = next((i for i, line in enumerate(lines)
                 if re.fullmatch(rf"{re.escape(key)}:[ \t]*(\{{\}})?[ \t]*(#.*)?", line)), None)
    if head is None:
        body = text.replace("\r\n", "\n")
        if body and not body.endswith("\n"):
            body += "\n"
        out = body + f"{key}:\n" + _block(name, value, "  ", "  ")
        return out.replace("\n", newline)
    lines[head] = re.sub(r"\{\}", "", lines[head], count=1).rstrip() if "{}" in \
        lines[head].split("#")[0] else lines[head]
    last = _block_end(lines, head)
    indent, unit = _layout(lines[head + 1:last + 1])
    block = _block(name, value, indent, unit).rstrip("\n").split("\n")
    if replaced:
        span = _entry(lines, head, last, indent, name)
        if span is None:
            return None
        start, stop = span
        lines[start:stop] = block
    else:
        lines[last + 1:last + 1] = block
    return newline.join(lines)


def _block_end(lines: list[str], head: int) -> int:
    """The last indented line of the block under the key at ``head`` (blank lines and
    comments below it belong to the block only when an indented line follows)."""
    end = head + 1
    last = head
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t")
                                or lines[end].lstrip().startswith("#")):
        if lines[end].strip() and lines[end][:1] in (" ", "\t"):
            last = end
        end += 1
    return last


def _layout(block: list[str]) -> tuple[str, str]:
    """The block's entry indent and its one indent step, as the file writes them."""
    children = [ln for ln in block if ln.strip() and not ln.lstrip().startswith("#")]
    indent = _indent(children[0]) if children else "  "
    unit = indent
    if children:
        deeper = [_indent(ln) for ln in children if len(_indent(ln)) > len(indent)]
        if deeper:
            unit = min(deeper, key=len)[len(indent):]
    return indent, unit


def _entry(lines: list[str], head: int, last: int, indent: str,
           name: str) -> tuple[int, int] | None:
    """The lines [start, stop) of entry ``name`` in the block, its trailing blanks left out."""
    start = next((i for i in range(head + 1, last + 1)
                  if re.match(rf"{re.escape(indent)}(?:{re.escape(name)}|"
                              rf"{re.escape(json.dumps(name))}|'{re.escape(name)}'):"
                              r"[ \t]*(#.*)?$", lines[i])), None)
    if start is None:
        return None
    stop = start + 1
    while stop <= last and (not lines[stop].strip()
                            or len(_indent(lines[stop])) > len(indent)):
        stop += 1
    while stop - 1 > start and not lines[stop - 1].strip():
        stop -= 1
    return start, stop
