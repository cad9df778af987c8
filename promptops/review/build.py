"""Build the review report: every touched package, compared from BASE to HEAD.

The change list comes from the diff engine (so a review, `version` and `release`
agree on what is breaking); on top of it each prompt present at both ends is rendered
with the same arguments at both ends, which is what shows a partial edit in every
prompt it reaches and proves the others unaffected.
"""

from __future__ import annotations

import difflib
import functools
import gc
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from promptops.errors import PackageAbsent, PackageError
from promptops.pipeline import collector
from promptops.pipeline.build import Build
from promptops.pipeline.bundle_types import Bundle, Prompt
from promptops.pipeline.compiled import Compiled
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import MANIFEST, Source, find_package, open_source
from promptops.pipeline.templates import TemplateIndex
from promptops.review import gates
from promptops.review.cases import ReviewCase, cases_for, review_cases
from promptops.review.channels import with_channels
from promptops.review.early import Lint
from promptops.review.model import (
    ChangeItem,
    Counts,
    FileDiff,
    PackageReview,
    PromptReview,
    RefInfo,
    Rename,
    RenderedDiff,
    ReviewReport,
)
from promptops.review.refs import Refs, open_repo, packages_in, resolve, touched_packages
from promptops.review.rendered import labelled
from promptops.review.shared import Shared
from promptops.review.warm import prevalidate
from promptops.versioning import Change, Kind, by_level, diff_bundles, required_bump
from promptops.versioning.engine import Reached, reached_templates
from promptops.versioning.semver import Version, next_version, satisfies


def build_report(start: Path, base: str, head: str | None, path: Path | None) -> ReviewReport:
    repo = open_repo(start)
    top = repo.top
    refs = resolve(repo, base, head)
    if path is not None:
        folder = path if (path / MANIFEST).is_file() or not path.exists() else find_package(path)
        rels = [folder.resolve().relative_to(top).as_posix()]
    else:
        everywhere = packages_in(repo, refs.base) | packages_in(repo, refs.head)
        rels = sorted(everywhere) if len(everywhere) == 1 else touched_packages(repo, refs)
    # Both ends share one memo and one include graph: a file with the same content at
    # both ends (a blob id, or the bytes) is parsed and validated once, and its template
    # parsed once; the ASTs are kept for the lint gate, which inspects HEAD's. The memo
    # holds both ends whole, unbounded like the index's ASTs beside it (a one-shot review
    # has no commits to accumulate): FileMemo's default bound of 50,000 entries, made for
    # serve's follower, was then cleared wholesale two or three times a build past ~25,000
    # prompts, so BASE validated and parsed every file again, prevalidation was skipped
    # and the diff's CPU grew as n^1.3 to 100,000 prompts (docs/benchmarks.md).
    memo = FileMemo(max_entries=sys.maxsize)
    index = TemplateIndex(memo, keep_asts=True)
    with collector.paused():  # its full passes walked both live builds: 30% of the CPU
        report = ReviewReport(
            base=RefInfo(spec=refs.base_spec, commit=refs.base),
            head=RefInfo(spec=refs.head_spec, commit=refs.head),
            packages=with_channels(top, [review_package(top / rel, rel, refs, index)
                                         for rel in rels], refs.base, refs.head),
        )
        _promote()
    return report


def _promote() -> None:
    """Move every object the paused collector let pile up in its youngest generation to
    the oldest, as surviving collections would have: the first young collection after
    the pause then has nothing to walk.

    With the collector paused, every object the review allocated stays young, so the
    first allocation after the pause ran a young collection over all of them (0.2 s at
    5,000 prompts, on one core, after the render pool is done: the review's last
    stretch) to free almost nothing. ``gc.freeze`` + ``gc.unfreeze`` move them to the
    oldest generation in constant time; what is garbage among them is collected by the
    next full collection, as an old object's would be.
    """
    gc.freeze()
    gc.unfreeze()


_Side = tuple["Source | None", "Build | None", "Bundle | None", "str | None"]


