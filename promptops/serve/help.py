"""`promptops serve --help`: one page for both transports, in every other command's style.

`serve` parses its own arguments with argparse (typer and click are too slow to import on
a path MCP clients spawn on every start), so argparse used to print its help: a style no
other command has, and for stdio only (``--http`` and its options were in a second parser
nobody could ask). This page is built from the one parser builder (serve/options.py),
asked for both transports, so an option added to either appears here, and laid out with
click's help formatter, as typer lays out the others.
Help may import click; serving never imports this module.
"""

from __future__ import annotations

import argparse

SUMMARY = "Serve prompt packages to MCP clients over stdio (default) or HTTP (--http)."
DESCRIPTION = (
    "stdio: newline-delimited JSON-RPC on stdin/stdout, logs on stderr; what Claude Desktop, "
    "VS Code and Cursor spawn. PATH mode serves each package at its repository's HEAD (or "
    "--ref) and follows HEAD; --worktree (alias --dev) serves the working tree and follows "
    "every save; --bundle serves verified bundle files that never change.",
    "HTTP (--http [HOST:]PORT): the team server, MCP Streamable HTTP at "
    "http://HOST:PORT/mcp (every revision), with tokens or OAuth, a remote --repo to follow, "
    "/metrics, /healthz and /readyz; needs the http extra (docs/http.md). See docs/serve.md.",
)


def _sentence(text: str) -> str:
    """Help text as the other commands write it: a capital first letter, unless the first
    word is a name (``ttlMs``)."""
    first = text.split(" ", 1)[0]
    return text[:1].upper() + text[1:] if first.islower() else text


def _rows(parser: argparse.ArgumentParser) -> dict[str, tuple[str, str]]:
    """Each option's first flag -> (the flags as shown, its help), in declaration order."""
    out: dict[str, tuple[str, str]] = {}
    for action in parser._actions:  # argparse has no public iterator over its options
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue
        flags = ", ".join(action.option_strings)
        if action.nargs != 0:
            flags += f" {action.metavar or action.dest.upper()}"
        text = (action.help or "").strip()
        out[action.option_strings[0]] = (flags, _sentence(text))
    return out


def text(width: int | None = None) -> str:
    """The help page (click's layout: usage, description, then option sections)."""
    import click

    from promptops.serve.options import parser

    stdio, http = _rows(parser()), _rows(parser(http=True))
    both = [k for k in stdio if k in http]
    # a shared option's help: the stdio parser's (--channel says more with --http)
    common = [stdio[k] for k in both]
    f = click.HelpFormatter(width=width)
    f.write_usage("promptops serve", "[OPTIONS] [PATH]...")
    with f.indentation():
        f.write_paragraph()
        f.write_text(SUMMARY)
        for paragraph in DESCRIPTION:
            f.write_paragraph()
            f.write_text(paragraph)
    with f.section("Arguments"):
        f.write_dl([("PATH", "Package folders (default: .)")])
    with f.section("Options"):
        f.write_dl([*common, ("-h, --help", "Show this message and exit.")])
    with f.section("stdio options"):
        f.write_dl([v for k, v in stdio.items() if k not in http])
    with f.section("HTTP options (with --http)"):
        f.write_dl([v for k, v in http.items() if k not in stdio])
    return f.getvalue()

