"""A tracer's stamps around argument validation, so validation is a span of its own.

Serve's usage counters set a list here for a sampled request (``serve --http`` with
tracing on); otherwise it is None and the renderer records nothing. The renderer appends
the ns clock before and after its one ``bind`` of the arguments. A context variable, not a
renderer field: one renderer serves concurrent requests. Its own module, with nothing
imported, because the renderer reads it on serve's cold path (docs/observability.md).
"""

from __future__ import annotations

from contextvars import ContextVar

VALIDATION_STAMPS: ContextVar[list[int] | None] = ContextVar("validation_stamps", default=None)