def _side(folder: Path, ref: str | None, index: TemplateIndex, *, first: bool = False,
          validated: Callable[[Build], None] | None = None,
          compiled: Compiled | None = None) -> _Side:
    """(source, build, bundle, error) of one end; all None when the package is absent.

    The build is kept: the review's cases and both gates use its package, not a second
    load of it. The ``first`` end built validates its prompt files on both cores
    (:mod:`promptops.review.warm`); the other finds most of them in the memo.
    ``validated(build)`` is called once the package validates, before its bundle is
    compiled (HEAD's lint gate forks there: it reads the package, never the bundle).
    Both ends compile through ``compiled``: a prompt file the same at both ends is
    compiled once.
    """
    try:
        source = open_source(folder, ref)
        if ref is None and not (folder / MANIFEST).is_file():
            return None, None, None, None
        if MANIFEST not in source.files():
            return None, None, None, None
        build = Build(folder, ref, source=source, memo=index.memo, index=index,
                      compiled=compiled)
        build.source.prefetch()  # a working tree's files read directly, not path by path
        if first:
            prevalidate(build.source, index)
        if validated is not None:  # (it reads build.package: PackageError as the bundle's)
            validated(build)
        return build.source, build, build.bundle, None
    except PackageError as exc:
        lines = str(exc).splitlines()
        more = f"\n... and {len(lines) - 20} more" if len(lines) > 20 else ""
        return None, None, None, "\n".join(lines[:20]) + more
    except PackageAbsent:  # added or removed between the two ends: news, not a failure
        return None, None, None, None


def review_package(folder: Path, rel: str, refs: Refs, index: TemplateIndex) -> PackageReview:
    # HEAD first: its lint gate starts as soon as its package validates, on the other
    # core (review/early.py), while this one compiles HEAD's bundle and builds BASE,
    # which the shared memo makes cheap
    started: list[Lint] = []
    compiled = Compiled(encoded=False)  # its bundles are never written nor identified
    head_src, head_pkg, new, new_err = _side(
        folder, refs.head, index, first=True, compiled=compiled,
        validated=lambda head: started.append(Lint.start(head, len(head.package.prompts))))
    lint = started[0] if started else Lint.start(None, 0)  # (stopped below on an error)
    base_src, base_pkg, old, old_err = _side(folder, refs.base, index, compiled=compiled)
    if old_err or new_err:
        lint.stop()
        return _invalid(rel, old, new, f"{'BASE' if old_err else 'HEAD'}: {old_err or new_err}")
    if old is None and new is None:
        lint.stop()
        return _invalid(rel, None, None, f"no {MANIFEST} at either end")
    status = "added" if old is None else "removed" if new is None else "changed"
    old = old or _empty(new)
    new = new or _empty(old)
    reached: Reached = {}
    changes = by_level(diff_bundles(old, new, index=index, reached=reached))
    renames = {str(c.old): str(c.prompt) for c in changes if c.kind is Kind.prompt_renamed}
    plan = gates.test_plan(head_pkg)
    prompts: list[PromptReview] = []
    unaffected: list[str] = []
    shared = Shared(old, new, index, head_pkg, lint, reached)
    if status == "changed":
        assert head_src is not None and base_src is not None
        prompts, unaffected = _compared(_Ends(refs, old, new, base_src, head_src, base_pkg,
                                              head_pkg), shared, plan, changes, renames)
        if not changes and not prompts and old["package"] == new["package"]:
            status = "unchanged"
    else:
        shared.render_all([], plan)
    tests = (gates.test_verdict(plan, shared.outcomes) if isinstance(plan, gates.TestPlan)
             else plan)
    return _package(rel, status, old, new, changes, prompts, unaffected, shared.lint, tests,
                    shared.items)


@dataclass(frozen=True)
class _Ends:
    """Both ends of a changed package: refs, bundles, sources and builds."""

    refs: Refs
    old: Bundle
    new: Bundle
    base_src: Source
    head_src: Source
    base_pkg: Build | None
    head_pkg: Build | None


