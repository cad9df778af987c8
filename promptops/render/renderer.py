"""Stage 4: bundle + prompt name + arguments -> an MCP ``GetPromptResult``.

The one rendering path: ``serve``, ``render``, ``test`` and ``diff`` all come through
here with a bundle, so what is tested and reviewed is exactly what is served.
Validation comes first and each failure names the argument and the rule
(:class:`~promptops.errors.ArgumentError`, the caller's fault); a template that fails
while rendering is the package's (:class:`~promptops.errors.TemplateError`). How either
reaches a client is the front end's business (:mod:`promptops.render.mcp`).

A request is bounded as a whole (see :mod:`promptops.sandbox.limits`): one :class:`Budget`,
made when :meth:`Renderer.get` starts (or handed in by the caller, who may start the
clock earlier), covers validation, pattern matching and every template of the reply,
and its output bound counts every part of the reply, rendered or copied from a file.
"""

from __future__ import annotations

import re
import time
from collections import ChainMap
from typing import TYPE_CHECKING, Literal

from promptops.errors import ArgumentError, RenderError, TemplateError, did_you_mean
from promptops.pipeline import argtypes, defaults
from promptops.pipeline.bundle_types import Argument, Bundle, Message, Prompt, ServedRole
from promptops.render.result import (
    Content,
    EmbeddedResource,
    PromptMessage,
    PromptResult,
    ResourceBody,
    ResourceLink,
)
from promptops.sandbox import watchdog
from promptops.sandbox.limits import Budget, BudgetExceeded, Limits, current

if TYPE_CHECKING:  # the sandbox is imported when a prompt is first rendered, not before
    from jinja2 import Template

    from promptops.render.codecache import CodeCache
    from promptops.sandbox.environment import PromptEnvironment
    from promptops.sandbox.patterns import Pattern

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_LINK_FIELDS = ("name", "title", "description", "mimeType", "size")
# A history argument's roles: MCP's two and system, plus the names LangChain (human, ai)
# and Gemini (model) write, so an imported history renders as its own engine does.
_HISTORY_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
                  "model": "assistant", "system": "system"}
