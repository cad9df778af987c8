"""The argument sets a review renders each prompt with: its test cases and a smoke case.

A reviewer needs to see the *rendered* effect of a change, and rendering needs
arguments; the package's own test cases are the arguments its authors care about,
and the smoke case (issue 5) covers prompts nobody wrote tests for yet. Both come
from the test runner, so `test` and `diff` render exactly the same requests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from promptops.errors import PromptopsError
from promptops.pipeline.bundle_types import Bundle
from promptops.pipeline.source import Source
from promptops.pipeline.validate import Package, load_package
from promptops.testing.cases import Case, load_cases, smoke_case


@dataclass(frozen=True)
class ReviewCase:
    prompt: str
    name: str
    arguments: dict[str, object] = field(default_factory=dict)
    smoke: bool = False


def cases_for(source: Source, bundle: Bundle, package: Package | None = None, *,
              smoke: bool = True) -> list[ReviewCase]:
    """Every test case in the package at ``source`` plus one smoke case per prompt
    (``smoke=False``: the test cases only; BASE's, of which a review shows only those
    HEAD lacks, never a smoke case: 5,000 of them made and dropped cost 0.03 s).

    Broken test files are the test runner's to report; the review then renders the
    smoke cases only rather than failing.
    """
    try:
        found = load_cases(package if package is not None else load_package(source), source)
    except PromptopsError:
        found = []
    if smoke:
        found += [smoke_case(p) for p in bundle["prompts"]]
    return review_cases(found)


def review_cases(found: list[Case]) -> list[ReviewCase]:
    """The test runner's cases as the review renders them (arguments only)."""
    return [ReviewCase(c.prompt, c.name, dict(c.arguments), c.smoke) for c in found]
