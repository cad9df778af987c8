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

import copy
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING

import typer
import typer.main

from promptops.cli import authoring, releasing
from promptops.cli.base import app
from promptops.errors import ExitCode

if TYPE_CHECKING:
    from typer._click import Command as ClickCommand  # the click typer vendors (0.27+)
    from typer.models import CommandInfo

__all__ = ["app", "app_main", "authoring", "releasing"]


class _Commands(MutableMapping[str, "ClickCommand"]):
    """The group's commands by name, each built from its typer function on first use.

    typer builds the click command of every registered function (signature, annotations,
    help) each time the app is called, though a run invokes one of them: that was about a
    third of ``promptops --version``'s instructions and is paid by every CLI start. The
    names and their order are known without building anything; help, completion and the
    "did you mean" hint read them here, and help builds every command as before."""

    def __init__(self, infos: list[CommandInfo]) -> None:
        self._infos = {
            info.name or typer.main.get_command_name(info.callback.__name__): info
            for info in infos if info.callback is not None
        }
        self._built: dict[str, ClickCommand] = {}

    def __getitem__(self, name: str) -> ClickCommand:
        command = self._built.get(name)
        if command is None:
            command = self._built[name] = typer.main.get_command_from_info(
                self._infos[name], pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode)
        return command

    def __setitem__(self, name: str, command: ClickCommand) -> None:
        self._infos.setdefault(name, typer.models.CommandInfo(name=name))
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._infos[name]
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)


def _group() -> ClickCommand:
    """The app's click group, as ``app()`` would build it, its commands built lazily."""
    shell = copy.copy(app)  # the callback and settings, no commands: typer builds none
    shell.registered_commands = []
    group = typer.main.get_command(shell)
    assert isinstance(group, typer.core.TyperGroup)
    group.commands = _Commands(app.registered_commands)
    return group


def app_main(argv: list[str]) -> int:
    """Run the typer app without letting it call sys.exit, so tests can call it too."""
    try:
        code = _group()(args=argv, prog_name="promptops", standalone_mode=False)
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
