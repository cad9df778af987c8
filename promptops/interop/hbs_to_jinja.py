"""Handlebars (as Dotprompt runs it) to Jinja in ``standalone`` whitespace mode, exactly.

Why the translation is built the way it is:

* **Text**: Handlebars' whitespace pass has already run (:mod:`promptops.interop.handlebars`),
  so every content node knows its exact output and which blanks the standalone rule removed.
  Those removed blanks are put back ("restored") wherever our standalone rule removes exactly
  them again, so the Jinja keeps the author's layout; on the rare line where the two rules
  disagree (two block tags on one line, a tag beside a role marker, a partial's edge) the
  removal is baked in and the line gets a ``+`` tag, which our rule never strips.
* **Values**: Dotprompt compiles with ``noEscape``, so ``{{x}}`` is ``{{ x }}`` (no escaping);
  Handlebars prints a missing value as empty, so optional arguments get ``default: ""``.
* **Truthiness**: ``{{#if x}}`` skips false, 0, "", null, undefined and empty arrays - and, unlike
  Jinja, keeps an empty object. A condition on a value that may be an object is written
  ``x is mapping or x``; on a string, number or array argument it is plain ``x``.
* **Scope**: ``{{#each}}`` and ``{{#with}}`` change the context, so bare names inside resolve on
  the item (``{{name}}`` -> ``item.name``); ``../``, ``this``, ``@index``/``@first``/``@last``/
  ``@key``, ``@root`` and block parameters (``as |x i|``) map to the corresponding Jinja.
* **Messages**: ``{{role}}``, ``{{history}}`` and ``{{media}}`` are markers Dotprompt splits the
  rendered text on; at the top level they become IR message boundaries, splices and media parts.

What cannot be written exactly (``{{json}}``'s JSON.stringify formatting, ``{{section}}``,
JavaScript's printing of non-strings, markers inside a block) is reported as a loss.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from promptops.interop import handlebars as hb
from promptops.interop.hbs_layout import Chunk
from promptops.interop.jinja_build import is_plain_name, literal, string, variable

# Attribute names Jinja would find on a dict/str/list before the key of the same name.
_ATTRS = frozenset(n for t in (dict, str, list) for n in dir(t) if not n.startswith("_"))


# --------------------------------------------------------------------------- translation


@dataclass
class Scope:
    """Where names resolve: the context object (None = the arguments) and named locals."""

    context: str | None = None
    parent: Scope | None = None
    locals: dict[str, str] = field(default_factory=dict)
    local_args: dict[str, str] = field(default_factory=dict)  # local -> the argument it is
    loop_depth: int = 0  # the each-nesting at which @index/@first/@last are this scope's
    key: str | None = None  # the @key expression inside an each


@dataclass
class Translation:
    chunks: list[Chunk] = field(default_factory=list)
    losses: list[tuple[str, str, int]] = field(default_factory=list)  # (what, reason, line)
    notes: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)  # root argument names, first use first
    iterated: set[str] = field(default_factory=set)  # root arguments used as lists
    objects: set[str] = field(default_factory=set)  # root arguments used as objects


PartialLoader = Callable[[str], hb.Program | None]


class Translator:
    """One template (and the partials it includes) to chunks."""

    def __init__(self, arg_types: Mapping[str, str], partials: PartialLoader) -> None:
        self.arg_types = arg_types
        self.partials = partials
        self.out = Translation()
        self._names = 0
        self._each = 0

    # ---------------------------------------------------------------- expressions

    def path(self, e: hb.Expr, scope: Scope, line: int) -> str | None:
        if e.kind == "string":
            return string(str(e.value))
        if e.kind == "number":
            return repr(e.value)
        if e.kind == "boolean":
            return "true" if e.value else "false"
        if e.kind in ("null", "undefined"):
            return "none"
        if e.kind == "sexpr":
            assert e.call is not None
            return self.call_expr(e.call, scope, line)
        if e.kind == "data":
            return self.data(e, scope, line)
        target: Scope | None = scope
        for _ in range(e.depth):
            target = target.parent if target else None
        if target is None:
            self.loss(e.original, "../ reaches above the template's root", line)
            return None
        parts = list(e.parts)
        if not e.this_ and e.depth == 0 and parts:
            s: Scope | None = scope
            while s is not None:
                if parts[0] in s.locals:
                    return _access(s.locals[parts[0]], parts[1:])
                s = s.parent
        if target.context is None:
            if not parts:
                self.loss(e.original or "this", "the whole input object has no Jinja "
                          "equivalent printed the way JavaScript prints it", line)
                return "args"
            self.use(parts[0])
            if len(parts) > 1:  # x.length is an array's (or string's) length
                (self.out.iterated if parts[1] == "length" else self.out.objects).add(parts[0])
            return _access(variable(parts[0]), parts[1:])
        return _access(target.context, parts)

    def data(self, e: hb.Expr, scope: Scope, line: int) -> str | None:
        name = e.parts[0] if e.parts else ""
        if name == "root":
            if len(e.parts) < 2:
                return "args"
            self.use(e.parts[1])
            return _access(variable(e.parts[1]), list(e.parts[2:]))
        if not e.depth and name and name not in _EACH_DATA and name != "metadata":
            return self.context_data(e)
        if e.depth or self._each == 0 or name not in ("index", "first", "last", "key"):
            self.loss(e.original, "only @index, @first, @last, @key and @root of the innermost "
                      "{{#each}} have a Jinja equivalent", line)
            return None
        if name == "key":
            return scope.key or "loop.index0"
        return {"index": "loop.index0", "first": "loop.first", "last": "loop.last"}[name]

    def context_data(self, e: hb.Expr) -> str:
        """``@state.x``, ``@auth.uid``...: Dotprompt spreads the render call's ``context``
        into the data frame, so each is caller data - the optional object argument ``@state``
        (a missing key renders empty, as Handlebars prints undefined)."""
        arg = "@" + e.parts[0]
        self.use(arg)
        expr = variable(arg)
        rest = list(e.parts[1:])
        for i, part in enumerate(rest):
            expr += f".get({string(part)}, {{}})" if i < len(rest) - 1 else \
                f".get({string(part)}, '')"
        return expr

    def call_expr(self, call: hb.Call, scope: Scope, line: int) -> str | None:
        name = call.helper.original
        if name == "lookup" and len(call.params) == 2:
            obj, key = (self.path(p, scope, line) for p in call.params)
            arg = argument_of(call.params[0], scope)
            if arg is not None:
                self.out.objects.add(arg)
            return None if obj is None or key is None else f"{obj}[{key}]"
        if not call.params and not call.hash and call.helper.kind in ("path", "data"):
            return self.path(call.helper, scope, line)
        self.loss("{{" + name + " ...}}", "this helper has no exact Jinja equivalent" + (
            "" if name in DOTPROMPT_HELPERS else "; Dotprompt compiles with knownHelpersOnly "
            "and refuses it unless the application registers it in code"), line)
        return None

    def truthy(self, e: hb.Expr, scope: Scope, line: int, with_zero: bool = False) -> str | None:
        """Jinja for Handlebars' ``if`` (or ``with``/``each`` emptiness when with_zero)."""
        expr = self.path(e, scope, line)
        if expr is None:
            return None
        arg = argument_of(e, scope)
        if with_zero:  # {{#with}} treats 0 as present (Handlebars' isEmpty)
            x = _paren(expr)
            return f"{x} is mapping or {x} or ({x} is number and {x} is not boolean)"
        if e.kind in ("string", "number", "boolean", "null", "undefined", "data") or (
                arg is not None and self.arg_types.get(arg) in (
                    "string", "number", "integer", "boolean", "array")):
            return expr
        return f"{_paren(expr)} is mapping or {_paren(expr)}"

    def use(self, name: str) -> None:
        if name not in self.out.used:
            self.out.used.append(name)

    def loss(self, what: str, reason: str, line: int) -> None:
        self.out.losses.append((what, reason, line))

    # ---------------------------------------------------------------- statements

    def program(self, program: hb.Program | None, scope: Scope, depth: int) -> None:
        if program is None:
            return
        for node in program.body:
            self.node(node, scope, depth)

    def emit_text(self, text: str, line: int, restored: bool = False) -> None:
        if text:
            self.out.chunks.append(Chunk("text", text, restored=restored, line=line))

    def tag(self, source: str, depth: int, line: int, blockish: bool = True) -> None:
        self.out.chunks.append(Chunk("tag", source, open=source[:2], blockish=blockish,
                                     depth=depth, line=line))

    def node(self, node: hb.Node, scope: Scope, depth: int) -> None:
        if isinstance(node, hb.Content):
            self.emit_text(node.standalone_before, node.line, restored=True)
            self.emit_text(node.value, node.line)
            self.emit_text(node.standalone_after, node.line, restored=True)
        elif isinstance(node, hb.Comment):
            self.tag("{# Handlebars comment #}", depth, node.line)
        elif isinstance(node, hb.Mustache):
            self.mustache(node, scope, depth)
        elif isinstance(node, hb.Partial):
            self.partial(node, scope, depth)
        else:
            self.block(node, scope, depth)

    def mustache(self, node: hb.Mustache, scope: Scope, depth: int) -> None:
        call, name = node.call, node.call.helper.original
        if name in ("role", "history", "media"):
            self.marker(node, scope, depth)
            return
        if name == "json" and len(call.params) == 1:
            expr = self.path(call.params[0], scope, node.line)
            self.loss("{{json ...}}", "JSON.stringify's formatting (no spaces, keys in "
                      "insertion order, no escaping) differs from Jinja's tojson", node.line)
            if expr is not None:
                self.tag("{{ " + expr + " | tojson }}", depth, node.line, blockish=False)
            return
        if name in ("if", "unless", "each", "with") or (
                name in ("lookup", "json") and not call.params):
            raise hb.HandlebarsError(f"{{{{{name}}}}} needs its arguments (Dotprompt refuses "
                                     f"it at render)", node.line, node.col)
        if name == "log":
            self.out.notes.append(f"line {node.line}: {{{{log}}}} prints to the console only; "
                                  "dropped")
            return
        if name == "section":
            self.loss("{{section ...}}", "Dotprompt's pending sections have no MCP equivalent",
                      node.line)
            return
        expr = self.call_expr(call, scope, node.line)
        if expr is None:
            self.emit_text("{{" + _call_source(call) + "}}", node.line)
            return
        arg = argument_of(call.helper, scope) if not call.params else None
        kind = self.arg_types.get(arg) if arg is not None else None
        if kind in ("boolean", "array", "object", "number") or arg is None:
            self.out.notes.append(
                f"line {node.line}: {{{{{call.helper.original}}}}} prints a value JavaScript "
                "and Python write alike only for strings and integers")
        self.tag("{{ " + expr + " }}", depth, node.line, blockish=False)

    def marker(self, node: hb.Mustache, scope: Scope, depth: int) -> None:
        call, name = node.call, node.call.helper.original
        if depth:
            self.loss("{{" + name + "}}", "a message marker inside a block makes the message "
                      "list depend on the input", node.line)
            return
        if name == "role":
            if len(call.params) != 1 or call.params[0].kind != "string":
                self.loss("{{role ...}}", "the role must be a string literal", node.line)
                return
            self.out.chunks.append(Chunk("role", payload=(str(call.params[0].value),),
                                         line=node.line))
        elif name == "history":
            self.out.chunks.append(Chunk("history", line=node.line))
        else:
            url = call.hash.get("url")
            ctype = call.hash.get("contentType")
            if url is None:
                self.loss("{{media}}", "media needs url=", node.line)
                return
            parts: list[str] = []
            for e in (url, ctype):
                if e is None:
                    parts.append("")
                    continue
                if e.kind == "string":
                    parts.append(literal(str(e.value)))
                    continue
                expr = self.path(e, scope, node.line)
                parts.append("" if expr is None else "{{ " + expr + " }}")
            self.out.chunks.append(Chunk("media", payload=(parts[0], parts[1]), line=node.line))

    def partial(self, node: hb.Partial, scope: Scope, depth: int) -> None:
        if node.name.kind not in ("path", "string"):
            self.loss("{{> (dynamic)}}", "a partial chosen at render time", node.line)
            return
        name = str(node.name.value) if node.name.kind == "string" else node.name.original
        program = self.partials(name)
        if program is None:
            self.loss("{{> " + name + "}}", f"partial {name!r} not found (expected _{name}"
                      ".prompt beside the prompt)", node.line)
            return
        if node.indent:
            self.loss("{{> " + name + "}}", "an indented standalone partial indents every line "
                      "of its output, values included", node.line)
        inner = Scope(parent=scope) if node.context is None else Scope(
            context=self.path(node.context, scope, node.line) or "none", parent=scope)
        if node.context is None:
            inner.context = scope.context
        for key, value in node.hash.items():
            expr = self.path(value, scope, node.line)
            if expr is not None:
                inner.locals[key] = expr
                arg = argument_of(value, scope)
                if arg is not None:
                    inner.local_args[key] = arg
        self.out.notes.append(f"line {node.line}: partial {name!r} inlined")
        # A standalone partial's line is removed by Handlebars; the removed blanks were
        # recorded as restored text beside it and assemble() drops them (no tag is left).
        self.program(program, inner, depth)

    def block(self, node: hb.Block, scope: Scope, depth: int) -> None:
        name = node.call.helper.original
        params = node.call.params
        line = node.line
        if node.program is None:  # {{^x}}...{{/x}}: rendered when x is empty
            if len(params) or node.call.hash:
                self.loss("{{^" + name + " ...}}", "inverse helper blocks", line)
                return
            cond = self.truthy(node.call.helper, scope, line)
            self.conditional(node, scope, depth, None if cond is None else f"not ({cond})",
                             swap=True)
            return
        if name in ("if", "unless", "each", "with") and len(params) != 1:
            raise hb.HandlebarsError(f"{{{{#{name}}}}} requires exactly one argument (Dotprompt "
                                     "refuses it at render)", line, node.col)
        if name in ("if", "unless") and len(params) == 1 and not node.call.hash:
            cond = self.truthy(params[0], scope, line)
            if cond is not None and name == "unless":
                cond = f"not ({cond})"
            self.conditional(node, scope, depth, cond)
        elif name in ("ifEquals", "unlessEquals") and len(params) == 2:
            a, b = (self.path(p, scope, line) for p in params)
            op = "==" if name == "ifEquals" else "!="
            self.conditional(node, scope, depth,
                             None if a is None or b is None else f"{a} {op} {b}")
        elif name == "each" and len(params) == 1 and not node.call.hash:
            self.each(node, scope, depth)
        elif name == "with" and len(params) == 1 and not node.call.hash:
            self.with_(node, scope, depth)
        else:
            self.loss("{{#" + name + "}}", "this block helper has no exact Jinja equivalent "
                      "(Dotprompt knows if, unless, each, with, ifEquals, unlessEquals)", line)

    def _open(self, node: hb.Block, source: str, depth: int) -> None:
        self.tag(source, depth, node.line)

    def conditional(self, node: hb.Block, scope: Scope, depth: int, cond: str | None,
                    swap: bool = False, elif_: bool = False) -> None:
        if cond is None:
            return
        first, second = (node.inverse, node.program) if swap else (node.program, node.inverse)
        self._open(node, ("{% elif " if elif_ else "{% if ") + cond + " %}", depth)
        self.program(first, scope, depth + 1)
        if second is not None and second.chained and len(second.body) == 1 and \
                isinstance(second.body[0], hb.Block) and \
                second.body[0].call.helper.original in ("if", "unless"):
            inner = second.body[0]
            icond = self.truthy(inner.call.params[0], scope, inner.line) if \
                len(inner.call.params) == 1 else None
            if icond is not None and inner.call.helper.original == "unless":
                icond = f"not ({icond})"
            self.conditional(inner, scope, depth, icond, elif_=True)
        elif second is not None and second.chained:
            inner_block = second.body[0] if second.body else None
            what = ("{{else " + _call_source(inner_block.call) + "}}"
                    if isinstance(inner_block, hb.Block) else "{{else}}")
            self.loss(what, "a chained {{else}} of another helper", node.line)
            return
        elif second is not None:
            self.tag("{% else %}", depth, node.line)
            self.program(second, scope, depth + 1)
        if not elif_:
            self.tag("{% endif %}", depth, node.line)

    def each(self, node: hb.Block, scope: Scope, depth: int) -> None:
        source = self.path(node.call.params[0], scope, node.line)
        if source is None:
            return
        p = node.call.params[0]
        arg = argument_of(p, scope)
        if arg is not None:
            self.out.iterated.add(arg)
            if self.arg_types.get(arg) not in ("array", None):
                self.out.notes.append(f"line {node.line}: {{{{#each {p.original}}}}} iterates "
                                      "an argument that is not declared as an array")
        else:
            self.out.notes.append(f"line {node.line}: {{{{#each {p.original}}}}} is translated "
                                  "for a list (Handlebars also iterates an object's values)")
        item = node.block_params[0] if node.block_params else self._fresh("item")
        inner = Scope(context=item, parent=scope)
        if node.block_params:
            inner.locals[node.block_params[0]] = item
        if len(node.block_params) > 1:
            inner.locals[node.block_params[1]] = "loop.index0"
        self._each += 1
        self._open(node, f"{{% for {item} in {source} %}}", depth)
        self.program(node.program, inner, depth + 1)
        if node.inverse is not None:
            self.tag("{% else %}", depth, node.line)
            self._each -= 1
            self.program(node.inverse, scope, depth + 1)
            self._each += 1
        self.tag("{% endfor %}", depth, node.line)
        self._each -= 1

    def with_(self, node: hb.Block, scope: Scope, depth: int) -> None:
        value = node.call.params[0]
        cond = self.truthy(value, scope, node.line, with_zero=True)
        expr = self.path(value, scope, node.line)
        if cond is None or expr is None:
            return
        arg = argument_of(value, scope)
        if arg is not None:
            self.out.objects.add(arg)
        ctx = node.block_params[0] if node.block_params else self._fresh("ctx")
        inner = Scope(context=ctx, parent=scope)
        if node.block_params:
            inner.locals[node.block_params[0]] = ctx
        self._open(node, f"{{% if {cond} %}}{{% with {ctx} = {expr} %}}", depth)
        self.program(node.program, inner, depth + 1)
        self.tag("{% endwith %}", depth, node.line)
        if node.inverse is not None:
            self.tag("{% else %}", depth, node.line)
            self.program(node.inverse, scope, depth + 1)
        self.tag("{% endif %}", depth, node.line)

    def _fresh(self, base: str) -> str:
        self._names += 1
        name = base if self._names == 1 else f"{base}{self._names}"
        while name in self.arg_types:
            self._names += 1
            name = f"{base}{self._names}"
        return name


