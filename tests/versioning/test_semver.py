"""SemVer 2.0.0 as promptops reads it: parse, print, order, bump, and what a step is worth.

Pure functions, so every rule is pinned here directly, case by case: release tags are
found and ordered by these rules, and `version`, `bump` and `release` judge a version
with them (tests/versioning/test_versioning.py drives those commands).
"""

from __future__ import annotations

import random

import pytest

from promptops.versioning.semver import (
    Level,
    Version,
    is_version,
    next_version,
    satisfies,
    step_level,
)


def test_precedence_follows_semver_spec() -> None:
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
               "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0",
               "2.0.0", "10.0.0"]
    versions = [Version.parse(v) for v in ordered]
    shuffled = versions[:]
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled) == versions
    assert [str(v) for v in versions] == ordered
    a, b = Version.parse("1.0.0+build.1"), Version.parse("1.0.0+build.2")
    assert a.same_precedence(b) and not a < b and not b < a
    assert str(a) == "1.0.0+build.1"


@pytest.mark.parametrize("bad", ["1.0", "01.0.0", "1.0.0-", "1.0.0-01", "v1.0.0", "1.0.0+"])
def test_parse_rejects_invalid(bad: str) -> None:
    with pytest.raises(ValueError, match="not a SemVer"):
        Version.parse(bad)


@pytest.mark.parametrize(
    ("old", "level", "new"),
    [
        ("1.4.2", Level.patch, "1.4.3"), ("1.4.2", Level.minor, "1.5.0"),
        ("1.4.2", Level.major, "2.0.0"), ("1.4.2+b7", Level.patch, "1.4.3"),
        ("1.5.0-rc.1", Level.patch, "1.5.0"), ("1.5.0-rc.1", Level.minor, "1.5.0"),
        ("1.5.0-rc.1", Level.major, "2.0.0"), ("2.0.0-rc.1", Level.major, "2.0.0"),
        ("1.4.3-rc.1", Level.minor, "1.5.0"),
        ("0.4.2", Level.major, "1.0.0"), ("1.0.0-rc.1", Level.major, "1.0.0"),
        ("1.2.0-rc.1", Level.major, "2.0.0"), ("1.0.1-rc.1", Level.major, "2.0.0"),
        ("1.4.0-rc.1", Level.minor, "1.4.0"), ("1.4.3", Level.minor, "1.5.0"),
        ("1.4.3-rc.1", Level.patch, "1.4.3"), ("1.4.3+b", Level.minor, "1.5.0"),
    ],
)
def test_bump(old: str, level: Level, new: str) -> None:
    bumped = Version.parse(old).bump(level)
    assert str(bumped) == new and bumped.build == ()


def test_steps_and_what_satisfies_a_change() -> None:
    v = Version.parse
    assert step_level(v("1.4.2"), v("1.4.3")) is Level.patch
    assert step_level(v("1.4.2"), v("1.5.0")) is Level.minor
    assert step_level(v("1.4.2"), v("2.0.0")) is Level.major
    assert step_level(v("1.4.2"), v("1.4.2")) is None
    assert step_level(v("0.4.2"), v("0.5.0")) is Level.major  # 0.y: minor is breaking
    assert step_level(v("2.0.0-rc.1"), v("2.0.0")) is Level.major  # pre-releases: anything
    assert next_version(v("0.4.2"), Level.major) == v("0.5.0")
    assert satisfies(v("1.0.0"), v("1.0.0"), None)
    assert not satisfies(v("1.0.0"), v("1.0.0"), Level.patch)
    assert not satisfies(v("1.0.0"), v("1.0.5"), Level.minor)
    assert satisfies(v("1.0.0"), v("2.0.0-rc.1"), Level.major)
    assert v("1.5.0-rc.1").with_pre("rc") == v("1.5.0-rc.2")
    assert v("1.5.0").with_pre("beta") == v("1.5.0-beta.1")


def test_parse_reads_every_part_and_prints_it_back() -> None:
    v = Version.parse("12.3.40-rc.7.x-y+build.5.zz")
    assert (v.major, v.minor, v.patch, v.pre, v.build) == (12, 3, 40, ("rc", "7", "x-y"),
                                                           ("build", "5", "zz"))
    assert v.core == (12, 3, 40)
    assert str(v) == "12.3.40-rc.7.x-y+build.5.zz"
    assert str(Version.parse("0.0.0")) == "0.0.0"
    assert str(Version.parse("1.2.3+b")) == "1.2.3+b"
    assert Version.parse("1.2.3").pre == () and Version.parse("1.2.3").build == ()


