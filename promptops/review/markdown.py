"""The review as a GitHub pull-request comment.

GitHub rejects a comment over 65,536 characters, and a review that fails to post is
worse than a shortened one; so the report is rendered, measured, and the largest diff
blocks are cut (at line boundaries, with a note saying how much) until it fits. The
summary, the breaking changes and the change tables are never cut.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from promptops.review.model import ChangeItem, PackageReview, PromptReview, ReviewReport

COMMENT_LIMIT = 65_536
# room for the sticky-comment marker and anything a workflow prepends
DEFAULT_BUDGET = COMMENT_LIMIT - 1_024
FOLD_LINES = 30
_NOTE = "… {n} more diff lines cut to fit GitHub's comment limit; `--format json` has them all"

Block = Callable[[tuple[Any, ...], str], str]


def to_markdown(report: ReviewReport, budget: int = DEFAULT_BUDGET) -> str:
    """The report, shortened until it is at most ``budget`` characters.

    Every diff block is capped at one common size, the largest that fits (found by
    bisection), so the largest diffs are cut first and as little as needed, and each
    keeps its beginning.
    """
    sizes: list[int] = []
    text = _render(report, _blocks(None, sizes))
    if len(text) <= budget:
        return text
    lo, hi = 0, max(sizes, default=0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(_render(report, _blocks(mid, []))) <= budget:
            lo = mid
        else:
            hi = mid - 1
    text = _render(report, _blocks(lo, []))
    if len(text) <= budget:
        return text
    note = "\n\n… report cut to fit GitHub's comment limit; `--format json` has all of it\n"
    return text[: budget - len(note)].rsplit("\n", 1)[0] + note


def _blocks(cap: int | None, sizes: list[int]) -> Block:
    def block(key: tuple[Any, ...], diff: str) -> str:
        sizes.append(len(diff))
        if cap is not None and len(diff) > cap:
            kept = diff[:cap].rsplit("\n", 1)[0] if "\n" in diff[:cap] else ""
            dropped = diff.count("\n") - kept.count("\n") + (0 if kept else 1)
            diff = (kept + "\n" if kept else "") + _NOTE.format(n=dropped)
        return fence(diff, "diff")

    return block


def fence(body: str, lang: str = "") -> str:
    """A code block whose fence is longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body}\n{ticks}"