def _compared(e: _Ends, shared: Shared, plan: gates.TestPlan | gates.CheckStatus,
              changes: list[Change], renames: dict[str, str]
              ) -> tuple[list[PromptReview], list[str]]:
    """The reviews of a changed package's prompts, and the names of those unaffected
    (a prompt whose every input is the same at both ends is not rendered)."""
    prompts: list[PromptReview] = []
    unaffected: list[str] = []
    head_cases = (review_cases(plan.cases) if isinstance(plan, gates.TestPlan)
                  else cases_for(e.head_src, e.new, e.head_pkg.package if e.head_pkg else None))
    base_cases = cases_for(e.base_src, e.old, e.base_pkg.package if e.base_pkg else None,
                           smoke=False)  # (_cases keeps none of BASE's smoke cases)
    cases = _cases(head_cases, base_cases, renames)
    by_prompt: dict[str | None, list[Change]] = {}
    for change in changes:
        by_prompt.setdefault(change.prompt, []).append(change)
    old_names = {n: o for o, n in renames.items()}
    a = {p["name"]: p for p in e.old["prompts"]}
    pairs = [(a[old_names.get(p["name"], p["name"])], p) for p in e.new["prompts"]
             if old_names.get(p["name"], p["name"]) in a]
    # A prompt whose every input is the same at both ends renders the same for any
    # arguments: it is unaffected without rendering (see Shared.same_render).
    rendered = [(pa, pb) for pa, pb in pairs
                if by_prompt.get(pb["name"]) or not shared.same_render(pa, pb)]
    skipped = {pb["name"] for pa, pb in pairs} - {pb["name"] for pa, pb in rendered}
    unit_of = {pb["name"]: i for i, (pa, pb) in enumerate(rendered)}
    done = 0  # pairs reviewed, in order

    def review(units: int) -> None:
        """Review the pairs, in order, up to the first whose unit is not rendered yet:
        called while the pool renders the rest (Shared.render_all's ``ready``)."""
        nonlocal done
        while done < len(pairs):
            pa, pb = pairs[done]
            name = pb["name"]
            if name in skipped:
                unaffected.append(name)
            elif unit_of[name] >= units:
                return
            else:
                one = _prompt(e.refs, shared, e.old, e.new, e.base_src, e.head_src, pa, pb,
                              cases.get(name, []), by_prompt.get(name, []))
                if one.rendered_changed or one.changes:
                    prompts.append(one)
                else:  # counted once: a prompt is changed, renamed or unaffected
                    unaffected.append(name)
            done += 1

    shared.render_all([(pa["name"], pb["name"], [c.arguments for c in cases.get(
        pb["name"], [])]) for pa, pb in rendered], plan, ready=review)
    review(len(rendered))
    return prompts, unaffected


def _empty(other: Bundle | None) -> Bundle:
    """The side a package is missing from: the other side's identity, serving nothing."""
    assert other is not None
    return {**other, "prompts": [], "templates": {}, "resources": {}}


def _cases(head: list[ReviewCase], base: list[ReviewCase],
           renames: dict[str, str]) -> dict[str, list[ReviewCase]]:
    """HEAD's cases per prompt, plus cases only BASE had (a deleted test still shows)."""
    out: dict[str, list[ReviewCase]] = {}
    for case in head:
        out.setdefault(case.prompt, []).append(case)
    for case in base:
        if case.smoke:
            continue
        name = renames.get(case.prompt, case.prompt)
        mine = out.setdefault(name, [])
        if all(c.name != case.name for c in mine):
            mine.append(ReviewCase(name, case.name, case.arguments))
    return out


def _prompt(refs: Refs, shared: Shared, old: Bundle, new: Bundle, base_src: Source | None,
            head_src: Source | None, a: Prompt, b: Prompt,
            cases: list[ReviewCase], changes: list[Change]) -> PromptReview:
    index = shared.index
    rendered = []
    for case in cases:
        diff = labelled(shared.rendered_diff(a["name"], b["name"], case.arguments),
                        f"{refs.base_spec}: {case.name}", f"{refs.head_spec}: {case.name}")
        if diff:
            rendered.append(_rendered(case, diff, *shared.adapted(a["name"], b["name"],
                                                                   case.arguments)))
    sources: list[FileDiff] = []
    pairs: list[tuple[str | None, str | None]] = [(a["source"], b["source"])]
    known = shared.reached.get(b["name"]) if a["name"] == b["name"] else None
    ta, tb = known or (reached_templates(old, a, index), reached_templates(new, b, index))
    pairs += [(p if p in ta else None, p if p in tb else None)
              for p in sorted(ta.keys() | tb.keys()) if ta.get(p) != tb.get(p)]
    for pa, pb in pairs:
        found = shared.source_diff(refs, base_src, head_src, pa, pb)
        if found is not None:
            sources.append(found)
    level = required_bump(changes)
    return PromptReview(
        name=b["name"], old_name=a["name"] if a["name"] != b["name"] else None,
        level=level.value if level else None,
        changes=[_item(c, _excerpts(old, a, new, b, c), shared.items) for c in changes],
        source_diffs=sources, rendered=rendered, cases_rendered=len(cases),
        rendered_changed=bool(rendered),
    )


def _rendered(case: ReviewCase, diff: str, base: list[str], head: list[str]) -> RenderedDiff:
    return RenderedDiff(case=case.name, smoke=case.smoke, arguments=case.arguments, diff=diff,
                        base_arguments=base, head_arguments=head)


def _item(c: Change, excerpts: tuple[list[str], list[str]] | None = None,
          kept: dict[int, ChangeItem] | None = None) -> ChangeItem:
    """The change as the report shows it; with ``kept``, the item without excerpts is
    kept there by the change's identity, for the package's list of changes (made after
    the renders, on one core: 5,000 items validated a second time, at 5,000 prompts)."""
    data = c.to_json()
    item = ChangeItem.model_validate(data)
    if kept is not None:
        kept[id(c)] = item
    if excerpts is None:
        return item
    return ChangeItem.model_validate({**data, "old_excerpt": excerpts[0],
                                      "new_excerpt": excerpts[1]})  # (a copy cost more)


