"""The command line's shared pieces: the typer app, the help format, the one way a command runs.

Every command module in this package registers on :data:`app` with :func:`command`, and
runs its ``promptops.commands`` module through :func:`run` (the one error handler). The
global options (``--color``, ``-q``, ``-v``, ``-C``) are parsed here into the run's
:class:`~promptops.console.Console`; nothing process-wide is set.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from typer.core import TyperArgument, TyperCommand, TyperOption

from promptops import __version__
from promptops.commands.choices import (
    Format,
)
from promptops.console import ColorMode, Console
from promptops.error_handler import run_guarded

F = TypeVar("F", bound=Callable[..., object])

if TYPE_CHECKING:
    from typer._click import Context, HelpFormatter  # the click typer vendors (0.27+)

app = typer.Typer(
    name="promptops",
    help="Prompts as code: lint, test, version, build and serve MCP prompt packages.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion: bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Command(TyperCommand):
    """A command whose help names each argument by its metavar alone, as argparse and
    click do: ``Usage: promptops diff [OPTIONS] BASE [HEAD] [DIR]`` and ``DIR  Package
    folder``, where typer 0.27+ writes ``{BASE}`` and ``DIR <path>``."""

    def _arguments(self, ctx: Context) -> list[TyperArgument]:
        return [p for p in self.get_params(ctx)
                if isinstance(p, TyperArgument) and not p.hidden]

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for arg in self._arguments(ctx):
            name = arg.metavar or (arg.name or "").upper()
            pieces.append(name if arg.required else f"[{name}]")
        return pieces

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        args = [(a.metavar or (a.name or "").upper(), a.help or "")
                for a in self._arguments(ctx)]
        opts = [rv for p in self.get_params(ctx) if isinstance(p, TyperOption)
                if (rv := p.get_help_record(ctx)) is not None]
        for title, rows in (("Arguments", args), ("Options", opts)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def command(name: str | None = None, *, context_settings: dict[str, object] | None = None,
             add_help_option: bool = True) -> Callable[[F], F]:
    return app.command(name, cls=Command, context_settings=context_settings,
                       add_help_option=add_help_option)


PathArg = Annotated[
    Path | None, typer.Argument(metavar="DIR", help="Package folder (default: nearest above .)")
]
RefOpt = Annotated[
    str | None,
    typer.Option("--ref", metavar="REV", help="Read this git revision, not the working tree"),
]
FormatOpt = Annotated[Format, typer.Option("--format", metavar="FORMAT",
                                           help="Output format: text or json")]


def run(ctx: typer.Context, command: Callable[..., int], **params: object) -> None:
    """Run ``command(console=..., **params)`` under the one error handler; exit with its code."""
    console = ctx.obj if isinstance(ctx.obj, Console) else Console()
    raise typer.Exit(run_guarded(lambda: command(console=console, **params), console))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"promptops {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version")
    ] = False,
    directory: Annotated[
        Path | None, typer.Option("-C", metavar="DIR", help="Run as if started in this folder")
    ] = None,
    color: Annotated[
        ColorMode, typer.Option("--color", metavar="WHEN", help="Colour: auto, always or never")
    ] = ColorMode.auto,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Only errors")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="More detail")] = 0,
) -> None:
    ctx.obj = Console(color=color, verbosity=-1 if quiet else verbose)
    if directory is not None:
        try:
            os.chdir(directory)
        except OSError as exc:
            typer.echo(f"error: cannot change to {directory}: {exc.strerror}", err=True)
            raise typer.Exit(2) from exc
