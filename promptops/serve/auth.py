"""Who is calling ``promptops serve --http``, and which prompts exist for them.

Two kinds of credential, both carried as ``Authorization: Bearer <token>`` (never in a
query string), and both answering the same question: a :class:`Principal` with a name
(for logs and for binding sessions to their owner) and the visibility patterns that
decide what it may see.

* **Static tokens** (``--tokens FILE``): the file holds only SHA-256 digests of the
  tokens, never the tokens, so a leaked file or backup lets nobody in. A presented token
  is hashed and looked up by digest; the digest is then compared again with
  ``hmac.compare_digest`` so the comparison does not depend on where two digests first
  differ. The file is read again on SIGHUP (a file that no longer parses keeps the last
  good set, and says why on stderr).
* **OAuth 2.1 resource server** (``--jwks-url``/``--jwks-file`` with ``--audience``):
  JWT access tokens verified with PyJWT, a kept library, against the issuer's keys; the
  algorithm comes from the key, never from the token, and ``exp``, ``aud`` (our canonical
  resource URI, RFC 8707) and ``iss`` are required. Required scopes give 403 with
  ``insufficient_scope``; every other failure is 401 with ``WWW-Authenticate`` naming the
  Protected Resource Metadata (RFC 9728) the transport serves.

Visibility patterns (per token, or per OAuth scope) are ``PACKAGE`` or
``PACKAGE/PROMPT-GLOB`` (shell-style globs, ``*`` for everything); a prompt a caller
cannot see does not exist for that caller (see :mod:`promptops.serve.views`).
The file is TOML (``tomllib``: the standard library, so serve's import contracts keep
YAML off its path), or JSON when its name ends in ``.json``::

    [[tokens]]
    name = "team-a"
    sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    see = ["billing", "shared/review_*"]

    [scopes]           # OAuth mode: scope -> patterns (a token sees the union)
    "prompts.billing" = ["billing"]
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptops.errors import UsageError

if TYPE_CHECKING:
    import jwt

EVERYTHING: tuple[str, ...] = ("*",)


class Principal:
    """An authenticated caller: its name and what it may see (patterns, sorted)."""

    __slots__ = ("name", "see")

    def __init__(self, name: str, see: Sequence[str]) -> None:
        self.name = name
        self.see = tuple(sorted(set(see)))


ANONYMOUS = Principal("anonymous", EVERYTHING)


class AuthError(Exception):
    """A request that is not let in: the HTTP status and its ``WWW-Authenticate``.

    ``description`` goes into the header and the reply, so it is always one of our fixed
    texts; ``detail`` (the library's reason, which may quote the token's own ``kid`` or
    claims, CR/LF included) is only ever logged, escaped.
    """

    def __init__(self, status: int, error: str, description: str, detail: str = "") -> None:
        super().__init__(description)
        self.status, self.error, self.description = status, error, description
        self.detail = detail


class AccessFileError(UsageError):
    """A tokens file that cannot be used: named with the reason."""


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _bearer(header: str | None) -> str:
    if not header:
        raise AuthError(401, "", "authentication required")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError(401, "invalid_request", "use Authorization: Bearer <token>")
    return token.strip()


def _patterns(where: str, value: object) -> tuple[str, ...]:
    if value is None:
        return EVERYTHING
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise AccessFileError(f"{where}: `see` must be a list of PACKAGE or PACKAGE/GLOB strings")
    return tuple(value)


def read_access_file(path: Path) -> tuple[dict[str, Principal], dict[str, tuple[str, ...]]]:
    """The tokens (by digest) and the scope map of a tokens file."""
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
        data: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError is a ValueError
        raise AccessFileError(f"{path}: cannot be read: {exc}") from None
    if not isinstance(data, dict) or not set(data) <= {"tokens", "scopes"}:
        raise AccessFileError(f"{path}: expected a mapping with `tokens` and/or `scopes`")
    tokens: dict[str, Principal] = {}
    names: dict[str, Principal] = {}
    entries = data.get("tokens") or []
    if not isinstance(entries, list):
        raise AccessFileError(f"{path}: `tokens` must be a list of tables (TOML [[tokens]])")
    for i, entry in enumerate(entries):
        where = f"{path}: tokens[{i}]"
        if not isinstance(entry, dict) or not set(entry) <= {"name", "sha256", "see"}:
            raise AccessFileError(f"{where}: expected name, sha256 and see")
        name, digest = entry.get("name"), entry.get("sha256")
        if not isinstance(name, str) or not name:
            raise AccessFileError(f"{where}: `name` must be a non-empty string")
        if not isinstance(digest, str) or len(digest) != 64 or set(digest.lower()) - set(
                "0123456789abcdef"):
            raise AccessFileError(f"{where}: `sha256` must be the 64 hex digits of the "
                                  "token's SHA-256 (printf %s TOKEN | sha256sum)")
        principal = Principal(name, _patterns(where, entry.get("see")))
        other = names.setdefault(name, principal)
        if other.see != principal.see:
            # A session is bound to its owner's name: two grants under one name would let
            # the narrower token use the wider one's session (issue 23, defect 10).
            raise AccessFileError(f"{where}: the name {name!r} is already given to a token "
                                  "with another `see`; give each grant its own name")
        tokens[digest.lower()] = principal
    scopes: dict[str, tuple[str, ...]] = {}
    raw_scopes = data.get("scopes") or {}
    if not isinstance(raw_scopes, dict):
        raise AccessFileError(f"{path}: `scopes` must map scope names to pattern lists")
    for scope, see in raw_scopes.items():
        scopes[str(scope)] = _patterns(f"{path}: scopes[{scope!r}]", see)
    return tokens, scopes


def _by_digest(path: Path) -> dict[str, tuple[str, Principal]]:
    tokens, _ = read_access_file(path)
    return {d: (d, p) for d, p in tokens.items()}


class StaticTokens:
    """Bearer tokens checked against the digests of a tokens file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tokens = _by_digest(path)

    def reload(self) -> str:
        """Read the file again (SIGHUP); a broken file keeps the last good set."""
        try:
            self._tokens = _by_digest(self.path)
        except AccessFileError as exc:
            return f"tokens not reloaded, the last good set stays: {exc}"
        return f"tokens reloaded from {self.path}: {len(self._tokens)} token(s)"

    def grants(self) -> dict[str, tuple[str, ...]]:
        """Each token name's current patterns (one per name: the file is refused otherwise)."""
        return {p.name: p.see for _, p in self._tokens.values()}

    def authenticate(self, header: str | None) -> Principal:
        digest = token_digest(_bearer(header))
        found = self._tokens.get(digest)
        # The look-up is by a digest the caller cannot steer; the final check is constant-time.
        if found is None or not hmac.compare_digest(found[0], digest):
            raise AuthError(401, "invalid_token", "unknown token")
        return found[1]


