"""Terminal output settings shared by every command: colour, quiet and verbose."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, TextIO


@dataclass
class Settings:
    color: str = "auto"  # auto | always | never
    verbosity: int = 0  # -1 quiet, 0 normal, 1+ verbose


settings = Settings()


def use_color(stream: TextIO | None = None) -> bool:
    if settings.color == "always":
        return True
    if settings.color == "never" or os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


def style(text: str, **kwargs: Any) -> str:
    if not use_color():
        return text
    import typer

    return typer.style(text, **kwargs)


def echo(text: str = "", *, err: bool = False) -> None:
    import typer

    typer.echo(text, err=err, color=use_color(sys.stderr if err else sys.stdout))


def info(text: str) -> None:
    """Progress and hints on stderr, silenced by -q."""
    if settings.verbosity >= 0:
        echo(text, err=True)
