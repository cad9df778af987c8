"""The Jinja2 environment every template is parsed and rendered with.

Templates arrive through pull requests from people we do not fully trust, so the
environment is sandboxed and also bounded. Time: a render has a wall-clock deadline
enforced by :mod:`promptops.watchdog`, so even a loop that calls nothing is stopped.
Size: every operation that can build a large value in one C call (``*``, ``%``, ``~``,
``+``, ``**``, ``str.ljust`` and friends, format-spec widths, the ``center``/``indent``/
``replace``/``slice``/``tojson`` filters) is checked against :data:`MAX_VALUE` *before*
it allocates, because the output cap alone only notices after the memory is gone.
Determinism: ``random`` and ``lipsum`` are removed, and printing a function or any object
whose text carries a memory address is refused, so a render is a function of (package,
prompt, arguments) alone.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from typing import Any

from jinja2 import DictLoader, StrictUndefined, Undefined
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.nodes import Concat
from jinja2.runtime import Macro
from jinja2.sandbox import SandboxedEnvironment

from promptops import limits, watchdog

RENDER_TIMEOUT_S = 2.0
MAX_OUTPUT_CHARS = 4_000_000
MAX_OPERAND_RESULT = 1_000_000  # elements or characters a single `*` may produce
MAX_VALUE = MAX_OUTPUT_CHARS  # characters/elements any other single operation may produce
MAX_POWER_EXPONENT = 1_000
MAX_INT_BITS = 1_000_000  # an integer result larger than this is refused
MAX_MACRO_DEPTH = 100

BudgetExceeded = limits.BudgetExceeded


class _Budget(threading.local):
    deadline: float = float("inf")
    depth: int = 0


_budget = _Budget()
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _finalize(value: Any) -> Any:
    """Refuse to print what has no stable text: functions and objects shown by address."""
    if type(value) is str:
        return value
    if isinstance(value, Undefined):  # strict ones raise when printed; `x if c` gives ""
        return value
    if callable(value):
        raise SecurityError(
            f"cannot print {type(value).__name__} {getattr(value, '__name__', '')!s}: a "
            "function has no stable text (missing call parentheses?)".replace(" :", ":")
        )
    if not isinstance(value, int | float | bool | type(None)) and _ADDRESS.search(str(value)):
        raise SecurityError(
            f"cannot print a {type(value).__name__}: its text carries a memory address and "
            "would change on every run"
        )
    return value


class _BoundedCodeGenerator(CodeGenerator):
    """Routes ``~`` through the environment so its result size is checked first."""

    def visit_Concat(self, node: Concat, frame: Frame) -> None:
        self.write("environment.concat_bounded((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class PromptEnvironment(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "%", "+"})
    code_generator_class = _BoundedCodeGenerator

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() > _budget.deadline:
            raise BudgetExceeded(f"render took longer than {RENDER_TIMEOUT_S:g} s")
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str | bytes | list | bytearray):
            limits.check_method(owner, __obj.__name__, args, kwargs)
        if not isinstance(__obj, Macro):
            return super().call(__context, __obj, *args, **kwargs)
        if _budget.depth >= MAX_MACRO_DEPTH:
            raise BudgetExceeded(
                f"macros nested deeper than {MAX_MACRO_DEPTH} calls (a recursive macro?)"
            )
        _budget.depth += 1
        try:
            return super().call(__context, __obj, *args, **kwargs)
        finally:
            _budget.depth -= 1

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "+":
            if isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
                limits.check_size(len(left) + len(right), "`+`")
            return left + right
        if operator == "%":
            if isinstance(left, str):
                limits.check_percent(left, right)
            return left % right
        if operator == "**":
            if isinstance(right, int | float) and abs(right) > MAX_POWER_EXPONENT:
                raise BudgetExceeded(f"exponent {right} is over the limit {MAX_POWER_EXPONENT}")
            if isinstance(left, int) and isinstance(right, int) and right > 0:
                limits.check_bits(left.bit_length() * right, "`**`")
            return left**right
        for seq, count in ((left, right), (right, left)):
            sized = isinstance(seq, str | list | tuple) and isinstance(count, int)
            if sized and len(seq) * count > MAX_OPERAND_RESULT:
                raise BudgetExceeded(
                    f"`*` would build {len(seq) * count} items, over the limit "
                    f"{MAX_OPERAND_RESULT}"
                )
        if isinstance(left, int) and isinstance(right, int):
            limits.check_bits(left.bit_length() + right.bit_length(), "`*`")
        return left * right

    def concat_bounded(self, parts: tuple[Any, ...]) -> str:
        strs = [p if type(p) is str else str(p) for p in parts]
        limits.check_size(sum(map(len, strs)), "`~`")
        return "".join(strs)

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt: str = value.__self__

        def checked(*args: Any, **kwargs: Any) -> str:
            limits.check_format(fmt, args, kwargs)
            return wrapped(*args, **kwargs)

        return checked


def environment(templates: Mapping[str, str]) -> PromptEnvironment:
    """An environment whose includes resolve only among ``templates`` (package files)."""
    env = PromptEnvironment(
        loader=DictLoader(dict(templates)),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
        cache_size=-1,
        finalize=_finalize,
    )
    env.globals.pop("lipsum", None)
    env.filters.pop("random", None)
    limits.bound_filters(env.filters)
    return env


def render_bounded(template: Any, context: Mapping[str, Any]) -> str:
    """Render under the time and output budget, raising BudgetExceeded past either."""
    deadline = time.monotonic() + RENDER_TIMEOUT_S
    _budget.deadline = deadline
    _budget.depth = 0
    token = watchdog.enter(deadline)
    fired = False
    try:
        try:
            out: list[str] = []
            size = 0
            for chunk in template.generate(context):
                size += len(chunk)
                if size > MAX_OUTPUT_CHARS:
                    raise BudgetExceeded(f"output is over {MAX_OUTPUT_CHARS} characters")
                out.append(chunk)
            return "".join(out)
        finally:
            fired = watchdog.leave(token)
            _budget.deadline = float("inf")
    except watchdog.RenderTimeout:
        fired = True
    except RecursionError:
        raise BudgetExceeded(
            "template recursion too deep (a recursive include or macro?)"
        ) from None
    if fired:
        raise BudgetExceeded(f"render took longer than {RENDER_TIMEOUT_S:g} s")
    raise AssertionError("unreachable")  # pragma: no cover
