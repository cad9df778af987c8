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
from typing import Any

from jinja2 import DictLoader, StrictUndefined, Undefined, nodes
from jinja2.compiler import CodeGenerator, Frame, operators, optimizeconst
from jinja2.lexer import Lexer
from jinja2.runtime import LoopContext, Macro
from jinja2.sandbox import SandboxedEnvironment

from promptops.sandbox import filters as safe_filters
from promptops.sandbox import lexing, limits, sizing, watchdog
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
_SMALL_INT = 1 << 64  # an int this small prints in 20 digits: sizing.to_text would pass it
# What a template may read of `loop`: public, plain values and the two methods (calls
# still go through `call`). SandboxedEnvironment.getattr allows exactly these too.
_LOOP_ATTRIBUTES = frozenset({"index", "index0", "revindex", "revindex0", "first", "last",
                              "length", "depth", "depth0", "previtem", "nextitem", "cycle",
                              "changed"})
_LOOP_COUNTS = frozenset({"index", "index0", "revindex", "revindex0", "length", "depth",
                          "depth0"})


def _finalize(value: Any) -> object:
    """What ``{{ value }}`` prints: its text, checked for size and for a stable form."""
    t = type(value)
    if t is str or isinstance(value, Undefined):  # strict ones raise when printed
        return value
    if t is int and -_SMALL_INT < value < _SMALL_INT:  # `loop.index`: nothing to check
        return value
    return sizing.to_text(value)


def _counts_loop(node: object) -> bool:
    """Whether ``node`` reads one of the loop's counts (``loop.index``...): an ``int``
    when ``loop`` is Jinja's own ``LoopContext``."""
    return isinstance(node, nodes.Getattr) and node.attr in _LOOP_COUNTS \
        and isinstance(node.node, nodes.Name) and node.node.name == "loop"


def _joinable(body: list[list[str] | nodes.Expr], start: int
              ) -> tuple[list[nodes.Name], int]:
    """The variables of the run of ``body`` from ``start`` that may be one chunk, and
    where the run stops: the first part's text (when the output starts with text), then
    each variable read (``{{ topic }}``, no filter, call or attribute) that text follows."""
    i = start + 1 if start == 0 and isinstance(body[0], list) else start
    names: list[nodes.Name] = []
    while i + 1 < len(body) and isinstance(body[i + 1], list):
        item = body[i]
        if not isinstance(item, nodes.Name) or item.ctx != "load":
            break
        names.append(item)
        i += 2
    return names, i


def _constant(node: nodes.Expr, frame: Frame) -> bool:
    try:
        node.as_const(frame.eval_ctx)
    except nodes.Impossible:
        return False
    return True


def _printed(value: object) -> str:
    """``{{ value }}``'s text: ``str(_finalize(value))``, in one call for a ``str`` and for
    a small ``int`` (``loop.index``: ``_finalize`` returns it unchecked, so ``str`` of it)."""
    t = type(value)
    if t is str:
        return value  # type: ignore[return-value]  # type(value) is str
    if t is int and -_SMALL_INT < value < _SMALL_INT:  # type: ignore[operator]
        return str(value)
    return str(_finalize(value))


def _printed_then(value: object, text: str) -> str:
    """``_p(value) + text``: a printed value and the constant text that follows it in the
    same output (``{{ topic }}.\n``), one chunk instead of two. Nothing of the template
    runs between the two, so counting them together against the output bound raises at
    the same point, with the same error, as counting them one after the other."""
    t = type(value)
    if t is str:
        return value + text  # type: ignore[operator, no-any-return]  # type(value) is str
    if t is int and -_SMALL_INT < value < _SMALL_INT:  # type: ignore[operator]
        return str(value) + text
    return "".join((str(_finalize(value)), text))  # a str subclass's `+` may differ


