"""The tests' own Jinja template files, as texts: material for checks that compare a fast
path with Jinja's own answer on real templates (the review's shape cache, validation's
parse shapes). Never the held-out corpus, which is only measured."""

from __future__ import annotations

import dis
from pathlib import Path
from types import CodeType
from typing import Any

from jinja2 import nodes

TESTS = Path(__file__).resolve().parent.parent


def template_files() -> list[str]:
    """Every ``*.j2`` under tests/ outside a held-out part, in path order, as text."""
    out = []
    for path in sorted(TESTS.rglob("*.j2")):
        if "heldout" in path.parts:
            continue
        try:
            out.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            continue
    return out


def dump_tree(node: object) -> object:
    """A Jinja tree as plain data: every node's type, line and fields (``Node.__eq__``
    skips lines), independent of the code under test."""
    if isinstance(node, nodes.Node):
        return (type(node).__name__, node.lineno,
                tuple((f, dump_tree(getattr(node, f, None))) for f in node.fields))
    if isinstance(node, list | tuple):
        return (type(node).__name__, tuple(dump_tree(x) for x in node))
    return (type(node).__name__, node)


def dump_code(code: CodeType) -> tuple[object, ...]:
    """Compiled template code as plain data: every instruction's name, value and line, and
    the nested code objects the same way, so two compilations compare by what they do,
    not by object identity."""
    out: list[object] = []
    for ins in dis.get_instructions(code):
        value = ins.argval
        out.append((ins.opname, dump_code(value) if isinstance(value, CodeType) else repr(value),
                    ins.positions.lineno if ins.positions else None))
    return tuple(out), code.co_names, code.co_varnames, code.co_firstlineno


def bounded_outcome(env: Any, source: str, bound: int, values: dict[str, Any]
                    ) -> tuple[str, str]:
    """``source`` compiled by ``env`` and rendered by the renderer's bounded chunk loop under
    ``bound`` output chars: ``("ok", text)`` or the error's class name and message, so a
    fast form of the output can be held to the general one, its failures included."""
    from promptops.render.template import Compiled
    from promptops.sandbox.limits import Budget, BudgetExceeded, Limits

    compiled = Compiled(env.from_string(source))
    budget = Budget(Limits(max_output_chars=bound))
    try:
        with budget:
            return "ok", compiled.render(dict(values), budget)
    except BudgetExceeded as exc:
        return "BudgetExceeded", str(exc)
    except Exception as exc:
        return type(exc).__name__, str(exc)


def with_jinjas(whitespace: str | None, *visitors: str) -> Any:
    """The sandbox's environment whose code generator writes each node kind named in
    ``visitors`` (``"For"``, ``"Getattr"``) with Jinja's own ``visit_*``: the general path
    a fast form of the sandbox's code generator is judged against (a fresh environment:
    the sandbox's factory makes one per call)."""
    from jinja2.compiler import CodeGenerator

    from promptops.sandbox import codegen
    from promptops.sandbox.environment import PromptEnvironment, environment

    generator = type("JinjasCodeGenerator", (codegen._BoundedCodeGenerator,),
                     {f"visit_{v}": getattr(CodeGenerator, f"visit_{v}") for v in visitors})
    kind = type("JinjasEnvironment", (PromptEnvironment,), {"code_generator_class": generator})
    env = environment({}, whitespace)
    env.__class__ = kind
    return env
