"""The IR rendered with plain Jinja2, as the finished feature will serve it.

This is the reference semantics of :mod:`promptops.interop.ir`, written for the tests and
kept deliberately independent of promptops' own renderer (issue 13 is restructuring it):
a sandboxed Jinja2 environment with ``StrictUndefined``, no autoescape and the whitespace
settings of :data:`promptops.sandbox.whitespace.ENVIRONMENT_OPTIONS`; standalone templates go
through :func:`promptops.sandbox.whitespace.standalone`. Arguments are bound by name with their
defaults applied, and all of them are also in ``args``. Messages come out as the judges write
them (``{"role", "text"}``), a media part as ``<media url="...">``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template
from jinja2.sandbox import SandboxedEnvironment

from promptops.interop import ir
from promptops.sandbox.whitespace import ENVIRONMENT_OPTIONS, prepare

ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, **ENVIRONMENT_OPTIONS)
_SPLICE_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
                 "model": "assistant", "system": "system"}


@lru_cache(maxsize=4096)
def _compile(source: str, mode: str) -> Template:
    return ENV.from_string(prepare(source, mode))  # type: ignore[arg-type]


class ArgumentError(ValueError):
    """A value missing for a required argument, or one that does not fit its type."""


def bind(prompt: ir.IRPrompt, values: dict[str, Any]) -> dict[str, Any]:
    """The template context: every argument by name (defaults applied) and in ``args``."""
    unknown = set(values) - {a.name for a in prompt.arguments}
    if unknown:
        raise ArgumentError(f"unknown arguments {sorted(unknown)}")
    bound: dict[str, Any] = {}
    for arg in prompt.arguments:
        if arg.name in values:
            value = values[arg.name]
            check_type(arg, value)
            bound[arg.name] = value
        elif arg.has_default:
            bound[arg.name] = arg.default
        elif arg.required:
            raise ArgumentError(f"missing required argument {arg.name!r}")
    context = dict(bound)
    context["args"] = dict(bound)
    return context


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,),
    "array": (list,), "object": (dict,)}


def check_type(arg: ir.Argument, value: Any) -> None:
    ok = isinstance(value, _PY_TYPES[arg.type]) and not (
        arg.type in ("number", "integer") and isinstance(value, bool))
    if not ok:
        raise ArgumentError(f"{arg.name}: expected {arg.type}, got {type(value).__name__}")


def render(prompt: ir.IRPrompt, values: dict[str, Any]) -> list[dict[str, str]]:
    context = bind(prompt, values)
    out: list[dict[str, str]] = []
    for item in prompt.messages:
        if isinstance(item, ir.Message):
            out.extend(_message(prompt, item, context))
        elif isinstance(item, ir.Splice):
            for m in context[item.argument]:
                content = m.get("content", "")
                if isinstance(content, list):
                    content = "".join(p.get("text", "") for p in content)
                text = content.strip() if item.trim else content
                out.append({"role": _SPLICE_ROLES[m["role"].lower()], "text": text})
        else:
            for i, value in enumerate(context[item.argument]):
                inner = dict(context, **{item.item: value})
                inner["loop"] = {"index0": i, "index": i + 1, "first": i == 0,
                                 "last": i == len(context[item.argument]) - 1}
                for m in item.messages:
                    out.extend(_message(prompt, m, inner))
    return out


def _message(prompt: ir.IRPrompt, message: ir.Message, context: dict[str, Any]
             ) -> list[dict[str, str]]:
    texts = []
    for part in message.parts:
        if isinstance(part, ir.Text):
            text = _compile(part.template, prompt.whitespace).render(context)
            if message.drop_blank and ir.BLANK.issuperset(text):
                continue
            texts.append(text)
        else:
            url = _compile(part.url, prompt.whitespace).render(context)
            texts.append(f"<media url={json.dumps(url)}>")
    if message.drop_blank and not texts:
        return []
    return [{"role": message.role, "text": "".join(texts)}]