class _BoundedCodeGenerator(CodeGenerator):
    """Routes ``~``, comparisons of two variables and non-constant dict keys through the
    environment, so their size (or the cost of comparing and hashing) is checked first.

    Jinja writes ``{{ value }}`` as ``str(environment.finalize(value))``: two calls per
    printed value, and a template's code grows by every one. Here it is ``_p(value)``,
    one call of :func:`_printed`, which gives the same text after the same checks (the
    code of 1,000 prompts' templates is then ~a third smaller, and more of it stays in
    the CPU cache). ``_p`` is bound once per template module, to the environment's
    ``printed``."""

    def _printing(self, frame: Frame, finalize: Any) -> bool:
        """Whether this output is the plain ``str(environment.finalize(...))`` case."""
        return (not self.defer_init and not frame.eval_ctx.volatile
                and not frame.eval_ctx.autoescape and finalize.src == "environment.finalize("
                and self.environment.finalize is _finalize)

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        if not self.defer_init:  # deferred: no environment yet when the module runs
            self.writeline("_p = environment.printed")
            self.writeline("_pt = environment.printed_then")
        super().visit_Template(node, frame)

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        """Jinja's ``yield`` per part, but a printed value and the constant text after it
        are one ``yield _pt(value, 'text')``: of a prompt's chunks about half are such
        texts, and each chunk costs the render's counting loop and a generator resume
        (~1,100 instructions; issue 26). Only where Jinja would ``yield`` plain
        ``_p(...)`` parts; a captured block (``frame.buffer``), a template that extends
        another and any other finalize or autoescape keep Jinja's code."""
        finalize = self._make_finalize()
        if frame.buffer is not None or frame.require_output_check \
                or self.environment.is_async or not self._printing(frame, finalize):
            super().visit_Output(node, frame)
            return
        body: list[list[str] | nodes.Expr] = []
        for child in node.nodes:  # Jinja's own folding of constant parts (3.1 visit_Output)
            try:
                if not (finalize.const or isinstance(child, nodes.TemplateData)):
                    raise nodes.Impossible()
                const = self._output_child_to_const(child, frame, finalize)
            except (nodes.Impossible, Exception):
                body.append(child)
                continue
            if body and isinstance(body[-1], list):
                body[-1].append(const)
            else:
                body.append([const])
        i = 0
        while i < len(body):
            names, stop = _joinable(body, i)
            if len(names) + isinstance(body[i], list) > 1:
                self._joined(body, i, stop, names, frame)
                i = stop
                continue
            self._part(body, i, frame)
            i += 1

    def _part(self, body: list[list[str] | nodes.Expr], i: int, frame: Frame) -> None:
        """The ``yield`` of ``body[i]``: a constant text on its own (the first part only:
        any other follows a value and is joined to it), or a value and the text after it."""
        item = body[i]
        if isinstance(item, list):
            if i == 0 or isinstance(body[i - 1], list):  # else joined to the value before
                self.writeline("yield " + self._output_const_repr(item))
            return
        after = body[i + 1] if i + 1 < len(body) else None
        self.writeline("yield ", item)
        if isinstance(after, list):
            # `_pt(value, text)`'s first case written out: a value that is a str is
            # followed by the text without a call (one frame and ~20 bytecodes fewer
            # per printed value; a prompts/get prints ~16; issue 26). Any other value
            # goes to `_pt`, which checks it as before. `_po_v` is no name Jinja uses.
            text = self._output_const_repr(after)
            if _counts_loop(item):  # `{{ loop.index }}. `: an int, `_pt`'s second case
                self.write(f"(str(_po_v) + {text}) if type(_po_v := ")
                self.visit(item, frame)
                self.write(f") is int and -{_SMALL_INT} < _po_v < {_SMALL_INT} "
                           f"else _pt(_po_v, {text})")
                return
            self.write(f"(_po_v + {text}) if type(_po_v := ")
            self.visit(item, frame)
            self.write(f") is str else _pt(_po_v, {text})")
            return
        self.write("_p(")
        self.visit(item, frame)
        self.write(")")

    def _joined(self, body: list[list[str] | nodes.Expr], start: int, stop: int,
                names: list[nodes.Name], frame: Frame) -> None:
        """``body[start:stop]`` (a leading text and variables each followed by text) as
        one chunk when every variable is a str: ``'Keep a ' + _po_0 + ' tone...'``.

        Each part is otherwise a chunk the render's loop counts before the template goes
        on (issue 26: ~20 bytecodes and a generator resume a chunk). Joining them before
        the count is exact only because nothing between them can fail, take time or
        spend: reading a variable is all the template does there (a part over the output
        bound raises the same error, with nothing else having run). A variable that is
        not a str (undefined, a number, a container) takes the parts one by one, as
        before, so its checks and errors come where they came."""
        self.writeline("if ", names[0])
        for k, name in enumerate(names):
            self.write(" and " if k else "")
            self.write(f"type(_po_{k} := ")
            self.visit(name, frame)
            self.write(") is str")
        self.write(":")
        self.indent()
        parts: list[str] = []
        k = 0
        for item in body[start:stop]:
            if isinstance(item, list):
                parts.append(self._output_const_repr(item))
            else:
                parts.append(f"_po_{k}")
                k += 1
        self.writeline("yield " + " + ".join(parts))
        self.outdent()
        self.writeline("else:")
        self.indent()
        for i in range(start, stop):
            self._part(body, i, frame)
        self.outdent()

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if self._printing(frame, finalize):
            self.write("_p(")
        else:
            super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if self._printing(frame, finalize):
            self.write(")")
        else:
            super()._output_child_post(node, frame, finalize)

    @optimizeconst
    def visit_Getattr(self, node: nodes.Getattr, frame: Frame) -> None:
        """``loop.index`` and the other facts of Jinja's own ``LoopContext`` read inline:
        ``(l_1_loop.index if type(l_1_loop) is LoopContext else environment.getattr(...))``.
        What :meth:`PromptEnvironment.getattr` does for such an object, without its call
        (a frame and ~17 bytecodes a read; a prompt's numbered list reads it per item,
        issue 26); any other object (a ``loop`` the template rebound, an undefined one) still
        goes through the sandbox's ``getattr``. Only for a variable named ``loop``: the
        name is evaluated twice, which for a variable is a read with no effect."""
        target = node.node
        if self.environment.is_async or node.attr not in _LOOP_ATTRIBUTES \
                or not isinstance(target, nodes.Name) or target.name != "loop" \
                or target.ctx != "load":
            super().visit_Getattr(node, frame)
            return
        self.write("(")
        self.visit(target, frame)
        self.write(f".{node.attr} if type(")
        self.visit(target, frame)
        self.write(") is LoopContext else environment.getattr(")
        self.visit(target, frame)
        self.write(f", {node.attr!r}))")

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.concat_bounded((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def visit_Compare(self, node: nodes.Compare, frame: Frame) -> None:
        operands = [node.expr, *(op.expr for op in node.ops)]
        variable = [not _constant(n, frame) for n in operands]
        # one side constant: the cost is bounded by the constant (`x == 'a'`, `x in [1, 2]`)
        guard = sum(variable) > 1
        self.write("(")
        for i, operand in enumerate(operands):
            if i:
                self.write(f" {operators[node.ops[i - 1].op]} ")
            if guard and variable[i]:
                self.write("environment.operand(")
                self.visit(operand, frame)
                self.write(")")
            else:
                self.visit(operand, frame)
        self.write(")")

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self.write("{")
        for idx, item in enumerate(node.items):
            if idx:
                self.write(", ")
            if _constant(item.key, frame):
                self.visit(item.key, frame)
            else:
                self.write("environment.operand(")
                self.visit(item.key, frame)
                self.write(")")
            self.write(": ")
            self.visit(item.value, frame)
        self.write("}")


class PromptEnvironment(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "%", "+", "-", "//"})
    code_generator_class = _BoundedCodeGenerator
    printed = staticmethod(_printed)  # what compiled templates call as `_p`
    printed_then = staticmethod(_printed_then)  # and as `_pt`

    @property
    def lexer(self) -> Lexer:
        """Jinja's lexer with a faster scan of plain text, same tokens (:mod:`.lexing`)."""
        return lexing.lexer(self)

    def call(__self, __context: Any, __obj: object, *args: Any, **kwargs: object) -> object:
        budget = limits.current()
        if time.monotonic() > budget.deadline:
            raise BudgetExceeded(budget.late())
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
