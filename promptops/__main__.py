"""Entry point.

``promptops serve`` is spawned by MCP clients on every start, so it is dispatched
before typer (and rich, pydantic, GitPython) is imported: the serving path pays only
for the standard library, Jinja2 and what it actually needs.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptops.pipeline.build import Build
    from promptops.serve.transports.channels import ChannelApps
    from promptops.serve.transports.http import HttpApp


def _lint_gate(build: Build) -> str | None:
    """The gate `build` applies, for serve: a commit whose lint has errors is not served
    (imported on the first rebuild, never on serve's cold path)."""
    from promptops.lint.runner import refusal

    return refusal(build)


def create_app(argv: list[str] | None = None) -> HttpApp | ChannelApps:
    """The ASGI factory of the team server (``uvicorn --factory promptops.__main__:create_app``),
    with the same lint gate as ``promptops serve --http``."""
    from promptops.serve.http import create_app as http_app

    return http_app(argv, gate=_lint_gate)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["serve"] and not {"-h", "--help"} & set(args):
        from promptops.serve.main import serve_main

        try:
            return serve_main(args[1:], gate=_lint_gate)
        except (Exception, KeyboardInterrupt) as exc:  # imported only when one escapes
            from promptops.console import Console
            from promptops.error_handler import handle

            return handle(exc, Console(label="promptops serve: "))
    from promptops.cli import app_main

    return app_main(args)


if __name__ == "__main__":
    sys.exit(main())
