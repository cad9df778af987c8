"""The Jinja2 environment every template is parsed and rendered with.

Templates arrive through pull requests from people we do not fully trust, so the
environment is sandboxed and also bounded by the request's
:class:`~promptops.sandbox.limits.Budget`.

Time: the watchdog (:mod:`promptops.sandbox.watchdog`) interrupts Python code past the
deadline, and every C call a template can reach is kept short by checking, before it
runs, the size of what it would build or walk. Size: ``*``, ``%``, ``~``, ``+``, ``**``,
``//``, str and list methods, format-spec widths and the built-in filters
(:mod:`promptops.sandbox.filters`) are checked against the bound of one value before they
allocate; block captures (``{% set %}...{% endset %}``, ``{% filter %}``, macro bodies,
``caller()``) are joined by a bounded ``concat``; printing, ``==``, ``in`` and dict keys
measure containers first (:mod:`promptops.sandbox.sizing`), so a list that shares its
parts cannot print or compare as gigabytes. Output: every chunk is counted against the
reply's total.

Determinism: ``random`` and ``lipsum`` are removed, printing a function or a value whose
text carries a memory address is refused, and so is set arithmetic on dict views (its
order follows the hash seed), so a render is a function of (package, prompt, arguments).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import CodeType
from typing import Any

from jinja2 import DictLoader, StrictUndefined
from jinja2.lexer import Lexer
from jinja2.runtime import LoopContext, Macro
from jinja2.sandbox import SandboxedEnvironment

from promptops.sandbox import filters as safe_filters
from promptops.sandbox import lexing, limits, sizing, watchdog
from promptops.sandbox.codegen import (
    _LOOP_ATTRIBUTES,
    FitsMaker,
    _BoundedCodeGenerator,
    _finalize,
    _printed,
    _printed_then,
    fits_maker,
)
from promptops.sandbox.codeshare import CodeParts
from promptops.sandbox.limits import (
    MAX_MACRO_DEPTH,
    MAX_OPERAND_RESULT,
    MAX_POWER_EXPONENT,
    Budget,
    BudgetExceeded,
)
from promptops.sandbox.nesting import guard
from promptops.sandbox.whitespace import StandaloneWhitespace

_SEQUENCES = (str, list, tuple)
_METHOD_OWNERS = (str, bytes, list, bytearray, int)
_SCALARS = (str, int, float, bool, type(None))
_SHALLOW = frozenset({"append", "insert", "extend"})  # store references, compare nothing
_COMPARING = frozenset({"count", "index", "remove", "sort"})
MAX_FIT_SHAPES = 4096  # output-bound tests kept by shape (names and times): see fits_test
class PromptEnvironment(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "%", "+", "-", "//"})
    code_generator_class = _BoundedCodeGenerator
    printed = staticmethod(_printed)  # what compiled templates call as `_p`
    printed_then = staticmethod(_printed_then)  # and as `_pt`

    def fits_test(self, names: tuple[str, ...], times: tuple[int, ...]) -> FitsMaker:
        """The maker of the output-bound test for this shape of bound (compiled templates
        call it as their module runs: codegen's ``_fits``), made once per shape and kept
        for up to :data:`MAX_FIT_SHAPES` shapes; past that each template gets its own."""
        makers: dict[tuple[tuple[str, ...], tuple[int, ...]], FitsMaker] = \
            self.__dict__.setdefault("_fit_makers", {})
        maker = makers.get((names, times))
        if maker is None:
            maker = fits_maker(names, times)
            if len(makers) < MAX_FIT_SHAPES:
                makers[names, times] = maker
        return maker

    def _compile(self, source: str, filename: str) -> CodeType:
        """Jinja's compile, with the parts of the code that this environment's other
        templates hold alike kept once (:mod:`.codeshare`: ~5 KB a served prompt)."""
        parts: CodeParts | None = self.__dict__.get("_code_parts")
        if parts is None:
            parts = self.__dict__["_code_parts"] = CodeParts()
        return parts.share(super()._compile(source, filename))

    @property
    def lexer(self) -> Lexer:
        """Jinja's lexer with a faster scan of plain text, same tokens (:mod:`.lexing`)."""
        return lexing.lexer(self)

    def call(__self, __context: Any, __obj: object, *args: Any, **kwargs: object) -> object:
        budget = limits.current()
        if time.monotonic() > budget.deadline:
            budget.overrun()
        if isinstance(__obj, Macro):
            if budget.depth >= MAX_MACRO_DEPTH:
                raise BudgetExceeded(
                    f"macros nested deeper than {MAX_MACRO_DEPTH} calls (a recursive macro?)")
            budget.depth += 1
            try:
                return super().call(__context, __obj, *args, **kwargs)
            finally:
                budget.depth -= 1
        if getattr(__obj, "measures_its_arguments", False):  # str.format, checked on its own
            return super().call(__context, __obj, *args, **kwargs)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, _METHOD_OWNERS):
            name = getattr(__obj, "__name__", "")
            limits.check_method(owner, name, args, kwargs)
            if name == "join" and isinstance(owner, str | bytes) and args:
                items = list(args[0])
                limits.check_size(
                    len(owner) * max(len(items) - 1, 0) + sum(
                        len(i) if isinstance(i, str | bytes) else 0 for i in items), "`join`")
                args = (items, *args[1:])
            if isinstance(owner, list) and name in _SHALLOW:
                return super().call(__context, __obj, *args, **kwargs)
        name = getattr(__obj, "__name__", "")
        if isinstance(owner, list | tuple) and name in _COMPARING:
            limits.check_items(len(owner), f"`{name}` of")
            sizing.check_operand(owner, f"`{name}`")
        for value in (*args, *kwargs.values()):  # `dict(pairs)`, `d.get(k)`, `loop.changed(x)`
            if not isinstance(value, _SCALARS):
                sizing.check_operand(value, f"an argument of `{name}`")
        # what a method builds from its input (`upper`, `split`, `copy`) counts as work
        return budget.built(super().call(__context, __obj, *args, **kwargs), f"`{name}`")

    def getattr(self, obj: object, attribute: str) -> object:
        # `loop.index` in a for loop is the commonest attribute a prompt reads; the sandbox
        # would allow it after three checks per read (is_safe_attribute and its helpers)
        if type(obj) is LoopContext and attribute in _LOOP_ATTRIBUTES:
            return getattr(obj, attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: object, argument: object) -> object:
        value = super().getitem(obj, argument)
        if type(argument) is slice:  # a copy: `s[1:]` in a loop keeps building
            limits.current().built(value, "a slice")
        return value

    def call_binop(self, context: object, operator: str, left: Any, right: Any) -> object:
        if operator == "+":
            if isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
                limits.check_size(len(left) + len(right), "`+`",
                                  1 if isinstance(left, str) else limits.ELEMENT)
            return left + right
        if operator == "%":
            return _modulo(left, right)
        if operator == "//":
            limits.check_division(left, right, "`//`")
            return left // right
        if operator == "-":
            result = left - right
            if isinstance(result, set | frozenset):
                raise BudgetExceeded(
                    "`-` on dict views builds a set, whose order follows the hash seed and "
                    "changes between runs; use `reject('in', ...)` to keep an order")
            return result
        if operator == "**":
            if isinstance(right, int | float) and abs(right) > MAX_POWER_EXPONENT:
                raise BudgetExceeded(f"exponent {right} is over the limit {MAX_POWER_EXPONENT}")
            if isinstance(left, int) and isinstance(right, int) and right > 0:
                limits.check_bits(left.bit_length() * right, "`**`")
            return left**right
        return _multiply(left, right)

    def concat_bounded(self, parts: tuple[object, ...]) -> str:
        strs = [p if type(p) is str else sizing.to_text(p, "`~`") for p in parts]
        size = sum(map(len, strs))
        if size > 64:
            limits.check_size(size, "`~`")
        return "".join(strs)

    def concat(self, parts: Any) -> str:
        """Joins every captured block: set blocks, filter blocks, macros, ``caller()``."""
        if type(parts) is not list:
            parts = list(parts)
        size = sum(map(len, parts))
        if size > 64:
            limits.check_size(size, "a captured block")
        return "".join(parts)

    def operand(self, value: object) -> object:
        return sizing.check_operand(value, "comparing or hashing a value")

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt: str = value.__self__

        def checked(*args: object, **kwargs: object) -> str:
            limits.check_format(fmt, args, kwargs)
            mapped = [v for a in args if isinstance(a, Mapping) for v in a.values()]
            limits.check_size(len(fmt) + sizing.texts_size(
                [*args, *kwargs.values(), *mapped], "`format`"), "`format`")
            result: str = wrapped(*args, **kwargs)
            return limits.current().built(result, "`format`")

        checked.measures_its_arguments = True  # type: ignore[attr-defined]
        return checked


