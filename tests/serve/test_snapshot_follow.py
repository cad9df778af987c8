"""A snapshot made from the last one (a commit's few prompts) is the snapshot made whole.

``Snapshot.build(bundles, previous)`` patches the last index, names and renderers by what
changed in each bundle's place (prompts compared by identity) instead of indexing every
prompt again (catalog._followed). Each step below is checked against a build from nothing:
the same names in the same order, each name's prompt and bundle place, the renderers'
prompts and the replies' ``_meta``; a set that cannot be served raises as it would whole.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from promptops.serve.catalog import NameCollision, Snapshot


def _prompt(name: str, text: str = "x") -> dict[str, Any]:
    return {"name": name, "arguments": [], "source": f"prompts/{name}.prompt.yaml",
            "messages": [{"type": "text", "role": "user", "text": text}]}


def _bundle(package: str, prompts: list[dict[str, Any]], commit: str,
            version: str = "1.0.0") -> Any:
    return {"format": 1, "package": {"name": package, "version": version},
            "prompts": sorted(prompts, key=lambda p: p["name"]), "resources": {},
            "templates": {}, "source": {"commit": commit},
            "digest": f"sha256:{package}-{commit}"}


def _same(got: Snapshot, whole: Snapshot) -> None:
    assert got.names == whole.names
    assert got.index.keys() == whole.index.keys()
    for name, entry in whole.index.items():
        mine = got.index[name]
        assert mine.prompt is entry.prompt and mine.slot == entry.slot
    assert [dict(r.prompts) for r in got.renderers] == [dict(r.prompts) for r in whole.renderers]
    assert [r.bundle for r in got.renderers] == list(got.bundles)
    assert got.metas == whole.metas and got.id == whole.id and got.digests == whole.digests


def test_a_series_of_commits_indexes_as_a_whole_build() -> None:
    rng = random.Random(7)
    a = [_prompt(f"a{i:03d}") for i in range(60)]
    b = [_prompt(f"b{i:03d}") for i in range(40)]
    bundles = [_bundle("pa", a, "c0"), _bundle("pb", b, "c0")]
    snap = Snapshot.build(bundles)
    for step in range(1, 40):
        a, b = list(a), list(b)
        kind = step % 5
        if kind == 0:  # an edit: a new object for one prompt
            k = rng.randrange(len(a))
            a[k] = _prompt(a[k]["name"], f"edited {step}")
        elif kind == 1:  # a removal
            a.pop(rng.randrange(len(a)))
        elif kind == 2:  # an addition, anywhere in the order
            a.append(_prompt(f"a{rng.randrange(1000):03d}x{step}"))
        elif kind == 3 and b:  # a prompt moves from one package to the other
            moved = b.pop(rng.randrange(len(b)))
            a.append(_prompt(moved["name"], "moved"))
        # kind 4: a restamp only (new bundle objects, the same prompts)
        bundles = [_bundle("pa", a, f"c{step}"), _bundle("pb", b, f"c{step}")]
        first = snap.index[bundles[1]["prompts"][0]["name"]] if b else None
        snap = Snapshot.build(bundles, snap)
        _same(snap, Snapshot.build(bundles))
        if first is not None and kind != 3:  # a prompt left as it was keeps its entry
            assert snap.index[first.prompt["name"]] is first


def test_what_cannot_be_served_raises_as_a_whole_build_does() -> None:
    a = [_prompt(f"a{i}") for i in range(20)]
    b = [_prompt(f"b{i}") for i in range(20)]
    snap = Snapshot.build([_bundle("pa", a, "c0"), _bundle("pb", b, "c0")])
    clash = [_bundle("pa", [*a, _prompt("b3")], "c1"), _bundle("pb", b, "c1")]
    with pytest.raises(NameCollision) as whole:
        Snapshot.build(clash)
    with pytest.raises(NameCollision) as followed:
        Snapshot.build(clash, snap)
    assert str(followed.value) == str(whole.value)
    twice = [_bundle("pa", [*a, _prompt("a3", "again")], "c1"), _bundle("pb", b, "c1")]
    with pytest.raises(NameCollision):
        Snapshot.build(twice, snap)


def test_a_new_version_or_another_set_of_packages_is_indexed_whole() -> None:
    a = [_prompt(f"a{i}") for i in range(20)]
    snap = Snapshot.build([_bundle("pa", a, "c0")])
    snap.index["a1"].shaped  # noqa: B018  # known from here on
    bumped = Snapshot.build([_bundle("pa", a, "c1", version="2.0.0")], snap)
    _same(bumped, Snapshot.build([_bundle("pa", a, "c1", version="2.0.0")]))
    assert bumped.index["a1"] is not snap.index["a1"]  # usage's labels hold the version
    assert bumped.index["a1"].known is False  # what the last entry knew is carried
    two = [_bundle("pa", a, "c2", version="2.0.0"), _bundle("pb", [_prompt("b")], "c2")]
    _same(Snapshot.build(two, bumped), Snapshot.build(two))
