"""Build the review report: every touched package, compared from BASE to HEAD.

The change list comes from the diff engine (so a review, `version` and `release`
agree on what is breaking); on top of it each prompt present at both ends is rendered
with the same arguments at both ends, which is what shows a partial edit in every
prompt it reaches and proves the others unaffected.
"""

from __future__ import annotations

import json
from pathlib import Path

from promptops.errors import PackageError, PromptopsError
from promptops.pipeline.build import Build
from promptops.pipeline.bundle_types import Bundle, Prompt
from promptops.pipeline.source import MANIFEST, Source, find_package, open_source
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import Package
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
from promptops.review.rendered import Lines, render_lines, source_lines, unified
from promptops.testing.runner import auto_jobs
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


_Side = tuple["Source | None", "Build | None", "Bundle | None", "str | None"]


def _side(folder: Path, ref: str | None) -> _Side:
    """(source, build, bundle, error) of one end; all None when the package is absent.

    The build is kept: the review's cases and the test gate use its package, not a
    second load of it.
    """
    try:
        source = open_source(folder, ref)
        if ref is None and not (folder / MANIFEST).is_file():
            return None, None, None, None
        if MANIFEST not in source.files():
            return None, None, None, None
        build = Build(folder, ref, source=source)  # one load: bundle, cases and tests
        return source, build, build.bundle, None
    except PackageError as exc:
        lines = str(exc).splitlines()
        more = f"\n... and {len(lines) - 20} more" if len(lines) > 20 else ""
        return None, None, None, "\n".join(lines[:20]) + more
    except PromptopsError as exc:
        if "does not exist at" in str(exc):
            return None, None, None, None
        raise


def review_package(folder: Path, rel: str, refs: Refs, index: TemplateIndex) -> PackageReview:
    base_src, base_pkg, old, old_err = _side(folder, refs.base)
    head_src, head_pkg, new, new_err = _side(folder, refs.head)
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
        cases = _cases((head_src, head_pkg.package if head_pkg else None, new),
                       (base_src, base_pkg.package if base_pkg else None, old), renames)
        by_prompt: dict[str | None, list[Change]] = {}
        for change in changes:
            by_prompt.setdefault(change.prompt, []).append(change)
        old_names = {n: o for o, n in renames.items()}
        a = {p["name"]: p for p in old["prompts"]}
        shared = _Shared(old, new, index)
        shared.render_ahead([(old_names.get(p["name"], p["name"]), p["name"], c.arguments)
                             for p in new["prompts"] if old_names.get(p["name"], p["name"]) in a
                             for c in cases.get(p["name"], [])])
        for spec in new["prompts"]:
            name = spec["name"]
            old_name = old_names.get(name, name)
            if old_name not in a:
                continue
            review = _prompt(refs, shared, old, new, base_src, head_src, a[old_name], spec,
                             cases.get(name, []), by_prompt.get(name, []))
            if review.rendered_changed or review.changes:
                prompts.append(review)
            else:  # counted once: a prompt is changed, renamed or unaffected
                unaffected.append(name)
        if not changes and not prompts and old["package"] == new["package"]:
            status = "unchanged"
    return _package(folder, rel, status, old, new, changes, prompts, unaffected, head_src,
                    head_pkg)


def _empty(other: Bundle | None) -> Bundle:
    """The side a package is missing from: the other side's identity, serving nothing."""
    assert other is not None
    return {**other, "prompts": [], "templates": {}, "resources": {}}


def _cases(head: tuple[Source | None, Package | None, Bundle],
           base: tuple[Source | None, Package | None, Bundle],
           renames: dict[str, str]) -> dict[str, list[ReviewCase]]:
    """HEAD's cases per prompt, plus cases only BASE had (a deleted test still shows)."""
    out: dict[str, list[ReviewCase]] = {}
    assert head[0] is not None and base[0] is not None
    for case in cases_for(head[0], head[2], head[1]):
        out.setdefault(case.prompt, []).append(case)
    for case in cases_for(base[0], base[2], base[1]):
        if case.smoke:
            continue
        name = renames.get(case.prompt, case.prompt)
        mine = out.setdefault(name, [])
        if all(c.name != case.name for c in mine):
            mine.append(ReviewCase(name, case.name, case.arguments))
    return out


