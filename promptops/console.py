"""Terminal output of one run: colour, quiet and verbose, passed to whoever prints.

A :class:`Console` is made by the command line from ``--color``, ``-q`` and ``-v`` and
handed to the command it runs (httpie's ``Environment`` shape): nothing here is
process-wide, so two in-process runs with different switches never see each other's
settings, and a test builds the console it wants instead of resetting a global.
Renderers that colour their text (lint's text format, the review) take one too; their
default is :data:`PLAIN_AUTO`, which colours only a terminal, as before.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import TextIO


class ColorMode(StrEnum):
    auto = "auto"  # colour a terminal, unless NO_COLOR is set
    always = "always"
    never = "never"


@dataclass(frozen=True)
class Console:
    """Where and how a run prints: stdout for results, stderr for progress and errors."""

    color: ColorMode = ColorMode.auto
    verbosity: int = 0  # -1 quiet, 0 normal, 1+ verbose

    @property
    def quiet(self) -> bool:
        return self.verbosity < 0

    @property
    def verbose(self) -> bool:
        return self.verbosity > 0

    def use_color(self, stream: TextIO | None = None) -> bool:
        """Whether text for ``stream`` (default stdout) gets ANSI colour."""
        if self.color is ColorMode.always:
            return True
        if self.color is ColorMode.never or os.environ.get("NO_COLOR"):
            return False
        stream = stream or sys.stdout
        return bool(getattr(stream, "isatty", lambda: False)())

    def style(self, text: str, *, fg: str | None = None, bold: bool | None = None) -> str:
        """``text`` coloured for stdout, or as it is when stdout gets no colour."""
        if not self.use_color():
            return text
        import typer

        return typer.style(text, fg=fg, bold=bold)

    def echo(self, text: str = "", *, err: bool = False) -> None:
        """A line on stdout (results), or on stderr with ``err``."""
        import typer

        typer.echo(text, err=err, color=self.use_color(sys.stderr if err else sys.stdout))

    def info(self, text: str) -> None:
        """Progress and hints on stderr, silenced by -q."""
        if not self.quiet:
            self.echo(text, err=True)


PLAIN_AUTO = Console()  # the default switches: colour for a terminal, normal verbosity
