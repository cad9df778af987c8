"""Who fetches which prompt version: per-prompt counters of ``serve --http`` (issue 29).

A platform team asks the team server which prompts and versions are fetched, by which
clients and principals, how they fare, and which prompts nobody uses any more. This
module answers from the one place every request passes: :meth:`Server.answer` hands
``prompts/get``, ``completion/complete`` and ``initialize`` to :meth:`Usage.run` when a
:class:`Usage` is attached (``serve --http`` attaches one; stdio never does, so its hot
path only reads one attribute that is None).

Every label is bounded, because a label value is a new time series and the values here
come from callers: a prompt, package and version are only ever a name the *served
snapshot* knows (anything else is ``other``), the revision one this server speaks, the
outcome one of :data:`OUTCOMES`, and the client (``clientInfo.name``, from
``initialize`` or the 2026-07-28 ``_meta``) and principal names the first
:data:`MAX_CLIENTS` / :data:`MAX_PRINCIPALS` distinct well-formed ones, then ``other``.
So a caller sending 100,000 invented names adds at most one ``other`` series per label.

Counting costs a dict update per request on the event loop's thread (the thread that
also answers ``/metrics`` and ``/usage``): no lock, as in :mod:`promptops.serve.metrics`.
A series is a one-element list (its count); a ``prompts/get`` finds its series in its
prompt's cache by the labels as given, bounded and keyed only on a miss (issue 26).
"""

from __future__ import annotations

import copy
import re
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from time import perf_counter, time_ns
from typing import TYPE_CHECKING, cast

from promptops.errors import TemplateError
from promptops.render.stamps import VALIDATION_STAMPS
from promptops.serve.jsonrpc import Json
from promptops.serve.revisions import SESSION, SUPPORTED

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from promptops.pipeline.bundle_types import Bundle
    from promptops.serve.catalog import Entry, Snapshot
    from promptops.serve.methods import Call, Handler, Result
    from promptops.serve.session import Session
    from promptops.serve.tracing import Attrs, Notes, Tracing

SERVER = 2  # OTLP SpanKind of a request's span (tracing.SERVER; not imported when off)
OTHER = "other"
OK, INVALID, RENDER, NOT_FOUND, INPUT = (
    "ok", "invalid_arguments", "render_error", "not_found", "input_required")
OUTCOMES = (OK, INVALID, RENDER, NOT_FOUND, INPUT)
COUNTED = frozenset({"prompts/get", "completion/complete", "tools/call", "initialize"})
MAX_CLIENTS = 32
MAX_PRINCIPALS = 64
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"  # the 2026-07-28 _meta key
BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
_LE = [repr(b) for b in BUCKETS] + ["+Inf"]
SWAP_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_COLUMN = {"prompts/get": "gets", "completion/complete": "completions",
           "tools/call": "tool_calls"}  # the report's count of each counted method
# Usage.run's signature: (method, handler, session, snapshot, params, call) -> result
Runner = Callable[[str, "Handler", "Session", "Snapshot", Json, "Call"], "Result"]
# _get's series cache key: (counted client, clientInfo name asked or None, revision,
# outcome, principal) as given
_Seen = tuple["str | None", "str | None", str, str, str]
_Cells = dict[_Seen, list[int]]
# Usage._row: (the entry it was made from, (package, prompt, version), latency row, cache)
_Row = tuple["Entry", tuple[str, str, str], list[float], _Cells]
_UNKNOWN = (OTHER, OTHER, OTHER)
MAX_CELLS = 4096  # series remembered per prompt (a cache: emptied when full)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._/@:+-]{0,63}")

# The caller's principal, set by the HTTP transport for the request being answered (a
# request is one asyncio task, so this never leaks to another request).
PRINCIPAL: ContextVar[str] = ContextVar("promptops_principal", default="")
# With tracing on (tracing.py): the request's HTTP traceparent and tracestate headers, and
# the trace id of its span (for the access log line).
TRACE_HEADER: ContextVar[tuple[str | None, str | None]] = ContextVar(
    "promptops_trace_header", default=(None, None))
TRACE_ID: ContextVar[str] = ContextVar("promptops_trace_id", default="")


class _Every:
    """Hands every method name to one runner (tracing on: every request is a span)."""

    def __init__(self, run: Runner) -> None:
        self.run = run

    def get(self, method: str) -> Runner:
        return self.run


