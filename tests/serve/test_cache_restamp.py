"""``cache.Stamp``: a bundle restamped by its kept parts is ``restamp``'s bundle, digest and all.

The follower restamps every package a commit left as it was (100 packages: 100 digests of
the whole bundle's JSON a commit); ``Stamp`` keeps the hash up to the ``source`` member.
Its digest is checked against the whole bundle's ``digest`` (the canonical JSON hashed at
once: the oracle; ``restamp`` is a Stamp used once) on generated bundles whose members sort
on both sides of ``source`` and hold what JSON escapes."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from promptops.pipeline.bundle import digest
from promptops.serve.cache import Stamp, restamp

KEYS = st.sampled_from(["format", "package", "prompts", "resources", "templates", "a", "sourc",
                        "source_", "sourcf", "z", "\u00e9", "Source"])
VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                      lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
SOURCE = st.fixed_dictionaries({"commit": st.text("0123456789abcdef", min_size=40, max_size=40),
                                "path": st.sampled_from([".", "p1", "a/b"])},
                               optional={"tree": st.text("0123456789abcdef", min_size=40,
                                                         max_size=40),
                                         "channel": st.text(max_size=8)})


@settings(max_examples=200, deadline=None)
@given(members=st.dictionaries(KEYS, VALUES, max_size=8), source=SOURCE,
       commit=st.text("0123456789abcdef", min_size=40, max_size=40),
       path=st.sampled_from([".", "p1", "p2", "a/\"b\""]))
def test_a_stamp_is_restamp(members: dict[str, Any], source: dict[str, Any], commit: str,
                            path: str) -> None:
    bundle: Any = {**members, "source": source}
    bundle["digest"] = digest(bundle)
    stamp = Stamp(bundle)
    got = stamp(commit, path)
    assert got == restamp(bundle, commit, path)
    assert got["digest"] == digest(got)
    assert stamp(source["commit"], source["path"]) is bundle  # its own commit: as it is
