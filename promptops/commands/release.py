"""`promptops release`: tag the committed HEAD as ``<name>@<version>``, once.

The policy (what must hold, each refusal and what to run next) is
:mod:`promptops.versioning.releases`; this command hands it the gates that live above
that layer (the tests and lint of HEAD) and prints what happened.
"""

from __future__ import annotations

from pathlib import Path

from promptops.console import Console
from promptops.pipeline.build import Build
from promptops.pipeline.source import find_package
from promptops.versioning.releases import Gate, HeadDoesNotLoad, ReleaseRefused, release

__all__ = ["GATES", "Gate", "ReleaseRefused", "run"]


def _test_gate(head: Build) -> str | None:
    from promptops.testing.suite import release_gate

    return release_gate(head)


def _lint_gate(head: Build) -> str | None:
    from promptops.lint.runner import gate, lint_package

    ok, lines, summary = gate(lint_package(head))
    if ok:
        return None
    return "lint fails at HEAD (" + summary + "); fix these, commit, then release:\n" + \
        "\n".join(lines)


GATES: tuple[Gate, ...] = (_test_gate, _lint_gate)


def run(*, path: Path | None, console: Console, gates: tuple[Gate, ...] = GATES) -> int:
    try:
        done = release(find_package(path or Path.cwd()), gates)
    except HeadDoesNotLoad as exc:
        for p in exc.problems:
            console.echo(str(p), err=True)
        raise
    if not done.created:
        console.echo(f"{done.tag} is already released with this bundle ({done.digest}); "
                     "nothing to do")
        return 0
    console.echo(f"released {done.tag} at {done.commit[:12]} ({done.digest})")
    console.info(f"next: publish it with `git push origin {done.tag}`, then "
                 f"`promptops build --ref {done.tag}`")
    return 0
