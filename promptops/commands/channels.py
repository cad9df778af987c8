"""`promptops channels [log CHANNEL | fetch|push REMOTE]`: where channels are, their history.

Everything is read from the channel refs and their log commits
(:mod:`promptops.git.channels`), so a fresh clone that fetched ``refs/promptops/*``
prints exactly what the repository it came from prints.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from promptops.commands.choices import Format
from promptops.console import Console
from promptops.errors import UsageError
from promptops.git.channels import Channels
from promptops.versioning.channels import current, duration, resolve_channel


def run(*, action: str | None, channel: str | None, fmt: Format, path: Path | None,
        console: Console) -> int:
    chans = Channels.open(path or Path.cwd())
    if action is None:
        return _list(chans, fmt, console)
    if action == "log" and channel:
        return _log(chans, channel, fmt, console)
    if action == "fetch" and channel:
        chans.fetch_all(channel)
        console.echo(f"fetched every channel and its log from {channel}")
        return _list(chans, fmt, console)
    if action == "push" and channel:
        chans.push_all(channel)
        console.echo(f"pushed every channel and its log to {channel}")
        return 0
    raise UsageError("usage: promptops channels [log CHANNEL | fetch REMOTE | push REMOTE]")


def _list(chans: Channels, fmt: Format, console: Console) -> int:
    rows = []
    now = time.time()
    for state in chans.all():
        last = chans.moves(state.log, limit=1)
        move = last[0] if last else None
        rows.append({
            "package": state.package, "channel": state.channel,
            "release": current(chans, state),
            "digest": move.digest if move else None,
            "moved_at": move.when if move else None,
            "moved_by": move.author if move else None,
            "action": move.action if move else None,
            # the pointer is where the log's last move put it; False: moved outside promptops
            # (a hand-made `git update-ref` or push), so the log does not explain it
            "recorded": move is not None and move.tag_object == state.pointer,
        })
    if fmt == "json":
        console.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        console.echo("no channels yet: `promptops promote VERSION --to CHANNEL` makes one")
        return 0
    for r in rows:
        age = duration(now - float(str(r["moved_at"]))) + " ago" if r["moved_at"] else "?"
        digest = str(r["digest"] or "")[:19]
        console.echo(f"{r['package']}/{r['channel']}  {r['release']}  {digest}  {age}  "
                     f"{r['action'] or ''} by {r['moved_by'] or '?'}"
                     + ("" if r["recorded"] else "  (NOT RECORDED: the ref was moved outside "
                        "promptops; its log does not explain it)"))
    return 0


def _log(chans: Channels, spec: str, fmt: Format, console: Console) -> int:
    package, channel = resolve_channel(chans, spec)
    moves = chans.moves(chans.state(package, channel).log)
    if fmt == "json":
        console.echo(json.dumps([m.to_json() for m in moves], indent=2, ensure_ascii=False))
        return 0
    for m in moves:
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(m.when))
        console.echo(f"{when}  {m.action} {m.source or 'none'} -> {m.target}  by {m.author}  "
                     f"[{m.id[:12]}]")
        console.echo(f"    digest {m.digest}  commit {m.commit[:12]}")
        for line in m.why.splitlines():
            console.echo(f"    {line}")
    return 0
