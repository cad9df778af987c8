"""What `promptops import` says: the per-file report (text or JSON), the summary with the
next command, and CONVERSION.md. Apart from the command so each stays one concept (and
under the rooms' size): the command decides, this module tells.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from promptops.commands.choices import Format
from promptops.console import Console
from promptops.interop import ir

CONVERSION = "CONVERSION.md"
Outcome = Literal["exact", "lossy", "refused"]


@dataclass
class Report:
    source: str
    ecosystem: str | None
    prompts: list[str] = field(default_factory=list)
    mapped: list[str] = field(default_factory=list)
    losses: list[ir.Loss] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refused: str | None = None  # the reason, ``file:line:col: what``
    documents: dict[str, str] = field(default_factory=dict)  # package path -> YAML
    templates: dict[str, str] = field(default_factory=dict)  # package path -> Jinja source
    # the templates its prompts reach -> its refusal should that template's be refused
    needs: dict[str, str] = field(default_factory=dict)

    @property
    def outcome(self) -> Outcome:
        return "refused" if self.refused else "lossy" if self.losses else "exact"

    def refuse(self, reason: str) -> Report:
        self.refused = reason
        self.prompts, self.mapped, self.documents, self.templates = [], [], {}, {}
        return self

    def written(self) -> list[str]:
        """The package paths this source's import writes."""
        return [*self.documents, *self.templates]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """``text`` with control characters written as escapes: a file name or a YAML error
    from someone else's folder must not move the cursor, retitle the terminal or reverse
    the text shown (issue 23, invariant 4)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def conversion(reports: list[Report]) -> str:
    lines = ["# Conversion report", "",
             "Written by `promptops import`. Each source below lost something in the "
             "conversion or was refused; the package holds the nearest form of the lossy "
             "ones, and the reason is given.", ""]
    for r in reports:
        if r.refused:
            lines += [f"## {r.source} (refused)", "", f"- {r.refused}", ""]
        elif r.losses:
            lines += [f"## {r.source} ({r.ecosystem})", "",
                      f"Prompts: {', '.join(r.prompts + list(r.templates))}", ""]
            lines += [f"- {loss}" for loss in r.losses]
            lines.append("")
    return "\n".join(lines)


def print_reports(reports: list[Report], skipped: list[str], out: Path, fmt: Format,
           console: Console, *, committed: str | None, commit_asked: bool) -> None:
    if fmt == "json":
        console.echo(json.dumps([{
            "source": r.source, "from": r.ecosystem, "outcome": r.outcome,
            "prompts": r.prompts, "templates": list(r.templates),
            "exact": r.outcome == "exact", "mapped": r.mapped,
            "notes": r.notes, "refused": r.refused,
            "losses": [{"what": x.what, "reason": x.reason, "line": x.line}
                       for x in r.losses]} for r in reports], indent=2, ensure_ascii=False))
        return
    for r in reports:
        if r.refused:
            console.echo(f"{console.style(inert(r.source), bold=True)}: "
                         f"{console.style('refused', fg='red')}: {inert(r.refused)}")
            continue
        if console.verbosity < 0:  # -q: the refusals and the summary only
            continue
        state = console.style("lossy", fg="yellow") if r.losses \
            else console.style("exact", fg="green")
        console.echo(f"{console.style(inert(r.source), bold=True)} ({r.ecosystem}) -> "
                     f"{', '.join(r.prompts + list(r.templates))}: {state}")
        for item in r.mapped:
            console.echo(f"  mapped {inert(item)}")
        for note in r.notes:
            console.echo(f"  note: {inert(note)}")
        for loss in r.losses:
            console.echo(f"  lost: {inert(str(loss))}")
    summary(reports, skipped, out, console, committed=committed, commit_asked=commit_asked)


def summary(reports: list[Report], skipped: list[str], out: Path, console: Console, *,
             committed: str | None, commit_asked: bool) -> None:
    counts = {k: sum(r.outcome == k for r in reports) for k in ("exact", "lossy", "refused")}
    where = shlex.quote(str(out))
    console.echo(f"\n{counts['exact'] + counts['lossy']} of {len(reports)} files imported "
                 f"into {out}: {counts['exact']} exact, {counts['lossy']} with losses, "
                 f"{counts['refused']} refused.")
    if not reports:
        console.echo("No prompt files found.")
    refused = [r for r in reports if r.refused]
    if refused:
        console.echo("Refused (nothing of them is written):")
        for r in refused:
            console.echo(f"  {inert(r.refused or '')}")
    if (counts["lossy"] or refused) and any(r.written() for r in reports):
        console.echo(f"Every loss and refusal is listed in {out / CONVERSION}.")
    if skipped:
        console.echo(f"Skipped {len(skipped)} files that are not prompts: "
                     + inert(", ".join(skipped[:5])) + (" ..." if len(skipped) > 5 else ""))
    if not any(r.written() for r in reports):
        console.echo("Nothing was written.")
        return
    if console.verbosity < 0:
        return
    if committed:
        console.echo(f'Committed: "{committed}".')
        console.echo(f"\nNext:\n  promptops serve {where}")
    else:
        tip = "" if commit_asked else " (or import with --commit)"
        console.echo(f"\nNothing is committed: serve reads commits, so commit {out} first"
                     f"{tip}; `promptops serve --worktree {where}` serves it uncommitted.")
        from promptops.git import Repo

        git = f"git -C {where}"
        init = "" if Repo.find(out) is not None else f"git init -q {where} && "
        console.echo(f"\nNext:\n  {init}{git} add -- . && {git} commit -m 'Import prompts'"
                     f"\n  promptops serve {where}")