def argument_of(e: hb.Expr, scope: Scope) -> str | None:
    """The argument a one-segment path is, directly or through a partial's hash, else None."""
    if e.kind != "path" or len(e.parts) != 1 or e.this_ or e.depth:
        return None
    s: Scope | None = scope
    while s is not None:
        if e.parts[0] in s.locals:
            return s.local_args.get(e.parts[0])
        if s.context is not None:
            return None
        s = s.parent
    return e.parts[0]


_EACH_DATA = ("index", "first", "last", "key", "root")  # @-names of an {{#each}} frame
# Handlebars' built-in helpers and Dotprompt's own: any other one Dotprompt refuses to compile
DOTPROMPT_HELPERS = frozenset({"if", "unless", "each", "with", "lookup", "log", "json", "role",
                               "history", "section", "media", "ifEquals", "unlessEquals"})


def _access(base: str, parts: list[str]) -> str:
    out = base
    for part in parts:
        if part == "length":
            out = f"({out} | length)"
        elif is_plain_name(part) and part not in _ATTRS:
            out += "." + part
        else:
            out += "[" + string(part) + "]"
    return out


def _paren(expr: str) -> str:
    return expr if expr.replace(".", "").replace("_", "").isalnum() else f"({expr})"


def _call_source(call: hb.Call) -> str:
    items = [call.helper.original, *(p.original for p in call.params)]
    items += [f"{k}={v.original}" for k, v in call.hash.items()]
    return " ".join(items)
