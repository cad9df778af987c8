"""`promptops promote [PACKAGE@]VERSION --to CHANNEL`: move a channel to a release.

The checks and the compare-and-swap are :mod:`promptops.versioning.channels`; this command
hands it the gates that live above that layer (lint and the tests, each run on the
release's rebuilt commit) by the names the policy uses, and prints what happened.
"""

from __future__ import annotations

from pathlib import Path

from promptops.console import Console
from promptops.pipeline.build import Build
from promptops.pipeline.source import find_package
from promptops.versioning.channels import Gate, promote


def _test_gate(build: Build) -> str | None:
    from promptops.testing.suite import release_gate

    return release_gate(build)


def _lint_gate(build: Build) -> str | None:
    from promptops.lint.runner import gate, lint_package

    ok, lines, summary = gate(lint_package(build))
    return None if ok else "lint fails (" + summary + "):\n" + "\n".join(lines)


GATES: dict[str, Gate] = {"lint": _lint_gate, "test": _test_gate}


def run(*, spec: str, channel: str, why: str, push: str | None, path: Path | None,
        console: Console) -> int:
    done = promote(find_package(path or Path.cwd()), spec, channel, why=why, remote=push,
                   gates=GATES)
    where = f" on {done.remote}" if done.remote else ""
    if not done.changed:
        console.echo(f"{done.package}/{done.channel}{where} is already at {done.target}; "
                     "nothing to do")
        return 0
    console.echo(f"promoted {done.package}/{done.channel}{where}: "
                 f"{done.source or 'none'} -> {done.target} ({done.digest})")
    if done.remote is None:
        console.info("next: publish it with `promptops channels push origin` (or promote "
                     "with --push origin), or serve it with `promptops serve --channel "
                     + done.channel + "`")
    return 0
