"""Build the review report: every touched package, compared from BASE to HEAD.

The change list comes from the diff engine (so a review, `version` and `release`
agree on what is breaking); on top of it each prompt present at both ends is rendered
with the same arguments at both ends, which is what shows a partial edit in every
prompt it reaches and proves the others unaffected.
"""

from __future__ import annotations

from pathlib import Path

from promptops.errors import PackageError, PromptopsError
from promptops.pipeline.bundle import compile_bundle
from promptops.pipeline.bundle_types import Bundle, Prompt
from promptops.pipeline.source import MANIFEST, Source, find_package, open_source
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import load_package
from promptops.render.renderer import Renderer
from promptops.review import gates
from promptops.review.cases import ReviewCase, cases_for
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
from promptops.review.rendered import render_lines, source_lines, unified
from promptops.versioning import Change, Kind, by_level, diff_bundles, required_bump
from promptops.versioning.engine import reached_templates
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
    index = TemplateIndex()  # the include graph of both ends, parsed once
    return ReviewReport(
        base=RefInfo(spec=refs.base_spec, commit=refs.base),
        head=RefInfo(spec=refs.head_spec, commit=refs.head),
        packages=[review_package(top / rel, rel, refs, index) for rel in rels],
    )


def _side(folder: Path, ref: str | None) -> tuple[Source | None, Bundle | None, str | None]:
    """(source, bundle, error) of one end; (None, None, None) when the package is absent."""
    try:
        source = open_source(folder, ref)
        if ref is None and not (folder / MANIFEST).is_file():
            return None, None, None
        if MANIFEST not in source.files():
            return None, None, None
        return source, compile_bundle(load_package(source)), None
    except PackageError as exc:
        lines = str(exc).splitlines()
        more = f"\n... and {len(lines) - 20} more" if len(lines) > 20 else ""
        return None, None, "\n".join(lines[:20]) + more
    except PromptopsError as exc:
        if "does not exist at" in str(exc):
            return None, None, None
        raise


def review_package(folder: Path, rel: str, refs: Refs, index: TemplateIndex) -> PackageReview:
    base_src, old, old_err = _side(folder, refs.base)
    head_src, new, new_err = _side(folder, refs.head)
    if old_err or new_err:
        return _invalid(rel, old, new, f"{'BASE' if old_err else 'HEAD'}: {old_err or new_err}")
    if old is None and new is None:
        return _invalid(rel, None, None, f"no {MANIFEST} at either end")
    status = "added" if old is None else "removed" if new is None else "changed"
    old = old or _empty(new)
    new = new or _empty(old)
    changes = by_level(diff_bundles(old, new, index=index))
    renames = {str(c.old): str(c.prompt) for c in changes if c.kind is Kind.prompt_renamed}
    prompts: list[PromptReview] = []
    unaffected: list[str] = []
    if status == "changed":
        cases = _cases(head_src, new, base_src, old, renames)
        a = {p["name"]: p for p in old["prompts"]}
        for spec in new["prompts"]:
            name = spec["name"]
            old_name = next((o for o, n in renames.items() if n == name), name)
            if old_name not in a:
                continue
            review = _prompt(refs, index, old, new, base_src, head_src, a[old_name], spec,
                             cases.get(name, []), [c for c in changes if c.prompt == name])
            if review.rendered_changed or review.changes:
                prompts.append(review)
            if not review.rendered_changed:
                unaffected.append(name)
        if not changes and not prompts and old["package"] == new["package"]:
            status = "unchanged"
    return _package(folder, rel, status, old, new, changes, prompts, unaffected, head_src)


def _empty(other: Bundle | None) -> Bundle:
    """The side a package is missing from: the other side's identity, serving nothing."""
    assert other is not None
    return {**other, "prompts": [], "templates": {}, "resources": {}}


def _cases(head_src: Source | None, new: Bundle, base_src: Source | None, old: Bundle,
           renames: dict[str, str]) -> dict[str, list[ReviewCase]]:
    """HEAD's cases per prompt, plus cases only BASE had (a deleted test still shows)."""
    out: dict[str, list[ReviewCase]] = {}
    assert head_src is not None and base_src is not None
    for case in cases_for(head_src, new):
        out.setdefault(case.prompt, []).append(case)
    for case in cases_for(base_src, old):
        if case.smoke:
            continue
        name = renames.get(case.prompt, case.prompt)
        mine = out.setdefault(name, [])
        if all(c.name != case.name for c in mine):
            mine.append(ReviewCase(name, case.name, case.arguments))
    return out


def _prompt(refs: Refs, index: TemplateIndex, old: Bundle, new: Bundle, base_src: Source | None,
            head_src: Source | None, a: Prompt, b: Prompt,
            cases: list[ReviewCase], changes: list[Change]) -> PromptReview:
    ra, rb = Renderer(old), Renderer(new)
    rendered = []
    for case in cases:
        diff = unified(render_lines(ra, a["name"], case.arguments),
                       render_lines(rb, b["name"], case.arguments),
                       f"{refs.base_spec}: {case.name}", f"{refs.head_spec}: {case.name}")
        if diff:
            rendered.append(_rendered(case, diff))
    sources: list[FileDiff] = []
    pairs: list[tuple[str | None, str | None]] = [(a["source"], b["source"])]
    ta, tb = reached_templates(old, a, index), reached_templates(new, b, index)
    pairs += [(p if p in ta else None, p if p in tb else None)
              for p in sorted(ta.keys() | tb.keys()) if ta.get(p) != tb.get(p)]
    for pa, pb in pairs:
        diff = unified(source_lines(base_src, pa), source_lines(head_src, pb),
                       f"{refs.base_spec}: {pa or '/dev/null'}",
                       f"{refs.head_spec}: {pb or '/dev/null'}")
        if diff:
            sources.append(FileDiff(old_path=pa, new_path=pb, diff=diff))
    level = required_bump(changes)
    return PromptReview(
        name=b["name"], old_name=a["name"] if a["name"] != b["name"] else None,
        level=level.value if level else None, changes=[_item(c) for c in changes],
        source_diffs=sources, rendered=rendered, cases_rendered=len(cases),
        rendered_changed=bool(rendered),
    )


def _rendered(case: ReviewCase, diff: str) -> RenderedDiff:
    return RenderedDiff(case=case.name, smoke=case.smoke, arguments=case.arguments, diff=diff)


def _item(c: Change) -> ChangeItem:
    return ChangeItem.model_validate(c.to_json())


def _package(folder: Path, rel: str, status: str, old: Bundle, new: Bundle, changes: list[Change],
             prompts: list[PromptReview], unaffected: list[str],
             head_src: Source | None) -> PackageReview:
    need = required_bump(changes)
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
        lint=gates.lint_status(head_src), tests=gates.test_status(head_src, folder),
        counts=Counts(added=kinds.count(Kind.prompt_added),
                      removed=kinds.count(Kind.prompt_removed),
                      renamed=kinds.count(Kind.prompt_renamed),
                      changed=sum(1 for p in prompts if p.old_name is None),
                      unaffected=len(unaffected)),
        breaking=[_item(c) for c in changes if c.breaking],
        changes=[_item(c) for c in changes],
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
