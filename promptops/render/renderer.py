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
from collections import ChainMap
from typing import TYPE_CHECKING

from promptops.errors import ArgumentError, RenderError, TemplateError, did_you_mean
from promptops.pipeline import defaults
from promptops.pipeline.bundle_types import Argument, Bundle, Message, Prompt
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

    from promptops.sandbox.environment import PromptEnvironment
    from promptops.sandbox.patterns import Pattern

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_LINK_FIELDS = ("name", "title", "description", "mimeType", "size")


class Renderer:
    """Renders the prompts of one bundle; compiled templates are cached per bundle."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.prompts: dict[str, Prompt] = {p["name"]: p for p in bundle["prompts"]}
        self._env: PromptEnvironment | None = None
        self._compiled: dict[tuple[str, int, str], _Compiled] = {}
        self._rules: dict[str, _Rules] = {}
        self._globals: dict[str, object] | None = None  # env.globals, flattened once
        self._patterns: dict[str, Pattern] = {}
        package = bundle.get("package")
        self.limits = Limits.of(package.get("limits") if package else None)

    def budget(self) -> Budget:
        """A fresh budget for one request under this bundle's limits; its clock starts now."""
        return Budget(self.limits)

    def validate(self, name: str, arguments: object) -> tuple[Prompt, dict[str, str]]:
        """The prompt and the full render context, or ArgumentError."""
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
        return rules.prompt, context

    def _check(self, prompt: str, spec: Argument, value: object) -> str:
        arg = spec["name"]
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
        if budget is None:
            budget = Budget(self.limits)
        try:
            with budget:
                return self._get(name, arguments, budget)
        except watchdog.RenderTimeout:
            budget.settle()
            raise TemplateError(f"prompt {name!r}: {budget.late()}") from None
        except BudgetExceeded as exc:
            raise TemplateError(f"prompt {name!r}: {exc}") from None
        except RecursionError:
            raise TemplateError(f"prompt {name!r}: nested too deeply") from None

    def _get(self, name: str, arguments: object, budget: Budget) -> PromptResult:
        prompt, context = self.validate(name, arguments)
        messages: list[PromptMessage] = []
        for i, msg in enumerate(prompt["messages"]):
            try:
                content = self._content(name, i, msg, context)
            except RenderError:
                raise
            except Exception as exc:  # any template failure is the package's, not the caller's
                raise TemplateError(
                    f"prompt {name!r} message {i} failed to render: {_describe(exc)}",
                ) from exc
            if "annotations" in msg:
                content["annotations"] = msg["annotations"]
            messages.append({"role": msg["role"], "content": content})
        result: PromptResult = {"messages": messages}
        described = prompt.get("resultDescription", prompt.get("description"))
        if described is False or described is None:
            return result
        if "resultDescription" in prompt:
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

    def _render(self, prompt: str, index: int, field: str, source: str, ctx: dict[str, str]) -> str:
        key = (prompt, index, field)
        compiled = self._compiled.get(key)
        if compiled is None:
            env = self.env()
            tpl = env.get_template(source) if field == "template" else env.from_string(source)
            if self._globals is None:
                self._globals = dict(env.globals)
            compiled = self._compiled[key] = _Compiled(tpl, self._globals)
        return compiled.render(ctx, current())

    def env(self) -> PromptEnvironment:
        if self._env is None:
            from promptops.sandbox.environment import environment

            self._env = environment(self.bundle["templates"])
        return self._env

    def _content(self, name: str, i: int, msg: Message, ctx: dict[str, str]) -> Content:
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


def _describe(exc: BaseException) -> str:
    """``Type: message``, without memory addresses (an error must not vary between runs)."""
    return _ADDRESS.sub("", f"{type(exc).__name__}: {exc}")


class _Rules:
    """One prompt's argument rules, read from the bundle once instead of on every request.

    ``plain`` maps each argument that has no ``enum`` or ``pattern`` to its length limit:
    a string within it is the whole check, so the usual request never calls
    :meth:`Renderer._check`, which still reports every failure in its own words.
    """

    __slots__ = ("base", "declared", "known", "order", "plain", "prompt", "required")

    def __init__(self, prompt: Prompt) -> None:
        self.prompt = prompt
        self.declared: dict[str, Argument] = {a["name"]: a for a in prompt["arguments"]}
        self.order = tuple(self.declared)
        self.known = ", ".join(self.declared) or "none"
        self.required = tuple(n for n, a in self.declared.items() if a.get("required"))
        self.base: dict[str, str] = {n: a.get("default", "") for n, a in self.declared.items()}
        self.plain: dict[str, int] = {
            n: a.get("maxLength", defaults.MAX_LENGTH) for n, a in self.declared.items()
            if a.get("enum") is None and a.get("pattern") is None}


class _Compiled:
    """A compiled template and what rendering it needs, prepared once per template.

    ``Template.generate`` builds each render's context by flattening the template's
    globals (a ``ChainMap`` over the environment's) twice: a sixth of a ``prompts/get``.
    Here they are flattened once per template and the context is made from a plain dict.
    Everything else is :func:`promptops.sandbox.environment.render_bounded`'s: each
    chunk counted before it is kept (counting in batches was tried and dropped: a batch
    of fresh large chunks may hold many times the output bound before it is counted), the
    deadline, the error translation and the traceback rewriting of ``generate``.
    """

    __slots__ = ("globals", "template")

    def __init__(self, template: Template, shared: dict[str, object] | None = None) -> None:
        self.template = template
        # ``shared``: the renderer's one flat copy of its environment's globals, for the
        # templates that add none of their own (all of ours): one dict, not one each
        own = template.globals.maps[0] if isinstance(template.globals, ChainMap) else None
        self.globals: dict[str, object] = (shared if shared is not None and own == {}
                                           else dict(template.globals))

    def render(self, ctx: dict[str, str], budget: Budget) -> str:
        from jinja2.runtime import new_context

        budget.check_time()  # the next template of a slow request starts late
        tpl, flat = self.template, self.globals
        env = tpl.environment
        left = budget.output_left
        parts: list[str] = []
        try:
            try:
                for chunk in tpl.root_render_func(
                        new_context(env, tpl.name, tpl.blocks, {**flat, **ctx}, True, flat)):
                    left -= len(chunk)  # each chunk before it is kept: the bound is exact
                    if left < 0:
                        break
                    parts.append(chunk)
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