def environment(templates: Mapping[str, str], whitespace: str | None = "standalone"
                ) -> PromptEnvironment:
    """An environment whose includes resolve only among ``templates`` (package files).

    The one factory: validation, lint and rendering all parse with it, so the nesting
    limits of :mod:`promptops.sandbox.nesting` hold for a bundle read from disk as for
    a package being loaded (a hand-made bundle cannot crash the renderer's parser).

    ``whitespace`` is the package's mode (:mod:`promptops.sandbox.whitespace`):
    ``standalone`` rewrites each template by Mustache's rule before Jinja's lexer sees it,
    ``jinja`` is Jinja's defaults; ``None`` is a bundle built before the modes existed,
    rendered as it was built (``trim_blocks`` + ``lstrip_blocks``).
    """
    if whitespace not in ("standalone", "jinja", None):
        raise ValueError(f"unknown whitespace mode {whitespace!r}")
    legacy = whitespace is None
    env = PromptEnvironment(
        loader=DictLoader(dict(templates)),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=legacy,
        lstrip_blocks=legacy,
        auto_reload=False,
        cache_size=-1,
        finalize=_finalize,
        extensions=[StandaloneWhitespace] if whitespace == "standalone" else [],
    )
    env.globals.pop("lipsum", None)
    env.filters.pop("random", None)
    safe_filters.install(env.filters, env.tests)  # type: ignore[arg-type]
    return guard(env)


