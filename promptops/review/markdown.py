"""The review as a GitHub pull-request comment.

GitHub rejects a comment over 65,536 characters, and a review that fails to post is
worse than a shortened one; so the report is rendered, measured, and the largest diff
blocks are cut (at line boundaries, with a note saying how much) until it fits. The
summary, the breaking changes and the change tables are never cut.

The budget goes to what a reviewer must see first. A one-line edit of a partial that
5,000 prompts include is one change, so it is shown once: breaking changes, then every
changed template or partial with its source diff and one representative rendered diff
("and N more prompts that include it"), then the prompts with changes of their own,
then the prompts changed only through those templates as a list of names. A template's
source and representative diffs are cut last and never below ``KEEP_CHARS``, so the
comment always shows the edit that caused the change. When anything is shortened, the
comment says where the whole report is (``full_report``: a file or an artifact link).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from promptops.review.model import (
    ChangeItem,
    FileDiff,
    PackageReview,
    PromptReview,
    ReviewReport,
)

COMMENT_LIMIT = 65_536
# room for the sticky-comment marker and anything a workflow prepends
DEFAULT_BUDGET = COMMENT_LIMIT - 1_024
FOLD_LINES = 30
KEEP_CHARS = 1_500  # a template's source and representative diffs keep at least this much
MAX_NAMES = 200  # prompt names a shortened comment lists; the full report has them all
_NOTE = "… {n} more diff lines cut to fit GitHub's comment limit; {where}"

Block = Callable[[tuple[Any, ...], str], str]


def to_markdown(report: ReviewReport, budget: int | None = DEFAULT_BUDGET,
                full_report: str | None = None) -> str:
    """The report, shortened until it is at most ``budget`` characters (None: never).

    Every diff block is capped at one common size, the largest that fits (found by
    bisection), so the largest diffs are cut first and as little as needed, and each
    keeps its beginning.
    """
    where = f"the full report is {full_report}" if full_report else \
        "`--format json` has them all"
    if budget is None:
        return _render(report, _blocks(None, [], where), None)
    sizes: list[int] = []
    text = _render(report, _blocks(None, sizes, where), MAX_NAMES)
    shortened = _lists_shortened(report)
    if len(text) > budget - 200:
        budget -= 200  # room for the closing note
        lo, hi = 0, max(sizes, default=0)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if len(_render(report, _blocks(mid, [], where), MAX_NAMES)) <= budget:
                lo = mid
            else:
                hi = mid - 1
        text = _render(report, _blocks(lo, [], where), MAX_NAMES)
        shortened = True
        if len(text) > budget:
            note = f"\n\n… report cut to fit GitHub's comment limit; {where}\n"
            return text[: budget - len(note)].rsplit("\n", 1)[0] + note
    if shortened:
        text = text.rstrip("\n") + f"\n\n<sub>This comment is shortened; {where}.</sub>\n"
    return text


def _lists_shortened(report: ReviewReport) -> bool:
    return any(len(p.unaffected) > MAX_NAMES or len(_grouped(p)[2]) > MAX_NAMES
               for p in report.packages)


def _blocks(cap: int | None, sizes: list[int], where: str) -> Block:
    def block(key: tuple[Any, ...], diff: str) -> str:
        sizes.append(len(diff))
        limit = cap if cap is None or "tpl" not in key else max(cap, KEEP_CHARS)
        if limit is not None and len(diff) > limit:
            kept = diff[:limit].rsplit("\n", 1)[0] if "\n" in diff[:limit] else ""
            dropped = diff.count("\n") - kept.count("\n") + (0 if kept else 1)
            diff = (kept + "\n" if kept else "") + _NOTE.format(n=dropped, where=where)
        return fence(diff, "diff")

    return block


def fence(body: str, lang: str = "") -> str:
    """A code block whose fence is longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body}\n{ticks}"


def _render(report: ReviewReport, block: Block, names: int | None) -> str:
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
        out += ["", *_package(i, pkg, block, names)]
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


def _is_template(d: FileDiff) -> bool:
    """A template or partial (shared between prompts), not a prompt's own YAML file."""
    return not (d.new_path or d.old_path or "").endswith(".prompt.yaml")


