"""``signal`` as serve's start and the render watchdog use it, without its enums.

The functions and constants we call are those of the C module ``_signal`` that the
standard ``signal`` wraps; ``signal`` adds enums made at import (``IntEnum._convert_`` over
every SIG* name), ~3.6 M instructions of serve's cold start (~1.1% of the bare floor's),
for values we pass on as the same ints. Type checkers see ``signal`` itself. One home, so
the private module is named in one place (issue 26, session 15).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import signal as signal
else:
    import _signal as signal

__all__ = ["signal"]
