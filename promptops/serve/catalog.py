"""The served state: one immutable snapshot per process, swapped whole, and who hears of it.

A request takes the snapshot reference once and answers everything from it, so a
reload that swaps in a new snapshot mid-request can never produce a mix of two
bundles. Cursors name the list, the snapshot they were cut from and a position, sealed
with the server's key (:mod:`promptops.serve.signing`): one that was never issued is
refused, and so is one from a snapshot since replaced (*stale*), because continuing it
in the new list would skip or repeat entries. Both are -32602; the stale one says the
list changed, so the client lists again from the start. A cursor depends only on
(key, snapshot, list, position): replicas sharing a key give the same cursors.

The :class:`Catalog` is process-wide, not per connection: any number of sessions answer
from it (stdio has one, an HTTP server many), and each place that wants to hear of a
change - a session-era client that sent ``notifications/initialized``, a 2026-07-28
``subscriptions/listen`` stream - is a :class:`Subscription` with its own ``send``, so a
swap reaches every stream of every session once.
"""

from __future__ import annotations

import hashlib
import threading
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from itertools import compress, count
from operator import is_not, itemgetter
from typing import TYPE_CHECKING, cast

from promptops.errors import ExitCode, UsageError
from promptops.render.renderer import Renderer
from promptops.serve import revisions
from promptops.serve.jsonrpc import Json, RequestId, Send
from promptops.serve.revisions import META_SUB
from promptops.serve.signing import Signer
from promptops.serve.wire import Sealed

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle, Prompt, Resource

SCHEME = "promptops"
MAX_COMPLETIONS = 100
CURSOR = b"promptops/cursor/v1"
MAX_CURSOR = 200  # characters; ours are about 50
LIST_CHANGED = "notifications/prompts/list_changed"
TOOLS_LIST_CHANGED = "notifications/tools/list_changed"  # when a tool view is on (tools.py)
LOG_MESSAGE = "notifications/message"
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_SHAPED = frozenset({"audio", "resource_link"})  # content kinds a revision may reshape


class CatalogError(Exception):
    """A request the catalog cannot answer as asked (-32602): its message says why."""


class CursorError(CatalogError):
    """A cursor this server cannot continue (never issued, or stale)."""


class NameCollision(UsageError):
    """Two served packages define one prompt name: the set cannot be served.

    A usage error (the packages chosen do not go together), with exit status 1 as
    docs/serve.md promises for a set that cannot be served, at start in either mode.
    """

    exit_code = ExitCode.FAILED

    def __init__(self, name: str, first: str, second: str) -> None:
        super().__init__(
            f"prompt {name!r} is defined by both package {first!r} and package {second!r}; "
            "it cannot be served by both packages: prompt names must be unique across the "
            "packages served together (rename one of them)"
        )


def check_names(bundles: Sequence[Bundle]) -> None:
    """Raise :class:`NameCollision` when two of ``bundles`` serve one prompt name."""
    names: set[str] = set()
    for bundle in bundles:  # the usual answer, at C speed (100,000 names: 25 -> 8 ms)
        names.update(map(itemgetter("name"), bundle["prompts"]))
    if len(names) == sum(len(b["prompts"]) for b in bundles):
        return
    owners: dict[str, str] = {}
    for bundle in bundles:
        package = bundle["package"]["name"]
        for prompt in bundle["prompts"]:
            first = owners.get(prompt["name"])
            if first is not None:  # the same package twice collides too: one name, one entry
                raise NameCollision(prompt["name"], first, package)
            owners[prompt["name"]] = package


def resource_uri(package: str, path: str) -> str:
    return f"{SCHEME}://{package}/{path}"


class Subscription:
    """One stream that hears of changes: ``send`` gets each notification it ``wants``.

    ``id`` is the ``subscriptions/listen`` request's id, which tags every notification
    (``_meta`` subscriptionId) and is answered with a final result when the stream ends;
    None is a session-era client's own stream, whose notifications carry no tag. Equal
    only to itself: two streams are two subscriptions whatever they hold.
    """

    __slots__ = ("id", "log_level", "send", "wants")

    def __init__(self, id_: RequestId | None, wants: frozenset[str], send: Send,
                 log_level: str | None = None) -> None:
        self.id = id_
        self.wants = wants  # notification methods, e.g. LIST_CHANGED
        self.send = send
        # a 2026-07-28 listen request's `_meta` logLevel: it hears notifications/message
        # at that level and above on its stream (None: none at all, as the spec says)
        self.log_level = log_level

    def deliver(self, note: Json) -> None:
        if self.id is None:
            self.send(note)
        else:
            self.send({**note, "params": {**note.get("params", {}), "_meta": {META_SUB: self.id}}})


