"""prompts/list over many packages: one order, whatever the packages and their number.

The served packages' prompts are listed in one sorted order (``Snapshot.names``, made once
a swap, patched by a commit's few prompts: catalog._followed), so a page is a slice of it
at any size and any number of packages. Paged through, the pages are the merged, sorted
names of every package, each prompt once, for every page size; after a commit (the
follower's patched snapshot) the paging is exactly a whole build's, page by page and byte
by byte, and a cursor of the set before is stale.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from promptops.serve.catalog import Catalog
from promptops.serve.methods import Settings
from promptops.serve.server import Server
from promptops.serve.signing import Signer

SESSION_REV = "2025-06-18"
KEY = b"k" * 32


def _prompt(name: str, text: str = "x") -> dict[str, Any]:
    return {"name": name, "arguments": [], "source": f"prompts/{name}.prompt.yaml",
            "description": f"about {name}",
            "messages": [{"type": "text", "role": "user", "text": text}]}


def _bundle(package: str, prompts: list[dict[str, Any]], commit: str) -> Any:
    return {"format": 1, "package": {"name": package, "version": "1.0.0"},
            "prompts": sorted(prompts, key=lambda p: p["name"]), "resources": {},
            "templates": {}, "source": {"commit": commit},
            "digest": f"sha256:{package}-{commit}"}


def _packages(count: int, rng: random.Random) -> list[list[dict[str, Any]]]:
    """``count`` packages whose names interleave in the merged order (no package is a
    contiguous stretch of it)."""
    names = rng.sample(range(100_000), count * 7)
    return [[_prompt(f"n{v:05d}") for v in names[k::count]] for k in range(count)]


def _pages(server: Server, size: int) -> list[bytes]:
    """Every page's reply, as bytes, from the first to the last cursor."""
    session = server.open(lambda message: None)
    server.handle(session, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": SESSION_REV, "capabilities": {},
        "clientInfo": {"name": "paging", "version": "1"}}})
    out: list[bytes] = []
    params: dict[str, Any] = {}
    for k in range(1, 10_000):
        reply = server.handle(session, {"jsonrpc": "2.0", "id": k, "method": "prompts/list",
                                        "params": params})[0]
        out.append(json.dumps(reply, sort_keys=True).encode())
        cursor = reply["result"].get("nextCursor")  # type: ignore[index]
        if cursor is None:
            return out
        params = {"cursor": cursor}
    raise AssertionError("the paging did not end")


def _names(pages: list[bytes]) -> list[str]:
    return [p["name"] for page in pages for p in json.loads(page)["result"]["prompts"]]


def _server(bundles: list[Any], size: int) -> Server:
    return Server(Catalog(bundles), Settings(page_size=size, signer=Signer(KEY)))


@pytest.mark.parametrize(("count", "size"), [(1, 3), (5, 4), (12, 7), (30, 100)])
def test_paging_through_many_packages_is_their_merged_order(count: int, size: int) -> None:
    rng = random.Random(count * 31 + size)
    packs = _packages(count, rng)
    bundles = [_bundle(f"pkg{k}", p, "c0") for k, p in enumerate(packs)]
    pages = _pages(_server(bundles, size), size)
    merged = sorted(p["name"] for pack in packs for p in pack)
    assert _names(pages) == merged
    assert len(pages) == -(-len(merged) // size)
    assert all(len(json.loads(p)["result"]["prompts"]) == size for p in pages[:-1])
    # the descriptors are each package's own prompt's
    by_name = {p["name"]: p for pack in packs for p in pack}
    for page in pages:
        for d in json.loads(page)["result"]["prompts"]:
            assert d["description"] == by_name[d["name"]]["description"]


@pytest.mark.parametrize("count", [3, 20])
def test_after_a_commit_the_paging_is_a_whole_builds_and_old_cursors_are_stale(
        count: int) -> None:
    rng = random.Random(count)
    packs = _packages(count, rng)
    server = _server([_bundle(f"pkg{k}", p, "c0") for k, p in enumerate(packs)], 5)
    session = server.open(lambda message: None)
    server.handle(session, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": SESSION_REV, "capabilities": {},
        "clientInfo": {"name": "paging", "version": "1"}}})
    first = server.handle(session, {"jsonrpc": "2.0", "id": 1, "method": "prompts/list",
                                    "params": {}})[0]
    stale = first["result"]["nextCursor"]  # type: ignore[index]
    for step in range(1, 6):  # edits, removals and additions in packages in turn
        k = step % count
        pack = list(packs[k])
        if step % 3 == 0:
            pack.pop(rng.randrange(len(pack)))
        elif step % 3 == 1:
            pack.append(_prompt(f"n{rng.randrange(100_000):05d}z{step}"))
        else:
            at = rng.randrange(len(pack))
            pack[at] = _prompt(pack[at]["name"], f"edited {step}")
        packs[k] = pack
        bundles = [_bundle(f"pkg{j}", p, f"c{step}" if j == k else "c0")
                   for j, p in enumerate(packs)]
        assert server.swap(bundles)  # the patched snapshot (catalog._followed)
        whole = _pages(_server(bundles, 5), 5)
        assert _pages(server, 5) == whole
        assert _names(whole) == sorted(p["name"] for pack in packs for p in pack)
        reply = server.handle(session, {"jsonrpc": "2.0", "id": 2, "method": "prompts/list",
                                        "params": {"cursor": stale}})[0]
        assert reply["error"]["code"] == -32602  # type: ignore[index]
        assert "stale cursor" in reply["error"]["message"]  # type: ignore[index]
        stale = json.loads(whole[0])["result"]["nextCursor"]
