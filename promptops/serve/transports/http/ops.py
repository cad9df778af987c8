"""The operator's routes beside the endpoint: health, readiness, metrics, the
protected-resource metadata, the git webhook and the usage report.

All of them sit behind the app's :class:`~promptops.serve.transports.http.guard.HostGuard`
(a DNS-rebinding page must not read ``/metrics`` or ``/readyz`` - package names, commits,
digests - of a local server); ``/usage`` also behind the auth gate. A route is there only
when its feature is on (``/metrics`` with metrics, the metadata with auth, ``/hooks/git``
with a webhook secret, ``/usage`` once the usage counters are given): otherwise the path
falls through to the UI or 404, as any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptops.serve import jsonrpc
from promptops.serve.auth import EVERYTHING
from promptops.serve.auth import resource_metadata as prm_document
from promptops.serve.transports.http.base import (
    NO_STORE_JSON,
    PRM_PATH,
    Encode,
    HttpConfig,
    HttpError,
    Note,
    Receive,
    Scope,
    SendAsgi,
    headers,
    read_body,
    refuse,
    respond,
)

if TYPE_CHECKING:
    from promptops.serve.metrics import Metrics
    from promptops.serve.transports.http.guard import AuthGate, Route
    from promptops.serve.usage import Usage
    from promptops.serve.views import Views

MAX_HOOK_BODY = 25 * 1024 * 1024  # a forge's push event, with every commit of the push


class Ops:
    """The operator's routes by path; :meth:`route` finds the one for a path, if on."""

    def __init__(self, views: Views, config: HttpConfig, gate: AuthGate, encode: Encode,
                 metrics: Metrics | None = None) -> None:
        self.views, self.config, self.gate, self.encode = views, config, gate, encode
        self.metrics = metrics
        self.usage: Usage | None = None  # per-prompt counters and GET /usage (usage.py)
        self.prm_paths = frozenset((PRM_PATH, PRM_PATH + config.path))

    def route(self, path: str) -> Route | None:
        if path == "/healthz":
            return self.healthz
        if path == "/readyz":
            return self.readyz
        if path == "/metrics" and self.metrics is not None:
            return self.metrics_page
        if path == "/usage" and self.usage is not None:
            return self.usage_report
        if path in self.prm_paths and self.gate.auth is not None:
            return self.resource_metadata
        if path == "/hooks/git" and self.config.webhook is not None:
            return self.hook
        return None

    async def healthz(self, scope: Scope, receive: Receive, send: SendAsgi,
                  note: Note) -> int:
        return await respond(send, 200, b'{"status":"ok"}')

    async def readyz(self, scope: Scope, receive: Receive, send: SendAsgi,
                  note: Note) -> int:
        ready = bool(self.views.bundles)
        return await respond(send, 200 if ready else 503, b'{"status":"ready"}' if ready
                             else b'{"status":"no bundle served yet"}')

    async def metrics_page(self, scope: Scope, receive: Receive, send: SendAsgi,
                  note: Note) -> int:
        assert self.metrics is not None
        return await respond(send, 200, self.metrics.render(),
                             [(b"content-type", self.metrics.content_type.encode())])

    async def resource_metadata(self, scope: Scope, receive: Receive, send: SendAsgi,
                  note: Note) -> int:
        return await respond(send, 200, prm_document(
            self.config.resource, self.config.issuer, self.config.required_scopes))

    async def hook(self, scope: Scope, receive: Receive, send: SendAsgi,
                  note: Note) -> int:
        webhook = self.config.webhook
        assert webhook is not None
        if scope["method"] != "POST":
            return await respond(send, 405, b'{"error":"POST only"}', [(b"allow", b"POST")])
        body = await read_body(receive, MAX_HOOK_BODY)
        if body is None:
            return await respond(send, 413, b'{"error":"body too large"}')
        status = webhook(headers(scope), body)
        return await respond(send, status, b'{"status":"accepted"}' if status < 300
                             else b'{"error":"unauthorized"}')

    async def usage_report(self, scope: Scope, receive: Receive, send: SendAsgi,
                  note: Note) -> int:
        """GET /usage: with tokens or OAuth on, only for a credential that sees every prompt.

        The report names every prompt with its clients and principals: a team whose grant is
        a part of the packages must not learn the rest (issue 23, invariant 3).
        """
        assert self.usage is not None
        if self.gate.auth is not None:
            try:
                principal = await self.gate.admit(headers(scope))
            except HttpError as exc:
                return await refuse(send, exc, self.encode)
            if principal.see != EVERYTHING:
                return await refuse(send, HttpError(
                    403, jsonrpc.INVALID_REQUEST, "the usage report covers every prompt: it "
                    "needs a credential that sees every prompt"), self.encode)
        return await respond(send, 200, self.encode(self.usage.report()), NO_STORE_JSON)
