"""One place that turns failures into exit codes.

Expected errors (a PromptopsError) print their message and exit with their code (1
problems, 2 usage/configuration); anything else is a bug: exit 3 with a short
"please report" line, and the traceback only with -v. Ctrl-C exits 130.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable

from promptops import __version__
from promptops.console import echo, settings, style
from promptops.errors import PackageError, PromptopsError


def run_guarded(fn: Callable[[], int]) -> int:
    try:
        return fn()
    except KeyboardInterrupt:
        echo("interrupted", err=True)
        return 130
    except PackageError as exc:
        for p in exc.problems:
            echo(f"{style(f'{p.path}:{p.line}:{p.col}', bold=True)}: {p.message}", err=True)
        n = len(exc.problems)
        echo(f"{n} problem{'s' if n != 1 else ''} found", err=True)
        return exc.exit_code
    except PromptopsError as exc:
        echo(f"{style('error', fg='red', bold=True)}: {exc}", err=True)
        return exc.exit_code
    except BrokenPipeError:
        return 1
    except Exception as exc:
        echo(
            f"{style('internal error', fg='red', bold=True)}: {type(exc).__name__}: {exc}\n"
            f"This is a bug in promptops {__version__}; please report it with the command you "
            "ran (run again with -v for the traceback).",
            err=True,
        )
        if settings.verbosity > 0:
            traceback.print_exc(file=sys.stderr)
        return 3
