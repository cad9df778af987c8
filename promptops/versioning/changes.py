"""The typed change list: what changed between two versions of a package, and how badly.

Every change carries its SemVer level so one rule (``required_bump``) turns a change
list into the version bump a release needs; `version`, `bump auto`, `release`, lint's
6xx rules and `diff` reports all read the same list. The order is stable: package
changes first, then prompts by name, each prompt's changes in the order of ``Kind``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from promptops.versioning.semver import Level


class Kind(StrEnum):
    # package-wide
    package_renamed = "package_renamed"
    package_description_changed = "package_description_changed"
    instructions_changed = "instructions_changed"
    serve_settings_changed = "serve_settings_changed"
    # prompts
    prompt_removed = "prompt_removed"
    prompt_renamed = "prompt_renamed"
    prompt_added = "prompt_added"
    # arguments of a prompt
    argument_removed = "argument_removed"
    argument_added = "argument_added"
    argument_made_required = "argument_made_required"
    argument_made_optional = "argument_made_optional"
    enum_narrowed = "enum_narrowed"
    enum_widened = "enum_widened"
    enum_changed = "enum_changed"
    pattern_changed = "pattern_changed"
    max_length_changed = "max_length_changed"
    default_changed = "default_changed"
    argument_type_changed = "argument_type_changed"
    argument_schema_changed = "argument_schema_changed"
    argument_description_changed = "argument_description_changed"
    arguments_reordered = "arguments_reordered"
    # the rest of a prompt
    template_changed = "template_changed"
    resource_changed = "resource_changed"
    title_changed = "title_changed"
    description_changed = "description_changed"
    icons_changed = "icons_changed"
    whitespace_changed = "whitespace_changed"
    sample_removed = "sample_removed"
    sample_added = "sample_added"
    sample_changed = "sample_changed"
    model_changed = "model_changed"
    tools_changed = "tools_changed"
    output_changed = "output_changed"
    metadata_changed = "metadata_changed"
    other_changed = "other_changed"


_KIND_ORDER = {k: i for i, k in enumerate(Kind)}


@dataclass(frozen=True)
class Change:
    """One change. ``prompt`` is the prompt's new name (old name for a removal)."""

    kind: Kind
    level: Level
    message: str
    prompt: str | None = None
    argument: str | None = None
    old: Any = None
    new: Any = None

    @property
    def breaking(self) -> bool:
        return self.level is Level.major

    def summary(self) -> str:
        where = f"prompt {self.prompt!r}: " if self.prompt is not None else "package: "
        return f"{self.level.value}: {where}{self.message}"

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "level": self.level.value,
            "prompt": self.prompt,
            "argument": self.argument,
            "message": self.message,
            "old": self.old,
            "new": self.new,
        }

    def sort_key(self) -> tuple[int, str, int, str]:
        scope = 0 if self.prompt is None else 1
        return (scope, self.prompt or "", _KIND_ORDER[self.kind], self.argument or "")


def ordered(changes: Iterable[Change]) -> list[Change]:
    return sorted(changes, key=Change.sort_key)


def by_level(changes: Iterable[Change]) -> list[Change]:
    """Breaking first (what a reviewer must see first), stable within a level."""
    return sorted(ordered(changes), key=lambda c: -c.level.rank)


def required_bump(changes: Iterable[Change]) -> Level | None:
    """The largest level among ``changes``; None when nothing changed."""
    levels = [c.level for c in changes]
    return max(levels, key=lambda lv: lv.rank) if levels else None


def counts(changes: Iterable[Change]) -> dict[str, int]:
    out = {lv.value: 0 for lv in (Level.major, Level.minor, Level.patch)}
    for c in changes:
        out[c.level.value] += 1
    return out
