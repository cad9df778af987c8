"""The era of a request is decided by one rule, ``revisions.request_era``, on every transport.

The stdio core asks it for a connection's first request; the HTTP transport asks it for
every POST (``transports.http.stateless.is_stateless``), with the header revision and
whether the request joins a session. So the same message gets the same era on both:
the envelope is a ``_meta`` naming its ``protocolVersion``; other
``io.modelcontextprotocol/`` keys (2025-11-25's ``related-task``) do not make a request
stateless on either transport.
"""

from __future__ import annotations

from typing import Any

import pytest
from serve_helpers import envelope

from promptops.serve.catalog import Catalog
from promptops.serve.revisions import SESSION, STATELESS, request_era
from promptops.serve.server import Server
from promptops.serve.transports.http.stateless import is_stateless

V26 = "2026-07-28"
TASK_META = {"_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}}


@pytest.mark.parametrize(("method", "params", "named", "joined", "era"), [
    ("prompts/list", envelope(), None, False, STATELESS),
    ("prompts/list", envelope(), None, True, STATELESS),  # the envelope wins over a session
    ("prompts/list", {}, V26, True, STATELESS),  # so does a stateless header
    ("prompts/list", TASK_META, None, False, None),
    ("prompts/list", TASK_META, None, True, SESSION),
    ("server/discover", {}, None, False, STATELESS),
    ("server/discover", {}, None, True, SESSION),
    ("initialize", {}, None, False, SESSION),
    ("initialize", {}, "2025-06-18", False, SESSION),
    ("ping", {}, None, False, None),
    (None, {}, V26, False, STATELESS),  # a batch under the stateless header
])
def test_the_rule(method: Any, params: dict[str, Any], named: str | None, joined: bool,
                  era: Any) -> None:
    assert request_era(method, params, named=named, joined=joined) is era


@pytest.mark.parametrize("params", [envelope(), TASK_META, {}])
@pytest.mark.parametrize("joined", [False, True])
def test_http_asks_the_same_rule(params: dict[str, Any], joined: bool) -> None:
    msg = {"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": params}
    headers = {"mcp-session-id": "s"} if joined else {}
    want = request_era("prompts/list", params, joined=joined) is STATELESS
    assert is_stateless(msg, None, headers) is want
    assert is_stateless([msg], None, headers) is False  # a batch: only a header decides
    assert is_stateless([msg], V26, headers) is True


def test_stdio_first_request_with_other_meta_keys_is_not_stateless() -> None:
    server = Server(Catalog([]))
    session = server.open(lambda message: None)
    [reply] = server.handle(session, {"jsonrpc": "2.0", "id": 1, "method": "prompts/list",
                                      "params": TASK_META})
    assert reply["error"]["code"] == -32600
    assert reply["error"]["message"].startswith("not initialized")
    [reply] = server.handle(session, {"jsonrpc": "2.0", "id": 2, "method": "prompts/list",
                                      "params": envelope()})
    assert "result" in reply
