"""The command line: option parsing only.

Each command is a thin typer function that imports its module from
``promptops.commands`` when it runs (so ``promptops --help`` stays quick) and calls its
``run`` with keywords, handing it the run's :class:`~promptops.console.Console` (built
from ``--color``, ``-q`` and ``-v``; nothing process-wide is set) and the enums typer
parsed. Its exit code goes through the one error handler. Help reads like a Unix tool's:
plain text, ``--ref REV``, bare flags (``docs/cli.md`` is checked against it).

The commands live in two modules by audience (:mod:`.authoring`, :mod:`.releasing`);
importing them registers them on :data:`app` in the order help lists them.
"""

from __future__ import annotations

import typer

from promptops.cli import authoring, releasing
from promptops.cli.base import app
from promptops.errors import ExitCode

__all__ = ["app", "app_main", "authoring", "releasing"]


def app_main(argv: list[str]) -> int:
    """Run the typer app without letting it call sys.exit, so tests can call it too."""
    try:
        code = app(args=argv, prog_name="promptops", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):  # ^C while typer parses, before any command
        return ExitCode.INTERRUPTED
    except Exception as exc:  # usage errors of the (vendored) click layer
        show = getattr(exc, "show", None)
        if show is None:
            raise
        show()
        return ExitCode.USAGE
    return code if isinstance(code, int) else ExitCode.OK