def _render(report: ReviewReport, block: Block) -> str:
    head = report.head.commit[:12] if report.head.commit else "uncommitted changes"
    out = [
        f"## promptops review: `{report.base.spec}` → `{report.head.spec}`",
        "",
        f"<sub>base `{(report.base.commit or '')[:12]}` · head `{head}`</sub>",
        "",
    ]
    if not report.packages:
        out.append("No prompt package was touched by this change.")
        return "\n".join(out) + "\n"
    out += [
        "| package | status | prompts | version | required bump | lint | tests |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    out += [_row(p) for p in report.packages]
    for i, pkg in enumerate(report.packages):
        out += ["", *_package(i, pkg, block)]
    return "\n".join(out).rstrip() + "\n"


def _row(p: PackageReview) -> str:
    c = p.counts
    prompts = (f"+{c.added} −{c.removed} renamed {c.renamed} changed {c.changed} "
               f"unaffected {c.unaffected}")
    return (f"| `{p.name}` (`{p.path}`) | {p.status} | {prompts} | {_version(p)} | "
            f"{_bump(p)} | {_gate(p.lint.status)} | {_gate(p.tests.status)} |")


def _version(p: PackageReview) -> str:
    return f"{p.base_version or '–'} → {p.head_version or '–'}"


def _bump(p: PackageReview) -> str:
    if p.required_bump is None:
        return "none"
    if p.version_ok:
        return f"{p.required_bump} ✅"
    return f"**{p.required_bump}** ⚠️ too small (needs ≥ {p.suggested_version})"


def _gate(status: str, detail: str = "") -> str:
    shown = {"passed": "✅ passed", "failed": "❌ failed"}.get(status, "not available")
    return f"{shown} ({detail})" if detail and status != "not_available" else shown


def _package(index: int, p: PackageReview, block: Block) -> list[str]:
    out = [f"### `{p.name}` (`{p.path}`): {p.status}", ""]
    if p.error:
        return [*out, "The package does not load:", "", fence(p.error)]
    parts = [f"{len(p.added)} added" + _names(p.added),
             f"{len(p.removed)} removed" + _names(p.removed),
             f"{len(p.renamed)} renamed" + _names([f"{r.old}` → `{r.new}" for r in p.renamed]),
             f"{p.counts.changed} changed", f"{p.counts.unaffected} unaffected"]
    out += [f"**Prompts:** {', '.join(parts)}.", "",
            f"**Version:** {_version(p)}; required bump: {_bump(p)}.", "",
            f"**Lint:** {_gate(p.lint.status, p.lint.detail)} · "
            f"**Tests:** {_gate(p.tests.status, p.tests.detail)}", ""]
    if p.breaking:
        out += ["#### ⚠️ Breaking changes", ""]
        out += [f"- {_where(c)}{c.message}" for c in p.breaking]
        out.append("")
    if p.prompts:
        out += ["#### Changed prompts", ""]
        for j, pr in enumerate(p.prompts):
            out += _prompt((index, j), pr, block)
    if p.unaffected:
        n = len(p.unaffected)
        names = ", ".join(f"`{name}`" for name in p.unaffected)
        out += ["#### Unaffected prompts", "",
                "Rendered output unchanged for every test case and the smoke case:", ""]
        label = f"{n} prompt{'s' if n != 1 else ''}"
        out += _fold(label, names, folded=True) if n > 20 else [names]
    return out


def _names(names: list[str]) -> str:
    return f" (`{'`, `'.join(names)}`)" if names else ""


def _where(c: ChangeItem) -> str:
    return f"`{c.prompt}`: " if c.prompt else "package: "


def _prompt(key: tuple[int, int], pr: PromptReview, block: Block) -> list[str]:
    title = f"##### `{pr.name}`" + (f" (renamed from `{pr.old_name}`)" if pr.old_name else "")
    out = [title + (f": {pr.level}" if pr.level else ""), ""]
    if pr.changes:
        out += ["| level | change | old | new |", "| --- | --- | --- | --- |"]
        out += [f"| {c.level} | {_cell(c.message)} | {_value(c.old)} | {_value(c.new)} |"
                for c in pr.changes]
        out.append("")
    if pr.source_diffs:
        body = "\n\n".join(block((*key, "src", k), d.diff) for k, d in enumerate(pr.source_diffs))
        files = len(pr.source_diffs)
        label = f"Template source diff ({files} file{'s' if files != 1 else ''})"
        out += _fold(label, body, folded=True)
    if not pr.rendered:
        out += [f"Rendered output unchanged ({pr.cases_rendered} cases).", ""]
        return out
    pieces = []
    for k, r in enumerate(pr.rendered):
        label = "smoke case" if r.smoke else f"case `{r.case}`"
        args = _cell(json.dumps(r.arguments, ensure_ascii=False))
        pieces.append(f"**{label}** with `{args}`\n\n{block((*key, 'out', k), r.diff)}")
    lines = sum(r.diff.count("\n") + 1 for r in pr.rendered)
    summary = f"Rendered diff: {len(pr.rendered)} of {pr.cases_rendered} cases changed"
    return out + _fold(summary, "\n\n".join(pieces), folded=lines > FOLD_LINES)


def _fold(summary: str, body: str, *, folded: bool) -> list[str]:
    if not folded:
        return [f"{summary}:", "", body, ""]
    return ["<details>", f"<summary>{summary}</summary>", "", body, "", "</details>", ""]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _value(v: object) -> str:
    if v is None:
        return ""
    text = json.dumps(v, ensure_ascii=False)
    text = text if len(text) <= 80 else text[:77] + "…"
    return f"`{_cell(text)}`".replace("``", "` `")
