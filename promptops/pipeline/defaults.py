"""The package format's defaults, once, as plain constants.

The model (:mod:`~.model`, pydantic) declares them as field defaults, and readers that
must not pay for pydantic use them directly: the renderer, on serve's cold path, for an
argument without ``maxLength``; lint's configuration, on its cached path, for a manifest
it reads leniently (importing the model there would cost ~65 ms of a 0.2 s run).
"""

from __future__ import annotations

MAX_LENGTH = 100_000  # an argument's maxLength
MAX_TEMPLATE_CHARS = 20_000  # lint.maxTemplateChars (PO508)
MAX_INCLUDE_DEPTH = 4  # lint.maxIncludeDepth (PO303)
