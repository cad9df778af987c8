"""The closed sets of values command-line options take, as enums commands receive.

The command line parses a value into one of these and the command gets the enum itself,
never its ``.value`` string checked a second time. Standard library only: ``promptops
--help`` imports this.
"""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    text = "text"
    json = "json"


class LintFormat(StrEnum):
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


class DiffFormat(StrEnum):
    markdown = "markdown"
    text = "text"
    json = "json"


class FailOn(StrEnum):
    breaking = "breaking"
    any = "any"


class SchemaKind(StrEnum):
    manifest = "manifest"
    prompt = "prompt"
    bundle = "bundle"
    test = "test"


class BumpKind(StrEnum):
    major = "major"
    minor = "minor"
    patch = "patch"
    auto = "auto"


class Client(StrEnum):
    """The MCP clients `promptops install` configures."""

    claude_desktop = "claude-desktop"
    claude_code = "claude-code"
    vscode = "vscode"
    cursor = "cursor"
    gemini = "gemini"
    goose = "goose"
    copilot = "copilot"
    json = "json"


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
