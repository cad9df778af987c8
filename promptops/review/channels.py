"""Which release channels hold a reviewed package's versions (docs/channels.md).

A reviewer deciding on a change wants to know what it is measured against in the
field: "``production`` has 1.3.0, this change's base; ``staging`` has 1.4.0". The
channels are read from the repository's own refs (``refs/promptops/channels/<pkg>/*``),
so a clone that has not fetched them shows none, and the names and tags are the
repository's (untrusted: the comment renders them inert). Reading them never fails a
review: a repository whose channel refs git cannot read reviews without the line.
"""

from __future__ import annotations

from pathlib import Path

from promptops.errors import GitError
from promptops.git.channels import Channels, State
from promptops.review.model import ChannelInfo, PackageReview

MAX_CHANNELS = 20  # per package; more are counted, not listed (`promptops channels` has all)


def with_channels(top: Path, packages: list[PackageReview], base: str | None,
                  head: str | None) -> list[PackageReview]:
    """``packages`` with each one's channels filled in (unchanged when it has none)."""
    try:
        chans = Channels(top)
        states = chans.all()
    except GitError:
        return packages
    by_package: dict[str, list[State]] = {}
    for state in states:
        if state.pointer is not None:
            by_package.setdefault(state.package, []).append(state)
    out = []
    for pkg in packages:
        mine = by_package.get(pkg.name, [])
        if not mine:
            out.append(pkg)
            continue
        infos = [_info(chans, s, pkg, base, head) for s in mine[:MAX_CHANNELS]]
        out.append(pkg.model_copy(update={"channels": infos,
                                          "channels_more": len(mine) - len(infos)}))
    return out


def _info(chans: Channels, state: State, pkg: PackageReview, base: str | None,
          head: str | None) -> ChannelInfo:
    assert state.pointer is not None
    tag = chans.tag_name(state.pointer)
    version = None
    if tag is not None:
        name, sep, rest = tag.rpartition("@")
        version = rest if sep and name == pkg.name and rest else None
    commit = chans.resolve(f"{state.pointer}^{{commit}}")
    return ChannelInfo(
        name=state.channel, release=tag, version=version, commit=commit,
        base=version is not None and version == pkg.base_version,
        head=version is not None and version == pkg.head_version
        and pkg.head_version != pkg.base_version,
        base_commit=commit is not None and commit == base,
        head_commit=commit is not None and head is not None and commit == head)
