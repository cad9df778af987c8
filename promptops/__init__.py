"""promptops: prompts as code for the Model Context Protocol.

Kept import-free on purpose: ``promptops serve`` imports this package on its cold
path, so anything heavy here would be paid by every MCP client start.
"""

from __future__ import annotations

__version__ = "0.1.0"
