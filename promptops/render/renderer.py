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
from typing import TYPE_CHECKING

from promptops.errors import ArgumentError, RenderError, TemplateError
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
    """Renders the prompts of one bundle; compiled templates are cached per bundle."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.prompts: dict[str, Prompt] = {p["name"]: p for p in bundle["prompts"]}
        self._envs: dict[str | None, PromptEnvironment] = {}
        self._compiled: dict[tuple[str, int, str], Template] = {}
        self._patterns: dict[str, Pattern] = {}
        package = bundle.get("package")
        self.limits = Limits.of(package.get("limits") if package else None)
        self.system_role: ServedRole = package.get("systemRole", "user") if package else "user"
        # absent: a bundle built before the modes existed (trim_blocks + lstrip_blocks)
        self.whitespace = package.get("whitespace") if package else None

    def budget(self) -> Budget:
        """A fresh budget for one request under this bundle's limits; its clock starts now."""
        return Budget(self.limits)

    def validate(self, name: str, arguments: object) -> tuple[Prompt, dict[str, object]]:
        """The prompt and the full render context, or ArgumentError.

        Every argument is bound by name and also in ``args`` (``args["reference-file"]``
        for a name that is not an identifier); a typed argument's value is parsed and
        checked here (:mod:`promptops.pipeline.argtypes`), before any template runs.
        """
        prompt = self.prompts.get(name)
        if prompt is None:
            raise ArgumentError(f"unknown prompt {name!r}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ArgumentError("arguments must be an object of strings")
        declared = {a["name"]: a for a in prompt["arguments"]}
        for key in arguments:
            if key not in declared:
                known = ", ".join(declared) or "none"
                raise ArgumentError(
                    f"unknown argument {key!r} for prompt {name!r} (declared: {known})",
                    argument=str(key),
                )
        missing = [a for a in declared if declared[a].get("required") and a not in arguments]
        if missing:
            raise ArgumentError(
                f"missing required argument {missing[0]!r} for prompt {name!r}",
                argument=missing[0],
            )
        context: dict[str, object] = {}
        for arg_name, spec in declared.items():
            if arg_name in arguments:
                context[arg_name] = self._check(name, spec, arguments[arg_name])
            elif "default" in spec:
                context[arg_name] = spec["default"]
            else:  # an absent optional argument: empty text, or none for a typed one
                context[arg_name] = "" if spec.get("type", "string") == "string" else None
        context["args"] = dict(context)
        return prompt, context

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
        return self.render(name, arguments, budget)[0]

    def render(self, name: str, arguments: object = None, budget: Budget | None = None
               ) -> tuple[PromptResult, list[Message]]:
        """:meth:`get`, and for each served message the bundle message it came from (a
        history item gives several, an omitted blank one none)."""
        if budget is None:
            budget = Budget(self.limits)
        try:
            with budget:
                sources: list[Message] = []
                return self._get(name, arguments, budget, sources), sources
        except watchdog.RenderTimeout:
            budget.settle()
            raise TemplateError(f"prompt {name!r}: {budget.late()}") from None
        except BudgetExceeded as exc:
            raise TemplateError(f"prompt {name!r}: {exc}") from None
        except RecursionError:
            raise TemplateError(f"prompt {name!r}: nested too deeply") from None

    def _get(self, name: str, arguments: object, budget: Budget, sources: list[Message]
             ) -> PromptResult:
        prompt, context = self.validate(name, arguments)
        messages: list[PromptMessage] = []
        for i, msg in enumerate(prompt["messages"]):
            if msg["type"] == "history":
                self._history(messages, msg, context[msg["argument"]])
                sources.extend([msg] * (len(messages) - len(sources)))
                continue
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
                continue
            if "annotations" in msg:
                content["annotations"] = msg["annotations"]
            messages.append(self._message(msg["role"], content))
            sources.append(msg)
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
        from promptops.sandbox.environment import render_bounded

        key = (prompt, index, field)
        tpl = self._compiled.get(key)
        if tpl is None:
            env = self.env(prompt)
            tpl = env.get_template(source) if field == "template" else env.from_string(source)
            self._compiled[key] = tpl
        return render_bounded(tpl, ctx, current())

    def env(self, prompt: str | None = None) -> PromptEnvironment:
        """The environment of ``prompt``'s whitespace mode (default: the package's)."""
        spec = self.prompts.get(prompt) if prompt is not None else None
        whitespace = spec.get("whitespace", self.whitespace) if spec else self.whitespace
        found = self._envs.get(whitespace)
        if found is None:
            from promptops.sandbox.environment import environment

            found = self._envs[whitespace] = environment(self.bundle["templates"], whitespace)
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


def _describe(exc: BaseException) -> str:
    """``Type: message``, without memory addresses (an error must not vary between runs)."""
    return _ADDRESS.sub("", f"{type(exc).__name__}: {exc}")
