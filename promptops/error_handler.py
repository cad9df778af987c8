"""One place that turns failures into exit codes.

Expected errors (a PromptopsError) print their message and exit with their code (1
problems, 2 usage/configuration); anything else is a bug: exit 3 with a short
"please report" line, and the traceback only with -v. Ctrl-C exits 130.

Two kinds of failure are not bugs even when they arrive as a plain exception: a
repository git cannot read (a missing or corrupt object, met by GitPython or gitdb
somewhere the code did not wrap it) is exit 2 with git's own words, and the file
system refusing a write or read (no space, read-only, quota, an I/O error) is exit 1
with the path.
"""

from __future__ import annotations

import errno
import sys
import traceback
from collections.abc import Callable

from promptops import __version__
from promptops.console import Console
from promptops.errors import ExitCode, PackageError, PromptopsError


def run_guarded(fn: Callable[[], int], console: Console) -> int:
    """``fn()``'s exit code, or the one its failure means (printed on ``console``)."""
    try:
        return fn()
    except (Exception, KeyboardInterrupt) as exc:
        return handle(exc, console)


def handle(exc: BaseException, console: Console) -> int:
    """The exit code ``exc`` means, its message printed on ``console``'s stderr.

    The one mapping of failures to exit codes: every command reaches it through
    :func:`run_guarded`; ``promptops serve`` (dispatched before typer, for its cold
    start) only when something escapes it, so its cold path imports none of this.
    """
    echo, style = console.echo, console.style
    if isinstance(exc, KeyboardInterrupt):
        echo("interrupted", err=True)
        return ExitCode.INTERRUPTED
    if isinstance(exc, PackageError):
        for p in exc.problems:
            echo(f"{style(f'{p.path}:{p.line}:{p.col}', bold=True)}: {p.message}", err=True)
        n = len(exc.problems)
        echo(f"{n} problem{'s' if n != 1 else ''} found", err=True)
        return exc.exit_code
    if isinstance(exc, PromptopsError):
        echo(f"{style('error', fg='red', bold=True)}: {exc}", err=True)
        return exc.exit_code
    if isinstance(exc, BrokenPipeError):
        return ExitCode.FAILED
    if isinstance(exc, OSError) and exc.errno in _IO_ERRORS:
        where = f" {exc.filename}" if exc.filename else ""
        echo(f"{style('error', fg='red', bold=True)}: I/O error on{where}: {exc.strerror}",
             err=True)
        return ExitCode.FAILED
    if not isinstance(exc, OSError):
        from promptops.git.history import DAMAGED, from_git, git_words

        if from_git(exc):
            echo(f"{style('error', fg='red', bold=True)}: cannot read the git repository: "
                 f"{git_words(exc)} ({DAMAGED})", err=True)
            return ExitCode.USAGE
    return _bug(exc, console)


_IO_ERRORS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EIO, errno.EACCES,
                        errno.EPERM, errno.EFBIG, errno.ENAMETOOLONG})


def _bug(exc: BaseException, console: Console) -> int:
    console.echo(
        f"{console.style('internal error', fg='red', bold=True)}: {type(exc).__name__}: {exc}\n"
        f"This is a bug in promptops {__version__}; please report it with the command you "
        "ran (run again with -v for the traceback).",
        err=True,
    )
    if console.verbose:
        traceback.print_exception(exc, file=sys.stderr)
    return ExitCode.BUG