def render_bounded(template: Any, context: Mapping[str, object], budget: Budget | None = None
                   ) -> str:
    """Render, drawing time and output from ``budget`` (a fresh default one if None)."""
    if budget is None:
        budget = Budget()
    try:
        with budget:
            left = budget.output_left
            out: list[str] = []
            for chunk in template.generate(context):
                left -= len(chunk)
                if left < 0:
                    raise BudgetExceeded(budget.too_long())
                out.append(chunk)
            budget.output_left = left
            return "".join(out)
    except watchdog.RenderTimeout:
        budget.settle()
        raise BudgetExceeded(budget.late()) from None
    except RecursionError:
        raise BudgetExceeded(
            "template recursion too deep (a recursive include or macro?)"
        ) from None


def _modulo(left: Any, right: Any) -> object:
    """``%``: string formatting, its output sized first (`'%.1000000f' % x`), or a
    division."""
    if isinstance(left, str):
        limits.check_percent(left, right)
        values = right if isinstance(right, tuple) else (right,)
        limits.check_size(len(left) + sizing.texts_size(values, "`%`"), "`%`")
    else:
        limits.check_division(left, right, "`%`")
    return limits.current().built(left % right, "`%`")


def _multiply(left: Any, right: Any) -> object:
    """``*``: a repeated sequence or a product, its size checked before it is built."""
    for seq, count in ((left, right), (right, left)):
        sized = isinstance(seq, _SEQUENCES) and isinstance(count, int)
        if sized and len(seq) * count > MAX_OPERAND_RESULT:
            raise BudgetExceeded(
                f"`*` would build {len(seq) * count} items, over the limit "
                f"{MAX_OPERAND_RESULT}"
            )
        if sized and len(seq) * count > 64:
            limits.check_size(len(seq) * count, "`*`",
                              1 if isinstance(seq, str) else limits.ELEMENT)
    if isinstance(left, int) and isinstance(right, int):
        limits.check_bits(left.bit_length() + right.bit_length(), "`*`")
    return left * right
