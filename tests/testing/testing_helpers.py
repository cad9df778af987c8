"""Fixtures for the `promptops test` tests: a small real package, the CLI, JUnit validation.

JUnit reports are validated with lxml against ``junit-jenkins.xsd`` (next to this file),
a faithful copy of the jenkins-junit.xsd that JUnit 5 itself validates its reports with.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from helpers.repo import run_cli, write_files
from lxml import etree

HERE = Path(__file__).resolve().parent

MANIFEST = "name: greetings\nversion: 1.0.0\n"
GREET = """\
description: Greets someone
arguments:
  - name: who
    required: true
    examples: [Ada]
  - name: tone
    enum: [warm, cold]
    default: warm
messages:
  - role: assistant
    text: I greet people politely.
  - role: user
    text: "Say hello to {{ who }} in a {{ tone }} way."
"""
# Renders fine for its smoke case, fails while rendering (-32603) for who="zero".
FRAGILE = """\
arguments:
  - name: who
    required: true
    examples: [Ada]
messages:
  - role: user
    text: "{{ 10 // (0 if who == 'zero' else 1) }} for {{ who }}"
"""


def package(root: Path, tests: dict[str, str] | None = None, **extra: str) -> Path:
    """A package with prompts `greet` and `fragile` and the given test files (path -> YAML)."""
    files = {"promptops.yaml": MANIFEST, "prompts/greet.prompt.yaml": GREET,
             "prompts/fragile.prompt.yaml": FRAGILE}
    files.update({k: textwrap.dedent(v) for k, v in (tests or {}).items()})
    files.update(extra)
    write_files(root, files)
    return root


def promptops(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, in-process (``helpers.repo.run_cli``)."""
    return run_cli(*args, cwd=cwd, **env)


# --- JUnit XML validation against the common schema --------------------------------------

JUNIT_XSD = HERE / "junit-jenkins.xsd"


def junit_errors(document: bytes) -> list[str]:
    """Every way ``document`` breaks jenkins-junit.xsd, as ``line: message`` (empty if valid).

    A real XML Schema processor (libxml2 through lxml), so the verdict is the one any
    schema-validating CI importer would reach, not a reimplementation's.
    """
    schema = etree.XMLSchema(etree.parse(str(JUNIT_XSD)))
    if schema.validate(etree.fromstring(document)):
        return []
    return [f"{e.line}: {e.message}" for e in schema.error_log]
