"""Terminal output of one run: colour, quiet and verbose, passed to whoever prints.

A :class:`Console` is made by the command line from ``--color``, ``-q`` and ``-v`` and
handed to the command it runs (httpie's ``Environment`` shape): nothing here is
process-wide, so two in-process runs with different switches never see each other's
settings, and a test builds the console it wants instead of resetting a global.
Renderers that colour their text (lint's text format, the review) take one too; their
default is :data:`PLAIN_AUTO`, which colours only a terminal, as before.

Colour and progress follow the ecosystem's conventions, decided here once: ``--color``
wins; then ``NO_COLOR`` (no-color.org: set and non-empty, no colour), ``FORCE_COLOR``
(force-color.org; "0" and "false" do not force), ``CLICOLOR_FORCE`` (bixense.com/clicolors;
"0" does not force), ``CLICOLOR=0`` and ``TERM=dumb`` (no colour); otherwise colour
exactly when the stream is a terminal. Progress is for people watching a terminal only:
drawn with rich on stderr when it is a TTY, ``TERM`` is not ``dumb``, ``-q`` is not given
and no CI system is detected (forcing colour never forces animation into a log); in a CI
log a run prints one summary line instead (none with ``-q``). rich is
imported only when progress is really drawn, so commands that print none, and serve,
never load it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import TextIO

# Variables CI systems set (GitHub Actions sets CI=true and GITHUB_ACTIONS=true).
CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "TF_BUILD",
                "JENKINS_URL", "TEAMCITY_VERSION", "BITBUCKET_BUILD_NUMBER")
Tick = Callable[[int], None]


def _forced(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false")


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class ColorMode(StrEnum):
    auto = "auto"  # colour a terminal, unless NO_COLOR is set
    always = "always"
    never = "never"


@dataclass(frozen=True)
class Console:
    """Where and how a run prints: stdout for results, stderr for progress and errors."""

    color: ColorMode = ColorMode.auto
    verbosity: int = 0  # -1 quiet, 0 normal, 1+ verbose
    label: str = ""  # before every stderr line: a server's log ("promptops serve: ") is
    # read interleaved with other servers' in an MCP client's log

    @property
    def quiet(self) -> bool:
        return self.verbosity < 0

    @property
    def verbose(self) -> bool:
        return self.verbosity > 0

    def use_color(self, stream: TextIO | None = None) -> bool:
        """Whether text for ``stream`` (default stdout) gets ANSI colour (see the module)."""
        if self.color is ColorMode.always:
            return True
        if self.color is ColorMode.never or os.environ.get("NO_COLOR"):
            return False
        if _forced("FORCE_COLOR") or _forced("CLICOLOR_FORCE"):
            return True
        if os.environ.get("CLICOLOR") == "0" or os.environ.get("TERM") == "dumb":
            return False
        return _isatty(stream or sys.stdout)

    @property
    def in_ci(self) -> bool:
        """Whether a CI system runs this (its log is read by people, later)."""
        return any(os.environ.get(name) for name in CI_VARIABLES)

    @property
    def interactive(self) -> bool:
        """Whether progress may be drawn: a person is watching stderr, not a CI log."""
        if self.quiet or os.environ.get("TERM") == "dumb":
            return False
        return not self.in_ci and _isatty(sys.stderr)

    @contextmanager
    def progress(self, label: str, unit: str = "items") -> Iterator[Callable[[int], Tick]]:
        """``with console.progress("test", "cases") as start:`` then ``tick = start(total)``.

        On a terminal, a rich bar on stderr that disappears when done; in a CI log one
        summary line at the end instead (``test: 40 cases in 0.4 s``); piped, nothing.
        """
        began = time.monotonic()
        counts = {"total": 0, "done": 0}
        bar = None
        if self.interactive:
            from rich.console import Console as RichConsole
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            rich = RichConsole(file=sys.stderr, force_terminal=True, highlight=False,
                               no_color=not self.use_color(sys.stderr))
            bar = Progress(f"[bold]{label}[/]", BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), console=rich, transient=True)
        task = None

        def start(total: int) -> Tick:
            nonlocal task
            counts["total"] = total
            if bar is not None:
                task = bar.add_task(label, total=total)

            def tick(n: int) -> None:
                counts["done"] += n
                if bar is not None and task is not None:
                    bar.advance(task, n)

            return tick

        if bar is not None:
            bar.start()
        try:
            yield start
        finally:
            if bar is not None:
                bar.stop()
            elif not self.quiet and counts["total"] and self.in_ci:
                took = time.monotonic() - began
                self.echo(f"{label}: {counts['done']} {unit} in {took:.1f} s", err=True)

    @contextmanager
    def status(self, label: str) -> Iterator[None]:
        """A spinner on stderr while a step of unknown length runs (a terminal only)."""
        if not self.interactive:
            yield
            return
        from rich.console import Console as RichConsole

        rich = RichConsole(file=sys.stderr, force_terminal=True, highlight=False,
                           no_color=not self.use_color(sys.stderr))
        with rich.status(label):
            yield

    def style(self, text: str, *, fg: str | None = None, bold: bool | None = None) -> str:
        """``text`` coloured for stdout, or as it is when stdout gets no colour."""
        if not self.use_color():
            return text
        import typer

        return typer.style(text, fg=fg, bold=bold)

    def echo(self, text: str = "", *, err: bool = False) -> None:
        """A line on stdout (results), or on stderr with ``err``."""
        import typer

        if err and self.label:
            text = "\n".join(self.label + line for line in text.split("\n"))
        typer.echo(text, err=err, color=self.use_color(sys.stderr if err else sys.stdout))

    def info(self, text: str) -> None:
        """Progress and hints on stderr, silenced by -q."""
        if not self.quiet:
            self.echo(text, err=True)


PLAIN_AUTO = Console()  # the default switches: colour for a terminal, normal verbosity
