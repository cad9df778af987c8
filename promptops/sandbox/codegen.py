"""How a template's code is written, and what its ``{{ value }}`` prints.

Jinja's code generator, with the sandbox's routing (``~``, comparisons of two variables and
non-constant dict keys go through the environment, so their size is checked first) and the
fast forms of the usual output (issue 26): a printed value as one call (``_p``), a printed
str and the text after it joined inline, ``loop.index`` of Jinja's own ``LoopContext`` read
inline, and a leading text with the plain variables after it as one chunk. Each is exact:
what it gives, and where it fails, is what Jinja's own code gives
(``tests/sandbox/test_printed_values.py``, ``test_loop_reads.py``, ``test_joined_chunks.py``).
Split from :mod:`promptops.sandbox.environment`, which uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from jinja2 import Undefined, nodes
from jinja2.compiler import CodeGenerator, Frame, operators, optimizeconst

from promptops.sandbox import sizing
from promptops.sandbox.outputbound import output_bound

_SMALL_INT = 1 << 64  # an int this small prints in 20 digits: sizing.to_text would pass it
# What a template may read of `loop`: public, plain values and the two methods (calls
# still go through `call`). SandboxedEnvironment.getattr allows exactly these too.
_LOOP_ATTRIBUTES = frozenset({"index", "index0", "revindex", "revindex0", "first", "last",
                              "length", "depth", "depth0", "previtem", "nextitem", "cycle",
                              "changed"})
_LOOP_COUNTS = frozenset({"index", "index0", "revindex", "revindex0", "length", "depth",
                          "depth0"})
# The facts of a loop that its count alone gives: a loop whose body reads no other (a
# numbered list) counts with `enumerate` instead of Jinja's LoopContext, each read written
# as the expression of the count `l_N_loop` then is (1 on the first item).
_COUNTED_READS = {"index": "{}", "index0": "({} - 1)", "first": "({} == 1)"}
# What may give `loop` another meaning inside a body (a loop of its own, a macro or call
# block's scope, an included template that sees the loop's variables) or compiles the body
# apart: a loop whose body holds any of them keeps Jinja's LoopContext.
_OWN_SCOPES = (nodes.For, nodes.Macro, nodes.CallBlock, nodes.FilterBlock, nodes.Block,
               nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends, nodes.Scope,
               nodes.OverlayScope, nodes.ScopedEvalContextModifier, nodes.With)


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


def _counted_only(loop: nodes.For) -> bool:
    """Whether ``loop`` is a plain loop whose body reads ``loop`` only for its count
    (:data:`_COUNTED_READS`), at least once: nothing else of it (no ``loop.last``, which
    looks one item ahead, no ``loop`` passed on or printed), no test, not recursive, and no
    scope in it that could see ``loop`` otherwise (:data:`_OWN_SCOPES`)."""
    if loop.recursive or loop.test is not None or any(
            isinstance(n, _OWN_SCOPES) or (isinstance(n, nodes.Name) and n.name == "loop")
            for part in (loop.target, *loop.else_) for n in (part, *part.find_all(nodes.Node))):
        return False
    reads = 0
    todo: list[nodes.Node] = list(loop.body)
    while todo:
        node = todo.pop()
        if isinstance(node, _OWN_SCOPES):
            return False
        if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) \
                and node.node.name == "loop":
            if node.attr not in _COUNTED_READS or node.node.ctx != "load":
                return False
            reads += 1
            continue
        if isinstance(node, nodes.Name) and node.name == "loop":
            return False
        todo.extend(node.iter_child_nodes())
    return reads > 0


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

    _counter: str | None = None  # the count of the counted loop being written (visit_For)

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
        filters = self.environment.filters
        bound = output_bound(node, lambda name: getattr(filters.get(name), "str_growth", None))
        if bound is not None:
            self._fits(*bound)

    def _fits(self, fixed: int, texts: tuple[tuple[str, int], ...],
              times: tuple[tuple[str, int], ...]) -> None:
        """``_po_fits(parent, left)``, what :meth:`~promptops.render.template.Compiled.render`
        asks before it renders: whether this template's output is sure to be within
        ``left`` characters, by the bound :func:`~promptops.sandbox.outputbound.output_bound`
        proved (``_po_fixed``, + each ``times`` the length of a name's ``str`` value, read
        from ``parent`` as the template reads it; a value that is not a str: no).
        ``_po_fixed`` is worked out when the module runs, from the texts as string
        constants (``sum`` over a tuple: flat however many), so the code of two templates
        that differ only in their text differs only in its constants, as Jinja's does.
        The test's code depends on the names and their times only, so it is made once per
        such shape by the environment (:func:`fits_maker`) and each template holds a
        closure over its ``_po_fixed``: its own copy was ~1 KB of code a compiled template
        (2 MB over 1,000 prompts served; issue 26's RSS). A template compiled for later
        (``defer_init``: no environment when its module runs) writes the test out."""
        lengths = ", ".join(f"{n} * len({t!r})" if n != 1 else f"len({t!r})" for t, n in texts)
        self.writeline(f"_po_fixed = {fixed} + sum(({lengths}{',' if texts else ''}))")
        names = tuple(name for name, _ in times)
        counts = tuple(n for _, n in times)
        if not self.defer_init:
            self.writeline(f"_po_fits = environment.fits_test({names!r}, {counts!r})(_po_fixed)")
            return
        self.writeline("def _po_fits(parent, left):")
        self.indent()
        self.writeline("return " + _fits_expression(names, counts, "_po_fixed"))
        self.outdent()

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
        if self._counted(item):  # a counted loop's index: an int, `_p`'s and `_pt`'s int case
            self.write("str(")
            self.visit(item, frame)
            self.write(f") + {self._output_const_repr(after)}" if isinstance(after, list)
                       else ")")
            return
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

    def _counted(self, node: object) -> bool:
        """Whether ``node`` reads ``loop.index`` or ``index0`` of the counted loop being
        written (:meth:`visit_For`): an int from ``enumerate``, printed as its ``str``."""
        return self._counter is not None and _counts_loop(node) \
            and isinstance(node, nodes.Getattr) and node.attr in _COUNTED_READS

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        """Jinja's loop, but a loop whose body reads only ``loop.index``, ``index0`` or
        ``first`` (:func:`_counted_only`) iterates ``enumerate(items, 1)``: its count is
        all those reads need, and Jinja's ``LoopContext`` costs a Python frame an item and
        two more to make (issue 26: ~170 bytecodes a numbered list of four). Its items
        come from ``iter()`` of the same value in the same order, and its errors are the
        same (``iter()``'s, an item's); Jinja's code for this case (no test, not recursive,
        not async), with ``enumerate`` for ``LoopContext``."""
        if self.environment.is_async or not _counted_only(node):
            super().visit_For(node, frame)
            return
        loop_frame = frame.inner()
        loop_frame.loop_frame = True
        else_frame = frame.inner()
        count = loop_frame.symbols.declare_parameter("loop")
        loop_frame.symbols.analyze_node(node, for_branch="body")
        if node.else_:
            else_frame.symbols.analyze_node(node, for_branch="else")
        self.writeline(f"{count} = missing")
        iterated = None
        if node.else_:
            iterated = self.temporary_identifier()
            self.writeline(f"{iterated} = 1")
        self.writeline(f"for {count}, ", node)
        self.visit(node.target, loop_frame)
        self.write(" in enumerate(")
        self.visit(node.iter, frame)
        self.write(", 1):")
        self.indent()
        self.enter_frame(loop_frame)
        self.writeline("_loop_vars = {}")
        outer, self._counter = self._counter, count
        self.blockvisit(node.body, loop_frame)
        self._counter = outer
        if iterated is not None:
            self.writeline(f"{iterated} = 0")
        self.outdent()
        self.leave_frame(loop_frame)
        if iterated is not None:
            self.writeline(f"if {iterated}:")
            self.indent()
            self.enter_frame(else_frame)
            self.blockvisit(node.else_, else_frame)
            self.leave_frame(else_frame)
            self.outdent()
        if self._assign_stack:
            self._assign_stack[-1].difference_update(loop_frame.symbols.stores)

    @optimizeconst
    def visit_Filter(self, node: nodes.Filter, frame: Frame) -> None:
        """``{{ step | capitalize }}`` of a str written inline: ``(_po_r if type(_po_s :=
        step) is str and len(_po_r := _po_s.capitalize()) <= 64 else t_1(_po_s))``. What
        the environment's filter does for a str and no arguments (the str method, its
        result uncharged up to 64 characters; ``str_method`` names it), without its call
        (a frame and ~15 bytecodes a use, issue 26); a longer result, or any other value,
        goes to the filter, which charges or checks it as before."""
        method = getattr(self.environment.filters.get(node.name), "str_method", None)
        if method is None or node.node is None or node.args or node.kwargs \
                or node.dyn_args is not None or node.dyn_kwargs is not None \
                or self.environment.is_async:
            super().visit_Filter(node, frame)
            return
        self.write("(_po_r if type(_po_s := ")
        self.visit(node.node, frame)
        self.write(f") is str and len(_po_r := _po_s.{method}()) <= 64 "
                   f"else {self.filters[node.name]}(_po_s))")

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
        if self._counter is not None and isinstance(target, nodes.Name) \
                and target.name == "loop" and target.ctx == "load" \
                and frame.symbols.ref("loop") == self._counter:  # a counted loop's read
            self.write(_COUNTED_READS[node.attr].format(self._counter))
            return
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


def _fits_expression(names: tuple[str, ...], times: tuple[int, ...], fixed: str) -> str:
    """The output-bound test's expression: every named value a ``str`` (read from
    ``parent`` as the template reads it) and ``fixed`` + each value's length times its
    times within ``left``; written out per name (~20 bytecodes a name fewer than a loop)."""
    total = " + ".join([fixed, *(f"{n} * len(_pf_{k})" if n > 1 else f"len(_pf_{k})"
                                 for k, n in enumerate(times))])
    tests = [f"type(_pf_{k} := parent.get({name!r})) is str" for k, name in enumerate(names)]
    return " and ".join([*tests, f"{total} <= left"])


# `_po_fits(parent, left)` (see _fits), and what makes one from a template's fixed part
FitsTest = Callable[[Mapping[str, object], int], bool]
FitsMaker = Callable[[int], FitsTest]


def fits_maker(names: tuple[str, ...], times: tuple[int, ...]) -> FitsMaker:
    """``make(fixed) -> _po_fits``: the output-bound test of every template whose bound
    reads these names these many times, compiled once (its code shared by all of them)."""
    source = ("def make(_po_fixed):\n    def _po_fits(parent, left):\n        return "
              + _fits_expression(names, times, "_po_fixed") + "\n    return _po_fits\n")
    namespace: dict[str, object] = {}
    exec(compile(source, "<promptops output bound>", "exec"), namespace)
    return cast("FitsMaker", namespace["make"])
