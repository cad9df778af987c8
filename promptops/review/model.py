"""The review report as data: one model that the json, markdown and text outputs share.

The JSON form is a published interface for bots (``format: promptops.review/1``);
fields are only ever added within a format version, so a consumer that ignores unknown
keys keeps working. ``docs/review.schema.json`` is generated from these models and a
test fails when it is stale.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FORMAT: Literal["promptops.review/1"] = "promptops.review/1"
Level = Literal["major", "minor", "patch"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ChangeItem(_Model):
    """One classified change from the diff engine."""

    kind: str
    level: Level
    prompt: str | None
    argument: str | None
    message: str
    old: object = None
    new: object = None
    old_excerpt: list[str] | None = Field(
        default=None, description="for a person, a template text change's first changed "
        "line at BASE, one per message or file it names (`old`/`new` name them only)")
    new_excerpt: list[str] | None = Field(default=None, description="the same at HEAD")


class FileDiff(_Model):
    """A unified diff of one source file (prompt YAML or template) between the refs."""

    old_path: str | None
    new_path: str | None
    diff: str


class RenderedDiff(_Model):
    """One argument set rendered at both refs; ``diff`` is empty when nothing changed."""

    case: str
    smoke: bool
    arguments: dict[str, object]
    diff: str
    base_arguments: list[str] = Field(
        default_factory=list, description="how BASE's arguments differ from `arguments`, "
        "one line each: an end is rendered with the arguments it accepts")
    head_arguments: list[str] = Field(
        default_factory=list, description="the same for HEAD")


class PromptReview(_Model):
    name: str
    old_name: str | None = Field(description="the name at BASE when the prompt was renamed")
    level: Level | None = Field(description="the largest change level; null: rendering only")
    changes: list[ChangeItem]
    source_diffs: list[FileDiff]
    rendered: list[RenderedDiff] = Field(description="only the cases whose output changed")
    cases_rendered: int
    rendered_changed: bool


class Rename(_Model):
    old: str
    new: str


class CheckStatus(_Model):
    status: Literal["passed", "failed", "not_available"]
    detail: str = ""


class Counts(_Model):
    added: int
    removed: int
    renamed: int
    changed: int
    unaffected: int


class ChannelInfo(_Model):
    """A release channel of the package (docs/channels.md), read from the repository."""

    name: str = Field(description="the channel (`refs/promptops/channels/<package>/<name>`)")
    release: str | None = Field(description="the release tag it points at (`acme@1.3.0`); "
                                "null when it points at something else")
    version: str | None = Field(description="that release's version, when the tag is one "
                                "of this package")
    commit: str | None = Field(description="the released commit (full sha)")
    base: bool = Field(description="its version is the package version at BASE")
    head: bool = Field(description="its version is the package version at HEAD (and "
                       "differs from BASE's)")
    base_commit: bool = Field(default=False, description="its commit is BASE's commit")
    head_commit: bool = Field(default=False, description="its commit is HEAD's commit")


class PackageReview(_Model):
    path: str = Field(description="package folder relative to the repository root")
    name: str
    status: Literal["changed", "unchanged", "added", "removed", "invalid"]
    error: str | None = Field(default=None, description="why a side could not be loaded")
    base_version: str | None
    head_version: str | None
    required_bump: Level | None
    version_ok: bool
    suggested_version: str | None
    lint: CheckStatus
    tests: CheckStatus
    counts: Counts
    breaking: list[ChangeItem]
    changes: list[ChangeItem]
    added: list[str]
    removed: list[str]
    renamed: list[Rename]
    prompts: list[PromptReview]
    unaffected: list[str] = Field(description="prompts in both refs whose output is unchanged")
    channels: list[ChannelInfo] = Field(
        default_factory=list, description="the release channels of this package in the "
        "repository, by name; empty when it has none")
    channels_more: int = Field(default=0, description="channels beyond those listed")

    @property
    def breaking_changes(self) -> bool:
        return bool(self.breaking) or self.status == "removed"


class RefInfo(_Model):
    spec: str
    commit: str | None = Field(description="full sha; null for the working tree")


class ReviewReport(_Model):
    format: Literal["promptops.review/1"] = FORMAT
    base: RefInfo
    head: RefInfo
    packages: list[PackageReview]

    @property
    def breaking(self) -> bool:
        return any(p.breaking_changes for p in self.packages)

    @property
    def changed(self) -> bool:
        return any(p.status != "unchanged" for p in self.packages)


def json_schema() -> dict[str, object]:
    schema = ReviewReport.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://promptops.dev/schema/review-1.json"
    return schema