Templates = list[tuple[FileDiff, list[PromptReview]]]


def _grouped(p: PackageReview) -> tuple[Templates, list[PromptReview], list[PromptReview]]:
    """(changed templates with the prompts they reach, prompts with changes of their own,
    prompts changed only through those templates), each in report order."""
    templates: dict[tuple[str | None, str | None, str], list[PromptReview]] = {}
    diffs: dict[tuple[str | None, str | None, str], FileDiff] = {}
    own: list[PromptReview] = []
    through: list[PromptReview] = []
    for pr in p.prompts:
        for d in pr.source_diffs:
            if _is_template(d):
                key = (d.old_path, d.new_path, d.diff)
                diffs.setdefault(key, d)
                templates.setdefault(key, []).append(pr)
        (through if _only_through_templates(pr) else own).append(pr)
    return [(diffs[k], v) for k, v in templates.items()], own, through


def _only_through_templates(pr: PromptReview) -> bool:
    """Whether every change of ``pr`` is a template or partial it includes."""
    if pr.old_name is not None or not any(_is_template(d) for d in pr.source_diffs):
        return False
    if any(not _is_template(d) for d in pr.source_diffs):
        return False
    paths = {d.new_path or d.old_path for d in pr.source_diffs}
    return all(c.kind == "template_changed" and isinstance(c.new, list)
               and set(c.new) <= paths for c in pr.changes)


def _package(index: int, p: PackageReview, block: Block, names: int | None) -> list[str]:
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
    templates, own, through = _grouped(p)
    if templates:
        out += ["#### Changed templates and partials", ""]
        for k, (d, reached) in enumerate(templates):
            out += _template((index, "tpl", k), d, reached, block)
    if own:
        out += ["#### Changed prompts", ""]
        for j, pr in enumerate(own):
            out += _prompt((index, j), pr, block)
    if through:
        n = len(through)
        listed = ", ".join(f"`{pr.name}`" for pr in through[:names])
        if names is not None and n > names:
            listed += f", … and {n - names} more"
        out += ["#### Changed only through the templates above", ""]
        out += _fold(f"{n} prompt{'s' if n != 1 else ''}", listed, folded=n > 20)
    if p.unaffected:
        n = len(p.unaffected)
        listed = ", ".join(f"`{name}`" for name in p.unaffected[:names])
        if names is not None and n > names:
            listed += f", … and {n - names} more"
        out += ["#### Unaffected prompts", "",
                "Rendered output unchanged for every test case and the smoke case:", ""]
        label = f"{n} prompt{'s' if n != 1 else ''}"
        out += _fold(label, listed, folded=True) if n > 20 else [listed]
    return out


def _template(key: tuple[Any, ...], d: FileDiff, reached: list[PromptReview],
              block: Block) -> list[str]:
    path = d.new_path or d.old_path
    n = len(reached)
    out = [f"##### `{path}`: reaches {n} changed prompt{'s' if n != 1 else ''}", "",
           block((*key, "src"), d.diff), ""]
    shown = next((pr for pr in reached if pr.rendered), None)
    if shown is None:
        return [*out, "Rendered output unchanged for every case.", ""]
    r = shown.rendered[0]
    label = "smoke case" if r.smoke else f"case `{r.case}`"
    args = _cell(json.dumps(r.arguments, ensure_ascii=False))
    out += [f"Rendered diff of `{shown.name}` ({label} with `{args}`):", "",
            block((*key, "out"), r.diff), ""]
    if n > 1:
        more = "1 more prompt that includes" if n == 2 else f"{n - 1} more prompts that include"
        out += [f"… and {more} it.", ""]
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
    own = [d for d in pr.source_diffs if not _is_template(d)]
    if own:
        body = "\n\n".join(block((*key, "src", k), d.diff) for k, d in enumerate(own))
        out += _fold("Source diff", body, folded=True)
    if len(own) < len(pr.source_diffs):
        shared = ", ".join(f"`{d.new_path or d.old_path}`" for d in pr.source_diffs
                           if _is_template(d))
        out += [f"Also changed through {shared} (diff above).", ""]
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