class Entry:
    """One served prompt, where its bundle is in the snapshot, and what its replies share.

    ``slot`` is the position of the prompt's bundle in the snapshot (its ``bundles``,
    ``renderers`` and ``metas``), not the bundle itself, so a prompt a commit leaves as it
    was keeps its entry from one snapshot to the next (:meth:`Snapshot.build`: a commit of
    one prompt of 100,000 made 100,000 entries anew, 0.19 s of CPU before its clients heard
    of it). ``shaped`` says whether a content block can need reshaping for an older
    revision at all (audio, resource links, annotations, the content ``_meta`` of a system
    message); a prompt of only user/assistant text, images and embedded resources without
    annotations is sent as rendered to every revision.
    """

    __slots__ = ("known", "prompt", "slot")

    def __init__(self, prompt: Prompt, slot: int = 0, *, shaped: bool | None = None) -> None:
        self.prompt, self.slot = prompt, slot
        # None until the first get asks (a walk over every prompt's messages at start was a
        # tenth of the catalog's build at 10,000 prompts; a benign race if two threads ask)
        self.known = shaped

    @property
    def shaped(self) -> bool:
        """Whether a content block of the prompt can need reshaping (see the class)."""
        known = self.known
        if known is None:
            known = self.known = _shaped(self.prompt)
        return known


def _shaped(prompt: Prompt) -> bool:
    """Whether a content block of ``prompt`` can need reshaping for an older revision: a
    system message (or a history, which may hold one) carries content _meta. A plain
    loop, not ``any()`` over a generator: it runs for every prompt at every start (10,000
    at 10,000 prompts), and a generator's frame costs more than the test."""
    for m in prompt["messages"]:
        kind = m["type"]
        if kind in _SHAPED or kind == "history" or "annotations" in m or m.get(
                "role") == "system":
            return True
    return False


