"""The served state as one immutable snapshot: bundles, renderers, indexes, cursors.

A request takes the snapshot reference once and answers everything from it, so a
reload that swaps in a new snapshot mid-request can never produce a mix of two
bundles. Cursors name the list, the snapshot they were cut from and a position, sealed
with the server's key (:mod:`promptops.serve.signing`): one that was never issued is
refused, and so is one from a snapshot since replaced (*stale*), because continuing it
in the new list would skip or repeat entries. Both are -32602; the stale one says the
list changed, so the client lists again from the start. A cursor depends only on
(key, snapshot, list, position): replicas sharing a key give the same cursors.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, cast

from promptops.errors import PromptopsError
from promptops.pipeline.bundle_types import Bundle
from promptops.render.renderer import Renderer
from promptops.serve import eras
from promptops.serve.signing import Signer

Json = dict[str, Any]
SCHEME = "promptops"
MAX_COMPLETIONS = 100
CURSOR = b"promptops/cursor/v1"
MAX_CURSOR = 200  # characters; ours are about 50


class CursorError(Exception):
    """A cursor this server cannot continue (never issued, or stale): -32602."""


def resource_uri(package: str, path: str) -> str:
    return f"{SCHEME}://{package}/{path}"


@dataclass(frozen=True)
class Entry:
    """One served prompt and the bundle it belongs to."""

    prompt: Json
    bundle: Json
    renderer: Renderer


@dataclass(frozen=True)
class Snapshot:
    bundles: tuple[Json, ...]
    renderers: tuple[Renderer, ...]
    names: tuple[str, ...]  # sorted: the one stable prompts/list order
    index: dict[str, Entry]
    resources: dict[str, tuple[str, Json]]  # uri -> (package path, resource)
    uris: tuple[str, ...]
    id: str  # short hash of the digests: what cursors are bound to
    digests: frozenset[str] = field(default_factory=frozenset)
    # prompts/list entries by (name, revision), built on first listing: clients re-list
    # whole catalogs (10,000 prompts) after every list_changed; a benign race if shared.
    _descriptors: dict[tuple[str, str], Json] = field(default_factory=dict, compare=False)

    @classmethod
    def build(cls, bundles: list[Json], previous: Snapshot | None = None) -> Snapshot:
        """Index the bundles; two packages serving one prompt name is an error."""
        reuse = {r.bundle["digest"]: r for r in previous.renderers} if previous else {}
        renderers = tuple(reuse.get(b["digest"]) or Renderer(cast(Bundle, b)) for b in bundles)
        index: dict[str, Entry] = {}
        resources: dict[str, tuple[str, Json]] = {}
        for bundle, renderer in zip(bundles, renderers, strict=True):
            pkg = bundle["package"]["name"]
            for p in bundle["prompts"]:
                other = index.get(p["name"])
                if other is not None:
                    raise PromptopsError(
                        f"prompt {p['name']!r} is served by both package "
                        f"{other.bundle['package']['name']!r} and {pkg!r}; prompt names must "
                        "be unique across served packages: rename one of them"
                    )
                index[p["name"]] = Entry(p, bundle, renderer)
            for path, res in bundle["resources"].items():
                resources[resource_uri(pkg, path)] = (path, res)
        digests = [b["digest"] for b in bundles]
        sid = hashlib.sha256("\n".join(digests).encode()).hexdigest()[:16]
        return cls(
            bundles=tuple(bundles),
            renderers=renderers,
            names=tuple(sorted(index)),
            index=index,
            resources=resources,
            uris=tuple(sorted(resources)),
            id=sid,
            digests=frozenset(digests),
        )

    def descriptor(self, name: str, rev: str) -> Json:
        """The prompts/list entry of ``name`` for revision ``rev`` (never mutated by callers)."""
        key = (name, rev)
        hit = self._descriptors.get(key)
        if hit is None:
            hit = self._descriptors[key] = eras.prompt_descriptor(self.index[name].prompt, rev)
        return hit

    @property
    def cache_scope(self) -> str:
        """`private` as soon as one package asks for it; `public` otherwise."""
        scopes = {b["package"].get("cacheScope", "public") for b in self.bundles}
        return "private" if "private" in scopes else "public"

    @property
    def instructions(self) -> str | None:
        parts = [b["package"].get("instructions") for b in self.bundles]
        parts = [p for p in parts if p]
        return "\n\n".join(parts) if parts else None

    def page(self, kind: str, items: tuple[str, ...], cursor: Any, size: int,
             signer: Signer) -> tuple[list[str], str | None]:
        """One page of the ``kind`` list ``items`` and the cursor for the next, if any."""
        start = 0 if cursor is None else self._offset(kind, cursor, len(items), signer)
        chunk = list(items[start : start + size])
        end = start + len(chunk)
        if end >= len(items):
            return chunk, None
        return chunk, signer.seal(CURSOR, f"{kind}:{self.id}:{end}".encode())

    def _offset(self, kind: str, cursor: Any, total: int, signer: Signer) -> int:
        if not isinstance(cursor, str) or not cursor:
            raise CursorError("cursor must be a string this server returned as nextCursor")
        payload = signer.open(CURSOR, cursor) if len(cursor) <= MAX_CURSOR else None
        if payload is None:
            raise CursorError(f"invalid cursor {cursor[:40]!r}: not issued by this server")
        got_kind, sid, num = payload.decode().split(":")
        if got_kind != kind:
            raise CursorError(f"invalid cursor {cursor[:40]!r}: it continues another list")
        if sid != self.id:
            raise CursorError(
                f"stale cursor {cursor[:40]!r}: the served prompts changed since it was issued "
                "(a new commit was checked out); list again from the start"
            )
        return min(int(num), total)

    def complete(self, prompt_name: str, argument: str, value: str) -> Json:
        """completion/complete for a prompt argument: enum values, then examples."""
        entry = self.index.get(prompt_name)
        if entry is None:
            raise KeyError(f"unknown prompt {prompt_name!r}")
        spec = next((a for a in entry.prompt["arguments"] if a["name"] == argument), None)
        if spec is None:
            raise KeyError(f"prompt {prompt_name!r} has no argument {argument!r}")
        prefix = value.casefold()
        seen: dict[str, None] = {}
        for v in [*(spec.get("enum") or []), *(spec.get("examples") or [])]:
            if v.casefold().startswith(prefix):
                seen.setdefault(v)
        values = list(seen)
        return {
            "values": values[:MAX_COMPLETIONS],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETIONS,
        }

    def traceability(self, bundle: Json) -> Json:
        """The `_meta` that ties a rendered prompt to the exact bundle and commit."""
        meta: Json = {
            "promptops/package": bundle["package"]["name"],
            "promptops/version": bundle["package"]["version"],
            "promptops/digest": bundle["digest"],
        }
        commit = bundle["source"].get("commit")
        if commit:
            meta["promptops/commit"] = commit
        elif bundle["source"].get("dirty"):  # built from a working tree (serve --worktree)
            meta["promptops/worktree"] = True
        return meta
