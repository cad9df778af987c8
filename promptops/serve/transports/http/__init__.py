"""The Streamable HTTP transport (a package from here on: this step only moves the files,
so that ``git log --follow`` keeps their history; the next one splits them)."""

from __future__ import annotations

from promptops.serve.transports.http import app as _app

globals().update({k: v for k, v in vars(_app).items() if not k.startswith("__")})