class _Shared:
    """Work every prompt of one package shares: one renderer per side (each template is
    compiled once, not once per prompt) and each file pair's source diff, computed once
    however many prompts include the file (a partial 5,000 prompts include is one diff)."""

    def __init__(self, old: Bundle, new: Bundle, index: TemplateIndex) -> None:
        self.index = index
        self.bundles = (old, new)
        self.old, self.new = Renderer(old), Renderer(new)
        self.diffs: dict[tuple[str | None, str | None], str] = {}
        self.rendered: dict[tuple[str, str, str], tuple[Lines, Lines]] = {}

    def render_ahead(self, requests: list[tuple[str, str, dict[str, object]]],
                     jobs: int | None = None) -> None:
        """Render many (base name, head name, arguments) requests on every core.

        Each request is rendered once per side wherever it runs; below the test runner's
        threshold a process pool costs more than it saves, and the requests are then
        rendered on demand in this process.
        """
        jobs = auto_jobs(len(requests)) if jobs is None else jobs
        if jobs <= 1:
            return
        from concurrent.futures import ProcessPoolExecutor

        size = max(1, min(500, len(requests) // (jobs * 4) or 1))
        chunks = [requests[i:i + size] for i in range(0, len(requests), size)]
        with ProcessPoolExecutor(jobs, initializer=_init_render,
                                 initargs=self.bundles) as pool:
            for chunk, lines in zip(chunks, pool.map(_render_chunk, chunks), strict=True):
                for (a, b, args), pair in zip(chunk, lines, strict=True):
                    self.rendered[(a, b, _key(args))] = pair

    def render(self, a: str, b: str, args: dict[str, object]) -> tuple[Lines, Lines]:
        """The request's lines at BASE and at HEAD."""
        done = self.rendered.get((a, b, _key(args)))
        if done is not None:
            return done
        return render_lines(self.old, a, args), render_lines(self.new, b, args)

    def source_diff(self, refs: Refs, base_src: Source | None, head_src: Source | None,
                    pa: str | None, pb: str | None) -> str:
        key = (pa, pb)
        if key not in self.diffs:
            same = (pa is not None and pa == pb and base_src is not None
                    and head_src is not None and base_src.blob_id(pa) is not None
                    and base_src.blob_id(pa) == head_src.blob_id(pb))  # unread: equal blobs
            self.diffs[key] = "" if same else unified(
                source_lines(base_src, pa), source_lines(head_src, pb),
                f"{refs.base_spec}: {pa or '/dev/null'}", f"{refs.head_spec}: {pb or '/dev/null'}")
        return self.diffs[key]


def _key(args: dict[str, object]) -> str:
    return json.dumps(args, sort_keys=True, default=str)


_worker: tuple[Renderer, Renderer] | None = None  # set in a render_ahead worker process


def _init_render(old: Bundle, new: Bundle) -> None:
    global _worker
    _worker = (Renderer(old), Renderer(new))


def _render_chunk(requests: list[tuple[str, str, dict[str, object]]]
                  ) -> list[tuple[Lines, Lines]]:
    assert _worker is not None
    ra, rb = _worker
    return [(render_lines(ra, a, args), render_lines(rb, b, args)) for a, b, args in requests]


def _prompt(refs: Refs, shared: _Shared, old: Bundle, new: Bundle, base_src: Source | None,
            head_src: Source | None, a: Prompt, b: Prompt,
            cases: list[ReviewCase], changes: list[Change]) -> PromptReview:
    index = shared.index
    rendered = []
    for case in cases:
        diff = unified(*shared.render(a["name"], b["name"], case.arguments),
                       f"{refs.base_spec}: {case.name}", f"{refs.head_spec}: {case.name}")
        if diff:
            rendered.append(_rendered(case, diff))
    sources: list[FileDiff] = []
    pairs: list[tuple[str | None, str | None]] = [(a["source"], b["source"])]
    ta, tb = reached_templates(old, a, index), reached_templates(new, b, index)
    pairs += [(p if p in ta else None, p if p in tb else None)
              for p in sorted(ta.keys() | tb.keys()) if ta.get(p) != tb.get(p)]
    for pa, pb in pairs:
        diff = shared.source_diff(refs, base_src, head_src, pa, pb)
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
             head_src: Source | None,
             head_build: Build | None = None) -> PackageReview:
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
        lint=gates.lint_status(head_src), tests=gates.test_status(head_src, folder, head_build),
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
