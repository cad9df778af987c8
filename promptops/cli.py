"""The command line: option parsing only.

Each command is a thin typer function that imports its module from
``promptops.commands`` when it runs (so ``promptops --help`` stays quick) and calls its
``run`` with keywords, handing it the run's :class:`~promptops.console.Console` (built
here from ``--color``, ``-q`` and ``-v``; nothing process-wide is set) and the enums
typer parsed. Its exit code goes through the one error handler. Help reads like a Unix
tool's: plain text, ``--ref REV``, bare flags (``docs/cli.md`` is checked against it).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from typer.core import TyperArgument, TyperCommand, TyperOption

from promptops import __version__
from promptops.commands.choices import (
    BumpKind,
    Client,
    DiffFormat,
    ExportTarget,
    FailOn,
    Format,
    ImportFormat,
    LintFormat,
    SchemaKind,
)
from promptops.console import ColorMode, Console
from promptops.error_handler import handle, run_guarded
from promptops.errors import ExitCode

F = TypeVar("F", bound=Callable[..., Any])

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


class _Command(TyperCommand):
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


def _command(name: str | None = None, *, context_settings: dict[str, object] | None = None,
             add_help_option: bool = True) -> Callable[[F], F]:
    return app.command(name, cls=_Command, context_settings=context_settings,
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


def _run(ctx: typer.Context, command: Callable[..., int], **params: object) -> None:
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


@_command()
def init(
    ctx: typer.Context,
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Folder to create the package in")
    ] = Path("."),
    commit: Annotated[
        bool, typer.Option("--commit", help="Inside an existing repository, commit what init wrote")
    ] = False,
) -> None:
    """Scaffold a starter package (prompts, partials, tests, CI workflow)."""
    from promptops.commands import init as cmd

    _run(ctx, cmd.run, directory=directory, commit=commit)


@_command()
def render(
    ctx: typer.Context,
    prompt: Annotated[str, typer.Argument(metavar="PROMPT", help="Prompt name")],
    arg: Annotated[
        list[str] | None,
        typer.Option("-a", "--arg", metavar="NAME=VALUE", help="An argument (repeatable)"),
    ] = None,
    args_file: Annotated[
        Path | None,
        typer.Option("--args-file", metavar="FILE", help="JSON or YAML file of arguments"),
    ] = None,
    path: Annotated[
        Path | None, typer.Option("--path", "-p", metavar="DIR", help="Package folder")
    ] = None,
    ref: RefOpt = None,
    fmt: FormatOpt = Format.text,
    sample: Annotated[str | None, typer.Option(
        "--sample", help="Start from the prompt's named sample arguments", metavar="NAME")
    ] = None,
) -> None:
    """Render a prompt with arguments, exactly as `serve` would answer prompts/get."""
    from promptops.commands import render as cmd

    _run(ctx, cmd.run, prompt=prompt, pairs=arg or [], args_file=args_file, path=path, ref=ref,
         fmt=fmt, sample=sample)


@_command("import")
def import_(
    ctx: typer.Context,
    sources: Annotated[list[Path], typer.Argument(
        metavar="PATH...", help="Prompt files or folders of another tool (folders are read "
        "recursively; - reads a list of paths from stdin)")],
    out: Annotated[Path, typer.Option("-o", "--out", metavar="DIR",
                                      help="Package folder to write or add to")] = Path("."),
    source_format: Annotated[
        ImportFormat | None,
        typer.Option("--from", metavar="FORMAT", help="Read every file as this format: "
                     "prompty, dotprompt, vscode, claude, promptfoo or langchain (default: "
                     "detected per file from its name and content)"),
    ] = None,
    commit: Annotated[bool, typer.Option(
        "--commit", help="Commit what is written (git init DIR when it is in no repository)")
    ] = False,
    fmt: FormatOpt = Format.text,
) -> None:
    """Import other tools' prompt files into a package; exit 1 if any is lossy or refused.

    Each file ends as imported exact, imported with its losses named, or refused with the
    reason; the package is written only as a whole that builds, or not at all.
    """
    from promptops.commands import import_ as cmd

    _run(ctx, cmd.run, sources=sources, out=out, source_format=source_format, commit=commit,
         fmt=fmt)


@_command()
def export(
    ctx: typer.Context,
    target: Annotated[ExportTarget, typer.Option(
        "--to", metavar="TOOL", help="Write for: vscode, claude, prompty or dotprompt")],
    prompts: Annotated[list[str] | None, typer.Argument(
        metavar="[PROMPT]...", help="Prompts to export (default: all)")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", metavar="DIR",
                                      help="Folder to write into")] = Path("."),
    path: Annotated[
        Path | None, typer.Option("--path", "-p", metavar="DIR", help="Package folder")
    ] = None,
    ref: RefOpt = None,
    fmt: FormatOpt = Format.text,
) -> None:
    """Write prompts as files other tools load; exit 1 if a target cannot express something."""
    from promptops.commands import export as cmd

    _run(ctx, cmd.run, target=target, out=out, prompts=prompts or [], path=path, ref=ref,
         fmt=fmt)


@_command("ls")
def ls_(ctx: typer.Context, path: PathArg = None, ref: RefOpt = None,
        fmt: FormatOpt = Format.text) -> None:
    """List the prompts of a package with their arguments."""
    from promptops.commands import ls as cmd

    _run(ctx, cmd.run, path=path, ref=ref, fmt=fmt)


@_command()
def check(ctx: typer.Context, path: PathArg = None, ref: RefOpt = None) -> None:
    """Validate, lint and test a package: the gate a user and CI run."""
    from promptops.commands import check as cmd

    _run(ctx, cmd.run, path=path, ref=ref)


@_command()
def lint(
    ctx: typer.Context,
    path: PathArg = None,
    ref: RefOpt = None,
    fmt: Annotated[
        LintFormat,
        typer.Option("--format", metavar="FORMAT", help="text, json, github or sarif"),
    ] = LintFormat.text,
    select: Annotated[
        list[str] | None,
        typer.Option("--select", metavar="CODE", help="Only this rule, by code or name "
                     "(repeatable)"),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", metavar="CODE", help="Skip this rule (repeatable)"),
    ] = None,
    fix: Annotated[bool, typer.Option(
        "--fix", help="Apply the fixes proven not to change any rendered output")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Show the fixes, write nothing")] = False,
    unsafe_fixes: Annotated[bool, typer.Option(
        "--unsafe-fixes", help="With --fix/--diff: also the fixes that change rendered output "
        "(the rendered difference is shown)")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too")] = False,
    base: Annotated[
        str | None,
        typer.Option("--base", metavar="REV", help="Check versioning against this revision"),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ignore cached results")] = False,
    watch: Annotated[bool, typer.Option(
        "--watch", help="Lint again after every save, until Ctrl-C")] = False,
) -> None:
    """Check prompts for broken, unsafe and unreviewable content."""
    from promptops.commands import lint as cmd

    opts = cmd.Options(ref=ref, fmt=fmt, select=tuple(select or ()), ignore=tuple(ignore or ()),
                       fix=fix, diff=diff, unsafe_fixes=unsafe_fixes, strict=strict, base=base,
                       use_cache=not no_cache)
    if watch:
        _run(ctx, cmd.watch, path=path, opts=opts, on_error=handle)
    else:
        _run(ctx, cmd.run, path=path, opts=opts)


@_command()
def rules(
    ctx: typer.Context,
    rule: Annotated[str | None, typer.Argument(metavar="CODE", help="A rule code or name")] = None,
) -> None:
    """List the lint rules, or show one rule's documentation."""
    from promptops.commands import rules as cmd

    _run(ctx, cmd.run, key=rule)


