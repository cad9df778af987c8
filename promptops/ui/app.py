"""The UI as an ASGI app: read-only routes over a :class:`~promptops.ui.site.Site`.

Routes (GET and HEAD only; anything else is 405, so nothing here can change a thing):

- ``/``: the catalog, with ``q`` (words that must all appear), ``package`` and ``page``;
- ``/api/search``: the same search as JSON, for search-as-you-type;
- ``/prompt/PACKAGE/NAME``: the prompt's form; with ``render=1`` the result, rendered by
  the renderer `promptops render` and ``prompts/get`` use; ``sample=NAME`` fills the form;
- ``/compare/PACKAGE/NAME?base=REV&head=REV``: two revisions side by side, and their diff;
- ``/api/generation``: a counter that moves when the working tree is rebuilt (live reload);
- ``/static/ui.js``, ``/static/ui.css``: the only script and stylesheet, from the wheel.

Every response carries a strict Content-Security-Policy (scripts and styles from this
origin only, no inline script), ``nosniff``, ``no-referrer`` and ``frame-ancestors
'none'``. With ``hosts`` given, a request whose ``Host`` is not one of them is refused
(403): a page on another site that rebinds its name to 127.0.0.1 cannot read the UI.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote

from promptops.errors import PromptopsError, RenderError
from promptops.pipeline.bundle_types import Prompt
from promptops.render.mcp import error_code
from promptops.sandbox.limits import Budget
from promptops.ui import compare, pages
from promptops.ui.site import Shelf, Site

if TYPE_CHECKING:
    from promptops.render.renderer import Renderer
    from promptops.render.result import PromptResult
    from promptops.serve.transports.http.guard import HostGuard
    from promptops.serve.usage import Usage

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, object]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "media-src data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
       "frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
STATIC_TYPES = {"ui.js": b"text/javascript; charset=utf-8", "ui.css": b"text/css; charset=utf-8"}
# Where a server that mounts the UI (``serve --http --ui``) puts the caller's visibility
# patterns after authenticating them: a tuple of serve's PACKAGE[/PROMPT-GLOB] patterns.
# Absent (the local `promptops ui`): everything.
SEE_KEY = "promptops.see"
# Set by that server when the caller came with a browser session cookie: pages then
# carry a sign-out button.
SIGNED_IN_KEY = "promptops.signed_in"
MAX_QUERY = 256 * 1024  # a form's worth of arguments; more is refused (414)
PER_PAGE = 100


def _static() -> dict[str, bytes]:
    root = resources.files("promptops.ui") / "static"
    return {name: (root / name).read_bytes() for name in STATIC_TYPES}


class Response:
    def __init__(self, status: int, body: bytes | str, ctype: bytes = b"text/html; charset=utf-8",
                 cache: bytes = b"no-store") -> None:
        self.status = status
        self.body = body.encode() if isinstance(body, str) else body
        self.ctype = ctype
        self.cache = cache


def _json(status: int, data: object) -> Response:
    return Response(status, json.dumps(data, ensure_ascii=False),
                    b"application/json; charset=utf-8")


class UiApp:
    """The ASGI callable. ``hosts``: the ``Host`` values (host or host:port, lower case)
    to accept; None leaves the check to whoever mounts the app (serve's own guard)."""

    def __init__(self, site: Site, *, hosts: frozenset[str] | None = None,
                 refresh: Callable[[], None] | None = None,
                 usage: Usage | None = None) -> None:
        self.site = site
        self.usage = usage  # serve --http --ui: the server's request counters
        self.hosts = hosts
        # the DNS-rebinding rule of serve --http (one home): its Host half, the UI being
        # read-only GETs (a rebound page's requests carry its own name as Host)
        self.guard: HostGuard | None = None
        if hosts is not None:
            from promptops.serve.transports.http.guard import HostGuard

            self.guard = HostGuard(allow_hosts=hosts)
        self.refresh = refresh  # called before each request (ui.mount: follow the server)
        self.static = _static()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        response = self.respond(scope)
        if scope.get(SIGNED_IN_KEY) and response.ctype.startswith(b"text/html"):
            end = pages.NAV_END.encode()
            response.body = response.body.replace(end, pages.SIGN_OUT.encode() + end, 1)
        headers = [(b"content-type", response.ctype), (b"cache-control", response.cache),
                   (b"content-length", str(len(response.body)).encode()), *SECURITY_HEADERS]
        if response.status == 405:
            headers.append((b"allow", b"GET, HEAD"))
        await send({"type": "http.response.start", "status": response.status,
                    "headers": headers})
        body = b"" if scope.get("method") == "HEAD" else response.body
        await send({"type": "http.response.body", "body": body})

    def _host_ok(self, scope: Scope) -> bool:
        if self.guard is None:
            return True
        for key, value in scope.get("headers", []):
            if key == b"host":
                return self.guard.host_ok(value.decode("latin-1").lower())
        return False

    def respond(self, scope: Scope) -> Response:
        """The response to one request; a bug of ours is a 500, nothing else escapes."""
        if not self._host_ok(scope):
            return Response(403, "Forbidden: Host not allowed\n", b"text/plain; charset=utf-8")
        if scope.get("method") not in ("GET", "HEAD"):
            return Response(405, "Method not allowed: this UI is read-only\n",
                            b"text/plain; charset=utf-8")
        raw_query = scope.get("query_string", b"")
        if len(raw_query) > MAX_QUERY:
            return Response(414, "Query too long\n", b"text/plain; charset=utf-8")
        try:
            query = parse_qsl(raw_query.decode("utf-8", "replace"), keep_blank_values=True,
                              max_num_fields=1000)
        except ValueError:  # over max_num_fields
            return Response(400, "Bad request: too many fields\n", b"text/plain; charset=utf-8")
        raw = scope.get("raw_path") or scope["path"].encode()
        parts = [unquote(p) for p in raw.decode("latin-1").split("?")[0].split("/")[1:]]
        if self.refresh is not None:
            self.refresh()
        see = scope.get(SEE_KEY)
        try:
            return self._route(parts, query, see)
        except Exception:  # our bug: a 500 for this request, the traceback on stderr
            import traceback

            traceback.print_exc()
            return Response(500, "Internal error (a promptops bug: please report it)\n",
                            b"text/plain; charset=utf-8")

    def _route(self, parts: list[str], query: list[tuple[str, str]],
               see: tuple[str, ...] | None) -> Response:
        q = dict(query)
        if parts in ([""], []):
            return self._catalog(q, see)
        head = parts[0]
        if head == "static" and len(parts) == 2 and parts[1] in self.static:
            return Response(200, self.static[parts[1]], STATIC_TYPES[parts[1]],
                            b"no-cache")
        if head == "api" and parts[1:] == ["search"]:
            try:
                limit = max(1, min(int(q.get("limit", "50")), 500))
            except ValueError:
                limit = 50
            return _json(200, pages.search_json(self.site, q.get("q", "")[:500],
                                                q.get("package") or None, limit, see))
        if head == "api" and parts[1:] == ["generation"]:
            return _json(200, {"generation": self.site.generation})
        if head in ("prompt", "compare") and len(parts) == 3:
            shelf = self.site.shelf(parts[1])
            view = self.site.view(see)
            if shelf is None or shelf.bundle is None or (view is not None
                                                          and parts[1] not in view):
                return Response(404, pages.not_found(f"No package {parts[1]!r}."))
            prompt = next((p for p in shelf.bundle["prompts"] if p["name"] == parts[2]
                           and (view is None or p["name"] in view[parts[1]])), None)
            if prompt is None:
                return Response(404, pages.not_found(f"No prompt {parts[2]!r} in {parts[1]}."))
            if head == "prompt":
                return self._prompt(shelf, prompt, query)
            return self._compare(shelf, prompt, query)
        return Response(404, pages.not_found("No such page."))

    def _catalog(self, q: dict[str, str], see: tuple[str, ...] | None) -> Response:
        try:
            page = max(0, int(q.get("page", "0")))
        except ValueError:
            page = 0
        return Response(200, pages.catalog(self.site, q.get("q", "")[:500],
                                           q.get("package") or None, page, PER_PAGE, see))

    @staticmethod
    def _values(prompt: Prompt, query: list[tuple[str, str]]) -> dict[str, str]:
        """The arguments a request gives: a sample's (if named), overlaid by the form's
        non-empty fields, in declaration order; every value a string, as on the MCP wire."""
        values: dict[str, str] = {}
        sample = dict(query).get("sample")
        if sample:
            found = next((s for s in prompt.get("samples") or [] if s["name"] == sample), None)
            if found is not None:
                declared = {a["name"]: a for a in prompt["arguments"]}
                for k, v in found["arguments"].items():
                    if k in declared:
                        values[k] = pages.form_value(declared[k], v)
                    else:
                        values[k] = pages.form_value({"name": k}, v)
        for key, value in query:
            if key.startswith(pages.ARG_PREFIX) and value != "":
                values[key[len(pages.ARG_PREFIX):]] = value
        order = {a["name"]: i for i, a in enumerate(prompt["arguments"])}
        return dict(sorted(values.items(), key=lambda kv: order.get(kv[0], len(order))))

    def _prompt(self, shelf: Shelf, prompt: Prompt,
                query: list[tuple[str, str]]) -> Response:
        values = self._values(prompt, query)
        rendered, status = "", 200
        if dict(query).get("render") and shelf.renderer is not None:
            try:
                result = served(shelf.renderer, prompt["name"], values)
            except RenderError as exc:  # checked again here, whatever the browser checked
                rendered, status = pages.error_section(str(exc), error_code(exc)), 400
            else:
                rendered = pages.result_section(shelf, prompt["name"], values, result)
        plain = {k: v for k, v in query if k != "health"}
        health = pages.health_section(shelf, prompt, plain, run=bool(dict(query).get("health")))
        if self.usage is not None:
            health += pages.usage_section(self.requests(shelf.name, prompt["name"]),
                                          self.usage.started)
        return Response(status, pages.prompt_page(self.site, shelf, prompt, values, rendered,
                                                  health))

    def requests(self, package: str, name: str) -> list[tuple[str, int, int, dict[str, int]]]:
        """The server's counts for one prompt since it started, per version: (version,
        prompts/get, completion/complete, prompts/get by outcome). Callers and principals
        are left out: the page shows a prompt to whoever may see it, and who else fetched
        it is not theirs to read."""
        assert self.usage is not None
        per: dict[str, tuple[int, int, dict[str, int]]] = {}
        for key, n in list(self.usage.counts.items()):  # a copy: the loop thread counts
            method, pkg, prompt, version, _rev, outcome = key[:6]
            if pkg != package or prompt != name:
                continue
            gets, completions, outcomes = per.get(version, (0, 0, {}))
            if method == "prompts/get":
                gets += n
                outcomes[outcome] = outcomes.get(outcome, 0) + n
            elif method == "completion/complete":
                completions += n
            per[version] = (gets, completions, outcomes)
        return [(v, *per[v]) for v in sorted(per)]

    def _compare(self, shelf: Shelf, prompt: Prompt,
                 query: list[tuple[str, str]]) -> Response:
        from promptops.render.transcript import review_lines
        from promptops.review.rendered import error_lines, source_lines, unified

        q = dict(query)
        values = self._values(prompt, query)
        choices = self.site.revisions(shelf.name)
        base = q.get("base") or (choices[1] if len(choices) > 1 else "HEAD~1")
        head = q.get("head") or "HEAD"
        sides: list[str] = []
        diff: str | None = None
        source_diff = ""
        error: str | None = None
        status = 200
        if q.get("base") and q.get("head"):
            try:
                lines, sources = [], []
                for ref in (base, head):
                    side = self.site.revision(shelf.name, ref)
                    if side.renderer is None:
                        raise PromptopsError(f"{ref}: the package does not build: {side.error}")
                    try:  # rendered once: the side's page and its diff lines
                        result = served(side.renderer, prompt["name"], values)
                        inner = pages.messages_html(result)
                    except RenderError as exc:
                        inner = (f"<p class=\"error\">error {error_code(exc)}: "
                                 f"{pages.e(exc)}</p>")
                        lines.append(error_lines(exc))
                    else:
                        lines.append(review_lines(result))
                    version = side.bundle["package"]["version"] if side.bundle else ""
                    sides.append(compare.side_html(f"{ref} ({side.name} {version})", inner))
                    found = next((p for p in side.bundle["prompts"] if p["name"] == prompt["name"]),
                                 None) if side.bundle else None
                    sources.append(source_lines(side.source, found["source"] if found else None))
                diff = unified(lines[0], lines[1], base, head)
                source_diff = unified(sources[0], sources[1], f"{base}:{prompt['source']}",
                                      f"{head}:{prompt['source']}")
            except PromptopsError as exc:
                error, status, sides, diff = str(exc), 400, [], None
        return Response(status, compare.compare_page(self.site, shelf, prompt, values,
                                                   (base, head), choices, sides, diff, error,
                                                   source_diff))


def served(renderer: Renderer, name: str, values: dict[str, str]) -> PromptResult:
    """One render the UI shows, under the bounds of a served request: the package's CPU
    bound and the wall backstop (``Limits.served``), as serve's ``prompts/get`` has. The
    UI is a server too: without the backstop a render descheduled on a busy machine, or
    one the CPU clock does not see waiting, held a request thread with no wall bound."""
    return renderer.get(name, values, Budget(renderer.limits.served))


def loopback_hosts(port: int) -> frozenset[str]:
    """The Host values a browser sends for the loopback UI on ``port``."""
    names = ("127.0.0.1", "localhost", "[::1]")
    return frozenset({*names, *(f"{n}:{port}" for n in names)})
