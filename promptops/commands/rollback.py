"""`promptops rollback CHANNEL`: move a channel back to the version before, recorded.

What "before" means (the newest promotion not already undone) and the compare-and-swap
are :mod:`promptops.versioning.channels`; this command prints what happened.
"""

from __future__ import annotations

from pathlib import Path

from promptops.console import Console
from promptops.versioning.channels import rollback


def run(*, channel: str, why: str, push: str | None, path: Path | None,
        console: Console) -> int:
    done = rollback(path or Path.cwd(), channel, why=why, remote=push)
    where = f" on {done.remote}" if done.remote else ""
    console.echo(f"rolled back {done.package}/{done.channel}{where}: "
                 f"{done.source or 'none'} -> {done.target} ({done.digest})")
    return 0