class Bounded:
    """The first ``limit`` distinct well-formed names as themselves, every other ``other``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen: set[str] = set()

    def __call__(self, name: object) -> str:
        if not isinstance(name, str) or not name:
            return ""
        if name in self.seen:
            return name
        if len(self.seen) >= self.limit or not _NAME.fullmatch(name):
            return OTHER
        self.seen.add(name)
        return name


def client_name(params: Json) -> object:
    """``clientInfo.name`` of an initialize, or of a 2026-07-28 request's ``_meta``."""
    info = params.get("clientInfo")
    if info is None:
        meta = params.get("_meta")
        info = meta.get(CLIENT_INFO) if isinstance(meta, dict) else None
    return info.get("name") if isinstance(info, dict) else None


class Usage:
    """The per-prompt counters, the render-time histogram and the ``/usage`` report."""

    def __init__(self, *, max_clients: int = MAX_CLIENTS,
                 max_principals: int = MAX_PRINCIPALS, tracing: Tracing | None = None) -> None:
        self.tracing = tracing
        self.channel = ""  # the release channel counted (for_channel), "" without channels
        # method -> what Server hands it to (run(), or _get for a prompts/get)
        self.runs = self._runs()
        self.started = time.time()
        self.clients = Bounded(max_clients)
        self.principals = Bounded(max_principals)
        # (method, package, prompt, version, revision, outcome, client, principal, channel) -> n
        self._series: dict[tuple[str, ...], list[int]] = {}  # key -> [count] (counts)
        self._unknown: _Cells = {}  # _get's cache of the series of no served prompt
        # (package, prompt, version, channel) -> bucket counts..., sum
        self.latency: dict[tuple[str, str, str, str], list[float]] = {}
        self.served: list[tuple[str, str, str]] = []  # (package, prompt, version) served now
        self.swaps = [0.0] * (len(SWAP_BUCKETS) + 2)  # reload + list_changed fan-out times
        # with tracing: (counts key, digest) -> the request span's attributes
        self._attrs: dict[tuple[tuple[str, ...], str], tuple[tuple[str, str], ...]] = {}
        # _get's labels and latency row of a prompt, by name, for the entry they were made
        # from (another entry of that name is looked up again); this object's and its
        # channel copies' memos, all emptied when a new set is served (no old entry kept)
        self._rows: dict[str, _Row] = {}
        self._memos: list[dict[str, _Row]] = [self._rows]

    @property
    def counts(self) -> dict[tuple[str, ...], int]:
        """Requests per series, in the order each first came (labels as :meth:`collect`)."""
        return {key: cell[0] for key, cell in self._series.items()}

    def _cell(self, key: tuple[str, ...]) -> list[int]:
        """The count of the series ``key``, made at its first request."""
        cell = self._series.get(key)
        if cell is None:
            cell = self._series[key] = [0]
        return cell

    # ---- what is served -------------------------------------------------------------------
    def serving(self, bundles: Sequence[Bundle]) -> None:
        """The prompts served from now on (the report's "never fetched" is against these)."""
        self.served[:] = sorted(  # in place: the channels' copies (for_channel) share it
            (b["package"]["name"], p["name"], str(b["package"]["version"]))
            for b in bundles for p in b["prompts"])
        for memo in self._memos:  # the copies' too (shared list)
            memo.clear()

    def swapped(self, seconds: float) -> None:
        """A new bundle set took ``seconds`` to reach every view and to be handed, as
        list_changed, to every listener's stream (the follower's thread; one writer)."""
        row = self.swaps
        row[bisect_left(SWAP_BUCKETS, seconds)] += 1
        row[-1] += seconds

    # ---- the hook ---------------------------------------------------------------------------
    def _runs(self) -> Mapping[str, Runner] | _Every:
        """What :meth:`Server.answer` calls for each counted method: :meth:`run`; every
        method when each request is a span; a ``prompts/get`` without tracing straight to
        :meth:`_get`, the one every request of a team server makes (a call fewer)."""
        if self.tracing is not None:
            return _Every(self.run)
        return {**dict.fromkeys(COUNTED, self.run), "prompts/get": self._get}

    def run(self, method: str, handler: Handler, session: Session, snap: Snapshot,
            params: Json, call: Call) -> Result:
        """``handler``'s result, counted (a failure is counted, then raised as it was);
        a span of its own when tracing is on (then every method comes here)."""
        tracing = self.tracing
        if tracing is None:
            if method == "prompts/get":
                return self._get(method, handler, session, snap, params, call)
            return self._count(method, handler, session, snap, params, call, None)
        context = tracing.context(params, TRACE_HEADER.get())
        TRACE_ID.set(context[0])
        if not context[3] & 1:  # not sampled: count only
            return self._count(method, handler, session, snap, params, call, None)
        notes: Notes = [tracing.attributes(method), False, ()]  # attributes, error?, children
        start = time_ns()
        try:
            if method in COUNTED:
                return self._count(method, handler, session, snap, params, call, notes)
            notes[0] = (*cast("Attrs", notes[0]), ("promptops.revision", call.revision))
            try:
                return handler(session, snap, params, call)
            except Exception:
                notes[0] = (*cast("Attrs", notes[0]), ("promptops.outcome", "error"))
                notes[1] = True
                raise
        finally:
            tracing.record(context, method, SERVER, start, notes)

    def for_channel(self, channel: str) -> Usage:
        """These counters as one release channel's server counts into them (``serve --http
        --channel``): the same series, reports and bounds, with ``channel`` as the label.
        Only :meth:`run` is called on the copy; the process's scrape reads this one."""
        counted = copy.copy(self)
        counted.channel = channel
        counted.runs = counted._runs()  # bound to the copy, which counts with its label
        counted._rows = {}  # its rows are its channel's
        counted._unknown = {}
        self._memos.append(counted._rows)
        return counted

    def _client(self, session: Session, params: Json) -> str:
        # only a session-era session is ever given one (at its initialize); the stateless
        # requests' shared session has None
        client = session.counted_client
        return client if client is not None else self.clients(client_name(params))

    def _count(self, method: str, handler: Handler, session: Session, snap: Snapshot,
               params: Json, call: Call, span: Notes | None) -> Result:
        if method == "initialize":
            out = handler(session, snap, params, call)
            client = self.clients(client_name(params))  # bounded in arrival order
            if session.era is SESSION:  # what a later request of this session is counted as
                session.counted_client = client
            return out
        name = _asked(method, snap, params, call)
        if name is _NO_PROMPT:  # a tools/call of list_prompts, not a use of a prompt
            return self._plain(handler, session, snap, params, call, span)
        entry = snap.index.get(name) if isinstance(name, str) else None
        if entry is None:
            pkg = prompt = version = OTHER
        else:
            package = snap.bundles[entry.slot]["package"]
            pkg, prompt, version = package["name"], entry.prompt["name"], str(package["version"])
        client = self._client(session, params)
        rev = call.revision if call.revision in SUPPORTED else OTHER
        started = time.perf_counter()
        outcome = OK
        try:
            if span is None or method == "completion/complete":
                out = handler(session, snap, params, call)
            else:  # the render and its argument validation (the renderer stamps it)
                stamps: list[int] = []
                token = VALIDATION_STAMPS.set(stamps)
                render = time_ns()
                try:
                    out = handler(session, snap, params, call)
                finally:
                    end = time_ns()
                    VALIDATION_STAMPS.reset(token)
                    span[2] = (("render", render, end), ("arguments", stamps[0], stamps[1]
                               if len(stamps) > 1 else end)) if stamps else \
                        (("render", render, end),)
            if isinstance(out, dict):
                if out.get("resultType") == "input_required":
                    outcome = INPUT
                elif out.get("isError") is True:  # a tools/call's failure is a result
                    outcome = _tool_outcome(entry)
            return out
        except TemplateError:
            outcome = RENDER
            raise
        except Exception:  # RpcError, ArgumentError, a bad cursor or requestState
            outcome = NOT_FOUND if entry is None else INVALID
            raise
        finally:
            seconds = time.perf_counter() - started
            channel = self.channel
            key = (method, pkg, prompt, version, rev, outcome, client,
                   self.principals(PRINCIPAL.get()), channel)
            self._cell(key)[0] += 1
            if entry is not None and method != "completion/complete":
                at = (pkg, prompt, version, channel)
                row = self.latency.get(at)
                if row is None:
                    row = self.latency[at] = [0.0] * (len(BUCKETS) + 2)
                row[bisect_left(BUCKETS, seconds)] += 1
                row[-1] += seconds
            if span is not None:
                digest = str(snap.bundles[entry.slot]["digest"]) if entry else ""
                attrs = self._attrs.get((key, digest))
                if attrs is None:  # made once per series: the export caches their bytes
                    if len(self._attrs) >= 4096:
                        self._attrs.clear()
                    attrs = self._attrs[(key, digest)] = (
                        *cast("Attrs", span[0]), ("promptops.package", pkg),
                        ("promptops.prompt", prompt),
                        ("promptops.version", version), ("promptops.revision", rev),
                        ("promptops.outcome", outcome), ("promptops.client", client),
                        ("promptops.digest", digest),
                        *((("promptops.channel", channel),) if channel else ()))
                span[0] = attrs
                span[1] = outcome not in (OK, INPUT)

    def _get(self, method: str, handler: Handler, session: Session, snap: Snapshot,
             params: Json, call: Call) -> Result:
        """:meth:`_count` of a ``prompts/get`` without a span (every team server's request):
        the same series, outcome and latency row, its look-ups inlined and the series found
        in the prompt's cache by the labels as given (:meth:`_seen`; issue 26).
        tests/serve/transports/http/test_usage_metrics.py holds the two paths to the same
        counts."""
        name = params.get("name")
        entry = snap.index.get(name) if isinstance(name, str) else None
        if entry is None:
            labels, row, cells = _UNKNOWN, None, self._unknown
        else:  # the labels, latency row and series as last made for this entry (_row)
            known = self._rows.get(name)  # type: ignore[arg-type]  # a str: it has an entry
            if known is None or known[0] is not entry:
                known = self._row(name, entry, snap)  # type: ignore[arg-type]
            _, labels, row, cells = known
        counted = session.counted_client
        asked = None
        if counted is None:  # client_name's answer: the look-ups fail only on what it skips
            info = params.get("clientInfo")  # (a JSON value: a dict, or a TypeError)
            try:
                asked = (info if info is not None else params["_meta"][CLIENT_INFO])["name"]
            except (KeyError, TypeError):
                asked = None
            if not isinstance(asked, str):  # Bounded's "" for any other value
                asked = None
        started = perf_counter()
        outcome = OK
        try:
            out = handler(session, snap, params, call)  # get_prompt's: a dict, no isError
            if out.get("resultType") == "input_required":  # type: ignore[union-attr]
                outcome = INPUT
            return out
        except TemplateError:
            outcome = RENDER
            raise
        except Exception:
            outcome = NOT_FOUND if entry is None else INVALID
            raise
        finally:
            seconds = perf_counter() - started
            seen = (counted, asked, call.revision, outcome, PRINCIPAL.get())
            cell = cells.get(seen)
            if cell is None:
                cell = self._seen(cells, labels, seen)
            cell[0] += 1
            if row is not None:
                row[bisect_left(BUCKETS, seconds)] += 1
                row[-1] += seconds

    def _seen(self, cells: _Cells, labels: tuple[str, str, str], seen: _Seen) -> list[int]:
        """The series of a get of ``labels`` that gave ``seen`` (names bounded as by
        :meth:`_count`), cached only if its names are in their sets: no more than series."""
        counted, asked, rev, outcome, principal = seen
        client = counted if counted is not None else self.clients(asked)
        cell = self._cell((
            "prompts/get", *labels, rev if rev in SUPPORTED else OTHER, outcome, client,
            self.principals(principal) if principal else "", self.channel))
        if (asked is None or asked in self.clients.seen) and \
                (not principal or principal in self.principals.seen):
            if len(cells) >= MAX_CELLS:
                cells.clear()  # a last bound: the cache empties when full
            cells[seen] = cell
        return cell

    def _row(self, name: str, entry: Entry, snap: Snapshot) -> _Row:
        """``entry``'s labels, latency row (made if new) and series cache, remembered for
        :meth:`_get` under the prompt's name (~1,500 instructions a get, issue 26)."""
        package = snap.bundles[entry.slot]["package"]
        labels = (package["name"], entry.prompt["name"], str(package["version"]))
        at = (*labels, self.channel)
        row = self.latency.get(at)
        if row is None:
            row = self.latency[at] = [0.0] * (len(BUCKETS) + 2)
        known = self._rows[name] = (entry, labels, row, {})
        return known

    def _plain(self, handler: Handler, session: Session, snap: Snapshot, params: Json,
               call: Call, span: Notes | None) -> Result:
        """A request that is no prompt's use: answered, not counted (spanned when traced)."""
        if span is not None:
            span[0] = (*cast("Attrs", span[0]), ("promptops.revision", call.revision))
        return handler(session, snap, params, call)

    # ---- Prometheus -------------------------------------------------------------------------
    def collect(self) -> Iterator[Metric]:
        """The series, read at scrape time (a prometheus-client custom collector)."""
        from prometheus_client.metrics_core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        requests = CounterMetricFamily(
            "promptops_prompt_requests", "prompts/get, completion/complete and tools/call of "
            "a prompt by prompt, version, revision, outcome, client, principal and channel",
            labels=["method", "package", "prompt", "version", "revision", "outcome", "client",
                    "principal", "channel"])
        for key, n in self.counts.items():
            requests.add_metric(list(key), n)
        yield requests
        latency = HistogramMetricFamily(
            "promptops_prompt_render_seconds", "time to answer one prompts/get (or tools/call "
            "of the prompt), per prompt", labels=["package", "prompt", "version", "channel"])
        for at, row in self.latency.items():
            total, buckets = 0.0, []
            for le, count in zip(_LE, row[:-1], strict=True):
                total += count
                buckets.append((le, total))
            latency.add_metric(list(at), buckets, row[-1])
        yield latency
        served = GaugeMetricFamily("promptops_prompt_served",
                                   "the prompts served now (value 1): unused = served unless "
                                   "requested", labels=["package", "prompt", "version"])
        for row3 in self.served:
            served.add_metric(list(row3), 1)
        yield served
        swaps = HistogramMetricFamily(
            "promptops_list_changed_fanout_seconds", "time from a new bundle set to "
            "list_changed handed to every listener's stream (snapshot swap included)")
        total, buckets = 0.0, []
        for le, count in zip([repr(b) for b in SWAP_BUCKETS] + ["+Inf"], self.swaps[:-1],
                             strict=True):
            total += count
            buckets.append((le, total))
        swaps.add_metric([], buckets, self.swaps[-1])
        yield swaps

    def describe(self) -> Iterator[Metric]:
        return iter(())  # nothing at registration: collect() runs only at scrape time

    # ---- the report -------------------------------------------------------------------------
    def report(self) -> Json:
        """``GET /usage``: per prompt and version, counts since start; the never-fetched
        (neither a ``prompts/get`` nor a ``tools/call`` of it)."""
        per: dict[tuple[str, str, str], Json] = {}
        for (method, pkg, prompt, version, _rev, outcome, client, _who, channel), n in \
                self.counts.items():
            row = per.setdefault((pkg, prompt, version), {
                "package": pkg, "prompt": prompt, "version": version, "gets": 0,
                "completions": 0, "tool_calls": 0, "outcomes": {}, "clients": {},
                "channels": {}})
            row[_COLUMN[method]] += n
            row["outcomes"][outcome] = row["outcomes"].get(outcome, 0) + n
            if client:
                row["clients"][client] = row["clients"].get(client, 0) + n
            if channel:
                row["channels"][channel] = row["channels"].get(channel, 0) + n
        fetched = {(p, n) for (p, n, _v), row in per.items()
                   if row["gets"] or row["tool_calls"]}
        never = [{"package": p, "prompt": n, "version": v} for p, n, v in self.served
                 if (p, n) not in fetched]
        return {"since": _iso(self.started), "now": _iso(time.time()),
                "prompts": sorted(per.values(), key=lambda r: (-r["gets"], r["package"],
                                                               r["prompt"], r["version"])),
                "never_fetched": never}


def _tool_outcome(entry: object) -> str:
    """The outcome of a tools/call answered with ``isError`` (tools.py says why)."""
    from promptops.serve.tools import FAILURE

    if isinstance(FAILURE.get(), TemplateError):
        return RENDER
    return NOT_FOUND if entry is None else INVALID


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


_NO_PROMPT = object()


def _asked(method: str, snap: Snapshot, params: Json, call: Call) -> object:
    """The prompt name a counted request asks for (any value: it is looked up, never
    trusted); :data:`_NO_PROMPT` for a ``tools/call`` that uses no prompt (``list_prompts``)."""
    if method == "prompts/get":
        return params.get("name")
    if method == "tools/call":
        from promptops.serve.tools import FAILURE, prompt_of  # imported: a tool was asked

        name = prompt_of(snap, params, call)
        if name is False:
            return _NO_PROMPT
        FAILURE.set(None)
        return name
    ref = params.get("ref")
    return ref.get("name") if isinstance(ref, dict) else None