class JwtTokens:
    """OAuth 2.1 resource server: JWT access tokens checked with PyJWT."""

    def __init__(self, *, audience: str, issuer: str | None, jwks_url: str | None,
                 jwks_file: Path | None, required_scopes: Sequence[str],
                 scope_map: dict[str, tuple[str, ...]], leeway_s: int = 30) -> None:
        import jwt  # the http extra (PyJWT[crypto]); never imported on the stdio path

        self._jwt = jwt
        self.audience, self.issuer = audience, issuer
        self.required = tuple(required_scopes)
        self.scope_map = scope_map
        self.leeway = leeway_s
        self._client = jwt.PyJWKClient(jwks_url, cache_jwk_set=True, lifespan=300) \
            if jwks_url else None
        self._file = jwks_file
        self._keys: dict[str, jwt.PyJWK] = {}
        if jwks_file is not None:
            self.reload()

    def reload(self) -> str:
        if self._file is None:
            return "JWKS is fetched from its URL (cached for 5 minutes)"
        try:
            jwks = self._jwt.PyJWKSet.from_json(self._file.read_text(encoding="utf-8"))
        except (OSError, ValueError, self._jwt.PyJWKSetError) as exc:
            return f"JWKS not reloaded, the last good keys stay: {self._file}: {exc}"
        self._keys = {k.key_id: k for k in jwks.keys if k.key_id}
        return f"JWKS reloaded from {self._file}: {len(self._keys)} key(s)"

    def _key(self, token: str) -> jwt.PyJWK:
        jwt = self._jwt
        try:
            if self._client is not None:  # blocking urllib: the transport calls us in a thread
                return self._client.get_signing_key_from_jwt(token)
            kid = jwt.get_unverified_header(token).get("kid")
        except Exception as exc:  # PyJWT's errors, and whatever a hostile header trips
            raise AuthError(401, "invalid_token", "token not verifiable", str(exc)) from None
        key = self._keys.get(kid) if isinstance(kid, str) else None
        if key is None:
            raise AuthError(401, "invalid_token", "token signed with an unknown key")
        return key

    def authenticate(self, header: str | None) -> Principal:
        jwt = self._jwt
        token = _bearer(header)
        key = self._key(token)
        try:
            claims = jwt.decode(token, key.key, algorithms=[key.algorithm_name],
                                audience=self.audience, issuer=self.issuer,
                                options={"require": ["exp", "aud", "sub"]}, leeway=self.leeway)
        except Exception as exc:  # jwt.InvalidTokenError and any surprise: never a 500
            raise AuthError(401, "invalid_token", "invalid token", str(exc)) from None
        raw = claims.get("scope", claims.get("scp", ""))
        scopes = set(raw.split() if isinstance(raw, str) else raw if isinstance(raw, list) else ())
        missing = [s for s in self.required if s not in scopes]
        if missing:
            raise AuthError(403, "insufficient_scope", f"missing scope(s): {' '.join(missing)}")
        if self.scope_map:
            see = [p for s in sorted(scopes) for p in self.scope_map.get(s, ())]
        else:
            see = list(EVERYTHING)
        return Principal(f"sub:{claims['sub']}", see)


def _quoted(text: str) -> str:
    """``text`` as an RFC 9110 quoted-string: visible ASCII only, ``"`` and ``\\`` escaped."""
    clean = "".join(c if " " <= c <= "~" else "?" for c in text)
    return '"' + clean.replace("\\", "\\\\").replace('"', '\\"') + '"'


def www_authenticate(err: AuthError, metadata_url: str, scopes: Sequence[str]) -> str:
    parts = [f"resource_metadata={_quoted(metadata_url)}"]
    if err.error:
        parts.insert(0, f"error={_quoted(err.error)}")
        parts.append(f"error_description={_quoted(err.description)}")
    if scopes:
        parts.append(f"scope={_quoted(' '.join(scopes))}")
    return "Bearer " + ", ".join(parts)


def resource_metadata(resource: str, issuer: str | None, scopes: Sequence[str]) -> bytes:
    """RFC 9728 Protected Resource Metadata for our MCP endpoint."""
    doc: dict[str, str | list[str]] = {"resource": resource,
                                       "bearer_methods_supported": ["header"]}
    if issuer:
        doc["authorization_servers"] = [issuer]
    if scopes:
        doc["scopes_supported"] = list(scopes)
    return json.dumps(doc).encode()
