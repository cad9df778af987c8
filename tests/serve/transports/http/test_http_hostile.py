"""Hostile callers of the team server (issue 23, defects 8-17): each test is one attack.

Every server here is a real `promptops serve --http` process on a real socket; the
attacks are what an outside caller can send: huge method names, a narrowed token's
old session, a glob grant reading other prompts' files, one principal opening every
session, a DNS-rebinding page reading /metrics, a JWT whose `kid` carries CR/LF, a
forged X-Forwarded-For. The byte and time bounds (defects 9 and 11) are in
test_http_limits.py; the cached clone's credentials (defect 14) in test_http_remote.py.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from helpers.repo import make_repo
from http_helpers import HttpServer, free_port, initialize, modern, post

VAULT = {
    "promptops.yaml": "name: vault\nversion: 0.1.0\n",
    "prompts/vault_plan.prompt.yaml": (
        "description: The secret plan\nmessages:\n  - role: user\n    text: 'plan'\n"
        "  - role: user\n    resource: {uri: 'promptops://vault/notes/vault.md', "
        "file: notes/vault.md}\n"),
    "prompts/vault_open.prompt.yaml": (
        "description: The open part\nmessages:\n  - role: user\n    text: 'open'\n"),
    "notes/vault.md": "# Vault secret notes\n",
}
TOKENS = {"team-a": "token-for-team-a-0123456789", "team-b": "token-for-team-b-0123456789",
          "open": "token-for-open-part-0123456"}
SEE = {"team-a": ["kit"], "team-b": ["vault"], "open": ["vault/vault_open"]}


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _tokens(path: Path, see: dict[str, list[str]], tokens: dict[str, str] = TOKENS) -> Path:
    path.write_text(json.dumps({"tokens": [
        {"name": n, "sha256": _digest(t), "see": see[n]} for n, t in tokens.items()]}))
    return path


def _auth(team: str) -> dict[str, str]:
    return {"authorization": f"Bearer {TOKENS[team]}"}


@pytest.fixture(scope="module")
def packages(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    vault = tmp_path_factory.mktemp("vault") / "vault"
    make_repo(vault, VAULT)
    return [str(kit_dir), str(vault)]


@pytest.fixture(scope="module")
def server(packages: list[str], tmp_path_factory: pytest.TempPathFactory,
           module_env: dict[str, str]) -> Iterator[HttpServer]:
    tmp = tmp_path_factory.mktemp("hostile")
    tokens = _tokens(tmp / "tokens.json", SEE)
    srv = HttpServer([*packages, "--tokens", str(tokens), "--max-sessions", "20"],
                     tmp / "server.log", env=module_env)
    yield srv
    assert srv.stop() == 0, srv.stderr()


@pytest.fixture(scope="module")
def open_server(packages: list[str], tmp_path_factory: pytest.TempPathFactory,
                module_env: dict[str, str]) -> Iterator[HttpServer]:
    """No tokens: every caller is anonymous, told apart by address."""
    tmp = tmp_path_factory.mktemp("open")
    srv = HttpServer([*packages, "--max-sessions", "20", "--max-streams", "2"],
                     tmp / "server.log", env=module_env)
    yield srv
    assert srv.stop() == 0, srv.stderr()


# ---- 8: the JSON-RPC method is a label value only when it is one we answer ---------------
def test_method_names_do_not_become_metric_labels(server: HttpServer) -> None:
    before = len(httpx2.get(server.base + "/metrics").content)
    for i in range(40):
        method = f"{i}" + "m" * 20_000
        body, headers = modern(method)
        r = post(server.url, body, {**headers, **_auth("team-a")})
        assert r.status_code in (400, 404), r.text
    text = httpx2.get(server.base + "/metrics").text
    assert len(text) < before + 10_000, len(text)  # not 40 x 20 KB of label values
    assert 'method="other"' in text
    assert "m" * 100 not in server.stderr()  # nor access-log lines


# ---- 13: a PACKAGE/PROMPT-GLOB grant sees only the files its prompts embed ---------------
@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_glob_grant_does_not_expose_other_prompts_resources(server: HttpServer,
                                                            era: str) -> None:
    uri = "promptops://vault/notes/vault.md"
    if era == "2026-07-28":
        def call(method: str, params: dict[str, Any], team: str) -> Any:
            body, headers = modern(method, params, name=params.get("uri"))
            return post(server.url, body, {**headers, **_auth(team)}).json()
    else:
        sids = {team: initialize(server.url, _auth(team)) for team in ("open", "team-b")}

        def call(method: str, params: dict[str, Any], team: str) -> Any:
            return post(server.url, {"jsonrpc": "2.0", "id": 3, "method": method,
                                     "params": params},
                        {**_auth(team), "mcp-session-id": sids[team]}).json()

    listed = call("resources/list", {}, "open")["result"]["resources"]
    assert [r["uri"] for r in listed] == []
    read = call("resources/read", {"uri": uri}, "open")
    assert "error" in read and "secret" not in json.dumps(read)
    missing = call("resources/read", {"uri": "promptops://vault/notes/never.md"}, "open")
    assert read["error"]["code"] == missing["error"]["code"]  # as absent as a file never written
    # the grant that sees vault_plan still reads the file it embeds
    assert [r["uri"] for r in call("resources/list", {}, "team-b")["result"]["resources"]] \
        == [uri]
    assert "secret" in json.dumps(call("resources/read", {"uri": uri}, "team-b"))


# ---- 12: one principal cannot hold every session ------------------------------------------
def test_one_principal_cannot_take_every_session(server: HttpServer) -> None:
    ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
    used = initialize(server.url, _auth("team-a"))
    first = initialize(server.url, _auth("team-a"))
    for _ in range(25):  # more than --max-sessions 20
        assert post(server.url, ping, {**_auth("team-a"), "mcp-session-id": used}
                    ).status_code == 200  # in use: never the one that makes room
        initialize(server.url, _auth("team-a"))  # its least recently used one makes room
    assert post(server.url, ping, {**_auth("team-a"), "mcp-session-id": first}
                ).status_code == 404
    sid = initialize(server.url, _auth("team-b"))  # another team still gets a session
    assert post(server.url, ping, {**_auth("team-b"), "mcp-session-id": sid}
                ).status_code == 200


def test_anonymous_callers_are_bounded_per_address(open_server: HttpServer) -> None:
    first = initialize(open_server.url)
    for _ in range(25):
        initialize(open_server.url)
    assert post(open_server.url, {"jsonrpc": "2.0", "id": 5, "method": "ping"},
                {"mcp-session-id": first}).status_code == 404


# ---- 15: DNS rebinding: the Host guard covers every path of a loopback bind ----------------
@pytest.mark.parametrize("path", ["/metrics", "/readyz", "/healthz", "/nowhere"])
def test_host_guard_covers_every_path(server: HttpServer, path: str) -> None:
    evil = httpx2.get(server.base + path, headers={"host": "evil.example:8080"})
    assert evil.status_code == 403, evil.text
    assert b"promptops_bundle_info" not in evil.content and b"kit" not in evil.content
    origin = httpx2.get(server.base + path, headers={"origin": "http://evil.example"})
    assert origin.status_code == 403
    assert httpx2.get(server.base + path).status_code in (200, 404)


# ---- 17: X-Forwarded-For is trusted only when configured ----------------------------------
def _access_remotes(srv: HttpServer, marker: str) -> list[str]:
    return [json.loads(ln)["remote"] for ln in srv.stderr().splitlines()
            if ln.startswith("{") and marker in ln]


def test_forwarded_for_is_ignored_unless_configured(open_server: HttpServer) -> None:
    r = httpx2.get(open_server.base + "/xff-probe", headers={"x-forwarded-for": "203.0.113.9"})
    assert r.status_code == 404
    deadline = time.monotonic() + 5
    while not _access_remotes(open_server, "/xff-probe"):
        assert time.monotonic() < deadline, open_server.stderr()
        time.sleep(0.05)
    assert _access_remotes(open_server, "/xff-probe") == ["127.0.0.1"]
    # the per-client stream bound sees one client however many addresses it claims
    body, headers = modern("subscriptions/listen", {"notifications": {
        "promptsListChanged": True}})
    opened: list[Any] = []
    statuses = []
    try:
        for i in range(4):
            client = httpx2.Client(timeout=10)
            req = client.build_request("POST", open_server.url, content=json.dumps(body),
                                       headers={**headers, "x-forwarded-for": f"198.51.100.{i}"})
            resp = client.send(req, stream=True)
            opened.append((client, resp))
            statuses.append(resp.status_code)
    finally:
        for client, resp in opened:
            resp.close()
            client.close()
    assert statuses.count(200) == 2 and statuses[2:] == [429, 429], statuses


def test_forwarded_for_is_honoured_from_a_configured_proxy(
        packages: list[str], tmp_path: Path, module_env: dict[str, str]) -> None:
    srv = HttpServer([*packages, "--forwarded-allow-ips", "127.0.0.1"], tmp_path / "log",
                     env=module_env)
    try:
        httpx2.get(srv.base + "/healthz", headers={"x-forwarded-for": "203.0.113.9"})
    finally:
        assert srv.stop() == 0
    assert any('"remote":"203.0.113.9"' in ln for ln in srv.log.read_text().splitlines())


# ---- 10: visibility comes from the presenting credential's current grant ------------------
def test_narrowed_token_ends_its_wider_session(packages: list[str], tmp_path: Path,
                                               module_env: dict[str, str]) -> None:
    wide = {**SEE, "team-a": ["kit", "vault"]}
    path = _tokens(tmp_path / "tokens.json", wide)
    srv = HttpServer([*packages, "--tokens", str(path)], tmp_path / "log", env=module_env)
    try:
        sid = initialize(srv.url, _auth("team-a"))
        listing = {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}
        names = [p["name"] for p in post(srv.url, listing, {
            **_auth("team-a"), "mcp-session-id": sid}).json()["result"]["prompts"]]
        assert "vault_plan" in names
        sse = {**_auth("team-a"), "accept": "text/event-stream", "mcp-session-id": sid}
        with httpx2.Client(timeout=10) as c, c.stream("GET", srv.url, headers=sse) as stream:
            assert stream.status_code == 200
            _tokens(path, SEE)  # team-a narrowed to kit, then reloaded
            srv.proc.send_signal(signal.SIGHUP)
            b"".join(stream.iter_bytes())  # the reload ends the session's stream (no timeout)
        assert "tokens reloaded" in srv.stderr()
        r = post(srv.url, listing, {**_auth("team-a"), "mcp-session-id": sid})
        assert r.status_code == 404 or "vault" not in r.text, r.text
        assert "vault" not in r.text
        fresh = initialize(srv.url, _auth("team-a"))  # a new session: the current grant
        names = [p["name"] for p in post(srv.url, listing, {
            **_auth("team-a"), "mcp-session-id": fresh}).json()["result"]["prompts"]]
        assert names and "vault_plan" not in names
    finally:
        assert srv.stop() == 0, srv.stderr()


def test_one_name_with_two_grants_is_refused(tmp_path: Path) -> None:
    from promptops.serve.auth import AccessFileError, StaticTokens

    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"tokens": [
        {"name": "team", "sha256": _digest("wide-token-0123456789"), "see": ["*"]},
        {"name": "team", "sha256": _digest("narrow-token-012345678"), "see": ["kit"]}]}))
    with pytest.raises(AccessFileError, match=r"tokens\[1\].*'team'"):
        StaticTokens(path)
    path.write_text(json.dumps({"tokens": [  # one grant under two tokens (rotation): fine
        {"name": "team", "sha256": _digest("old-token-0123456789"), "see": ["kit"]},
        {"name": "team", "sha256": _digest("new-token-0123456789"), "see": ["kit"]}]}))
    assert StaticTokens(path).authenticate("Bearer new-token-0123456789").name == "team"


# ---- 16: a hostile JWT gets a 401 with a fixed description ---------------------------------
class _Jwks(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def oauth(packages: list[str], tmp_path_factory: pytest.TempPathFactory,
          module_env: dict[str, str]) -> Iterator[tuple[HttpServer, Any]]:
    tmp = tmp_path_factory.mktemp("oauth")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    handler = type("Jwks", (_Jwks,), {"body": json.dumps({"keys": [
        {**jwk, "kid": "k1", "alg": "RS256", "use": "sig"}]}).encode()})
    jwks = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=jwks.serve_forever, daemon=True).start()
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    srv = HttpServer([*packages, "--jwks-url", f"http://127.0.0.1:{jwks.server_port}/jwks",
                      "--audience", audience], tmp / "server.log", env=module_env, port=port)

    def token(kid: str = "k1", **claims: Any) -> str:
        now = int(time.time())
        base = {"aud": audience, "sub": "user-1", "exp": now + 300, "iat": now}
        payload = {k: v for k, v in {**base, **claims}.items() if v is not None}
        return jwt.encode(payload, key, algorithm="RS256", headers={"kid": kid})

    yield srv, token
    jwks.shutdown()
    assert srv.stop() == 0, srv.stderr()


def _challenge(srv: HttpServer, token: str) -> httpx2.Response:
    body, headers = modern("prompts/list")
    return post(srv.url, body, {**headers, "authorization": f"Bearer {token}"})


def test_jwt_kid_with_crlf_is_a_plain_401(oauth: tuple[HttpServer, Any]) -> None:
    srv, token = oauth
    assert _challenge(srv, token()).status_code == 200
    for kid in ("k2\r\nX-Injected: 1", 'k"2', "k\\2\n"):
        r = _challenge(srv, token(kid=kid))
        assert r.status_code == 401, (kid, r.status_code, r.text)
        challenge = r.headers["www-authenticate"]
        assert "X-Injected" not in challenge and "x-injected" not in r.headers
        assert 'error_description="token not verifiable"' in challenge, challenge
    log = srv.stderr()
    assert "Traceback" not in log
    assert "k2\\r\\nX-Injected" in log  # the detail is logged, escaped
    assert "\nX-Injected" not in log


def test_pyjwt_messages_with_quotes_stay_out_of_the_header(
        oauth: tuple[HttpServer, Any]) -> None:
    srv, token = oauth
    r = _challenge(srv, token(exp=None))  # PyJWT: Token is missing the "exp" claim
    assert r.status_code == 401
    challenge = r.headers["www-authenticate"]
    assert challenge.count('"') % 2 == 0 and '"exp"' not in challenge, challenge
    assert 'error_description="invalid token"' in challenge
