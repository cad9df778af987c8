"""The whole protocol for one session in process: a server over its own catalog.

For tests and for programs that embed promptops' server and hand it parsed messages
themselves. It is what ``promptops serve`` wires for its one stdio session, without the
transport: no bytes, no threads, no signals. Not imported by ``promptops serve``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from promptops.serve.catalog import Catalog, Snapshot
from promptops.serve.jsonrpc import BATCH_SECONDS, Json, Outbound, RpcError, Send
from promptops.serve.methods import Settings
from promptops.serve.server import Server
from promptops.serve.signing import Signer

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle


class Connection:
    """One session over its own catalog and server: the whole protocol in process."""

    def __init__(self, bundles: Sequence[Bundle], *, send: Send, page_size: int = 100,
                 ttl_ms: int = 60_000, signer: Signer | None = None,
                 batch_seconds: float = BATCH_SECONDS) -> None:
        self.server = Server(Catalog(bundles), Settings(
            page_size=page_size, ttl_ms=ttl_ms, signer=signer, batch_seconds=batch_seconds))
        self.session = self.server.open(send)

    @property
    def snapshot(self) -> Snapshot:
        return self.server.catalog.snapshot

    def handle(self, message: object) -> list[Outbound]:
        return self.server.handle(self.session, message)

    def reject(self, code: int, message: str) -> Json:
        return self.server.reject(self.session, RpcError(code, message))

    def swap(self, bundles: Sequence[Bundle]) -> bool:
        return self.server.swap(bundles)

    def log(self, level: str, message: str) -> None:
        self.server.log(level, message)

    def close(self) -> list[Json]:
        return self.server.close(self.session)