class Snapshot:
    """One set of bundles as served: the index, the names in list order, the resources.

    Frozen. A plain class, not a dataclass: importing :mod:`dataclasses` (with inspect,
    ast, dis and tokenize) cost every `serve --bundle` start a twentieth of its
    instructions, and nothing compares or copies snapshots."""

    __slots__ = ("_descriptors", "bundles", "digests", "extras", "id", "index", "metas",
                 "names", "renderers", "resources", "uris")
    bundles: tuple[Bundle, ...]
    renderers: tuple[Renderer, ...]
    # each bundle's traceability `_meta` (one Sealed dict shared by every reply, encoded
    # once and never changed: the stateless era copies it to add its own keys)
    metas: tuple[Json, ...]
    names: tuple[str, ...]  # sorted: the one stable prompts/list order
    index: dict[str, Entry]
    resources: dict[str, tuple[str, Resource]]  # uri -> (package path, resource)
    uris: tuple[str, ...]
    id: str  # short hash of the digests: what cursors are bound to
    digests: frozenset[str]
    # prompts/list entries by (name, revision), built on first listing: clients re-list
    # whole catalogs (10,000 prompts) after every list_changed; a benign race if shared.
    _descriptors: dict[tuple[str, str], Json]
    # what other views of this snapshot derive once (the tool view, serve/tools.py)
    extras: dict[object, object]

    def __init__(self, *, bundles: tuple[Bundle, ...], renderers: tuple[Renderer, ...],
                 names: tuple[str, ...], index: dict[str, Entry],
                 resources: dict[str, tuple[str, Resource]], uris: tuple[str, ...], id: str,
                 digests: frozenset[str] = frozenset(), metas: tuple[Json, ...] = ()) -> None:
        put = object.__setattr__
        put(self, "bundles", bundles)
        put(self, "renderers", renderers)
        put(self, "metas", metas or tuple(Sealed(traceability(b)) for b in bundles))
        put(self, "names", names)
        put(self, "index", index)
        put(self, "resources", resources)
        put(self, "uris", uris)
        put(self, "id", id)
        put(self, "digests", digests)
        put(self, "_descriptors", {})
        put(self, "extras", {})

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Snapshot is frozen: {name} cannot be set")

    def __repr__(self) -> str:
        return f"Snapshot(id={self.id!r}, names={len(self.names)})"

    @classmethod
    def build(cls, bundles: Sequence[Bundle], previous: Snapshot | None = None) -> Snapshot:
        """Index the bundles; two packages serving one prompt name is NameCollision. From
        ``previous`` (the snapshot served until now) in proportion to what changed, when
        that is little: a prompt object still in its bundle's place keeps its entry."""
        followed = _followed(bundles, previous) if previous is not None else None
        if followed is None:
            check_names(bundles)
            reuse = {r.bundle["digest"]: r for r in previous.renderers} if previous else {}
            # a new bundle's renderer starts empty: what it knows of a prompt (its plan, with
            # whether it loops) is made on the prompt's first get, so nothing is carried over
            renderers = tuple(reuse.get(b["digest"]) or Renderer(b) for b in bundles)
            before = previous.index if previous is not None else {}
            index: dict[str, Entry] = {}
            for slot, bundle in enumerate(bundles):
                for p in bundle["prompts"]:
                    name = p["name"]
                    old = before.get(name)
                    index[name] = Entry(p, slot, shaped=(
                        old.known if old is not None and old.prompt is p else None))
            names = tuple(sorted(index))
        else:
            renderers, index, names = followed
        resources: dict[str, tuple[str, Resource]] = {}
        for bundle in bundles:
            pkg = bundle["package"]["name"]
            for path, res in bundle["resources"].items():
                resources[resource_uri(pkg, path)] = (path, res)
        digests = [b["digest"] for b in bundles]
        sid = hashlib.sha256("\n".join(digests).encode()).hexdigest()[:16]
        return cls(
            bundles=tuple(bundles),
            renderers=renderers,
            names=names,
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
            hit = self._descriptors[key] = revisions.prompt_descriptor(self.index[name].prompt,
                                                                       rev)
        return hit

    @property
    def cache_scope(self) -> str:
        """`private` as soon as one package asks for it; `public` otherwise."""
        scopes = {b["package"].get("cacheScope", "public") for b in self.bundles}
        return "private" if "private" in scopes else "public"

    @property
    def instructions(self) -> str | None:
        parts = [p for b in self.bundles if (p := b["package"].get("instructions"))]
        return "\n\n".join(parts) if parts else None

    def page(self, kind: str, items: tuple[str, ...], cursor: object, size: int,
             signer: Signer) -> tuple[list[str], str | None]:
        """One page of the ``kind`` list ``items`` and the cursor for the next, if any."""
        start = 0 if cursor is None else self._offset(kind, cursor, len(items), signer)
        chunk = list(items[start : start + size])
        end = start + len(chunk)
        if end >= len(items):
            return chunk, None
        return chunk, signer.seal(CURSOR, f"{kind}:{self.id}:{end}".encode())

    def _offset(self, kind: str, cursor: object, total: int, signer: Signer) -> int:
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
            raise CatalogError(f"unknown prompt {prompt_name!r}")
        spec = next((a for a in entry.prompt["arguments"] if a["name"] == argument), None)
        if spec is None:
            raise CatalogError(f"prompt {prompt_name!r} has no argument {argument!r}")
        prefix = value.casefold()
        seen: dict[str, None] = {}
        offered = ["true", "false"] if spec.get("type") == "boolean" else []
        for v in [*offered, *(spec.get("enum") or []), *(spec.get("examples") or [])]:
            if v.casefold().startswith(prefix):
                seen.setdefault(v)
        values = list(seen)
        return {
            "values": values[:MAX_COMPLETIONS],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETIONS,
        }

    def traceability(self, bundle: Bundle) -> Json:
        """The `_meta` that ties a rendered prompt to the exact bundle and commit."""
        return traceability(bundle)


# past this share of a bundle's prompts changed, the snapshot is indexed anew
_FOLLOW_SHARE = 4


def _followed(bundles: Sequence[Bundle], previous: Snapshot
              ) -> tuple[tuple[Renderer, ...], dict[str, Entry], tuple[str, ...]] | None:
    """The renderers, index and sorted names of ``bundles`` made from ``previous``'s by
    what changed in each bundle's place (its prompts compared by identity: a rebuild or a
    restamp keeps the prompts it did not recompile, rebuild.py); None when the places
    differ, a package's manifest changed or much changed (the whole index is made then).
    Exactly the index a whole build makes: an entry a prompt left is dropped, one for each
    new prompt made, and the names are unique when the index holds as many as the bundles
    have prompts (else :func:`check_names` raises, in the caller's whole build)."""
    if len(bundles) != len(previous.bundles):
        return None
    index: dict[str, Entry] | None = None
    renderers = list(previous.renderers)
    added_names: list[str] = []
    gone_names: list[str] = []
    for slot, (old, new) in enumerate(zip(previous.bundles, bundles, strict=True)):
        if old is new:
            continue
        if old["package"] != new["package"]:  # the usage series' labels (version) and limits
            return None
        was, now = _window(old["prompts"], new["prompts"])
        if len(now) * _FOLLOW_SHARE > len(new["prompts"]):
            return None
        if index is None:
            index = dict(previous.index)
        prompts = dict(previous.renderers[slot].prompts)
        _patch(index, prompts, slot, (was, now), (added_names, gone_names))
        renderers[slot] = Renderer(new, prompts=prompts)
    if index is None:
        index = previous.index
    if len(index) != sum(len(b["prompts"]) for b in bundles):
        return None  # a name twice: the whole build's check_names says which
    names = list(previous.names)
    for name in gone_names:
        if name not in index:
            del names[bisect_left(names, name)]
    for name in added_names:
        at = bisect_left(names, name)
        if at == len(names) or names[at] != name:
            names.insert(at, name)
    return tuple(renderers), index, tuple(names)


def _patch(index: dict[str, Entry], prompts: dict[str, Prompt], slot: int,
           window: tuple[list[Prompt], list[Prompt]],
           names: tuple[list[str], list[str]]) -> None:
    """``index`` and the renderer's ``prompts`` of the bundle in place ``slot`` patched by
    the ``window`` of its last and new prompts (:func:`_window`), the names added and gone
    noted in ``names``."""
    was, now = window
    kept, there = set(map(id, was)), set(map(id, now))
    for p in was:
        if id(p) not in there:
            entry = index.get(p["name"])
            if entry is not None and entry.prompt is p:
                del index[p["name"]]
                names[1].append(p["name"])
            if prompts.get(p["name"]) is p:
                del prompts[p["name"]]
    for p in now:
        if id(p) not in kept:
            index[p["name"]] = Entry(p, slot)
            prompts[p["name"]] = p
            names[0].append(p["name"])


def _window(was: list[Prompt], now: list[Prompt]) -> tuple[list[Prompt], list[Prompt]]:
    """The stretches of ``was`` and ``now`` between their longest common head and tail (of
    the same objects), found in C: a commit's prompts are the last ones with a few
    replaced, removed or inserted in name order (rebuild.py)."""
    n = min(len(was), len(now))
    head = next(compress(count(), map(is_not, was, now)), n)
    tail = next(compress(count(), map(is_not, reversed(was), reversed(now))), n)
    tail = min(tail, n - head)
    return was[head:len(was) - tail], now[head:len(now) - tail]


def traceability(bundle: Bundle) -> Json:
    """The `_meta` that ties a rendered prompt to the exact bundle and commit."""
    meta: Json = {
        "promptops/package": bundle["package"]["name"],
        "promptops/version": bundle["package"]["version"],
        "promptops/digest": bundle["digest"],
    }
    commit = bundle["source"].get("commit")
    # serve --channel stamps the served copy's source with the channel (serve/follow.py):
    # not a bundle key (never built, stored or verified), so read outside the bundle's type
    channel = cast(Mapping[str, object], bundle["source"]).get("channel")
    if isinstance(channel, str):
        meta["promptops/channel"] = channel
    if commit:
        meta["promptops/commit"] = commit
    elif bundle["source"].get("dirty"):  # built from a working tree (serve --worktree)
        meta["promptops/worktree"] = True
    return meta


class Catalog:
    """What one process serves: the current :class:`Snapshot` and its subscriptions.

    :meth:`swap` replaces the snapshot atomically and tells every subscription that
    wants it, once, outside the lock (a slow reader never holds up a swap's callers).
    """

    def __init__(self, bundles: Sequence[Bundle] = ()) -> None:
        # what is served now: read once by each request, replaced only by swap() (under
        # the lock). A plain attribute, not a property: every request reads it, and a
        # property is a Python call per read (issue 26)
        self.snapshot: Snapshot = Snapshot.build(bundles)
        self._lock = threading.Lock()
        self._subs: dict[Subscription, None] = {}  # an ordered set: notified in subscription order

    def swap(self, bundles: Sequence[Bundle]) -> bool:
        """Serve ``bundles`` from now on; False (and nobody told) if nothing changed.

        Raises :class:`NameCollision` (and keeps the current snapshot) for a set that
        cannot be served; a reload's caller decides whether that is fatal.
        """
        new = Snapshot.build(bundles, self.snapshot)
        with self._lock:
            if new.digests == self.snapshot.digests:
                return False
            self.snapshot = new
            told = [s for s in self._subs if s.wants]
        note: Json = {"jsonrpc": "2.0", "method": LIST_CHANGED}
        for sub in told:
            if LIST_CHANGED in sub.wants:
                sub.deliver(note)
            if TOOLS_LIST_CHANGED in sub.wants:  # the tools are made from the prompts
                sub.deliver({"jsonrpc": "2.0", "method": TOOLS_LIST_CHANGED})
        return True

    def log(self, level: str, message: str) -> None:
        """A notifications/message to every listen stream that asked for ``level``."""
        rank = LEVELS.index(level)
        with self._lock:
            told = [s for s in self._subs
                    if s.log_level is not None and rank >= LEVELS.index(s.log_level)]
        note: Json = {"jsonrpc": "2.0", "method": LOG_MESSAGE,
                      "params": {"level": level, "logger": "promptops", "data": message}}
        for sub in told:
            sub.deliver(note)

    def subscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subs[sub] = None

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subs.pop(sub, None)
