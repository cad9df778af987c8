"""`promptops ui`: a read-only web catalog and playground over the bundles `serve` serves.

Server-rendered HTML (:mod:`~.pages`) over a small ASGI app (:mod:`~.app`) with one
JavaScript file and one stylesheet shipped as package data (:mod:`~.static`): no CDN, no
framework, no build step. Every render goes through :class:`promptops.render.renderer.Renderer`,
the path `promptops render` and ``prompts/get`` take, so what the page shows is what a
client receives. Imported only by ``promptops ui`` (never on `serve`'s cold path).
"""

from __future__ import annotations
