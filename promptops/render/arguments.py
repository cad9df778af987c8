"""One prompt's argument rules: the one place a request's arguments are judged.

As the MCP SDK's ``Prompt.render`` does (``mcpserver/prompts/base.py``), arguments are
validated in one place before any template runs, and every failure names the argument and
the rule (:class:`~promptops.errors.ArgumentError`, the caller's fault). serve asks
:meth:`ArgumentRules.missing` which required arguments a request lacks (to elicit them)
instead of deciding it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from promptops.errors import ArgumentError, did_you_mean
from promptops.pipeline import argtypes, defaults

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Argument, Prompt
    from promptops.sandbox.patterns import Pattern


class ArgumentRules:
    """One prompt's argument rules, read from the bundle once instead of on every request.

    ``base`` holds what an absent argument renders as (its default, else empty text, or
    none for a typed one). ``plain`` maps each string argument that has no ``enum`` or
    ``pattern`` to its length limit: a string within it is the whole check, so the usual
    request never calls :meth:`check`, which still reports every failure in its own words.
    ``patterns``: compiled patterns, shared by the prompts of one renderer; ``timeout_ms``:
    the longest one pattern match may take.
    """

    __slots__ = ("base", "declared", "known", "name", "order", "patterns", "plain",
                 "plain_set", "required", "required_set", "timeout_ms")

    def __init__(self, prompt: Prompt, patterns: dict[str, Pattern], timeout_ms: int) -> None:
        self.name = prompt["name"]
        self.patterns, self.timeout_ms = patterns, timeout_ms
        self.declared: dict[str, Argument] = {a["name"]: a for a in prompt["arguments"]}
        self.order = tuple(self.declared)
        self.known = ", ".join(self.declared) or "none"
        self.required = tuple(n for n, a in self.declared.items() if a.get("required"))
        self.required_set = frozenset(self.required)  # all given: one test in C per request
        self.base: dict[str, object] = {
            n: a["default"] if "default" in a else ("" if a.get("type", "string") == "string"
                                                    else None)
            for n, a in self.declared.items()}
        self.plain: dict[str, int] = {
            n: a.get("maxLength", defaults.MAX_LENGTH) for n, a in self.declared.items()
            if a.get("type", "string") == "string" and a.get("enum") is None
            and a.get("pattern") is None}
        self.plain_set = frozenset(self.plain)

    def missing(self, given: Mapping[str, object]) -> list[str]:
        """The required arguments ``given`` lacks, in declaration order."""
        return [n for n in self.required if n not in given]

    def bind(self, arguments: object) -> dict[str, object]:
        """The full render context for ``arguments``, or ArgumentError.

        Every argument is bound by name and also in ``args`` (``args["reference-file"]``
        for a name that is not an identifier); a typed argument's value is parsed and
        checked here (:mod:`promptops.pipeline.argtypes`), before any template runs.
        """
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ArgumentError("arguments must be an object of strings")
        declared = self.declared
        if not declared.keys() >= arguments.keys():  # one test in C; the first unknown named
            for key in arguments:
                if key not in declared:
                    raise ArgumentError(
                        f"unknown argument {key!r} for prompt {self.name!r} (declared: "
                        f"{self.known}){did_you_mean(str(key), declared)}",
                        argument=str(key),
                    )
        if not arguments.keys() >= self.required_set:
            absent = self.missing(arguments)
            raise ArgumentError(
                f"missing required argument {absent[0]!r} for prompt {self.name!r}",
                argument=absent[0],
            )
        plain = self.plain
        if self.plain_set >= arguments.keys():  # every given argument a plain string one
            for key, value in arguments.items():
                if type(value) is not str or len(value) > plain[key]:
                    break  # the loop below reports the first bad one in declaration order
            else:  # all within their limits: what the loop below binds, in one C call
                context = {**self.base, **arguments}
                context["args"] = dict(context)
                return context
        context = dict(self.base)
        for arg_name in self.order:  # declaration order: the first bad one is reported
            if arg_name in arguments:
                value = arguments[arg_name]
                limit = plain.get(arg_name)
                if limit is not None and type(value) is str and len(value) <= limit:
                    context[arg_name] = value
                else:
                    context[arg_name] = self.check(declared[arg_name], value)
        context["args"] = dict(context)
        return context

    def check(self, spec: Argument, value: object) -> object:
        """``value`` for argument ``spec`` (parsed, for a typed one), or ArgumentError."""
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
                rx = self.patterns.get(pattern) or self.patterns.setdefault(
                    pattern, compile_pattern(pattern))
                matched = rx.fullmatch(value, self.timeout_ms)
            except PatternError as exc:  # a bundle built before patterns were RE2, or long
                raise ArgumentError(f"argument {arg!r} {exc}", argument=arg) from None
            if not matched:
                raise ArgumentError(
                    f"argument {arg!r} does not match its pattern {pattern!r}",
                    argument=arg,
                )
        return value
