"""The command line: option parsing only.

Each command is a thin typer function that imports its module from
``promptops.commands`` when it runs (so ``promptops --help`` stays quick) and returns
that module's exit code through the one error handler.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from promptops import __version__
from promptops.console import settings
from promptops.error_handler import run_guarded

app = typer.Typer(
    name="promptops",
    help="Prompts as code: lint, test, version, build and serve MCP prompt packages.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Color(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


class Format(StrEnum):
    text = "text"
    json = "json"


PathArg = Annotated[Path | None, typer.Argument(help="Package folder (default: nearest above .)")]
RefOpt = Annotated[
    str | None, typer.Option("--ref", help="Read this git revision, not the working tree")
]
FormatOpt = Annotated[Format, typer.Option("--format", help="Output format")]


def _done(code: int) -> None:
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"promptops {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version")
    ] = False,
    directory: Annotated[
        Path | None, typer.Option("-C", help="Run as if started in this folder")
    ] = None,
    color: Annotated[Color, typer.Option("--color", help="Colour output")] = Color.auto,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Only errors")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="More detail")] = 0,
) -> None:
    settings.color = color.value
    settings.verbosity = -1 if quiet else verbose
    if directory is not None:
        try:
            os.chdir(directory)
        except OSError as exc:
            typer.echo(f"error: cannot change to {directory}: {exc.strerror}", err=True)
            raise typer.Exit(2) from exc


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Folder to create the package in")] = Path("."),
    commit: Annotated[
        bool, typer.Option("--commit", help="Inside an existing repository, commit what init wrote")
    ] = False,
) -> None:
    """Scaffold a starter package (prompts, partials, tests, CI workflow)."""
    from promptops.commands import init as cmd

    _done(run_guarded(lambda: cmd.run(directory, commit)))


@app.command()
def render(
    prompt: Annotated[str, typer.Argument(help="Prompt name")],
    arg: Annotated[
        list[str] | None, typer.Option("-a", "--arg", help="Argument as name=value (repeatable)")
    ] = None,
    args_file: Annotated[
        Path | None, typer.Option("--args-file", help="JSON or YAML file of arguments")
    ] = None,
    path: Annotated[Path | None, typer.Option("--path", "-p", help="Package folder")] = None,
    ref: RefOpt = None,
    fmt: FormatOpt = Format.text,
    sample: Annotated[str | None, typer.Option(
        "--sample", help="Start from the prompt's named sample arguments", metavar="NAME")
    ] = None,
) -> None:
    """Render a prompt with arguments, exactly as `serve` would answer prompts/get."""
    from promptops.commands import render as cmd

    _done(run_guarded(lambda: cmd.run(prompt, arg or [], args_file, path, ref, fmt.value,
                                      sample)))


class ImportFormat(StrEnum):
    prompty = "prompty"
    dotprompt = "dotprompt"
    vscode = "vscode"
    claude = "claude"
    promptfoo = "promptfoo"
    langchain = "langchain"


class ExportTarget(StrEnum):
    vscode = "vscode"
    claude = "claude"
    prompty = "prompty"
    dotprompt = "dotprompt"


@app.command("import")
def import_(
    sources: Annotated[list[Path], typer.Argument(help="Prompt files of another tool",
                                                  metavar="SOURCE...")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Package folder to write or add to",
                                      metavar="DIR")] = Path("."),
    source_format: Annotated[
        ImportFormat | None, typer.Option("--from", help="Source format (default: detected)")
    ] = None,
    fmt: FormatOpt = Format.text,
) -> None:
    """Import prompt files (Prompty, Dotprompt, VS Code, Claude Code, promptfoo, LangChain)
    into a package; exit 1 when anything could not be expressed exactly (see CONVERSION.md)."""
    from promptops.commands import import_ as cmd

    _done(run_guarded(lambda: cmd.run(
        sources=sources, out=out,
        source_format=source_format.value if source_format else None, fmt=fmt.value)))


@app.command()
def export(
    target: Annotated[ExportTarget, typer.Option("--to", help="The tool to write files for")],
    prompts: Annotated[list[str] | None, typer.Argument(help="Prompts (default: all)",
                                                        metavar="[PROMPT]...")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="Folder to write into",
                                      metavar="DIR")] = Path("."),
    path: Annotated[Path | None, typer.Option("--path", "-p", help="Package folder")] = None,
    ref: RefOpt = None,
    fmt: FormatOpt = Format.text,
) -> None:
    """Write the package's prompts as files VS Code, Claude Code, Prompty or Dotprompt load;
    exit 1 when the target cannot express something (listed per file)."""
    from promptops.commands import export as cmd

    _done(run_guarded(lambda: cmd.run(target=target.value, out=out, prompts=prompts or [],
                                      path=path, ref=ref, fmt=fmt.value)))


@app.command("ls")
def ls_(path: PathArg = None, ref: RefOpt = None, fmt: FormatOpt = Format.text) -> None:
    """List the prompts of a package with their arguments."""
    from promptops.commands import ls as cmd

    _done(run_guarded(lambda: cmd.run(path, ref, fmt.value)))


@app.command()
def check(path: PathArg = None, ref: RefOpt = None) -> None:
    """Validate, lint and test a package: the gate a user and CI run."""
    from promptops.commands import check as cmd

    _done(run_guarded(lambda: cmd.run(path, ref)))


class LintFormat(StrEnum):
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


@app.command()
def lint(
    path: PathArg = None,
    ref: RefOpt = None,
    fmt: Annotated[LintFormat, typer.Option("--format", help="Output format")] = LintFormat.text,
    select: Annotated[
        list[str] | None, typer.Option("--select", help="Only these rules (codes/names)")
    ] = None,
    ignore: Annotated[list[str] | None, typer.Option("--ignore", help="Skip these rules")] = None,
    fix: Annotated[bool, typer.Option("--fix", help="Apply the safe fixes")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Show the fixes, write nothing")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too")] = False,
    base: Annotated[
        str | None, typer.Option("--base", help="Check versioning against this revision")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ignore cached results")] = False,
) -> None:
    """Check prompts for broken, unsafe and unreviewable content."""
    from promptops.commands import lint as cmd

    opts = cmd.Options(ref, fmt.value, select or [], ignore or [], fix, diff, strict, base,
                       not no_cache)
    _done(run_guarded(lambda: cmd.run(path, opts)))


@app.command()
def rules(rule: Annotated[str | None, typer.Argument(help="A rule code or name")] = None) -> None:
    """List the lint rules, or show one rule's documentation."""
    from promptops.commands import rules as cmd

    _done(run_guarded(lambda: cmd.run(rule)))


