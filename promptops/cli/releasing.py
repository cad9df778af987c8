"""Commands that build, version, release and serve a package: build, verify, inspect,
diff, version, bump, release, ui, promote, rollback, channels, serve and usage."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from promptops.cli.base import FormatOpt, PathArg, command, run
from promptops.commands.choices import (
    BumpKind,
    DiffFormat,
    FailOn,
    Format,
)


@command()
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

    run(ctx, cmd.run, path=path, ref=ref, out=out, worktree=worktree, force=force,
         no_lint=no_lint)


@command()
def verify(
    ctx: typer.Context,
    bundle: Annotated[Path, typer.Argument(metavar="FILE", help="Bundle file")],
) -> None:
    """Recompute a bundle's digest and check its schema."""
    from promptops.commands import verify as cmd

    run(ctx, cmd.run, path=bundle)


@command()
def inspect(
    ctx: typer.Context,
    bundle: Annotated[Path, typer.Argument(metavar="FILE", help="Bundle file")],
    fmt: FormatOpt = Format.text,
) -> None:
    """Summarise a bundle: name, version, digest, source and prompts."""
    from promptops.commands import inspect as cmd

    run(ctx, cmd.run, path=bundle, fmt=fmt)


@command()
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

    run(ctx, cmd.run, base=base, head=head, path=path, fmt=fmt, output=output,
         fail_on=fail_on, full_report=full_report, full_report_url=full_report_url)


@command("version")
def version_(ctx: typer.Context, path: PathArg = None, fmt: FormatOpt = Format.text) -> None:
    """Show the version, the latest release and the bump the changes since it need."""
    from promptops.commands import version as cmd

    run(ctx, cmd.run, path=path, fmt=fmt)


@command()
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

    run(ctx, cmd.run, kind=kind, path=path, pre=pre)


@command()
def release(ctx: typer.Context, path: PathArg = None) -> None:
    """Tag the committed HEAD as <name>@<version>, recording its bundle digest."""
    from promptops.commands import release as cmd

    run(ctx, cmd.run, path=path)


@command()
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

    run(ctx, cmd.run, path=path, worktree=worktree, port=port, no_browser=no_browser)


WhyOpt = Annotated[str, typer.Option("-m", "--message", metavar="WHY",
                                     help="Why: recorded in the channel's log")]
PushOpt = Annotated[
    str | None,
    typer.Option("--push", metavar="REMOTE",
                 help="Move the channel on REMOTE (atomic, refused if it moved meanwhile)"),
]


@command()
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

    run(ctx, cmd.run, spec=spec, channel=to, why=why, push=push, path=path)


@command()
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

    run(ctx, cmd.run, channel=channel, why=why, push=push, path=path)


@command()
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

    run(ctx, cmd.run, action=action, channel=name, fmt=fmt, path=None)


@command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def serve(ctx: typer.Context) -> None:
    """Serve packages to MCP clients over stdio (see `promptops serve --help`)."""
    from promptops.serve.main import serve_main

    raise typer.Exit(serve_main(list(ctx.args)))


@command()
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

    run(ctx, cmd.run, url=url, token_env=token_env, fmt=fmt)