def _excerpts(old: Bundle, a: Prompt, new: Bundle, b: Prompt, c: Change
              ) -> tuple[list[str], list[str]] | None:
    """A template text change as a person reads it: the first changed line of each message
    or file it names, at each end (``message 1: Write a {{ type }} commit…``)."""
    if c.kind is not Kind.template_changed or not isinstance(c.new, list):
        return None
    before: list[str] = []
    after: list[str] = []
    for what in c.new:
        what = str(what)
        if what.startswith("message "):
            i = int(what.split()[1]) - 1
            x, y = _message_text(old, a, i), _message_text(new, b, i)
        elif what in old["templates"] or what in new["templates"]:
            x, y = old["templates"].get(what), new["templates"].get(what)
        else:  # "2 -> 3 messages"
            before.append(what)
            after.append(what)
            continue
        lx, ly = _first_change(x or "", y or "")
        before.append(f"{what}: {lx}" if x is not None else f"{what}: (none)")
        after.append(f"{what}: {ly}" if y is not None else f"{what}: (none)")
    return before, after


def _message_text(bundle: Bundle, prompt: Prompt, i: int) -> str | None:
    if i >= len(prompt["messages"]):
        return None
    m = prompt["messages"][i]
    if "template" in m:
        return bundle["templates"].get(m["template"])
    text = m.get("text")
    return text if isinstance(text, str) else None


@functools.lru_cache(maxsize=256)
def _first_change(a: str, b: str) -> tuple[str, str]:
    """The first line that differs at each end ('' when an end has none there); kept by
    the two texts, as a partial every prompt reaches is one change in each prompt's
    items (5,000 line matchings of the same two files, at 5,000 prompts)."""
    x, y = a.splitlines(), b.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, x, y, autojunk=False).get_opcodes():
        if tag != "equal":
            return (x[i1] if i1 < i2 else ""), (y[j1] if j1 < j2 else "")
    return "", ""


def _package(rel: str, status: str, old: Bundle, new: Bundle, changes: list[Change],
             prompts: list[PromptReview], unaffected: list[str], lint: gates.CheckStatus,
             tests: gates.CheckStatus, kept: dict[int, ChangeItem]) -> PackageReview:
    need = required_bump(changes)
    items = [kept.get(id(c)) or _item(c) for c in changes]
    v_old, v_new = old["package"]["version"], new["package"]["version"]
    ok, suggested = True, None
    if status == "changed":
        ok = satisfies(Version.parse(v_old), Version.parse(v_new), need)
        suggested = str(next_version(Version.parse(v_old), need)) if need else None
    kinds = [c.kind for c in changes]
    return PackageReview(
        path=rel, name=new["package"]["name"], status=status,  # type: ignore[arg-type]
        base_version=None if status == "added" else v_old,
        head_version=None if status == "removed" else v_new,
        required_bump=need.value if need else None, version_ok=ok, suggested_version=suggested,
        lint=lint, tests=tests,
        counts=Counts(added=kinds.count(Kind.prompt_added),
                      removed=kinds.count(Kind.prompt_removed),
                      renamed=kinds.count(Kind.prompt_renamed),
                      changed=sum(1 for p in prompts if p.old_name is None),
                      unaffected=len(unaffected)),
        breaking=[i for c, i in zip(changes, items, strict=True) if c.breaking],
        changes=items,
        added=[c.prompt for c in changes if c.kind is Kind.prompt_added and c.prompt],
        removed=[c.prompt for c in changes if c.kind is Kind.prompt_removed and c.prompt],
        renamed=[Rename(old=c.old, new=c.new) for c in changes if c.kind is Kind.prompt_renamed],
        prompts=prompts, unaffected=unaffected,
    )


def _invalid(rel: str, old: Bundle | None, new: Bundle | None, error: str) -> PackageReview:
    some = new or old
    na = gates.CheckStatus(status="not_available", detail="package does not load")
    return PackageReview(
        path=rel, name=some["package"]["name"] if some else rel, status="invalid", error=error,
        base_version=old["package"]["version"] if old else None,
        head_version=new["package"]["version"] if new else None, required_bump=None,
        version_ok=False, suggested_version=None, lint=na, tests=na,
        counts=Counts(added=0, removed=0, renamed=0, changed=0, unaffected=0),
        breaking=[], changes=[], added=[], removed=[], renamed=[], prompts=[], unaffected=[],
    )
