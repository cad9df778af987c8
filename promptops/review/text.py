"""The review for a terminal: the markdown report's content, coloured, never cut.

A developer running ``promptops diff main`` before pushing wants the same facts the
pull-request comment will show, in a form ``less -R`` reads; colour follows
``--color``/``NO_COLOR`` through the run's :class:`~promptops.console.Console`.
"""

from __future__ import annotations

import json

from promptops.console import PLAIN_AUTO, Console
from promptops.review.model import PackageReview, PromptReview, ReviewReport

_LEVEL = {"major": "red", "minor": "yellow", "patch": "cyan"}


def to_text(report: ReviewReport, console: Console = PLAIN_AUTO) -> str:
    head = report.head.commit[:12] if report.head.commit else "uncommitted"
    out = [console.style(f"promptops review: {report.base.spec} -> {report.head.spec}", bold=True),
           f"base {(report.base.commit or '')[:12]}  head {head}"]
    if not report.packages:
        out.append("no prompt package was touched")
    for pkg in report.packages:
        out += ["", *_package(pkg, console)]
    return "\n".join(out) + "\n"


def _package(p: PackageReview, console: Console) -> list[str]:
    out = [console.style(f"package {p.name} ({p.path}): {p.status}", bold=True)]
    if p.error:
        return [*out, console.style("does not load:", fg="red"),
                *("  " + x for x in p.error.splitlines())]
    c = p.counts
    out.append(f"  prompts   {c.added} added, {c.removed} removed, {c.renamed} renamed, "
               f"{c.changed} changed, {c.unaffected} unaffected")
    for name in p.added:
        out.append(f"    + {name}")
    for name in p.removed:
        out.append(f"    - {name}")
    for r in p.renamed:
        out.append(f"    {r.old} -> {r.new}")
    need = p.required_bump or "none"
    flag = "" if p.version_ok else console.style(
        f"  too small: needs >= {p.suggested_version}", fg="red")
    out.append(f"  version   {p.base_version or '-'} -> {p.head_version or '-'}; "
               f"required bump {console.style(need, fg=_LEVEL.get(need, 'green'))}{flag}")
    for ch in p.channels:
        notes = [n for n, on in (("base", ch.base or ch.base_commit),
                                 ("head", ch.head or ch.head_commit)) if on]
        out.append(f"  channel   {ch.name}: {ch.version or ch.release or 'no release'}"
                   + (f" (this change's {', '.join(notes)})" if notes else ""))
    for label, gate in (("lint", p.lint), ("tests", p.tests)):
        colour = {"passed": "green", "failed": "red"}.get(gate.status, "yellow")
        out.append(f"  {label:<9} {console.style(gate.status.replace('_', ' '), fg=colour)}"
                   + (f" ({gate.detail})" if gate.detail else ""))
    if p.breaking:
        out.append(console.style("breaking changes", fg="red", bold=True))
        out += [f"  {c.prompt or 'package'}: {c.message}" for c in p.breaking]
    for pr in p.prompts:
        out += ["", *_prompt(pr, console)]
    if p.unaffected:
        out += ["", "unaffected (rendered output unchanged): " + ", ".join(p.unaffected)]
    return out


def _prompt(pr: PromptReview, console: Console) -> list[str]:
    title = f"prompt {pr.name}" + (f" (renamed from {pr.old_name})" if pr.old_name else "")
    level = f" [{console.style(pr.level, fg=_LEVEL[pr.level])}]" if pr.level else ""
    out = [console.style(title, bold=True) + level]
    for c in pr.changes:
        detail = ""
        if c.old is not None or c.new is not None:
            detail = f"  ({_short(c.old)} -> {_short(c.new)})"
        out.append(f"  {console.style(c.level, fg=_LEVEL[c.level])}: {c.message}{detail}")
    for d in pr.source_diffs:
        out += ["  source diff:", *_diff(d.diff, console)]
    for r in pr.rendered:
        label = "smoke case" if r.smoke else f"case {r.case!r}"
        args = json.dumps(r.arguments, ensure_ascii=False)
        out += [f"  rendered diff, {label} {args}:", *_diff(r.diff, console)]
    if not pr.rendered:
        out.append(f"  rendered output unchanged ({pr.cases_rendered} cases)")
    return out


def _diff(diff: str, console: Console) -> list[str]:
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            out.append("    " + console.style(line, bold=True))
        elif line.startswith("+"):
            out.append("    " + console.style(line, fg="green"))
        elif line.startswith("-"):
            out.append("    " + console.style(line, fg="red"))
        elif line.startswith("@@"):
            out.append("    " + console.style(line, fg="cyan"))
        else:
            out.append("    " + line)
    return out


def _short(v: object) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