@pytest.mark.parametrize("text", ["1.2.3", "0.0.0", "1.0.0-0", "1.0.0-a.0.b", "1.0.0+01",
                                  "1.0.0-x-y.1+z"])
def test_is_version(text: str) -> None:
    assert is_version(text) and str(Version.parse(text)) == text


@pytest.mark.parametrize("text", ["1.2", "1.2.3.4", "a.b.c", "1.2.3-", "1.2.3-01", " 1.2.3",
                                  "1.2.3 ", "1.2.3+a+b", ""])
def test_is_not_version(text: str) -> None:
    assert not is_version(text)


def test_comparisons_and_precedence_details() -> None:
    v = Version.parse
    assert v("1.0.0-alpha") < v("1.0.0") and v("1.0.0") > v("1.0.0-alpha")
    assert v("1.0.0-2") < v("1.0.0-10")  # numeric identifiers compare as numbers
    assert v("1.0.0-10") < v("1.0.0-a")  # numeric below alphanumeric
    assert v("1.0.0-a") < v("1.0.0-a.1")  # a longer series of equal prefix ranks higher
    assert v("1.0.0") <= v("1.0.0") and v("1.0.0") >= v("1.0.0")
    assert not v("1.0.1") <= v("1.0.0") and not v("1.0.0") >= v("1.0.1")
    assert not v("1.0.0") < v("1.0.0") and not v("1.0.0") > v("1.0.0")
    assert v("1.0.0").same_precedence(v("1.0.0+x"))
    assert not v("1.0.0").same_precedence(v("1.0.0-rc.1"))


def test_pre_release_series() -> None:
    v = Version.parse
    assert v("1.5.0-rc.9").with_pre("rc") == v("1.5.0-rc.10")
    assert v("1.5.0-rc.2").with_pre("beta") == v("1.5.0-beta.1")  # another series starts
    assert v("1.5.0-rc").with_pre("rc") == v("1.5.0-rc.1")
    assert v("1.5.0-rc.x").with_pre("rc") == v("1.5.0-rc.1")
    assert v("1.5.0-rc.1.2").with_pre("rc") == v("1.5.0-rc.1")
    assert v("1.5.0+b.1").with_pre("rc") == v("1.5.0-rc.1")
    for bad in ("", "7", "r c", "rc.1", "ü"):
        with pytest.raises(ValueError, match="not a valid pre-release identifier"):
            v("1.0.0").with_pre(bad)


def test_steps() -> None:
    v = Version.parse
    assert step_level(v("1.4.2"), v("1.4.1")) is None  # backwards
    assert step_level(v("1.4.2-rc.1"), v("1.4.2-rc.2")) is Level.major
    assert step_level(v("0.4.2"), v("0.4.3")) is Level.patch
    assert step_level(v("0.4.2"), v("1.0.0")) is Level.major
    assert step_level(v("1.4.2"), v("1.6.0")) is Level.minor
    assert step_level(v("1.4.2"), v("1.4.9")) is Level.patch
    assert step_level(v("1.4.2"), v("3.0.0")) is Level.major


def test_next_version_and_satisfies() -> None:
    v = Version.parse
    assert next_version(v("0.4.2"), Level.minor) == v("0.5.0")
    assert next_version(v("0.4.2"), Level.patch) == v("0.4.3")
    assert next_version(v("0.4.2-rc.1"), Level.major) == v("1.0.0")  # a pre-release: as bump
    assert next_version(v("1.4.2"), Level.major) == v("2.0.0")
    assert satisfies(v("1.0.0"), v("1.0.1"), None) and not satisfies(v("1.0.1"), v("1.0.0"),
                                                                     None)
    assert satisfies(v("1.0.0"), v("1.0.1"), Level.patch)
    assert satisfies(v("1.0.0"), v("1.1.0"), Level.patch)  # more than needed is fine
    assert satisfies(v("1.0.0"), v("1.1.0"), Level.minor)
    assert not satisfies(v("1.0.0"), v("1.1.0"), Level.major)
    assert not satisfies(v("1.0.0"), v("0.9.0"), Level.patch)
    assert satisfies(v("0.4.0"), v("0.5.0"), Level.major)


def test_levels_rank_in_order() -> None:
    assert sorted(Level, key=lambda lv: -lv.rank) == [Level.major, Level.minor, Level.patch]
    assert [lv.value for lv in Level] == ["patch", "minor", "major"]
