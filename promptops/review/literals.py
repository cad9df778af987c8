"""Which literals inside a template's tags its shape may leave out (issue 26).

:mod:`promptops.review.skeleton` shares compiled code between templates that differ only
in their texts and the plain names of the templates they include. A package whose
prompts differ inside their tags (``{% set label = "case " ~ 7 %}``, ``{% if mode ==
"mode-7" %}``, ``{{ query | truncate(27) }}``, ``range(4)``) is then one shape per prompt,
each compiled by Jinja (~2 ms). This module says which of a template's string and number
literals the code of its shape may hold as a marker, to be replaced by each template's
own literal in the constants of the code, exactly as a text is.

That is right only where Jinja writes the literal into the code as itself, whatever its
value: ``repr`` of it in an expression the template evaluates when it runs. Jinja's
optimizer folds expressions of constants when it compiles (``"a" ~ "b"``, ``"x" |
upper``, ``1 + 2`` outside the sandbox), the code generator reads some constants itself
(a printed literal is folded into the text around it, an include's literal name picks
the function, the output bound measures literals it prints or loops over), and Python's
compiler folds constants too (a constant tested by an ``if``, ``and`` or ``or`` becomes a
jump or none). So a literal is left out of the shape only when, in the tree parsed from
the marked tokens (:func:`unsafe`):

* it is the whole value of its ``Const`` (not joined to an adjacent string literal);
* it is a plain operand (:func:`_placed`): its parent, past the ``Pair``, ``Keyword`` and
  ``Operand`` helpers, is a filter's or test's argument list, a call, a comparison, a
  subscript (not sliced), an attribute read, an arithmetic operator, ``~``, or a literal
  list, tuple or dict, or it is the value a ``{% set %}`` assigns: never a test (``if``,
  ``and``, ``or``, ``not``, a conditional), never printed, never a filter's input, an
  include's name nor an item of a list a loop iterates (the output bound measures those);
* no fold evaluates it while the code is generated: it becomes a :data:`Marked` node,
  whose ``as_const`` answers the code generator's ``visit_Const`` and the sandbox's
  constness test, and an evaluation inside its parent's when that parent's evaluation
  fails whatever the values (:func:`_never_constant`: it needs a variable or a call, or
  is an operator the sandbox intercepts); any other evaluation marks it unsafe;

and, in the compiled code (:func:`misplaced`), its marker is a whole constant (or an item
of a constant tuple or frozenset), never part of a longer string nor of a ``repr``, and
it is there. Any literal that fails a test is put back as it is written and the code
compiled again (:meth:`promptops.review.skeleton._Shapes._literal_code`), so two
templates share code only when their literals that matter are equal.
``tests/review/test_review_literals.py`` compiles families of templates that differ only
in a literal in each such place, and random layouts, against Jinja's own compile.
"""

from __future__ import annotations

import re
import sys
from types import CodeType, FrameType

from jinja2 import Environment, nodes
from jinja2.optimizer import Optimizer

from promptops.sandbox.codegen import _constant

# the token types of the literals a shape may leave out (true, false, none are names)
LITERALS = frozenset({"string", "integer", "float"})

_MARK = re.compile("\x00([0-9]+)\x00")
_MARK_REPR = re.compile(r"\\x00([0-9]+)\\x00")

# parents whose code holds an operand as a plain Python expression (no test, no jump)
_PLAIN_PARENTS = (nodes.Filter, nodes.Test, nodes.Call, nodes.Compare, nodes.Getitem,
                  nodes.Getattr, nodes.Concat, nodes.Tuple, nodes.List, nodes.Dict,
                  nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod,
                  nodes.Pow)
_HELPERS = (nodes.Pair, nodes.Keyword, nodes.Operand)
_GENERIC_VISIT = Optimizer.generic_visit.__code__
_CONSTANT = _constant.__code__


def _never_constant(node: nodes.Node, env: Environment) -> bool:
    """Whether ``node.as_const`` raises ``Impossible`` for every value of the literals in
    it: what Jinja's nodes (3.1) evaluate first, or always, needs a value that is never
    constant. Anything not known here is taken as foldable."""
    kind = type(node)
    if isinstance(node, nodes.Expr) and getattr(kind, "as_const", None) is nodes.Expr.as_const:
        return True  # a variable, a call, a reference: Expr.as_const raises
    if isinstance(node, nodes.Filter | nodes.Test):
        return node.node is not None and _never_constant(node.node, env)
    if isinstance(node, nodes.Getattr):
        return node.ctx != "load" or _never_constant(node.node, env)
    if isinstance(node, nodes.Getitem):
        return node.ctx != "load" or _never_constant(node.node, env) \
            or _never_constant(node.arg, env)
    if isinstance(node, nodes.And | nodes.Or):
        return _never_constant(node.left, env)  # short-circuited: the left one first
    if isinstance(node, nodes.BinExpr):
        return (env.sandboxed and node.operator in getattr(env, "intercepted_binops", ())) \
            or _never_constant(node.left, env) or _never_constant(node.right, env)
    if isinstance(node, nodes.Concat):
        return any(_never_constant(n, env) for n in node.nodes)
    if isinstance(node, nodes.Compare):
        return _never_constant(node.expr, env) or (
            bool(node.ops) and _never_constant(node.ops[0].expr, env))
    if isinstance(node, nodes.Tuple | nodes.List):
        return any(_never_constant(n, env) for n in node.items)
    if isinstance(node, nodes.Dict):
        return any(_never_constant(p.key, env) or _never_constant(p.value, env)
                   for p in node.items)
    return False


