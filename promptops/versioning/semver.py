"""SemVer 2.0.0: parse, order and bump versions (standard library only).

Release tags are found and ordered by these rules, and `version`/`release` decide
whether a bump is big enough with them, so precedence follows the spec exactly:
pre-release identifiers compare numerically or in ASCII order, a release ranks above
its pre-releases, and build metadata never affects precedence (SemVer §10-11).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

_NUM = r"0|[1-9]\d*"
_PRE_ID = r"0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*"
_RE = re.compile(
    rf"^(?P<major>{_NUM})\.(?P<minor>{_NUM})\.(?P<patch>{_NUM})"
    rf"(?:-(?P<pre>(?:{_PRE_ID})(?:\.(?:{_PRE_ID}))*))?"
    r"(?:\+(?P<build>[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


class Level(StrEnum):
    """How much a change breaks callers, and so which version part must grow."""

    patch = "patch"
    minor = "minor"
    major = "major"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Level.patch: 1, Level.minor: 2, Level.major: 3}


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Version:
        m = _RE.match(text)
        if m is None:
            raise ValueError(f"{text!r} is not a SemVer 2.0.0 version (expected e.g. 1.4.0)")
        pre, build = m.group("pre"), m.group("build")
        return cls(
            int(m.group("major")),
            int(m.group("minor")),
            int(m.group("patch")),
            tuple(pre.split(".")) if pre else (),
            tuple(build.split(".")) if build else (),
        )

    def __str__(self) -> str:
        out = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            out += "-" + ".".join(self.pre)
        if self.build:
            out += "+" + ".".join(self.build)
        return out

    @property
    def core(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def key(self) -> tuple[object, ...]:
        """Sort key implementing SemVer precedence (build metadata ignored)."""
        if not self.pre:
            return (*self.core, 1, ())
        ids = tuple((0, int(i), "") if i.isdigit() else (1, 0, i) for i in self.pre)
        return (*self.core, 0, ids)

    def __lt__(self, other: Version) -> bool:
        return self.key() < other.key()

    def __le__(self, other: Version) -> bool:
        return self.key() <= other.key()

    def __gt__(self, other: Version) -> bool:
        return self.key() > other.key()

    def __ge__(self, other: Version) -> bool:
        return self.key() >= other.key()

    def same_precedence(self, other: Version) -> bool:
        return self.key() == other.key()

    def bump(self, level: Level) -> Version:
        """The next version for a change of ``level`` (npm rules for pre-releases).

        A pre-release is released by the bump that its core already covers:
        1.3.0-rc.1 bumped minor is 1.3.0, bumped patch is also 1.3.0 (the release it
        was heading for); 2.0.0-rc.1 bumped major is 2.0.0. Build metadata is dropped.
        """
        major, minor, patch = self.core
        if level is Level.major:
            if self.pre and minor == 0 and patch == 0:
                return Version(major, 0, 0)
            return Version(major + 1, 0, 0)
        if level is Level.minor:
            if self.pre and patch == 0:
                return Version(major, minor, 0)
            return Version(major, minor + 1, 0)
        if self.pre:
            return Version(major, minor, patch)
        return Version(major, minor, patch + 1)

    def with_pre(self, ident: str) -> Version:
        """``ident.N``: the next pre-release of this version's core.

        Continues a running series (1.3.0-rc.1 -> 1.3.0-rc.2) or starts one at 1.
        """
        if not re.fullmatch(r"[0-9A-Za-z-]+", ident) or ident.isdigit():
            raise ValueError(f"{ident!r} is not a valid pre-release identifier (e.g. rc, beta)")
        if len(self.pre) == 2 and self.pre[0] == ident and self.pre[1].isdigit():
            return Version(*self.core, (ident, str(int(self.pre[1]) + 1)))
        return Version(*self.core, (ident, "1"))


def is_version(text: str) -> bool:
    return _RE.match(text) is not None


def step_level(old: Version, new: Version) -> Level | None:
    """The bump that going from ``old`` to ``new`` performs; None if ``new`` is not newer.

    Moving within the pre-releases of one version, or from a pre-release to its
    release, counts as major: pre-releases promise no compatibility (SemVer §9), so
    any change between them is allowed. On 0.y.z a minor step counts as major:
    "anything may change" in initial development (SemVer §4), and a 0.y bump is what
    npm and cargo ranges treat as breaking.
    """
    if new <= old:
        return None
    if new.core == old.core:
        return Level.major
    if new.major != old.major:
        return Level.major
    if new.minor != old.minor:
        return Level.major if old.major == 0 else Level.minor
    return Level.patch


def next_version(old: Version, level: Level) -> Version:
    """The smallest version after ``old`` that satisfies a change of ``level``.

    On 0.y.z a breaking change bumps y (0.4.2 -> 0.5.0), following SemVer §4 and the
    npm/cargo convention; leaving 0.x for 1.0.0 is a deliberate `bump major`.
    """
    if old.major == 0 and not old.pre and level is Level.major:
        return old.bump(Level.minor)
    return old.bump(level)


def satisfies(old: Version, new: Version, required: Level | None) -> bool:
    """Whether ``new`` is an acceptable next version after ``old`` for ``required``."""
    if required is None:
        return new >= old
    step = step_level(old, new)
    return step is not None and step.rank >= required.rank
