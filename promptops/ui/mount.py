"""The UI mounted in another server (``serve --http --ui``): over that server's bundles.

The server keeps serving what its follower builds; :func:`ui_app` gives it a
:class:`~promptops.ui.app.UiApp` whose site follows ``bundles()`` (checked by identity on
each request, so a reload is picked up with no hook into the follower). Authentication,
the Host/Origin guard and the caller's visibility are the server's: it authenticates the
request, then calls the app with the caller's patterns in ``scope["promptops.see"]``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from promptops.ui.app import UiApp
from promptops.ui.site import Site

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle
    from promptops.serve.usage import Usage


def ui_app(bundles: Callable[[], Sequence[Bundle]], usage: Usage | None = None) -> UiApp:
    """A UI over whatever ``bundles()`` returns now (no Host check: the server guards);
    with ``usage``, the server's own request counters, shown on each prompt's page."""
    current = [bundles()]
    site = Site(None, bundles=current[0])
    lock = threading.Lock()

    def refresh() -> None:
        latest = bundles()
        if latest is not current[0]:
            with lock:
                if latest is not current[0]:
                    current[0] = latest
                    site.swap(latest)

    return UiApp(site, hosts=None, refresh=refresh, usage=usage)
