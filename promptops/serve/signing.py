"""The server's secret key: what makes ``requestState`` and list cursors unforgeable.

A 2026-07-28 server is stateless: whatever it needs on a client's next request
(``requestState`` of a multi-round-trip ``prompts/get``, the ``nextCursor`` of a list)
travels through the client, which may change it. Both are therefore authenticated with
HMAC-SHA256 under one key, each with its own purpose label so that a value issued for
one use is never accepted for another, and checked with a constant-time comparison
before anything in them is parsed. That makes "not issued by this server" a fact.

The key is 32 random bytes per process by default, which is right for stdio (one
client, one process; a restarted server refuses the old process's states and cursors,
and the client starts over). Several processes that must accept each other's values -
replicas behind a load balancer of a later HTTP transport, or a stdio server restarted
in the middle of a conversation - share a key file (``--key-file`` or
``PROMPTOPS_SERVE_KEY_FILE``): at least 32 bytes, kept like any other secret. With a
shared key, cursors are also identical on every replica serving the same commit,
because a cursor is a function of (key, snapshot, position) only.
"""

from __future__ import annotations

import binascii
import os
from pathlib import Path

from promptops.errors import UsageError

KEY_FILE_ENV = "PROMPTOPS_SERVE_KEY_FILE"
MIN_KEY_BYTES = 32
TAG_BYTES = 16  # 128-bit tags: forging one takes 2**128 guesses; cursors stay short


class Signer:
    """HMAC-SHA256 tags under one key; ``purpose`` separates the uses."""

    def __init__(self, key: bytes) -> None:
        if len(key) < MIN_KEY_BYTES:
            raise UsageError(f"the serve key must hold at least {MIN_KEY_BYTES} bytes")
        self._key = key

    @classmethod
    def random(cls) -> Signer:
        return cls(os.urandom(MIN_KEY_BYTES))

    @classmethod
    def from_file(cls, path: Path) -> Signer:
        try:
            key = path.read_bytes().strip()
        except OSError as exc:
            raise UsageError(f"cannot read the serve key file {path}: {exc.strerror}") from exc
        if len(key) < MIN_KEY_BYTES:
            raise UsageError(
                f"the serve key file {path} holds {len(key)} bytes; at least {MIN_KEY_BYTES} "
                "are needed (for example: head -c 32 /dev/urandom | base64 > FILE)"
            )
        return cls(key)

    @classmethod
    def configured(cls, path: Path | None) -> Signer:
        """The key from ``path``, else from $PROMPTOPS_SERVE_KEY_FILE, else a random one."""
        chosen = path or (Path(os.environ[KEY_FILE_ENV]) if os.environ.get(KEY_FILE_ENV) else None)
        return cls.from_file(chosen) if chosen is not None else cls.random()

    def seal(self, purpose: bytes, payload: bytes) -> str:
        """``payload`` with its tag, as URL-safe text: ``<base64 payload>.<base64 tag>``."""
        return f"{_b64(payload)}.{_b64(self._tag(purpose, payload))}"

    def open(self, purpose: bytes, sealed: str) -> bytes | None:
        """The payload of a value :meth:`seal` made for ``purpose``; None for anything else."""
        body, dot, tag = sealed.partition(".")
        if not dot:
            return None
        try:
            payload, got = _unb64(body), _unb64(tag)
        except (binascii.Error, ValueError):
            return None
        import hmac  # first use only: a server that never issues a state or cursor skips it

        if not hmac.compare_digest(got, self._tag(purpose, payload)):
            return None
        return payload

    def _tag(self, purpose: bytes, payload: bytes) -> bytes:
        import hmac

        return hmac.digest(self._key, purpose + b"\0" + payload, "sha256")[:TAG_BYTES]


def _b64(data: bytes) -> str:
    import base64  # on first use: a stdio start that never issues a cursor skips it

    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    if not text.isascii():
        raise ValueError("not base64")
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