def _children(node: nodes.Node) -> list[tuple[str, nodes.Node]]:
    out: list[tuple[str, nodes.Node]] = []
    for field, value in node.iter_fields():
        if isinstance(value, nodes.Node):
            out.append((field, value))
        elif isinstance(value, list):
            out.extend((field, item) for item in value if isinstance(item, nodes.Node))
    return out


def _placed(node: nodes.Node, parent: nodes.Node | None, field: str) -> bool:
    """Whether a literal in ``parent``'s ``field`` is written as a plain operand: never a
    test (``if``, ``and``, ``or``, ``not``, a conditional), never printed, iterated,
    included or the input of a filter (which the output bound measures), never sliced."""
    if isinstance(parent, nodes.Assign):
        return field == "node"
    if isinstance(parent, nodes.Filter | nodes.Test) and field == "node":
        return False
    if isinstance(parent, nodes.Getitem) and field == "node" \
            and isinstance(parent.arg, nodes.Slice):
        return False
    return isinstance(parent, _PLAIN_PARENTS)


def _as_const(self: nodes.Const, eval_ctx: object = None) -> object:
    """``as_const`` of a marked literal while its shape compiles (:data:`Marked`)."""
    caller = sys._getframe(1)
    if caller.f_code is _GENERIC_VISIT and caller.f_locals.get("node") is self:
        raise nodes.Impossible()  # the optimizer on this node alone: an equal Const
    if caller.f_code is _CONSTANT or (caller.f_code.co_name == "visit_Const"
                                      and caller.f_locals.get("node") is self):
        return self.value  # whether it is constant (it is), or its repr written
    parent, shielded, sink, number = self.marked  # type: ignore[attr-defined]
    if shielded:
        frame: FrameType | None = caller
        while frame is not None:
            if frame.f_code.co_name == "as_const" and frame.f_locals.get("self") is parent:
                return self.value  # that evaluation fails at the parent anyway
            frame = frame.f_back
    sink.add(number)
    raise nodes.Impossible()


# A marked literal while its shape compiles: named ``Const`` so the code generator writes
# it with ``visit_Const``; any other evaluation of it (a fold Jinja tries) puts its number
# in the sink, unless it happens inside the evaluation of its parent and that parent's
# evaluation fails whatever the value (:func:`_never_constant`). Jinja's node metaclass
# refuses new node types (``NodeType.__new__``), hence ``type.__new__``: a Const in all
# but ``as_const``, made only by :func:`unsafe` changing a parsed node's class.
Marked = type.__new__(type(nodes.Const), "Const", (nodes.Const,), {
    "as_const": _as_const, "__module__": __name__, "__slots__": ()})


def unsafe(tree: nodes.Template, marked: frozenset[int], env: Environment) -> set[int]:
    """The literals of ``marked`` (their markers' numbers) that the code of ``tree``, parsed
    from the marked tokens, may not hold as markers by where they are (the module
    docstring says why); the others become :data:`Marked` nodes, which add to the
    returned set any literal the compile of ``tree`` then evaluates."""
    bad: set[int] = set()
    # (node, its parent past the helpers, the field of the parent it is in)
    todo: list[tuple[nodes.Node, nodes.Node | None, str]] = [(tree, None, "")]
    while todo:
        node, parent, field = todo.pop()
        if type(node) is nodes.Const and isinstance(node.value, str) and "\x00" in node.value:
            whole = _MARK.fullmatch(node.value)
            found = {int(k) for k in _MARK.findall(node.value)} & marked
            if not found:
                continue
            if whole is None or not _placed(node, parent, field):
                bad |= found
                continue
            node.__class__ = Marked
            node.marked = (parent, parent is not None and _never_constant(parent, env),  # type: ignore[attr-defined]
                           bad, int(whole.group(1)))
            continue
        if isinstance(node, nodes.For) and isinstance(node.iter, nodes.List | nodes.Tuple):
            for item in node.iter.items:  # the output bound measures a list it loops over
                if isinstance(item, nodes.Const) and isinstance(item.value, str):
                    bad |= {int(k) for k in _MARK.findall(item.value)} & marked
        for child_field, child in _children(node):
            if isinstance(node, _HELPERS):
                todo.append((child, parent, field))
            else:
                todo.append((child, node, child_field))
    return bad


def misplaced(code: CodeType, marked: frozenset[int]) -> set[int]:
    """The literals of ``marked`` whose marker is not a whole constant of ``code`` (or an
    item of a constant tuple or frozenset) everywhere it is, or is nowhere."""
    bad: set[int] = set()
    whole: set[int] = set()

    def look(c: object) -> None:
        if isinstance(c, str):
            if "\\x00" in c:
                bad.update(int(k) for k in _MARK_REPR.findall(c))
            if "\x00" in c:
                found = _MARK.fullmatch(c)
                if found is not None:
                    whole.add(int(found.group(1)))
                else:
                    bad.update(int(k) for k in _MARK.findall(c))
        elif isinstance(c, CodeType):
            for inner in c.co_consts:
                look(inner)
        elif isinstance(c, tuple | frozenset):
            for inner in c:
                look(inner)

    look(code)
    return (bad | (marked - whole)) & marked