@_command("test")
def test_(
    ctx: typer.Context,
    path: PathArg = None,
    ref: Annotated[
        str | None,
        typer.Option("--ref", metavar="REV", help="Test this git revision (snapshots read from "
                     "it)"),
    ] = None,
    k: Annotated[
        list[str] | None,
        typer.Option("-k", metavar="PATTERN",
                     help="Only cases whose prompt::name contains this (or glob)"),
    ] = None,
    update_snapshots: Annotated[
        bool, typer.Option("--update-snapshots", help="Write new/changed, remove obsolete")
    ] = False,
    junit_xml: Annotated[
        Path | None,
        typer.Option("--junit-xml", metavar="FILE", help="Write a JUnit XML report here"),
    ] = None,
    fmt: FormatOpt = Format.text,
    jobs: Annotated[
        int | None, typer.Option("-j", "--jobs", metavar="N", help="Processes (default: auto)")
    ] = None,
    watch: Annotated[bool, typer.Option(
        "--watch", help="Run again after every save (the cases it touched), until Ctrl-C")
    ] = False,
) -> None:
    """Run the package's deterministic prompt tests (tests/**/*.test.yaml + smoke cases)."""
    from promptops.commands import test as cmd

    if watch:
        _run(ctx, cmd.watch, path=path, patterns=k or [], fmt=fmt, jobs=jobs, on_error=handle,
             fixed=ref is not None or update_snapshots or junit_xml is not None)
    else:
        _run(ctx, cmd.run, path=path, ref=ref, patterns=k or [], update=update_snapshots,
             junit=junit_xml, fmt=fmt, jobs=jobs)


