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

from promptops.review.model import (
    ChangeItem,
    FileDiff,
    PackageReview,
    PromptReview,
    RenderedDiff,
    ReviewReport,
)

COMMENT_LIMIT = 65_536
# room for the sticky-comment marker and anything a workflow prepends
DEFAULT_BUDGET = COMMENT_LIMIT - 1_024
FOLD_LINES = 30
KEEP_CHARS = 1_500  # a template's source and representative diffs keep at least this much
MAX_NAMES = 200  # prompt names a shortened comment lists; the full report has them all
_NOTE = "… {n} more diff lines cut to fit GitHub's comment limit; {where}"

Block = Callable[[tuple[object, ...], str], str]


def to_markdown(report: ReviewReport, budget: int | None = DEFAULT_BUDGET,
                full_report: str | None = None) -> str:
    """The report, shortened until it is at most ``budget`` characters (None: never).

    Every diff block is capped at one common size, the largest that fits (found by
    bisection), so the largest diffs are cut first and as little as needed, and each
    keeps its beginning.
    """
    where = f"the full report is {full_report}" if full_report else \
        "`--format json` has them all"
    # each package's prompts grouped once, for every render the bisection makes (5,000
    # prompts: 15 ms a grouping, on one core after the render pool is done)
    groups = [_grouped(p) for p in report.packages]
    if budget is None:
        return _render(report, _blocks(None, [], where), None, groups)
    sizes: list[int] = []
    text = _render(report, _blocks(None, sizes, where), MAX_NAMES, groups)
    shortened = any(len(p.unaffected) > MAX_NAMES or len(g[2]) > MAX_NAMES
                    for p, g in zip(report.packages, groups, strict=True))
    if len(text) > budget - 200:
        budget -= 200  # room for the closing note
        lo, hi = 0, max(sizes, default=0)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if len(_render(report, _blocks(mid, [], where), MAX_NAMES, groups)) <= budget:
                lo = mid
            else:
                hi = mid - 1
        text = _render(report, _blocks(lo, [], where), MAX_NAMES, groups)
        shortened = True
        if len(text) > budget:
            note = f"\n\n… report cut to fit GitHub's comment limit; {where}\n"
            return text[: budget - len(note)].rsplit("\n", 1)[0] + note
    if shortened:
        text = text.rstrip("\n") + f"\n\n<sub>This comment is shortened; {where}.</sub>\n"
    return text


def _blocks(cap: int | None, sizes: list[int], where: str) -> Block:
    def block(key: tuple[object, ...], diff: str) -> str:
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


