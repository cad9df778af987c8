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

The parts, each in its own module below this one: a prompt's argument rules
(:mod:`promptops.render.arguments`), one compiled template's bounded render
(:mod:`promptops.render.template`) and the fast paths, peers of the general path chosen
once per prompt or template (:mod:`promptops.render.fastpath`). Here: the compile cache
and environments, the message loop (``for:`` groups included), content kinds and the
history splice.
"""

from __future__ import annotations

from time import time_ns
from typing import TYPE_CHECKING, Literal

from promptops.errors import ArgumentError, RenderError, TemplateError, did_you_mean
from promptops.render.stamps import VALIDATION_STAMPS
from promptops.sandbox import watchdog
from promptops.sandbox.limits import Budget, BudgetExceeded, Limits, current

if TYPE_CHECKING:  # imported when a prompt is first rendered (serve's cold path stays cold)
    from promptops.pipeline.bundle_types import Bundle, Message, Prompt, ServedRole

    # (render.result's TypedDicts only name what is built here as dict literals: making
    # them at import, typing's class machinery 7 times, cost serve's start ~2.4 M
    # instructions)
    from promptops.render.arguments import ArgumentRules
    from promptops.render.codecache import CodeCache
    from promptops.render.fastpath import TextPlan
    from promptops.render.result import (
        Content,
        EmbeddedResource,
        PromptMessage,
        PromptResult,
        ResourceBody,
        ResourceLink,
    )
    from promptops.render.template import Compiled
    from promptops.sandbox.environment import PromptEnvironment
    from promptops.sandbox.patterns import Pattern

_LINK_FIELDS = ("name", "title", "description", "mimeType", "size")
# A history argument's roles: MCP's two and system, plus the names LangChain (human, ai)
# and Gemini (model) write, so an imported history renders as its own engine does.
_HISTORY_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
                  "model": "assistant", "system": "system"}
MAX_HISTORY = 10_000  # messages one history argument (or items one `for:` array) may hold
# Blank for omitIfBlank: what JavaScript's trim() removes (Dotprompt's rule, which it ports).
BLANK = frozenset(" \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                  "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


class Renderer:
    """Renders the prompts of one bundle; compiled templates are cached per bundle.

    ``code``: compiled code to share with other renderers (a review's two sides); by
    default the renderer makes its own, so a source many prompts repeat compiles once
    (:mod:`promptops.render.codecache`). ``prompts``: the bundle's prompts by name, when the
    caller has them (serve's catalog patches the last renderer's after a commit: a
    bundle of 100,000 prompts is not walked again for one that changed).
    """

    def __init__(self, bundle: Bundle, code: CodeCache | None = None, *,
                 fastpaths: bool = True, prompts: dict[str, Prompt] | None = None) -> None:
        self.bundle = bundle
        self._code = code
        self._shares = code is not None  # the caller's code cache: other renderers use it
        self.fastpaths = fastpaths  # False: the general path only (the fast paths' judge)
        self.prompts: dict[str, Prompt] = prompts if prompts is not None else {
            p["name"]: p for p in bundle["prompts"]}
        self._envs: dict[str | None, PromptEnvironment] = {}
        self._compiled: dict[tuple[str, int, str], Compiled] = {}
        # the same by what it is made of (whitespace mode, loaded by name, source): prompts
        # that share a message text share its template (_compile says why that is exact)
        self._by_source: dict[tuple[str | None, bool, str], Compiled] = {}
        self._plans: dict[str, _Plan] = {}
        # each environment's globals, flattened once (one per whitespace mode in use)
        self._globals: dict[int, dict[str, object]] = {}
        # and whether its Jinja context may be filled in directly (fastpath.prepare)
        self._direct: dict[int, bool] = {}
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
        plan = self._plans.get(name) or self._plan(name)
        return plan.prompt, plan.rules.bind(arguments)

    def rules(self, name: str) -> ArgumentRules:
        """The argument rules of prompt ``name`` (ArgumentError: no such prompt)."""
        return (self._plans.get(name) or self._plan(name)).rules

    def _plan(self, name: str) -> _Plan:
        prompt = self.prompts.get(name)
        if prompt is None:
            raise ArgumentError(f"unknown prompt {name!r}{did_you_mean(str(name), self.prompts)}")
        from promptops.render.arguments import ArgumentRules
        from promptops.render.fastpath import TextPlan

        rules = ArgumentRules(prompt, self._patterns, self.limits.render_timeout_ms)
        texts = TextPlan.of(prompt) if self.fastpaths else None
        plan = self._plans[name] = _Plan(prompt, rules, texts)
        return plan

    def get(self, name: str, arguments: object = None, budget: Budget | None = None
            ) -> PromptResult:
        """The GetPromptResult for ``name``; RenderError on bad input or a failing template.

        ``budget`` bounds the whole request (default: a fresh :meth:`budget`); a caller
        that wants the clock to include its own parsing makes it first and passes it in.
        """
        return self.run(name, arguments, budget, None)

    def render(self, name: str, arguments: object = None, budget: Budget | None = None
               ) -> tuple[PromptResult, list[Message]]:
        """:meth:`get`, and for each served message the bundle message it came from (a
        history item gives several, an omitted blank one none)."""
        sources: list[Message] = []
        return self.run(name, arguments, budget, sources), sources

    def run(self, name: str, arguments: object, budget: Budget | None,
            sources: list[Message] | None) -> PromptResult:
        """:meth:`get` (``sources`` None) and :meth:`render` (a list to fill), for a caller
        on the hot path: ``prompts/get`` calls it directly, a frame fewer a request."""
        if not self._imported:
            self._import_modules()
        if budget is None:
            budget = Budget(self.limits)
        try:
            with budget:  # _get's body here: a frame fewer a request (issue 26)
                plan = self._plans.get(name) or self._plan(name)
                stamps = VALIDATION_STAMPS.get()
                if stamps is None:
                    context = plan.rules.bind(arguments)
                else:  # a sampled request's trace: validation as a span of its own
                    stamps.append(time_ns())
                    context = plan.rules.bind(arguments)
                    stamps.append(time_ns())
                if plan.texts is None:
                    return self._get(name, plan, context, budget, sources)
                result: PromptResult = {"messages": plan.texts.render(
                    name, context, budget, self.template)}
                if sources is not None:
                    sources.extend(plan.prompt["messages"])
                described = plan.described
                if described is False or described is None:
                    return result
                if plan.templated:
                    return self._described(name, plan, result, context, budget)
                budget.output_left -= len(described)  # budget.emit, without its call
                if budget.output_left < 0:
                    raise BudgetExceeded(budget.too_long())
                result["description"] = described
                return result
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

        import promptops.render.arguments
        import promptops.render.codecache
        import promptops.render.fastpath
        import promptops.render.template
        import promptops.sandbox.environment
        import promptops.sandbox.patterns  # noqa: F401  (ArgumentRules.check)

        self._imported = True

    def _get(self, name: str, plan: _Plan, context: dict[str, object], budget: Budget,
             sources: list[Message] | None) -> PromptResult:
        """The result by the general message loop; ``sources`` (None: not wanted) gets each
        message's bundle message."""
        prompt = plan.prompt
        messages = self._messages(name, prompt, context, [] if sources is None else sources,
                                  looped=plan.looped)
        result: PromptResult = {"messages": messages}
        if plan.described is False or plan.described is None:
            return result
        return self._described(name, plan, result, context, budget)

    def _described(self, name: str, plan: _Plan, result: PromptResult,
                   context: dict[str, object], budget: Budget) -> PromptResult:
        """``result`` with the prompt's description (rendered, if it is a template)."""
        described = plan.described
        assert described is not False and described is not None  # the callers' test
        if plan.templated:
            try:
                described = self._render(name, -1, "description", described, context)
            except Exception as exc:
                from promptops.render.template import describe

                raise TemplateError(
                    f"prompt {name!r} resultDescription failed to render: {describe(exc)}",
                ) from exc
        else:
            budget.emit(len(described))
        result["description"] = described
        return result

    def _messages(self, name: str, prompt: Prompt, context: dict[str, object],
                  sources: list[Message], *, looped: bool) -> list[PromptMessage]:
        messages: list[PromptMessage] = []
        if looped:
            self._groups(name, prompt["messages"], context, messages, sources)
            return messages
        for i, msg in enumerate(prompt["messages"]):
            if msg["type"] == "history":
                self._history(messages, sources, msg, context[msg["argument"]])
            else:
                self._one(name, i, msg, context, messages, sources)
        return messages

    def _groups(self, name: str, items: list[Message], context: dict[str, object],
                messages: list[PromptMessage], sources: list[Message]) -> None:
        """The messages of a prompt with ``for: ITEM in ARGUMENT`` groups.

        Real prompts build a conversation from a list (promptfoo's ``_conversation``: a
        user turn and the model's answer per earlier exchange), which a Jinja ``{% for %}``
        cannot do inside one message, so the format repeats *messages*: consecutive
        messages with the same ``for`` form one group, rendered once per item, in order,
        with ``ITEM`` bound to the item and ``loop`` to Jinja's loop facts. Bounded like a
        history splice: at most :data:`MAX_HISTORY` items, and every rendered template
        counts against the request's budget.
        """
        i = 0
        while i < len(items):
            msg = items[i]
            over = msg.get("loopOver")
            if over is None:
                if msg["type"] == "history":
                    self._history(messages, sources, msg, context[msg["argument"]])
                else:
                    self._one(name, i, msg, context, messages, sources)
                i += 1
                continue
            item = msg["loopItem"]
            end = i + 1
            while end < len(items) and items[end].get("loopOver") == over \
                    and items[end].get("loopItem") == item:
                end += 1
            values = context[over]
            if values is None:  # an optional array argument not given: no iteration
                values = []
            if not isinstance(values, list):
                raise ArgumentError(f"argument {over!r} must be an array", argument=over)
            if len(values) > MAX_HISTORY:
                raise ArgumentError(f"argument {over!r} holds {len(values)} items, over "
                                    f"{MAX_HISTORY}", argument=over)
            length = len(values)
            for n, value in enumerate(values):
                inner = dict(context)
                inner[item] = value
                inner["loop"] = {"index": n + 1, "index0": n, "revindex": length - n,
                                 "revindex0": length - n - 1, "first": n == 0,
                                 "last": n == length - 1, "length": length}
                for k in range(i, end):
                    self._one(name, k, items[k], inner, messages, sources)
            i = end

    def _one(self, name: str, i: int, msg: Message, context: dict[str, object],
             messages: list[PromptMessage], sources: list[Message]) -> None:
        """Render message ``i`` (not a history item) into ``messages``, unless it is an
        ``omitIfBlank`` one that renders blank."""
        try:
            content = self._content(name, i, msg, context)
        except RenderError:
            raise
        except Exception as exc:  # any template failure is the package's, not the caller's
            from promptops.render.template import message_failed

            raise message_failed(name, i, exc) from exc
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

    def _history(self, out: list[PromptMessage], sources: list[Message], msg: Message,
                 value: object) -> None:
        """Splice in the messages of a history argument (each ``{role, content}``); each
        one's source is the history message."""
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
            sources.append(msg)

    def _render(self, prompt: str, index: int, field: str, source: str,
                ctx: dict[str, object]) -> str:
        compiled = self._compiled.get((prompt, index, field)) \
            or self._compile(prompt, index, field, source)
        return compiled.render(ctx, current())

    def template(self, prompt: str, index: int, field: str, source: str) -> Compiled:
        """The compiled template of ``field`` (``text``, ``template``, ``uri``, ``rtext``;
        ``description`` at index -1) of message ``index`` of ``prompt``: compiled once."""
        return self._compiled.get((prompt, index, field)) \
            or self._compile(prompt, index, field, source)

    def _compile(self, prompt: str, index: int, field: str, source: str) -> Compiled:
        """The compiled template of a message's field, made once per whitespace mode and
        source (a file's name, for ``template``): what it is made of is that and nothing
        of the prompt (the prompt only picks the mode), so prompts sharing a text share
        it. A compiled template holds no request's state (a render's context is its
        own), as Jinja's own cache of loaded templates shares one template among all
        that include it. A review's 5,000 prompts repeat their system and closing texts:
        half of a render worker's templates were made again (``from_code``, ``prepare``:
        27 µs each on issue 26's ``real``)."""
        mode = self._mode(prompt)
        made = self._by_source.get(key := (mode, field == "template", source))
        if made is None:
            made = self._by_source[key] = self._make(mode, field, source)
        self._compiled[(prompt, index, field)] = made
        return made

    def _make(self, mode: str | None, field: str, source: str) -> Compiled:
        """The compiled template of an inline source or of a file (``template``): an
        inline one made already by another renderer of the caller's code cache (a
        review's other end) when its code never asks its environment for a template
        (:meth:`CodeCache.made`: the loader is all such environments differ in)."""
        from promptops.render.fastpath import prepare

        env = self._env(mode)
        code = self._code
        assert code is not None  # made with the environment
        inline = field != "template"
        if inline and self._shares:
            found = code.made(mode, source, fast=self.fastpaths)
            if found is not None:
                return found
        tpl = code.from_string(env, mode, source) if inline else env.get_template(source)
        shared = self._globals.get(id(env))
        if shared is None:
            shared = self._globals[id(env)] = dict(env.globals)
        made = prepare(tpl, shared, fast=self.fastpaths, checked=self._direct)
        if inline and self._shares:
            code.keep(mode, source, made, fast=self.fastpaths)
        return made

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


class _Plan:
    """What a request for one prompt needs, read from the bundle once: its argument
    rules, its :class:`~promptops.render.fastpath.TextPlan` (None: the general loop) and
    the result's description (``described``; False / None: none; ``templated``: whether
    it is a template) and whether it has ``for:`` messages (``looped``: the loop with
    groups). Made on the prompt's first request, so a renderer over 10,000 prompts costs
    serve's cold start no walk over every prompt's messages."""

    __slots__ = ("described", "looped", "prompt", "rules", "templated", "texts")

    def __init__(self, prompt: Prompt, rules: ArgumentRules, texts: TextPlan | None) -> None:
        self.prompt, self.rules, self.texts = prompt, rules, texts
        self.looped = any("loopOver" in m for m in prompt["messages"])
        self.described: str | Literal[False] | None = prompt.get(
            "resultDescription", prompt.get("description"))
        self.templated = "resultDescription" in prompt