@_command()
def schema(
    ctx: typer.Context,
    kind: Annotated[
        SchemaKind, typer.Argument(metavar="KIND", help="manifest, prompt, bundle or test")
    ],
) -> None:
    """Print the JSON Schema of a file kind (for editors and tools)."""
    from promptops.commands import schema as cmd

    _run(ctx, cmd.run, kind=kind)


@_command()
def install(
    ctx: typer.Context,
    client: Annotated[Client, typer.Argument(metavar="CLIENT",
                                             help="claude-desktop, claude-code, vscode, "
                                                  "cursor, gemini, goose, copilot or json")],
    path: PathArg = None,
    name: Annotated[
        str | None, typer.Option("--name", metavar="NAME",
                                 help="Server name (default: the package name)")
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option("--scope", metavar="SCOPE",
                     help="claude-code: local (default), user or project; vscode and cursor: "
                          "user (default) or workspace; gemini and copilot: user (default) "
                          "or project"),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", metavar="FILE",
                                  help="Write this file instead of the client's own")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a server of the same name")
    ] = False,
    print_only: Annotated[
        bool, typer.Option("--print", help="Show the change to the file; write nothing")
    ] = False,
    worktree: Annotated[
        bool, typer.Option("--worktree", help="Serve the working tree (serve --worktree)")
    ] = False,
) -> None:
    """Add this package to an MCP client's config (absolute paths, or portable ones in a
    project or workspace file a team commits)."""
    from promptops.commands import install as cmd

    _run(ctx, cmd.run, client=client, path=path, name=name, scope=scope,
         config=config, force=force, print_only=print_only, worktree=worktree)


@_command()
def build(
    ctx: typer.Context,
    path: PathArg = None,
    ref: Annotated[str, typer.Option("--ref", metavar="REV", help="Commit to build")] = "HEAD",
    out: Annotated[
        Path, typer.Option("-o", "--output", metavar="DIR", help="Output folder")
    ] = Path("dist"),
    worktree: Annotated[
        bool, typer.Option("--worktree", help="Build the working tree (marked dirty)")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite a differing bundle")] = False,
    no_lint: Annotated[bool, typer.Option("--no-lint", help="Build despite lint errors")] = False,
) -> None:
    """Build a commit into an immutable, reproducible bundle."""
    from promptops.commands import build as cmd

    _run(ctx, cmd.run, path=path, ref=ref, out=out, worktree=worktree, force=force,
         no_lint=no_lint)


@_command()
def verify(
    ctx: typer.Context,
    bundle: Annotated[Path, typer.Argument(metavar="FILE", help="Bundle file")],
) -> None:
    """Recompute a bundle's digest and check its schema."""
    from promptops.commands import verify as cmd

    _run(ctx, cmd.run, path=bundle)


@_command()
def inspect(
    ctx: typer.Context,
    bundle: Annotated[Path, typer.Argument(metavar="FILE", help="Bundle file")],
    fmt: FormatOpt = Format.text,
) -> None:
    """Summarise a bundle: name, version, digest, source and prompts."""
    from promptops.commands import inspect as cmd

    _run(ctx, cmd.run, path=bundle, fmt=fmt)


@_command()
def diff(
    ctx: typer.Context,
    base: Annotated[
        str,
        typer.Argument(metavar="BASE", help="Base revision; A...B compares merge-base(A,B)..B"),
    ],
    head: Annotated[
        str | None,
        typer.Argument(metavar="HEAD", help="Head revision (default: the working tree)"),
    ] = None,
    path: Annotated[
        Path | None,
        typer.Argument(metavar="DIR", help="Package folder (default: every touched package)"),
    ] = None,
    fmt: Annotated[
        DiffFormat, typer.Option("--format", metavar="FORMAT", help="text, markdown or json")
    ] = DiffFormat.text,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", metavar="FILE", help="Write to FILE")
    ] = None,
    fail_on: Annotated[
        FailOn | None,
        typer.Option("--fail-on", metavar="WHAT", help="Exit 1 on breaking or any changes"),
    ] = None,
    full_report: Annotated[
        Path | None,
        typer.Option("--full-report", metavar="FILE",
                     help="Also write the whole markdown report, never shortened, to FILE "
                          "(upload it as a CI artifact)"),
    ] = None,
    full_report_url: Annotated[
        str | None,
        typer.Option("--full-report-url", metavar="URL",
                     help="Where the full report will be (an artifact link): a shortened "
                          "comment links to it"),
    ] = None,
) -> None:
    """Review a change: breaking changes, source and rendered diffs of every prompt."""
    from promptops.commands import diff as cmd

    _run(ctx, cmd.run, base=base, head=head, path=path, fmt=fmt, output=output,
         fail_on=fail_on, full_report=full_report, full_report_url=full_report_url)


