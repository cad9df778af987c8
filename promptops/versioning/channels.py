"""Promotion policy: when a release may enter a channel, and rolling a channel back.

A promotion checks, cheapest first, and refuses with the rule and how to satisfy it:
the channel is one the policy names; the release tag exists and records a bundle digest;
the version was in the channel before this one (``after``) for at least ``soak``; the
release's commit rebuilds to the digest its tag records; the gates the rule lists (lint,
test) pass on that rebuild. Then the channel moves with a compare-and-swap against the
state read at the start (:mod:`promptops.git.channels`), locally or on ``--push REMOTE``,
whose refs are then the truth. The gates themselves live above this layer; the command
hands them in by name, as ``release`` does.

A rollback undoes the newest promotion not already undone: the log is replayed as a
stack (a promotion pushes its version, a rollback pops one), so rolling back twice goes
two versions back rather than bouncing between the last two. It runs no gates (the
version was gated when it entered) and no ``after``/``soak`` rule: it is the way out.

The policy is the ``channels:`` list of the package's committed HEAD manifest (never the
working tree: an uncommitted edit does not relax a rule).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.errors import GitError, PackageError, PromptopsError
from promptops.git.channels import (
    ChannelMoved,
    Channels,
    Move,
    State,
    channel_ref,
    check_name,
    clean_why,
    log_ref,
)
from promptops.versioning.history import open_repo, recorded_digest
from promptops.versioning.semver import is_version

if TYPE_CHECKING:
    from promptops.pipeline.build import Build
    from promptops.pipeline.manifest import ChannelPolicy

Gate = Callable[["Build"], "str | None"]
ALL_GATES = ("lint", "test")
_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}

__all__ = [
    "ALL_GATES",
    "ChannelMoved",
    "Gate",
    "Moved",
    "PromotionRefused",
    "Rule",
    "promote",
    "resolve_channel",
    "rollback",
]


class PromotionRefused(PromptopsError):
    """A promotion or rollback the policy or the release does not allow; says what to do."""


@dataclass(frozen=True)
class Rule:
    """What entering ``name`` requires."""

    name: str
    after: str | None
    soak_s: int
    gates: tuple[str, ...]
    where: str  # "the channels policy of promptops.yaml" or "no channels policy"


@dataclass(frozen=True)
class Moved:
    """What a promote or rollback did; ``changed`` False when the channel already had it."""

    package: str
    channel: str
    action: str
    source: str | None
    target: str
    digest: str
    remote: str | None
    changed: bool


def parse_duration(text: str) -> int:
    """``1d12h``, ``30m``, ``90s`` as seconds; ValueError for anything else."""
    total, number = 0, ""
    for ch in text.strip():
        if ch.isdigit():
            number += ch
        elif ch in _UNITS and number:
            total, number = total + int(number) * _UNITS[ch], ""
        else:
            raise ValueError(text)
    if number or not text.strip():
        raise ValueError(text)
    return total


def duration(seconds: float) -> str:
    s = int(seconds)
    parts = [(s // 86400, "d"), (s % 86400 // 3600, "h"), (s % 3600 // 60, "m")]
    shown = " ".join(f"{n}{u}" for n, u in parts if n)
    return shown or f"{s}s"


def rules_of(policy: list[ChannelPolicy] | None, channel: str) -> Rule:
    """The rule for entering ``channel``; refused when a policy exists and omits it."""
    if policy is None:
        return Rule(channel, None, 0, ALL_GATES, "no channels policy")
    names = [p.name for p in policy]
    for i, p in enumerate(policy):
        if p.name != channel:
            continue
        after = p.after if "after" in p.model_fields_set else (names[i - 1] if i else None)
        soak = parse_duration(p.soak) if p.soak else 0
        return Rule(channel, after, soak, tuple(p.gates), "the channels policy of promptops.yaml")
    raise PromotionRefused(
        f"channel {channel!r} is not in the channels policy of promptops.yaml "
        f"({', '.join(names)}): promote to one of them, or add `- name: {channel}` under "
        "`channels:` and commit it")


# ---- reading a package's channels -----------------------------------------------------

def _head_build(package_dir: Path) -> Build:
    from promptops.pipeline.build import Build

    return Build(package_dir, "HEAD")


def head_policy(package_dir: Path) -> tuple[str, list[ChannelPolicy] | None]:
    """The package name and channels policy of the committed HEAD."""
    manifest = _head_build(package_dir).package.manifest  # PackageError lists the problems
    return manifest.name, (list(manifest.channels) if manifest.channels is not None else None)


def resolve_channel(chans: Channels, spec: str) -> tuple[str, str]:
    """``PACKAGE/CHANNEL`` or a ``CHANNEL`` exactly one package has: (package, channel)."""
    package, sep, channel = spec.rpartition("/")
    if sep:
        return package, check_name(channel)
    check_name(spec)
    found = sorted({s.package for s in chans.all() if s.channel == spec})
    if not found:
        raise GitError(f"no channel {spec!r} in {chans.top} (`promptops channels` lists them; "
                       "after a clone, fetch them: `git fetch origin "
                       "'+refs/promptops/*:refs/promptops/*'`)")
    if len(found) > 1:
        raise GitError(f"several packages have a channel {spec!r} ({', '.join(found)}): name "
                       f"one, e.g. {found[0]}/{spec}")
    return found[0], spec


def current(chans: Channels, state: State) -> str | None:
    """The release tag a channel names, or None before its first move."""
    if state.pointer is None:
        return None
    return chans.tag_name(state.pointer) or state.pointer[:12]


def stack(moves: list[Move]) -> list[Move]:
    """The moves still in effect, oldest first: promotions minus the ones rolled back."""
    kept: list[Move] = []
    for move in reversed(moves):  # moves come newest first
        if move.action == "rollback":
            if kept:
                kept.pop()
        else:
            kept.append(move)
    return kept


def _time_in(moves: list[Move], tag: str, now: float) -> float | None:
    """The longest stay of ``tag`` in a channel whose log is ``moves``; None if never."""
    best: float | None = None
    ordered = list(reversed(moves))
    for i, move in enumerate(ordered):
        if move.target != tag:
            continue
        left = ordered[i + 1].when if i + 1 < len(ordered) else now
        best = max(best or 0.0, left - move.when)
    return best


# ---- promote and roll back --------------------------------------------------------------

def promote(package_dir: Path, spec: str, channel: str, *, why: str, remote: str | None,
            gates: Mapping[str, Gate], now: float | None = None) -> Moved:
    """Move ``channel`` to the release ``spec`` (``[PACKAGE@]VERSION``), or refuse."""
    check_name(channel)
    why = clean_why(why)
    head_name, policy = head_policy(package_dir)
    package, sep, version = spec.rpartition("@")
    package = package if sep else head_name
    if not is_version(version):
        raise PromotionRefused(f"{spec!r} is not [PACKAGE@]VERSION (e.g. 1.4.0 or "
                               f"{head_name}@1.4.0)")
    if package != head_name:
        raise PromotionRefused(f"{spec!r} names package {package!r}, but the package here is "
                               f"{head_name!r}: run promote in {package}'s folder")
    rule = rules_of(policy, channel)
    tag = f"{package}@{version}"
    repo = open_repo(package_dir)
    if not repo.has_tag(tag):
        raise PromotionRefused(f"no release {tag}: release it first (`promptops release` at "
                               f"the commit holding version {version}), or fetch tags")
    digest = recorded_digest(repo, tag)
    if digest is None:
        raise PromotionRefused(f"{tag} records no bundle digest (a lightweight or hand-made "
                               "tag): only a tag made by `promptops release` can be promoted")
    commit = repo.tag_commit(tag)
    chans = Channels(repo.top)
    tag_obj = chans.resolve(f"refs/tags/{tag}")
    assert tag_obj is not None
    states = _states(chans, package, [channel, *([rule.after] if rule.after else [])], remote)
    state = states[0]
    if state.pointer == tag_obj:
        return Moved(package, channel, "promote", tag, tag, digest, remote, False)
    when = time.time() if now is None else now
    if rule.after is not None:
        _check_after(chans, rule, states[1], tag, when)
    _check_release(package_dir, tag, commit, digest, rule, gates)
    source = current(chans, state)
    trailers = [("Action", "promote"), ("Package", package), ("Channel", channel),
                ("From", source or "none"), ("To", tag), ("Commit", commit),
                ("Digest", digest), ("Object", tag_obj)]
    subject = f"promote {package} {channel}: {_ver(source)} -> {version}"
    _move(chans, state, tag_obj, subject, why, trailers, remote)
    return Moved(package, channel, "promote", source, tag, digest, remote, True)


def rollback(start: Path, spec: str, *, why: str, remote: str | None) -> Moved:
    """Move the channel back to the version before its newest promotion still in effect."""
    why = clean_why(why)
    chans = Channels.open(start)
    package, channel = resolve_channel(chans, spec) if remote is None or "/" in spec else \
        _remote_channel(chans, start, spec)
    state = _states(chans, package, [channel], remote)[0]
    moves = chans.moves(state.log)
    kept = stack(moves)
    if len(kept) < 2:
        raise PromotionRefused(
            f"{package}/{channel} has no earlier version to roll back to "
            f"({'it was never moved' if not kept else 'only ' + kept[0].target + ' was promoted'}"
            f"): promote the version you want with `promptops promote VERSION --to {channel}`")
    back = kept[-2]
    obj = chans.resolve(f"refs/tags/{back.target}") or (
        chans.resolve(back.tag_object) if back.tag_object else None)
    if obj is None:
        raise PromotionRefused(f"the release {back.target} is gone from this repository (its "
                               "tag was deleted): fetch tags, or promote another version")
    source = current(chans, state)
    trailers = [("Action", "rollback"), ("Package", package), ("Channel", channel),
                ("From", source or "none"), ("To", back.target), ("Commit", back.commit),
                ("Digest", back.digest), ("Object", obj)]
    subject = f"rollback {package} {channel}: {_ver(source)} -> {_ver(back.target)}"
    _move(chans, state, obj, subject, why, trailers, remote)
    return Moved(package, channel, "rollback", source, back.target, back.digest, remote, True)


def _remote_channel(chans: Channels, start: Path, spec: str) -> tuple[str, str]:
    """An unqualified channel on a remote: the package here names it."""
    from promptops.pipeline.source import find_package

    name, _ = head_policy(find_package(start))
    return name, check_name(spec)


def _ver(tag: str | None) -> str:
    return "none" if tag is None else tag.rpartition("@")[2]


def _states(chans: Channels, package: str, channels: list[str], remote: str | None
            ) -> list[State]:
    if remote is None:
        return [chans.state(package, c) for c in channels]
    return chans.remote_state(remote, package, channels)


def _check_after(chans: Channels, rule: Rule, prev: State, tag: str, now: float) -> None:
    stay = _time_in(chans.moves(prev.log), tag, now)
    if stay is None:
        raise PromotionRefused(
            f"rule `after: {rule.after}` of channel {rule.name} ({rule.where}): {tag} has "
            f"never been in {rule.after}; promote it there first: "
            f"`promptops promote {tag} --to {rule.after}`")
    if stay < rule.soak_s:
        wait = rule.soak_s - stay
        at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now + wait))
        raise PromotionRefused(
            f"rule `soak: {duration(rule.soak_s)}` of channel {rule.name} ({rule.where}): "
            f"{tag} has been in {rule.after} for {duration(stay)}; promote it after {at} "
            f"(in {duration(wait)}), or lower `soak` for {rule.name} in promptops.yaml")


def _check_release(package_dir: Path, tag: str, commit: str, digest: str, rule: Rule,
                   gates: Mapping[str, Gate]) -> None:
    from promptops.pipeline.build import Build

    build = Build(package_dir, commit, keep_asts=True)
    try:
        rebuilt = build.bundle["digest"]
    except PackageError as exc:
        raise PromotionRefused(f"{tag} ({commit[:12]}) no longer builds ({exc}); promote "
                               "another release") from exc
    if rebuilt != digest:
        raise PromotionRefused(
            f"{tag} does not rebuild to its recorded digest ({digest}); this promptops "
            f"builds {rebuilt} from {commit[:12]}: build it with the promptops version that "
            "released it, or release a new version")
    for name in rule.gates:
        problem = gates[name](build)
        if problem:
            raise PromotionRefused(f"gate `{name}` of channel {rule.name} ({rule.where}) "
                                   f"fails for {tag}: {problem}")


def _move(chans: Channels, state: State, target: str, subject: str, why: str,
          trailers: list[tuple[str, str]], remote: str | None) -> None:
    entry = chans.record(state.log, subject, why, trailers)
    updates = [(channel_ref(state.package, state.channel), target, state.pointer),
               (log_ref(state.package, state.channel), entry, state.log)]
    where = f"on {remote}" if remote else "here"
    try:
        if remote is None:
            chans.swap(updates)
        else:
            chans.push(remote, updates)
    except ChannelMoved as exc:
        name = f"{state.package}/{state.channel}"
        see = (f"`promptops channels fetch {remote}` then `promptops channels log {name}`"
               if remote else f"`promptops channels log {name}`")
        raise ChannelMoved(
            f"{name} was moved {where} by someone else while this move was prepared; "
            f"nothing was changed. See {see}, and run the command again if it is still "
            f"wanted.\n(git: {exc})") from exc
    if remote is not None:
        chans.set([(ref, new) for ref, new, _ in updates])