def _render(report: ReviewReport, block: Block, names: int | None,
            groups: list[Grouped]) -> str:
    head = report.head.commit[:12] if report.head.commit else "uncommitted changes"
    out = [
        f"## promptops review: {code(report.base.spec)} → {code(report.head.spec)}",
        "",
        f"<sub>base {code((report.base.commit or '')[:12])} · head {code(head)}</sub>",
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
    specs = (report.base.spec, report.head.spec)
    for i, pkg in enumerate(report.packages):
        out += ["", *_package(i, pkg, block, names, specs, groups[i])]
    return "\n".join(out).rstrip() + "\n"


def _row(p: PackageReview) -> str:
    c = p.counts
    prompts = (f"+{c.added} −{c.removed} renamed {c.renamed} changed {c.changed} "
               f"unaffected {c.unaffected}")
    return (f"| {code(p.name, cell=True)} ({code(p.path, cell=True)}) | {p.status} | "
            f"{prompts} | {_version(p)} | {_bump(p)} | "
            f"{_gate(p.lint.status)} | {_gate(p.tests.status)} |")


def _version(p: PackageReview) -> str:
    return f"{_semver(p.base_version or '–')} → {_semver(p.head_version or '–')}"


def _semver(v: str) -> str:
    """A version as written when it is one (validated semver: nothing markdown acts on)."""
    return v if re.fullmatch(r"\d[0-9A-Za-z.+-]*|–", v) else text(v)


def _bump(p: PackageReview) -> str:
    if p.required_bump is None:
        return "none"
    if p.version_ok:
        return f"{p.required_bump} ✅"
    return (f"**{p.required_bump}** ⚠️ too small "
            f"(needs ≥ {_semver(p.suggested_version or '')})")


def _fix_bump(p: PackageReview) -> list[str]:
    """How to fix a bump that is too small: what the CLI says (`promptops version`)."""
    if p.version_ok or p.required_bump is None:
        return []
    where = "" if p.path == "." else f" {p.path}"
    return [f"**To fix:** run {code('promptops bump auto' + where)} (sets "
            f"{_semver(p.suggested_version or '')}) and commit {code('promptops.yaml')}.", ""]


def _channels(p: PackageReview) -> list[str]:
    """Which channels hold which version (review/channels.py); nothing without channels.
    Names and tags come from the repository's refs: rendered inert like package text."""
    if not p.channels:
        return []
    parts = []
    for c in p.channels:
        has = _semver(c.version) if c.version is not None else (
            code(c.release) if c.release is not None else "no release")
        notes = [n for n, on in (("this change's base", c.base or c.base_commit),
                                 ("this change's head", c.head or c.head_commit)) if on]
        parts.append(f"{code(c.name)} has {has}" + (f" ({', '.join(notes)})" if notes else ""))
    more = f", and {p.channels_more} more" if p.channels_more else ""
    return [f"**Channels:** {', '.join(parts)}{more}.", ""]


def _gate(status: str, detail: str = "") -> str:
    shown = {"passed": "✅ passed", "failed": "❌ failed"}.get(status, "not available")
    return f"{shown} ({text(detail)})" if detail and status != "not_available" else shown


def _is_template(d: FileDiff) -> bool:
    """A template or partial (shared between prompts), not a prompt's own YAML file."""
    return not (d.new_path or d.old_path or "").endswith(".prompt.yaml")


Templates = list[tuple[FileDiff, list[PromptReview]]]
Grouped = tuple[Templates, list[PromptReview], list[PromptReview]]


def _grouped(p: PackageReview) -> Grouped:
    """(changed templates with the prompts they reach, prompts with changes of their own,
    prompts changed only through those templates), each in report order."""
    templates: dict[tuple[str | None, str | None, str], list[PromptReview]] = {}
    diffs: dict[tuple[str | None, str | None, str], FileDiff] = {}
    own: list[PromptReview] = []
    through: list[PromptReview] = []
    for pr in p.prompts:
        reached = 0  # of its source diffs, the templates' (each diff's kind read once)
        for d in pr.source_diffs:
            if _is_template(d):
                reached += 1
                key = (d.old_path, d.new_path, d.diff)
                diffs.setdefault(key, d)
                templates.setdefault(key, []).append(pr)
        only = reached == len(pr.source_diffs) > 0 and _only_through_templates(pr)
        (through if only else own).append(pr)
    return [(diffs[k], v) for k, v in templates.items()], own, through


def _only_through_templates(pr: PromptReview) -> bool:
    """Whether every change of ``pr`` is a template or partial it includes, once every
    source diff of ``pr`` is known to be a template's (there is at least one)."""
    if pr.old_name is not None:
        return False
    paths = {d.new_path or d.old_path for d in pr.source_diffs}
    return all(c.kind == "template_changed" and isinstance(c.new, list)
               and set(c.new) <= paths for c in pr.changes)


def _package(index: int, p: PackageReview, block: Block, names: int | None,
             specs: tuple[str, str], grouped: Grouped) -> list[str]:
    out = [f"### {code(p.name)} ({code(p.path)}): {p.status}", ""]
    if p.error:
        return [*out, "The package does not load:", "", fence(p.error)]
    renamed = [f"{code(r.old)} → {code(r.new)}" for r in p.renamed]
    parts = [f"{len(p.added)} added" + _names([code(n) for n in p.added]),
             f"{len(p.removed)} removed" + _names([code(n) for n in p.removed]),
             f"{len(p.renamed)} renamed" + _names(renamed),
             f"{p.counts.changed} changed", f"{p.counts.unaffected} unaffected"]
    out += [f"**Prompts:** {', '.join(parts)}.", "",
            f"**Version:** {_version(p)}; required bump: {_bump(p)}.", "",
            *_channels(p),
            *_fix_bump(p),
            f"**Lint:** {_gate(p.lint.status, p.lint.detail)} · "
            f"**Tests:** {_gate(p.tests.status, p.tests.detail)}", ""]
    if p.breaking:
        out += ["#### ⚠️ Breaking changes", ""]
        out += [f"- {_where(c)}{text(c.message)}" for c in p.breaking]
        out.append("")
    templates, own, through = grouped
    if templates:
        out += ["#### Changed templates and partials", ""]
        for k, (d, reached) in enumerate(templates):
            out += _template((index, "tpl", k), d, reached, block, specs)
    if own:
        out += ["#### Changed prompts", ""]
        for j, pr in enumerate(own):
            out += _prompt((index, j), pr, block, specs)
    if through:
        n = len(through)
        listed = ", ".join(code(pr.name) for pr in through[:names])
        if names is not None and n > names:
            listed += f", … and {n - names} more"
        out += ["#### Changed only through the templates above", ""]
        out += _fold(f"{n} prompt{'s' if n != 1 else ''}", listed, folded=n > 20)
    if p.unaffected:
        n = len(p.unaffected)
        listed = ", ".join(code(name) for name in p.unaffected[:names])
        if names is not None and n > names:
            listed += f", … and {n - names} more"
        out += ["#### Unaffected prompts", "",
                "Rendered output unchanged for every test case and the smoke case:", ""]
        label = f"{n} prompt{'s' if n != 1 else ''}"
        out += _fold(label, listed, folded=True) if n > 20 else [listed]
    return out


def _template(key: tuple[object, ...], d: FileDiff, reached: list[PromptReview],
              block: Block, specs: tuple[str, str]) -> list[str]:
    path = d.new_path or d.old_path or ""
    n = len(reached)
    out = [f"##### {code(path)}: reaches {n} changed prompt{'s' if n != 1 else ''}", "",
           block((*key, "src"), d.diff), ""]
    shown = next((pr for pr in reached if pr.rendered), None)
    if shown is None:
        return [*out, "Rendered output unchanged for every case.", ""]
    r = shown.rendered[0]
    label = "smoke case" if r.smoke else f"case {code(r.case)}"
    args = code(json.dumps(r.arguments, ensure_ascii=False))
    out += [f"Rendered diff of {code(shown.name)} ({label} with {args}):", "",
            block((*key, "out"), r.diff), "", *_adapted(r, specs)]
    if n > 1:
        more = "1 more prompt that includes" if n == 2 else f"{n - 1} more prompts that include"
        out += [f"… and {more} it.", ""]
    return out


def _names(names: list[str]) -> str:
    """Already-inert names (code spans), listed in parentheses."""
    return f" ({', '.join(names)})" if names else ""


def _where(c: ChangeItem) -> str:
    return f"{code(c.prompt)}: " if c.prompt else "package: "


def _adapted(r: RenderedDiff, specs: tuple[str, str]) -> list[str]:
    """One line per end whose arguments were adapted (review/arguments.py), so the
    reader knows why the two ends were asked different things."""
    out = []
    for spec, notes in zip(specs, (r.base_arguments, r.head_arguments), strict=True):
        if notes:
            out += [f"Rendered at {code(spec)} {'; '.join(text(n) for n in notes)}.", ""]
    return out


def _prompt(key: tuple[int, int], pr: PromptReview, block: Block,
            specs: tuple[str, str]) -> list[str]:
    title = f"##### {code(pr.name)}" + (
        f" (renamed from {code(pr.old_name)})" if pr.old_name else "")
    out = [title + (f": {pr.level}" if pr.level else ""), ""]
    if pr.changes:
        out += ["| level | change | old | new |", "| --- | --- | --- | --- |"]
        out += [f"| {c.level} | {text(c.message)} | {_old(c)} | {_new(c)} |"
                for c in pr.changes]
        out.append("")
    own = [d for d in pr.source_diffs if not _is_template(d)]
    if own:
        body = "\n\n".join(block((*key, "src", k), d.diff) for k, d in enumerate(own))
        out += _fold("Source diff", body, folded=True)
    if len(own) < len(pr.source_diffs):
        shared = ", ".join(code(d.new_path or d.old_path or "") for d in pr.source_diffs
                           if _is_template(d))
        out += [f"Also changed through {shared} (diff above).", ""]
    if not pr.rendered:
        out += [f"Rendered output unchanged ({pr.cases_rendered} cases).", ""]
        return out
    pieces = []
    for k, r in enumerate(pr.rendered):
        label = "smoke case" if r.smoke else f"case {code(r.case)}"
        args = code(json.dumps(r.arguments, ensure_ascii=False))
        adapted = "".join(f"\n\n{line}" for line in _adapted(r, specs) if line)
        pieces.append(f"**{label}** with {args}\n\n{block((*key, 'out', k), r.diff)}{adapted}")
    lines = sum(r.diff.count("\n") + 1 for r in pr.rendered)
    summary = f"Rendered diff: {len(pr.rendered)} of {pr.cases_rendered} cases changed"
    return out + _fold(summary, "\n\n".join(pieces), folded=lines > FOLD_LINES)


def _fold(summary: str, body: str, *, folded: bool) -> list[str]:
    if not folded:
        return [f"{summary}:", "", body, ""]
    return ["<details>", f"<summary>{summary}</summary>", "", body, "", "</details>", ""]


# Every string a package controls (names, paths, case names, argument values, messages,
# branch names) goes through one of the two functions below, so none can add markup to
# the comment: no closing ``</details>``, no fake "Lint: passed" line, no image or link.
_BREAKS = re.compile(r"\r\n|[\r\n\v\f\x85\u2028\u2029]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# Markdown (and GitHub's autolinks, mentions, emoji and math) needs these characters; a
# backslash makes each literal, except ``&<>`` which become entities (a backslash does not
# stop an HTML tag in every position).
_ACTIVE = {c: "\\" + c for c in "\\`*_[]!|~#:@.$"} | {"&": "&amp;", "<": "&lt;",
                                                         ">": "&gt;"}


def code(value: object, *, cell: bool = False) -> str:
    """``value`` as an inline code span, literal wherever it lands.

    The fence is one backtick longer than the longest run inside (a run cannot close the
    span early); line breaks become ``␤`` (a break would end a table row or a list item);
    padding keeps a leading or trailing backtick or space. Inside a code span ``<``,
    ``>`` and ``&`` are already literal. In a table cell ``|`` is escaped as GFM requires.
    """
    body = _CONTROL.sub("\ufffd", _BREAKS.sub("␤", str(value)))
    if cell:
        body = body.replace("|", "\\|")
    if not body:
        return "` `"
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * (longest + 1)
    if body[0] in "` " or body[-1] in "` ":
        body = f" {body} "
    return f"{ticks}{body}{ticks}"


def text(value: object) -> str:
    """``value`` as plain text that renders exactly as written: every character markdown,
    HTML or GitHub would act on is escaped (``|`` too, so a table cell holds it), line
    breaks become spaces."""
    body = _CONTROL.sub("\ufffd", _BREAKS.sub(" ", str(value)))
    return "".join(_ACTIVE.get(c, c) for c in body)


def _value(v: object) -> str:
    if v is None:
        return ""
    shown = json.dumps(v, ensure_ascii=False)
    shown = shown if len(shown) <= 80 else shown[:77] + "…"
    return code(shown, cell=True)


def _excerpt(values: list[str]) -> str:
    return "<br>".join(code(v if len(v) <= 100 else v[:97] + "…", cell=True) for v in values)


def _old(c: ChangeItem) -> str:
    """The old cell: for a template text change, the first changed line (the change's
    ``old``/``new`` only name the messages)."""
    return _excerpt(c.old_excerpt) if c.old_excerpt is not None else _value(c.old)


def _new(c: ChangeItem) -> str:
    return _excerpt(c.new_excerpt) if c.new_excerpt is not None else _value(c.new)