@_command("version")
def version_(ctx: typer.Context, path: PathArg = None, fmt: FormatOpt = Format.text) -> None:
    """Show the version, the latest release and the bump the changes since it need."""
    from promptops.commands import version as cmd

    _run(ctx, cmd.run, path=path, fmt=fmt)


@_command()
def bump(
    ctx: typer.Context,
    kind: Annotated[
        BumpKind,
        typer.Argument(metavar="PART",
                       help="major, minor, patch, or auto: what the changes need"),
    ],
    path: PathArg = None,
    pre: Annotated[
        str | None,
        typer.Option("--pre", metavar="ID", help="Make it a pre-release, e.g. --pre rc"),
    ] = None,
) -> None:
    """Set the version in promptops.yaml, leaving every other byte as it is."""
    from promptops.commands import bump as cmd

    _run(ctx, cmd.run, kind=kind, path=path, pre=pre)


@_command()
def release(ctx: typer.Context, path: PathArg = None) -> None:
    """Tag the committed HEAD as <name>@<version>, recording its bundle digest."""
    from promptops.commands import release as cmd

    _run(ctx, cmd.run, path=path)


@_command()
def ui(
    ctx: typer.Context,
    path: PathArg = None,
    worktree: Annotated[bool, typer.Option(
        "--worktree", help="Serve the working tree and reload the page on save")] = False,
    port: Annotated[int, typer.Option(
        "--port", metavar="N", help="Port on 127.0.0.1 (default 8765; 0: any free)")] = 8765,
    no_browser: Annotated[bool, typer.Option(
        "--no-browser", help="Print the URL, do not open a browser")] = False,
) -> None:
    """Browse, render and compare prompts in a local web page (read-only, 127.0.0.1)."""
    from promptops.commands import ui as cmd

    _run(ctx, cmd.run, path=path, worktree=worktree, port=port, no_browser=no_browser)


WhyOpt = Annotated[str, typer.Option("-m", "--message", metavar="WHY",
                                     help="Why: recorded in the channel's log")]
PushOpt = Annotated[
    str | None,
    typer.Option("--push", metavar="REMOTE",
                 help="Move the channel on REMOTE (atomic, refused if it moved meanwhile)"),
]


@_command()
def promote(
    ctx: typer.Context,
    spec: Annotated[str, typer.Argument(metavar="[PACKAGE@]VERSION", help="Release to promote")],
    to: Annotated[str, typer.Option("--to", metavar="CHANNEL", help="Channel to move")],
    why: WhyOpt = "",
    push: PushOpt = None,
    path: PathArg = None,
) -> None:
    """Move a channel to a release once it rebuilds and passes its gates and the policy."""
    from promptops.commands import promote as cmd

    _run(ctx, cmd.run, spec=spec, channel=to, why=why, push=push, path=path)


@_command()
def rollback(
    ctx: typer.Context,
    channel: Annotated[str, typer.Argument(metavar="CHANNEL",
                                           help="Channel ([PACKAGE/]CHANNEL) to roll back")],
    why: WhyOpt = "",
    push: PushOpt = None,
    path: PathArg = None,
) -> None:
    """Move a channel back to the version it had before its last promotion."""
    from promptops.commands import rollback as cmd

    _run(ctx, cmd.run, channel=channel, why=why, push=push, path=path)


@_command()
def channels(
    ctx: typer.Context,
    action: Annotated[str | None, typer.Argument(
        metavar="[log|fetch|push]", help="log CHANNEL, fetch REMOTE or push REMOTE")] = None,
    name: Annotated[str | None, typer.Argument(metavar="[CHANNEL|REMOTE]",
                                               help="Channel, or remote")] = None,
    fmt: FormatOpt = Format.text,
) -> None:
    """List channels (release, digest, age, who moved them); `log CHANNEL` shows history."""
    from promptops.commands import channels as cmd

    _run(ctx, cmd.run, action=action, channel=name, fmt=fmt, path=None)


@_command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def serve(ctx: typer.Context) -> None:
    """Serve packages to MCP clients over stdio (see `promptops serve --help`)."""
    from promptops.serve.main import serve_main

    raise typer.Exit(serve_main(list(ctx.args)))


@_command()
def usage(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(metavar="URL",
                                       help="The team server (serve --http), e.g. "
                                            "http://127.0.0.1:8080/mcp")],
    token_env: Annotated[
        str | None,
        typer.Option("--token-env", metavar="NAME",
                     help="Environment variable holding the bearer token"),
    ] = None,
    fmt: FormatOpt = Format.text,
) -> None:
    """Which prompts and versions a team server served, to whom, and which nobody fetched."""
    from promptops.commands import usage as cmd

    _run(ctx, cmd.run, url=url, token_env=token_env, fmt=fmt)


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
