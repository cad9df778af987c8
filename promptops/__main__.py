"""Entry point.

``promptops serve`` is spawned by MCP clients on every start, so it is dispatched
before typer (and rich, pydantic, GitPython) is imported: the serving path pays only
for the standard library, Jinja2 and what it actually needs.
"""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptops.lint.runner import FollowGate
    from promptops.pipeline.build import Build
    from promptops.serve.transports.channels import ChannelApps
    from promptops.serve.transports.http import HttpApp


class _LintGate:
    """The gate `build` applies, for serve: a commit whose lint has errors is not served.
    Lint is imported on the first rebuild, never on serve's cold path; from then on one
    :class:`~promptops.lint.runner.FollowGate` keeps the last lint record in memory, so a
    commit re-lints what it changed without a round trip through the lint cache."""

    def __init__(self) -> None:
        self._gate: FollowGate | None = None

    def __call__(self, build: Build) -> str | None:
        if self._gate is None:
            from promptops.lint.runner import FollowGate

            self._gate = FollowGate()
        return self._gate(build)

    def prepare(self, build: Build) -> None:
        """The package's last lint record read before any commit needs it (serve's warm-up)."""
        if self._gate is None:
            from promptops.lint.runner import FollowGate

            self._gate = FollowGate()
        self._gate.prepare(build)

    def flush(self) -> None:
        """The lint cache written (serve calls it once a commit reached its clients)."""
        if self._gate is not None:
            self._gate.flush()


def create_app(argv: list[str] | None = None) -> HttpApp | ChannelApps:
    """The ASGI factory of the team server (``uvicorn --factory promptops.__main__:create_app``),
    with the same lint gate as ``promptops serve --http``."""
    from promptops.serve.http import create_app as http_app

    return http_app(argv, gate=_LintGate())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["serve"] and not {"-h", "--help"} & set(args):
        from promptops.serve.main import serve_main

        try:
            return serve_main(args[1:], gate=_LintGate())
        except (Exception, KeyboardInterrupt) as exc:  # imported only when one escapes
            from promptops.console import Console
            from promptops.error_handler import handle

            return handle(exc, Console(label="promptops serve: "))
    from promptops.cli import app_main

    code = app_main(args)
    if argv is None:  # this process's own command line: it ends once we return
        _ending()
    return code


def _ending() -> None:
    """Leave every object alive now out of the interpreter's last collection.

    The process ends when :func:`main` returns, and the operating system takes its
    memory back at once; but the interpreter's finalization first runs a full cyclic
    collection, which walked every object a command left and freed the garbage its
    paused collector had let pile up (:mod:`promptops.pipeline.collector`): 0.25-0.35 s
    of one core after a 5,000-prompt ``diff``, the last stretch of the command, with
    nothing else left to run. ``gc.freeze`` puts them where no collection looks; what
    the exit still has to do is done anyway (buffers flushed, ``atexit`` handlers and
    ``weakref.finalize`` callbacks run, temporary files removed). Only for the process's
    own command line: a caller of ``main(argv)`` (the tests) keeps its collector whole.
    """
    gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
