"""serve's log channel: one line on stderr per event, and the traceback of a bug.

stdout of ``promptops serve`` is protocol only, so everything a person should read goes
to stderr, prefixed ``promptops serve:``. Both transports, the front doors and the
follower's reporter write through these two functions; they sit at the bottom of serve's
layers (standard library only) so that any serve module may log without importing a
transport.
"""

from __future__ import annotations

import sys


def log(message: str) -> None:
    """One line on stderr, the log channel of ``promptops serve`` (stdout is protocol only)."""
    try:
        sys.stderr.write(f"promptops serve: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def log_bug() -> None:
    """The traceback of the exception being handled, on stderr: a bug to report.

    ``traceback`` (with ``textwrap``) is imported here, on the first bug, not at start.
    """
    try:
        import traceback

        trace = traceback.format_exc()
    except Exception:  # no memory left to import it, say: the news without the trace
        trace = "(no traceback available)"
    log("internal error:\n" + trace)
