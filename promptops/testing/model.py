"""The test-file format as pydantic models: the grammar `promptops schema test` publishes.

Strict and ``extra="forbid"`` like the package models, so ``contians:`` is a reported
mistake with a suggestion rather than a check that silently never runs.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

# one home: a prompt's smoke mark uses ErrorExpectation; Strict is the package models' base
# (a string under a field is its description: the hover text editors show)
from promptops.pipeline.model import ErrorExpectation, Strict

RENDER_CHECKS = ("messages", "roles", "contains", "not_contains", "matches", "equals",
                 "max_chars", "snapshot")


class Expectation(Strict):
    """One group of checks, on every message or (with ``message``) on one of them."""

    message: int | None = Field(None, ge=0, description="0-based index: check only this message")
    messages: int | None = Field(None, ge=0, description="Number of messages")
    roles: list[Literal["user", "assistant"]] | None = Field(None, description="Roles in order")
    contains: list[str] | None = Field(None, description="Each appears in the rendered text")
    not_contains: list[str] | None = Field(None, description="None appears in the rendered text")
    matches: list[str] | None = Field(None, description="Python regexes, searched in the text")
    equals: list[dict[str, object]] | None = Field(None, description="The exact MCP messages")
    max_chars: int | None = Field(None, ge=0, description="Upper bound on the rendered text")
    snapshot: bool | None = Field(None, description="Compare with the stored golden file")
    error: ErrorExpectation | None = Field(None, description="The request must fail like this")

    @field_validator("matches")
    @classmethod
    def _compiles(cls, value: list[str] | None) -> list[str] | None:
        for rx in value or ():
            try:
                re.compile(rx)
            except re.error as exc:
                raise ValueError(f"{rx!r} is not a valid regular expression: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _coherent(self) -> Expectation:
        given = [k for k in (*RENDER_CHECKS, "error") if getattr(self, k) is not None]
        if not given:
            raise ValueError(f"an expectation needs a check: {', '.join(RENDER_CHECKS)} or error")
        if self.error is not None and len(given) > 1:
            raise ValueError("error cannot be combined with checks on a rendered result")
        if self.message is not None:
            bad = [k for k in ("messages", "snapshot", "error") if getattr(self, k) is not None]
            if bad:
                raise ValueError(f"{bad[0]} applies to the whole result, not to one message")
        return self


class TestCase(Strict):
    """One request: a prompt rendered with these arguments must meet ``expect``."""

    __test__ = False  # not a pytest class, whatever its name

    name: str = Field(min_length=1, description="Unique per prompt; names the snapshot file")
    arguments: dict[str, str] = Field(default_factory=dict, description="Strings, as MCP sends")
    expect: Expectation | list[Expectation] = Field(
        default_factory=list, description="Checks; none means: renders without error"
    )
    skip: bool | str = Field(False, description="true or a reason: reported, not run")

    @property
    def expectations(self) -> tuple[Expectation, ...]:
        return tuple(self.expect) if isinstance(self.expect, list) else (self.expect,)

    @model_validator(mode="after")
    def _error_alone(self) -> TestCase:
        exps = self.expectations
        if any(e.error is not None for e in exps) and len(exps) > 1:
            raise ValueError("a case that expects an error can have no other checks")
        return self


class TestFile(Strict):
    """tests/**/*.test.yaml: cases for one prompt."""

    __test__ = False

    prompt: str = Field(description="Name of the prompt under test")
    cases: list[TestCase] = Field(min_length=1, description="The requests to make, each with its "
                                  "arguments and what it must return.")