@app.command("test")
def test_(
    path: PathArg = None,
    ref: Annotated[
        str | None, typer.Option("--ref", help="Test this git revision (snapshots read from it)")
    ] = None,
    k: Annotated[
        list[str] | None,
        typer.Option("-k", help="Only cases whose prompt::name contains this (or glob)"),
    ] = None,
    update_snapshots: Annotated[
        bool, typer.Option("--update-snapshots", help="Write new/changed, remove obsolete")
    ] = False,
    junit_xml: Annotated[
        Path | None, typer.Option("--junit-xml", help="Write a JUnit XML report here")
    ] = None,
    fmt: FormatOpt = Format.text,
    jobs: Annotated[
        int | None, typer.Option("-j", "--jobs", help="Processes (default: auto)")
    ] = None,
) -> None:
    """Run the package's deterministic prompt tests (tests/**/*.test.yaml + smoke cases)."""
    from promptops.commands import test as cmd

    _done(run_guarded(
        lambda: cmd.run(path, ref, k or [], update_snapshots, junit_xml, fmt.value, jobs)
    ))


class SchemaKind(StrEnum):
    manifest = "manifest"
    prompt = "prompt"
    bundle = "bundle"
    test = "test"


@app.command()
def schema(kind: Annotated[SchemaKind, typer.Argument(help="Which file kind")]) -> None:
    """Print the JSON Schema of a file kind (for editors and tools)."""
    from promptops.commands import schema as cmd

    _done(run_guarded(lambda: cmd.run(kind.value)))