MAX_HISTORY = 10_000  # messages one history argument may splice in
# Blank for omitIfBlank: what JavaScript's trim() removes (Dotprompt's rule, which it ports).
BLANK = frozenset(" \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                  "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


class Renderer:
    """Renders the prompts of one bundle; compiled templates are cached per bundle.

    ``code``: compiled code to share with other renderers (a review's two sides); by
    default the renderer makes its own, so a source many prompts repeat compiles once
    (:mod:`promptops.render.codecache`).
    """

    def __init__(self, bundle: Bundle, code: CodeCache | None = None) -> None:
        self.bundle = bundle
        self._code = code
        self.prompts: dict[str, Prompt] = {p["name"]: p for p in bundle["prompts"]}
        # prompts with `for:` messages (render/loops.py); the others take the plain path
        self._looped = frozenset(p["name"] for p in bundle["prompts"]
                                 if any("loopOver" in m for m in p["messages"]))
        self._envs: dict[str | None, PromptEnvironment] = {}
        self._compiled: dict[tuple[str, int, str], _Compiled] = {}
        self._rules: dict[str, _Rules] = {}
        # each environment's globals, flattened once (one per whitespace mode in use)
        self._globals: dict[int, dict[str, object]] = {}
        self._patterns: dict[str, Pattern] = {}
        package = bundle.get("package")
        self.limits = Limits.of(package.get("limits") if package else None)
        self.system_role: ServedRole = package.get("systemRole", "user") if package else "user"
        # absent: a bundle built before the modes existed (trim_blocks + lstrip_blocks)
        self.whitespace = package.get("whitespace") if package else None
        self._imported = False  # the render path's lazy modules, imported outside a budget

    def budget(self) -> Budget:
        """A fresh budget for one request under this bundle's limits; its clock starts now."""
        return Budget(self.limits)

    def validate(self, name: str, arguments: object) -> tuple[Prompt, dict[str, object]]:
        """The prompt and the full render context, or ArgumentError.

        Every argument is bound by name and also in ``args`` (``args["reference-file"]``
        for a name that is not an identifier); a typed argument's value is parsed and
        checked here (:mod:`promptops.pipeline.argtypes`), before any template runs.
        """
        rules, context = self._bind(name, arguments)
        return rules.prompt, context

    def _bind(self, name: str, arguments: object) -> tuple[_Rules, dict[str, object]]:
        """:meth:`validate`, returning the prompt's rules (and with them its plan)."""
        rules = self._rules.get(name)
        if rules is None:
            prompt = self.prompts.get(name)
            if prompt is None:
                raise ArgumentError(
                    f"unknown prompt {name!r}{did_you_mean(str(name), self.prompts)}")
            rules = self._rules[name] = _Rules(prompt)
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ArgumentError("arguments must be an object of strings")
        declared = rules.declared
        for key in arguments:
            if key not in declared:
                raise ArgumentError(
                    f"unknown argument {key!r} for prompt {name!r} (declared: {rules.known})"
                    f"{did_you_mean(str(key), declared)}",
                    argument=str(key),
                )
        for arg_name in rules.required:
            if arg_name not in arguments:
                raise ArgumentError(
                    f"missing required argument {arg_name!r} for prompt {name!r}",
                    argument=arg_name,
                )
        context = dict(rules.base)
        plain = rules.plain
        for arg_name in rules.order:  # declaration order: the first bad one is reported
            if arg_name in arguments:
                value = arguments[arg_name]
                limit = plain.get(arg_name)
                if limit is not None and type(value) is str and len(value) <= limit:
                    context[arg_name] = value
                else:
                    context[arg_name] = self._check(name, declared[arg_name], value)
        context["args"] = dict(context)
        return rules, context

    def _check(self, prompt: str, spec: Argument, value: object) -> object:
        arg = spec["name"]
        if spec.get("type", "string") != "string":
            if isinstance(value, str) and len(value) > spec.get("maxLength", defaults.MAX_LENGTH):
                raise ArgumentError(
                    f"argument {arg!r} is {len(value)} characters, over its maxLength "
                    f"{spec.get('maxLength', defaults.MAX_LENGTH)}", argument=arg)
            try:
                return argtypes.parse(spec, value)
            except argtypes.ArgumentTypeError as exc:
                raise ArgumentError(str(exc), argument=arg) from None
        if not isinstance(value, str):
            raise ArgumentError(f"argument {arg!r} must be a string", argument=arg)
        limit = spec.get("maxLength", defaults.MAX_LENGTH)
        if len(value) > limit:
            raise ArgumentError(
                f"argument {arg!r} is {len(value)} characters, over its maxLength {limit}",
                argument=arg,
            )
        enum = spec.get("enum")
        if enum is not None and value not in enum:
            allowed = ", ".join(repr(v) for v in enum)
            raise ArgumentError(
                f"argument {arg!r} must be one of {allowed}; got {value!r}",
                argument=arg,
            )
        pattern = spec.get("pattern")
        if pattern is not None:
            from promptops.sandbox.patterns import PatternError, compile_pattern

            try:
                rx = self._patterns.get(pattern) or self._patterns.setdefault(
                    pattern, compile_pattern(pattern))
                matched = rx.fullmatch(value, self.limits.render_timeout_ms)
            except PatternError as exc:  # a bundle built before patterns were RE2, or long
                raise ArgumentError(f"argument {arg!r} {exc}", argument=arg) \
                    from None
            if not matched:
                raise ArgumentError(
                    f"argument {arg!r} does not match its pattern {pattern!r}",
                    argument=arg,
                )
        return value

    def get(self, name: str, arguments: object = None, budget: Budget | None = None
            ) -> PromptResult:
        """The GetPromptResult for ``name``; RenderError on bad input or a failing template.

        ``budget`` bounds the whole request (default: a fresh :meth:`budget`); a caller
        that wants the clock to include its own parsing makes it first and passes it in.
        """
        return self._run(name, arguments, budget, None)

    def render(self, name: str, arguments: object = None, budget: Budget | None = None
               ) -> tuple[PromptResult, list[Message]]:
        """:meth:`get`, and for each served message the bundle message it came from (a
        history item gives several, an omitted blank one none)."""
        sources: list[Message] = []
        return self._run(name, arguments, budget, sources), sources

    def _run(self, name: str, arguments: object, budget: Budget | None,
             sources: list[Message] | None) -> PromptResult:
        if not self._imported:
            self._import_modules()
        if budget is None:
            budget = Budget(self.limits)
        try:
            with budget:
                return self._get(name, arguments, budget, sources)
        except watchdog.RenderTimeout:
            budget.settle()
            raise TemplateError(f"prompt {name!r}: {budget.late()}") from None
        except BudgetExceeded as exc:
            raise TemplateError(f"prompt {name!r}: {exc}") from None
        except RecursionError:
            raise TemplateError(f"prompt {name!r}: nested too deeply") from None

    def _import_modules(self) -> None:
        """Import what the render path imports lazily, before any budget is entered.

        The watchdog raises ``RenderTimeout`` asynchronously, anywhere in the request's
        thread: landing inside the import machinery (a first render under load) it could
        leave a module's import lock held, and the next import of that module would wait
        forever. Imported here, outside the budget, the render path only finds them in
        ``sys.modules``. Lazy still: serve's cold start pays for them at the first get.
        """
        import jinja2.nodes
        import jinja2.runtime  # noqa: F401

        import promptops.render.codecache
        import promptops.render.loops
        import promptops.sandbox.environment
        import promptops.sandbox.patterns  # noqa: F401  (_bind)

        self._imported = True

    def _get(self, name: str, arguments: object, budget: Budget,
             sources: list[Message] | None) -> PromptResult:
        """The result; ``sources`` (None: not wanted) gets each message's bundle message."""
        rules, context = self._bind(name, arguments)
        prompt = rules.prompt
        if rules.texts is not None:
            messages = self._texts(name, rules.texts, context, budget)
            if sources is not None:
                sources.extend(prompt["messages"])
        else:
            messages = self._messages(name, prompt, context, [] if sources is None else sources)
        result: PromptResult = {"messages": messages}
        described = rules.described
        if described is False or described is None:
            return result
        if rules.templated:
            try:
                described = self._render(name, -1, "description", described, context)
            except Exception as exc:
                raise TemplateError(
                    f"prompt {name!r} resultDescription failed to render: {_describe(exc)}",
                ) from exc
        else:
            budget.emit(len(described))
        result["description"] = described
        return result

    def _texts(self, name: str, texts: tuple[_Text, ...], context: dict[str, object],
               budget: Budget) -> list[PromptMessage]:
        """The messages of a prompt of plain text messages (see :class:`_Rules`): what
        :meth:`_messages` does for them, without the per-message questions."""
        messages: list[PromptMessage] = []
        shared: dict[str, object] | None = None
        parent: dict[str, object] = {}
        for text in texts:
            try:
                tpl = text.compiled
                if tpl is None:
                    key = (name, text.index, text.field)
                    tpl = text.compiled = self._compiled.get(key) or self._compile(*key,
                                                                                   text.source)
                if tpl.globals is not shared:  # Jinja never changes a context's parent:
                    shared = tpl.globals  # the templates of one request can share it
                    parent = {**shared, **context}
                rendered = tpl.render(context, budget, parent)
            except RenderError:
                raise
            except Exception as exc:  # as in _messages: the package's failure
                raise TemplateError(
                    f"prompt {name!r} message {text.index} failed to render: {_describe(exc)}",
                ) from exc
            messages.append({"role": text.role, "content": {"type": "text", "text": rendered}})
        return messages

    def _messages(self, name: str, prompt: Prompt, context: dict[str, object],
                  sources: list[Message]) -> list[PromptMessage]:
        messages: list[PromptMessage] = []
        if name in self._looped:  # `for:` groups: render/loops.py walks the messages
            from promptops.render.loops import render_loops

            render_loops(self, name, prompt["messages"], context, messages, sources)
            return messages
        for i, msg in enumerate(prompt["messages"]):
            if msg["type"] == "history":
                self._history(messages, msg, context[msg["argument"]])
                sources.extend([msg] * (len(messages) - len(sources)))
                continue
            self._one(name, i, msg, context, messages, sources)
        return messages

    def _one(self, name: str, i: int, msg: Message, context: dict[str, object],
             messages: list[PromptMessage], sources: list[Message]) -> None:
        """Render message ``i`` (not a history item) into ``messages``, unless it is an
        ``omitIfBlank`` one that renders blank."""
        try:
            content = self._content(name, i, msg, context)
        except RenderError:
            raise
        except Exception as exc:  # any template failure is the package's, not the caller's
            raise TemplateError(
                f"prompt {name!r} message {i} failed to render: {_describe(exc)}",
            ) from exc
        if msg.get("omitIfBlank") and content["type"] == "text" \
                and BLANK.issuperset(content["text"]):
            return
        if "annotations" in msg:
            content["annotations"] = msg["annotations"]
        messages.append(self._message(msg["role"], content))
        sources.append(msg)

    def _message(self, role: str, content: Content) -> PromptMessage:
        """The served message: a system message goes out as the package's ``systemRole``,
        its role kept in the content's ``_meta`` for clients that can use it."""
        if role == "system":
            content["_meta"] = {"promptops/role": "system"}  # type: ignore[typeddict-unknown-key]
            return {"role": self.system_role, "content": content}
        return {"role": role, "content": content}  # type: ignore[typeddict-item]

    def _history(self, out: list[PromptMessage], msg: Message, value: object) -> None:
        """Splice in the messages of a history argument (each ``{role, content}``)."""
        arg = msg["argument"]
        if value is None:
            return
        if not isinstance(value, list):
            raise ArgumentError(f"argument {arg!r} must be an array of messages", argument=arg)
        if len(value) > MAX_HISTORY:
            raise ArgumentError(f"argument {arg!r} holds {len(value)} messages, over "
                                f"{MAX_HISTORY}", argument=arg)
        budget = current()
        for j, item in enumerate(value):
            role = _HISTORY_ROLES.get(str(item.get("role", "")).lower()) \
                if isinstance(item, dict) else None
            text = item.get("content", "") if isinstance(item, dict) else None
            if isinstance(text, list):  # content parts: their text, joined
                text = "".join(p.get("text", "") for p in text if isinstance(p, dict)) \
                    if all(isinstance(p, dict) and isinstance(p.get("text", ""), str)
                           for p in text) else None
            if role is None or not isinstance(text, str):
                raise ArgumentError(
                    f"argument {arg!r} item {j} is not a message: expected "
                    "{role: user|assistant|system, content: text}", argument=arg)
            if msg.get("strip"):
                text = text.strip()
            budget.emit(len(text))
            out.append(self._message(role, {"type": "text", "text": text}))

    def _render(self, prompt: str, index: int, field: str, source: str,
                ctx: dict[str, object]) -> str:
        compiled = self._compiled.get((prompt, index, field)) \
            or self._compile(prompt, index, field, source)
        return compiled.render(ctx, current())

    def _compile(self, prompt: str, index: int, field: str, source: str) -> _Compiled:
        mode = self._mode(prompt)
        env = self._env(mode)
        assert self._code is not None  # made with the environment
        tpl = (env.get_template(source) if field == "template"
               else self._code.from_string(env, mode, source))
        shared = self._globals.get(id(env))
        if shared is None:
            shared = self._globals[id(env)] = dict(env.globals)
        compiled = self._compiled[(prompt, index, field)] = _Compiled(tpl, shared)
        return compiled

    def env(self, prompt: str | None = None) -> PromptEnvironment:
        """The environment of ``prompt``'s whitespace mode (default: the package's)."""
        return self._env(self._mode(prompt))

    def _mode(self, prompt: str | None) -> str | None:
        spec = self.prompts.get(prompt) if prompt is not None else None
        return spec.get("whitespace", self.whitespace) if spec else self.whitespace

    def _env(self, whitespace: str | None) -> PromptEnvironment:
        found = self._envs.get(whitespace)
        if found is None:
            from promptops.render.codecache import CodeCache
            from promptops.sandbox.environment import environment

            if self._code is None:
                self._code = CodeCache()
            found = self._envs[whitespace] = environment(self.bundle["templates"], whitespace)
            found.bytecode_cache = self._code.loader_cache(whitespace)
        return found

    def _content(self, name: str, i: int, msg: Message, ctx: dict[str, object]) -> Content:
        kind = msg["type"]
        resources = self.bundle["resources"]
        if kind == "text":
            if "template" in msg:
                return {
                    "type": "text",
                    "text": self._render(name, i, "template", msg["template"], ctx),
                }
            return {"type": "text", "text": self._render(name, i, "text", msg["text"], ctx)}
        if kind in ("image", "audio"):
            res = resources[msg["file"]]
            data = res.get("blob")
            if data is None:
                import base64

                data = base64.b64encode(res["text"].encode()).decode("ascii")
            current().emit(len(data))
            return {"type": kind, "data": data, "mimeType": msg["mimeType"]}
        if kind == "resource":
            body: ResourceBody = {
                "uri": self._render(name, i, "uri", msg["uri"], ctx),
                "mimeType": msg["mimeType"],
            }
            if "text" in msg:
                body["text"] = self._render(name, i, "rtext", msg["text"], ctx)
            else:
                res = resources[msg["file"]]
                body.update({"text": res["text"]} if "text" in res else {"blob": res["blob"]})
                current().emit(len(res.get("text", res.get("blob", ""))))
            embedded: EmbeddedResource = {"type": "resource", "resource": body}
            return embedded
        if kind == "resource_link":
            link: ResourceLink = {
                "type": "resource_link",
                "uri": self._render(name, i, "uri", msg["uri"], ctx),
            }
            for key in _LINK_FIELDS:
                if key in msg:
                    link[key] = msg[key]  # type: ignore[literal-required]
            return link
        raise TemplateError(f"unknown message type {kind!r}")


class _Rules:
    """One prompt's argument rules, read from the bundle once instead of on every request.

    ``base`` holds what an absent argument renders as (its default, else empty text, or
    none for a typed one). ``plain`` maps each string argument that has no ``enum`` or
    ``pattern`` to its length limit:
    a string within it is the whole check, so the usual request never calls
    :meth:`Renderer._check`, which still reports every failure in its own words.

    ``texts`` is the prompt's plan when every message is a plain text message (inline
    or a template file; no ``omitIfBlank``, annotations or system role): each message's
    (index, field, source, role) and, once compiled, its template (:class:`_Text`),
    which :meth:`Renderer._texts` renders without asking the per-message questions of
    the general loop. None for any other prompt. ``described`` and ``templated``: the
    result's description (or False / None: none) and whether it is a template.
    """

    __slots__ = ("base", "declared", "described", "known", "order", "plain", "prompt",
                 "required", "templated", "texts")

    def __init__(self, prompt: Prompt) -> None:
        self.prompt = prompt
        self.declared: dict[str, Argument] = {a["name"]: a for a in prompt["arguments"]}
        self.order = tuple(self.declared)
        self.known = ", ".join(self.declared) or "none"
        self.required = tuple(n for n, a in self.declared.items() if a.get("required"))
        self.base: dict[str, object] = {
            n: a["default"] if "default" in a else ("" if a.get("type", "string") == "string"
                                                    else None)
            for n, a in self.declared.items()}
        self.plain: dict[str, int] = {
            n: a.get("maxLength", defaults.MAX_LENGTH) for n, a in self.declared.items()
            if a.get("type", "string") == "string" and a.get("enum") is None
            and a.get("pattern") is None}
        self.described: str | Literal[False] | None = prompt.get(
            "resultDescription", prompt.get("description"))
        self.templated = "resultDescription" in prompt
        texts: list[_Text] = []
        for i, msg in enumerate(prompt["messages"]):
            role = msg.get("role")
            if msg["type"] != "text" or role not in ("user", "assistant") \
                    or "omitIfBlank" in msg or "annotations" in msg or "loopOver" in msg:
                self.texts: tuple[_Text, ...] | None = None
                return
            if "template" in msg:
                texts.append(_Text(i, "template", msg["template"], role))
            else:
                texts.append(_Text(i, "text", msg["text"], role))
        self.texts = tuple(texts)


class _Text:
    """One message of a :attr:`_Rules.texts` plan, and its template once compiled (the
    renderer's table of compiled templates is then not looked up again)."""

    __slots__ = ("compiled", "field", "index", "role", "source")

    def __init__(self, index: int, field: str, source: str, role: ServedRole) -> None:
        self.index, self.field, self.source, self.role = index, field, source, role
        self.compiled: _Compiled | None = None


class _Compiled:
    """A compiled template and what rendering it needs, prepared once per template.

    ``Template.generate`` builds each render's context by flattening the template's
    globals (a ``ChainMap`` over the environment's) twice: a sixth of a ``prompts/get``.
    Here they are flattened once per template, and the template's parts are kept in
    slots (a ``Template`` is a dict of attributes, and of 1,000 prompts' templates few
    stay in the CPU cache). The context is the one ``new_context`` would make: for a
    template without blocks it is filled in directly, which skips three Python calls a
    render (``new_context``, ``EvalContext`` and a comprehension over no blocks), if
    this Jinja's ``Context`` is still made of the attributes :data:`_CONTEXT_ATTRS` names
    (checked against a real one when the template is prepared).
    Everything else is :func:`promptops.sandbox.environment.render_bounded`'s: each
    chunk counted before it is kept (counting in batches was tried and dropped: a batch
    of fresh large chunks may hold many times the output bound before it is counted), the
    deadline, the error translation and the traceback rewriting of ``generate``.
    """

    __slots__ = ("autoescape", "blocks", "context_class", "direct", "environment",
                 "eval_class", "globals", "name", "new_context", "root", "template")

    def __init__(self, template: Template, shared: dict[str, object] | None = None) -> None:
        from jinja2.nodes import EvalContext
        from jinja2.runtime import Context, new_context

        self.template = template
        self.new_context = new_context  # imported once here, not on every render
        self.environment = env = template.environment
        self.root, self.name, self.blocks = template.root_render_func, template.name, \
            template.blocks
        # ``shared``: the renderer's one flat copy of its environment's globals, for the
        # templates that add none of their own (all of ours): one dict, not one each
        own = template.globals.maps[0] if isinstance(template.globals, ChainMap) else None
        self.globals: dict[str, object] = (shared if shared is not None and own == {}
                                           else dict(template.globals))
        self.autoescape = env.autoescape
        self.context_class, self.eval_class = Context, EvalContext
        made = new_context(env, self.name, self.blocks, {}, True, self.globals)
        self.direct = (not self.blocks and not callable(env.autoescape)
                       and type(made) is Context and tuple(vars(made)) == _CONTEXT_ATTRS
                       and tuple(vars(made.eval_ctx)) == _EVAL_ATTRS)

    def render(self, ctx: dict[str, object], budget: Budget,
               parent: dict[str, object] | None = None) -> str:
        """The template's text for ``ctx``; ``parent``: the context's variables (the flat
        globals and ``ctx``), when the caller made them already."""
        if _monotonic() > budget.deadline:  # the next template of a slow request starts late
            raise BudgetExceeded(budget.late())
        flat, env = self.globals, self.environment
        if parent is None:
            parent = {**flat, **ctx}
        if self.direct:  # what new_context(env, name, {}, parent, True, flat) makes
            context = _new(self.context_class)
            evaluation = _new(self.eval_class)
            evaluation.__dict__ = {"environment": env, "autoescape": self.autoescape,
                                   "volatile": False}
            context.__dict__ = {"parent": parent, "vars": {}, "environment": env,
                                "eval_ctx": evaluation, "exported_vars": set(),
                                "name": self.name, "globals_keys": set(flat),
                                "blocks": {}}
        else:
            context = self.new_context(env, self.name, self.blocks, parent, True, flat)
        left = budget.output_left
        parts: list[str] = []
        keep = parts.append
        try:
            try:
                for chunk in self.root(context):
                    left -= len(chunk)  # each chunk before it is kept: the bound is exact
                    if left < 0:
                        break
                    keep(chunk)
            except Exception:  # as Template.generate does: the traceback names template lines
                env.handle_exception()
        except watchdog.RenderTimeout:
            budget.settle()
            raise BudgetExceeded(budget.late()) from None
        except RecursionError:
            raise BudgetExceeded(
                "template recursion too deep (a recursive include or macro?)") from None
        if left < 0:
            raise BudgetExceeded(budget.too_long())
        budget.output_left = left
        return "".join(parts)


# What jinja2.runtime.Context.__init__ and EvalContext.__init__ set (Jinja 3.1), in order:
# _Compiled fills a context in directly only while a real one still has exactly these.
_CONTEXT_ATTRS = ("parent", "vars", "environment", "eval_ctx", "exported_vars", "name",
                  "globals_keys", "blocks")
_EVAL_ATTRS = ("environment", "autoescape", "volatile")
_new = object.__new__
_monotonic = time.monotonic  # read before every template: one global, not two lookups


def _describe(exc: BaseException) -> str:
    """``Type: message``, without memory addresses (an error must not vary between runs)."""
    return _ADDRESS.sub("", f"{type(exc).__name__}: {exc}")
