"""Authentication and per-team visibility over HTTP: static tokens and OAuth (JWT).

Two packages are served together: `kit` (team A's) and `vault` (team B's). A caller's
token decides which exist for it; a hidden prompt is exactly as absent as one never
written, through every method and both eras.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import signal
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
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TOKENS = {"team-a": "token-for-team-a-0123456789", "team-b": "token-for-team-b-0123456789",
          "admin": "token-for-admin-0123456789"}
VAULT = {
    "promptops.yaml": "name: vault\nversion: 0.1.0\n",
    "prompts/vault_plan.prompt.yaml": (
        "description: The secret plan\narguments:\n  - name: codeword\n    required: true\n"
        "    enum: [alpha, bravo]\nmessages:\n  - role: user\n    text: 'plan {{ codeword }}'\n"
        "  - role: user\n    resource: {uri: 'promptops://vault/notes/vault.md', "
        "file: notes/vault.md}\n"),
    "notes/vault.md": "# Vault\n",
}


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _tokens_file(path: Path, tokens: dict[str, str]) -> Path:
    see = {"team-a": ["kit"], "team-b": ["vault"], "late": ["kit/code_*"]}
    entries = [{"name": n, "sha256": _digest(t), **({"see": see[n]} if n in see else {})}
               for n, t in tokens.items()]
    path.write_text(json.dumps({"tokens": entries,
                                "scopes": {"prompts.kit": ["kit"], "prompts.vault": ["vault"]}}))
    return path


@pytest.fixture(scope="module")
def packages(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    vault = tmp_path_factory.mktemp("vault") / "vault"
    make_repo(vault, VAULT)
    return [str(kit_dir), str(vault)]


@pytest.fixture(scope="module")
def server(packages: list[str], tmp_path_factory: pytest.TempPathFactory,
           module_env: dict[str, str]) -> Iterator[HttpServer]:
    tmp = tmp_path_factory.mktemp("auth")
    tokens = _tokens_file(tmp / "tokens.json", TOKENS)
    srv = HttpServer([*packages, "--tokens", str(tokens)], tmp / "server.log", env=module_env)
    srv.tokens_path = tokens  # type: ignore[attr-defined]
    yield srv
    assert srv.stop() == 0, srv.stderr()


def _auth(team: str) -> dict[str, str]:
    return {"authorization": f"Bearer {TOKENS[team]}"}


def test_no_token_is_401_with_www_authenticate(server: HttpServer) -> None:
    body, headers = modern("prompts/list")
    for extra in ({}, {"authorization": "Bearer wrong"}, {"authorization": "Basic abc"}):
        r = post(server.url, body, {**headers, **extra})
        assert r.status_code == 401, extra
        challenge = r.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge
        assert "/.well-known/oauth-protected-resource" in challenge
    assert 'error="invalid_token"' in post(server.url, body, {
        **headers, "authorization": "Bearer wrong"}).headers["www-authenticate"]
    # session era too
    r = post(server.url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}}})
    assert r.status_code == 401 and "www-authenticate" in r.headers


def test_protected_resource_metadata(server: HttpServer) -> None:
    for path in ("/.well-known/oauth-protected-resource",
                 "/.well-known/oauth-protected-resource/mcp"):
        doc = httpx2.get(server.base + path).json()
        assert doc["resource"] == server.url and doc["bearer_methods_supported"] == ["header"]


def _modern(server: HttpServer, team: str, method: str, params: dict[str, Any],
            name: str | None = None) -> dict[str, Any]:
    body, headers = modern(method, params, name=name)
    r = post(server.url, body, {**headers, **_auth(team)})
    out: dict[str, Any] = r.json()
    return out


def _legacy(server: HttpServer, sid: str, team: str, method: str,
            params: dict[str, Any]) -> dict[str, Any]:
    r = post(server.url, {"jsonrpc": "2.0", "id": 9, "method": method, "params": params},
             {**_auth(team), "mcp-session-id": sid})
    out: dict[str, Any] = r.json()
    return out


def _every_method(call: Any) -> dict[str, Any]:
    """What the caller learns of `vault` through each method."""
    listed = [p["name"] for p in call("prompts/list", {})["result"]["prompts"]]
    uris = [r["uri"] for r in call("resources/list", {})["result"]["resources"]]
    return {
        "listed": listed, "uris": uris,
        "get": call("prompts/get", {"name": "vault_plan", "arguments": {"codeword": "alpha"}}),
        "get_missing": call("prompts/get", {"name": "vault_plaz",
                                            "arguments": {"codeword": "alpha"}}),
        "complete": call("completion/complete", {
            "ref": {"type": "ref/prompt", "name": "vault_plan"},
            "argument": {"name": "codeword", "value": "a"}}),
        "read": call("resources/read", {"uri": "promptops://vault/notes/vault.md"}),
    }


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_team_b_prompts_are_invisible_to_team_a(server: HttpServer, era: str) -> None:
    def call_as(team: str) -> Any:
        if era == "2026-07-28":
            return lambda m, p: _modern(server, team, m, p, name=p.get("name") or p.get("uri"))
        sid = initialize(server.url, _auth(team))
        return lambda m, p: _legacy(server, sid, team, m, p)

    a, b = _every_method(call_as("team-a")), _every_method(call_as("team-b"))
    # team B sees its own prompt through every method: the probes can succeed
    assert b["listed"] == ["vault_plan"] and b["uris"] == ["promptops://vault/notes/vault.md"]
    assert "result" in b["get"] and b["complete"]["result"]["completion"]["values"] == ["alpha"]
    assert b["read"]["result"]["contents"][0]["text"] == "# Vault\n"
    # team A: nothing of it exists
    assert "vault_plan" not in a["listed"] and "code_review" in a["listed"]
    assert not [u for u in a["uris"] if "vault" in u]
    for probe in ("get", "complete", "read"):  # resource not found is -32002 before 2026
        want = -32002 if probe == "read" and era != "2026-07-28" else -32602
        assert a[probe]["error"]["code"] == want, probe
        assert "codeword" not in json.dumps(a[probe]) and "alpha" not in json.dumps(a[probe])
    # indistinguishable from a prompt that was never written
    assert a["get"]["error"]["message"].replace("vault_plan", "X") == \
        a["get_missing"]["error"]["message"].replace("vault_plaz", "X")
    assert b["listed"] != a["listed"]


def test_cacheable_results_are_private_when_filtered(server: HttpServer) -> None:
    body, headers = modern("prompts/list")
    r = post(server.url, body, {**headers, **_auth("team-a")})
    assert r.json()["result"]["cacheScope"] == "private"
    assert r.headers["cache-control"].startswith("private") and r.headers["vary"] == "Authorization"


def test_an_authenticated_list_is_private_in_body_and_headers(server: HttpServer) -> None:
    """Issue 24, item 13: a token that sees everything still gets a per-principal answer
    (the server decides per credential), so the body must not say `public` while the
    headers say `private`: both say private (docs/http.md, "Caching")."""
    body, headers = modern("prompts/list")
    r = post(server.url, body, {**headers, **_auth("admin")})
    assert r.status_code == 200
    assert {p["name"] for p in r.json()["result"]["prompts"]} >= {"vault_plan"}  # unfiltered
    assert r.json()["result"]["cacheScope"] == "private"
    assert r.headers["cache-control"].startswith("private")


def test_a_missing_token_gets_a_challenge_without_an_error_code(server: HttpServer) -> None:
    """RFC 6750 section 3.1: a request with no credentials gets no error code; a wrong one
    gets invalid_token (what docs/http.md says)."""
    body, headers = modern("prompts/list")
    missing = post(server.url, body, headers)
    assert missing.status_code == 401
    assert "error=" not in missing.headers["www-authenticate"]
    assert missing.headers["www-authenticate"].startswith("Bearer resource_metadata=")
    wrong = post(server.url, body, {**headers, "authorization": "Bearer wrong"})
    assert 'Bearer error="invalid_token"' in wrong.headers["www-authenticate"]
    doc = (Path(__file__).resolve().parents[4] / "docs" / "http.md").read_text("utf-8")
    assert ("Without a token (no `Authorization: Bearer` header): **401** with\n"
            "`WWW-Authenticate: Bearer resource_metadata=") in doc


def test_sessions_belong_to_their_principal(server: HttpServer) -> None:
    sid = initialize(server.url, _auth("team-a"))
    r = post(server.url, {"jsonrpc": "2.0", "id": 1, "method": "prompts/list"},
             {**_auth("team-b"), "mcp-session-id": sid})
    assert r.status_code == 404
    r = post(server.url, {"jsonrpc": "2.0", "id": 1, "method": "prompts/list"},
             {**_auth("team-a"), "mcp-session-id": sid})
    assert r.status_code == 200


def test_python_sdk_with_a_bearer_token(server: HttpServer) -> None:
    async def run(mode: str) -> list[str]:
        async with httpx2.AsyncClient(headers=_auth("team-b"), timeout=30) as http, Client(
                streamable_http_client(server.url, http_client=http), mode=mode,
                cache=None) as c:
            got = await c.get_prompt("vault_plan", {"codeword": "bravo"})
            assert got.messages[0].content.text == "plan bravo"  # type: ignore[union-attr]
            return [p.name for p in (await c.list_prompts()).prompts]

    assert asyncio.run(run("legacy")) == asyncio.run(run("auto")) == ["vault_plan"]


def test_tokens_reload_on_sighup(server: HttpServer) -> None:
    body, headers = modern("prompts/list")
    late = {"authorization": "Bearer a-token-added-later-0123"}
    assert post(server.url, body, {**headers, **late}).status_code == 401
    path: Path = server.tokens_path  # type: ignore[attr-defined]
    _tokens_file(path, {**TOKENS, "late": "a-token-added-later-0123"})
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5
    while post(server.url, body, {**headers, **late}).status_code != 200:
        assert time.monotonic() < deadline, server.stderr()
        time.sleep(0.05)
    names = [p["name"] for p in post(server.url, body, {**headers, **late}).json()[
        "result"]["prompts"]]
    assert names == ["code_review"]  # its patterns: kit/code_*
    path.write_text("tokens: [not, a, mapping")  # a broken file keeps the last good set
    server.proc.send_signal(signal.SIGHUP)
    time.sleep(0.3)
    assert post(server.url, body, {**headers, **late}).status_code == 200
    assert "not reloaded" in server.stderr()


# ---- OAuth 2.1 resource server ------------------------------------------------------------
ISSUER = "https://auth.example.com"


@pytest.fixture(scope="module")
def oauth(packages: list[str], tmp_path_factory: pytest.TempPathFactory,
          module_env: dict[str, str]) -> Iterator[tuple[HttpServer, Any]]:
    tmp = tmp_path_factory.mktemp("oauth")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    (tmp / "jwks.json").write_text(json.dumps({"keys": [{**jwk, "kid": "k1", "alg": "RS256",
                                                         "use": "sig"}]}))
    scopes = _tokens_file(tmp / "scopes.json", {})
    port = free_port()  # the audience names the port: picked first
    audience = f"http://127.0.0.1:{port}/mcp"
    srv = HttpServer([*packages, "--jwks-file", str(tmp / "jwks.json"), "--audience", audience,
                      "--issuer", ISSUER, "--require-scope", "prompts.read",
                      "--tokens", str(scopes)], tmp / "server.log", env=module_env, port=port)

    def token(**claims: Any) -> str:
        now = int(time.time())
        base = {"iss": ISSUER, "aud": audience, "sub": "user-1", "exp": now + 300, "iat": now,
                "scope": "prompts.read prompts.vault"}
        return jwt.encode({**base, **claims}, key, algorithm="RS256", headers={"kid": "k1"})

    yield srv, token
    assert srv.stop() == 0, srv.stderr()


def test_jwt_access_tokens(oauth: tuple[HttpServer, Any]) -> None:
    srv, token = oauth
    body, headers = modern("prompts/list")

    def status(tok: str) -> httpx2.Response:
        return post(srv.url, body, {**headers, "authorization": f"Bearer {tok}"})

    ok = status(token())
    assert ok.status_code == 200
    assert [p["name"] for p in ok.json()["result"]["prompts"]] == ["vault_plan"]  # scope map
    assert status(token(aud=[srv.url, "https://other"])).status_code == 200
    for bad in (token(exp=int(time.time()) - 3600), token(aud="https://other.example/mcp"),
                token(iss="https://evil.example.com"),
                jwt.encode({"sub": "x", "aud": srv.url, "iss": ISSUER,
                            "exp": int(time.time()) + 60}, "s" * 32, algorithm="HS256",
                           headers={"kid": "k1"})):
        r = status(bad)
        assert r.status_code == 401 and 'error="invalid_token"' in r.headers["www-authenticate"]
    r = status(token(scope="prompts.kit"))
    assert r.status_code == 403
    assert 'error="insufficient_scope"' in r.headers["www-authenticate"]
    assert 'scope="prompts.read"' in r.headers["www-authenticate"]
    doc = httpx2.get(srv.base + "/.well-known/oauth-protected-resource/mcp").json()
    assert doc["authorization_servers"] == [ISSUER] and doc["scopes_supported"] == [
        "prompts.read"]


def test_tokens_file_in_toml_and_its_errors(tmp_path: Path) -> None:
    from promptops.serve.auth import AccessFileError, StaticTokens

    good = tmp_path / "tokens.toml"
    good.write_text(f'[[tokens]]\nname = "a"\nsha256 = "{_digest("tok-a")}"\nsee = ["kit"]\n'
                    '[scopes]\n"prompts.kit" = ["kit"]\n')
    auth = StaticTokens(good)
    assert auth.authenticate("Bearer tok-a").see == ("kit",)
    for text, word in (('[[tokens]]\nname = "a"\nsha256 = "abc"\n', "sha256"),
                       ('[[tokens]]\nname = ""\n', "name"),
                       ('tokens = 3\n', "tokens"), ("[[tokens\n", "cannot be read"),
                       (f'[[tokens]]\nname = "a"\nsha256 = "{"0" * 64}"\nsee = "kit"\n', "see")):
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(AccessFileError, match=word):
            StaticTokens(bad)