@app.command()
def build(
    path: PathArg = None,
    ref: Annotated[str, typer.Option("--ref", help="Commit to build")] = "HEAD",
    out: Annotated[Path, typer.Option("-o", "--output", help="Output folder")] = Path("dist"),
    worktree: Annotated[
        bool, typer.Option("--worktree", help="Build the working tree (marked dirty)")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite a differing bundle")] = False,
    no_lint: Annotated[bool, typer.Option("--no-lint", help="Build despite lint errors")] = False,
) -> None:
    """Build a commit into an immutable, reproducible bundle."""
    from promptops.commands import build as cmd

    _done(run_guarded(lambda: cmd.run(path, ref, out, worktree, force, no_lint)))


@app.command()
def verify(bundle: Annotated[Path, typer.Argument(help="Bundle file")]) -> None:
    """Recompute a bundle's digest and check its schema."""
    from promptops.commands import verify as cmd

    _done(run_guarded(lambda: cmd.run(bundle)))


@app.command()
def inspect(
    bundle: Annotated[Path, typer.Argument(help="Bundle file")], fmt: FormatOpt = Format.text
) -> None:
    """Summarise a bundle: name, version, digest, source and prompts."""
    from promptops.commands import inspect as cmd

    _done(run_guarded(lambda: cmd.run(bundle, fmt.value)))


class DiffFormat(StrEnum):
    markdown = "markdown"
    text = "text"
    json = "json"


class FailOn(StrEnum):
    breaking = "breaking"
    any = "any"


@app.command()
def diff(
    base: Annotated[str, typer.Argument(help="Base revision; A...B compares merge-base(A,B)..B")],
    head: Annotated[
        str | None, typer.Argument(help="Head revision (default: the working tree)")
    ] = None,
    path: Annotated[
        Path | None, typer.Argument(help="Package folder (default: every touched package)")
    ] = None,
    fmt: Annotated[DiffFormat, typer.Option("--format", help="Output format")] = DiffFormat.text,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to FILE")] = None,
    fail_on: Annotated[
        FailOn | None, typer.Option("--fail-on", help="Exit 1 on breaking or any changes")
    ] = None,
) -> None:
    """Review a change: breaking changes, source and rendered diffs of every prompt."""
    from promptops.commands import diff as cmd

    _done(run_guarded(lambda: cmd.run(base, head, path, fmt.value, output,
                                      fail_on.value if fail_on else None)))


@app.command("version")
def version_(path: PathArg = None, fmt: FormatOpt = Format.text) -> None:
    """Show the version, the latest release and the bump the changes since it need."""
    from promptops.commands import version as cmd

    _done(run_guarded(lambda: cmd.run(path, fmt.value)))


class BumpKind(StrEnum):
    major = "major"
    minor = "minor"
    patch = "patch"
    auto = "auto"


@app.command()
def bump(
    kind: Annotated[BumpKind, typer.Argument(help="Which part, or auto: what the changes need")],
    path: PathArg = None,
    pre: Annotated[
        str | None, typer.Option("--pre", help="Make it a pre-release, e.g. --pre rc")
    ] = None,
) -> None:
    """Set the version in promptops.yaml, leaving every other byte as it is."""
    from promptops.commands import bump as cmd

    _done(run_guarded(lambda: cmd.run(kind.value, path, pre)))


@app.command()
def release(path: PathArg = None) -> None:
    """Tag the committed HEAD as <name>@<version>, recording its bundle digest."""
    from promptops.commands import release as cmd

    _done(run_guarded(lambda: cmd.run(path)))


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def serve(ctx: typer.Context) -> None:
    """Serve packages to MCP clients over stdio (see `promptops serve --help`)."""
    from promptops.serve.main import serve_main

    _done(serve_main(list(ctx.args)))


def app_main(argv: list[str]) -> int:
    """Run the typer app without letting it call sys.exit, so tests can call it too."""
    try:
        code = app(args=argv, prog_name="promptops", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        return 130
    except Exception as exc:  # usage errors of the (vendored) click layer
        show = getattr(exc, "show", None)
        if show is None:
            raise
        show()
        return 2
    return code if isinstance(code, int) else 0
