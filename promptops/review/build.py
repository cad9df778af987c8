"""Build the review report: every touched package, compared from BASE to HEAD.

The change list comes from the diff engine (so a review, `version` and `release`
agree on what is breaking); on top of it each prompt present at both ends is rendered
with the same arguments at both ends, which is what shows a partial edit in every
prompt it reaches and proves the others unaffected.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from jinja2 import TemplateSyntaxError

from promptops.errors import PackageAbsent, PackageError
from promptops.pipeline import collector
from promptops.pipeline.build import Build
from promptops.pipeline.bundle_types import Bundle, Prompt
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import MANIFEST, Source, find_package, inside, open_source
from promptops.pipeline.templates import TemplateIndex
from promptops.render.codecache import CodeCache
from promptops.render.renderer import Renderer
from promptops.review import gates
from promptops.review.arguments import adapt
from promptops.review.cases import ReviewCase, cases_for, review_cases
from promptops.review.channels import with_channels
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
from promptops.testing.cases import Case
from promptops.testing.runner import Outcome, SnapshotPolicy, auto_jobs, run_case
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
    # Both ends share one memo and one include graph: a file with the same content at
    # both ends (a blob id, or the bytes) is parsed and validated once, and its template
    # parsed once; the ASTs are kept for the lint gate, which inspects HEAD's.
    memo = FileMemo()
    index = TemplateIndex(memo, keep_asts=True)
    with collector.paused():  # its full passes walked both live builds: 30% of the CPU
        return ReviewReport(
            base=RefInfo(spec=refs.base_spec, commit=refs.base),
            head=RefInfo(spec=refs.head_spec, commit=refs.head),
            packages=with_channels(top, [review_package(top / rel, rel, refs, index)
                                         for rel in rels], refs.base, refs.head),
        )


_Side = tuple["Source | None", "Build | None", "Bundle | None", "str | None"]


def _side(folder: Path, ref: str | None, index: TemplateIndex) -> _Side:
    """(source, build, bundle, error) of one end; all None when the package is absent.

    The build is kept: the review's cases and both gates use its package, not a second
    load of it.
    """
    try:
        source = open_source(folder, ref)
        if ref is None and not (folder / MANIFEST).is_file():
            return None, None, None, None
        if MANIFEST not in source.files():
            return None, None, None, None
        build = Build(folder, ref, source=source, memo=index.memo, index=index)
        return build.source, build, build.bundle, None
    except PackageError as exc:
        lines = str(exc).splitlines()
        more = f"\n... and {len(lines) - 20} more" if len(lines) > 20 else ""
        return None, None, None, "\n".join(lines[:20]) + more
    except PackageAbsent:  # added or removed between the two ends: news, not a failure
        return None, None, None, None


def review_package(folder: Path, rel: str, refs: Refs, index: TemplateIndex) -> PackageReview:
    base_src, base_pkg, old, old_err = _side(folder, refs.base, index)
    head_src, head_pkg, new, new_err = _side(folder, refs.head, index)
    if old_err or new_err:
        return _invalid(rel, old, new, f"{'BASE' if old_err else 'HEAD'}: {old_err or new_err}")
    if old is None and new is None:
        return _invalid(rel, None, None, f"no {MANIFEST} at either end")
    status = "added" if old is None else "removed" if new is None else "changed"
    old = old or _empty(new)
    new = new or _empty(old)
    changes = by_level(diff_bundles(old, new, index=index))
    renames = {str(c.old): str(c.prompt) for c in changes if c.kind is Kind.prompt_renamed}
    plan = gates.test_plan(head_pkg)
    prompts: list[PromptReview] = []
    unaffected: list[str] = []
    shared = _Shared(old, new, index, head_pkg)
    if status == "changed":
        assert head_src is not None and base_src is not None
        head_cases = (review_cases(plan.cases) if isinstance(plan, gates.TestPlan)
                      else cases_for(head_src, new, head_pkg.package if head_pkg else None))
        base_cases = cases_for(base_src, old, base_pkg.package if base_pkg else None)
        cases = _cases(head_cases, base_cases, renames)
        by_prompt: dict[str | None, list[Change]] = {}
        for change in changes:
            by_prompt.setdefault(change.prompt, []).append(change)
        old_names = {n: o for o, n in renames.items()}
        a = {p["name"]: p for p in old["prompts"]}
        pairs = [(a[old_names.get(p["name"], p["name"])], p) for p in new["prompts"]
                 if old_names.get(p["name"], p["name"]) in a]
        # A prompt whose every input is the same at both ends renders the same for any
        # arguments: it is unaffected without rendering (see _Shared.same_render).
        rendered = [(pa, pb) for pa, pb in pairs
                    if by_prompt.get(pb["name"]) or not shared.same_render(pa, pb)]
        shared.render_all([(pa["name"], pb["name"], [c.arguments for c in cases.get(
            pb["name"], [])]) for pa, pb in rendered], plan)
        skipped = {pb["name"] for pa, pb in pairs} - {pb["name"] for pa, pb in rendered}
        for pa, pb in pairs:
            name = pb["name"]
            if name in skipped:
                unaffected.append(name)
                continue
            review = _prompt(refs, shared, old, new, base_src, head_src, pa, pb,
                             cases.get(name, []), by_prompt.get(name, []))
            if review.rendered_changed or review.changes:
                prompts.append(review)
            else:  # counted once: a prompt is changed, renamed or unaffected
                unaffected.append(name)
        if not changes and not prompts and old["package"] == new["package"]:
            status = "unchanged"
    else:
        shared.render_all([], plan)
    tests = (gates.test_verdict(plan, shared.outcomes) if isinstance(plan, gates.TestPlan)
             else plan)
    return _package(rel, status, old, new, changes, prompts, unaffected, shared.lint, tests)


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


# The package fields the renderer reads none of; any other difference (limits, system
# role, whitespace mode, or a field added later) renders every prompt at both ends.
_METADATA = frozenset({"name", "version", "description", "instructions", "cacheScope"})

_Unit = tuple[str, str, list[dict[str, object]], list[int]]  # base name, head name,
# the argument sets to render at both ends, the indices of HEAD's test cases to run


class _Shared:
    """Work every prompt of one package shares.

    One renderer per side, both drawing on one :class:`CodeCache`, so a template source
    is compiled once however many prompts and sides hold it (an unchanged prompt's
    text is the same at BASE and HEAD); each file pair's source diff computed once
    however many prompts include the file (a partial 5,000 prompts include is one
    diff); and the test gate run with the HEAD renderer, whose templates the rendered
    diff has just compiled, instead of a second test run compiling them all again.
    """

    def __init__(self, old: Bundle, new: Bundle, index: TemplateIndex,
                 head: Build | None = None) -> None:
        self.index = index
        self.head = head
        self.bundles = (old, new)
        code = CodeCache()
        self.old, self.new = Renderer(old, code), Renderer(new, code)
        self.diffs: dict[tuple[str | None, str | None], str] = {}
        self.rendered: dict[tuple[str, str, str], tuple[Lines, Lines]] = {}
        self.outcomes: list[Outcome] = []
        self.lint = gates.NO_HEAD
        self._settings_same = (
            {k: v for k, v in old["package"].items() if k not in _METADATA}
            == {k: v for k, v in new["package"].items() if k not in _METADATA})

    def same_render(self, a: Prompt, b: Prompt) -> bool:
        """True when ``a`` at BASE and ``b`` at HEAD render alike for any arguments,
        proven from what a render reads: the prompt itself, the package's render
        settings, every template its templated fields reach (through static includes,
        imports and extends: a dynamic one could reach any template, so it proves
        nothing) and every resource file it serves. False when any may differ."""
        if a != b or not self._settings_same:
            return False
        old, new = self.bundles
        for m in a["messages"]:
            file = m.get("file")
            if file is not None and old["resources"].get(file) != new["resources"].get(file):
                return False
        todo: list[str] = [m["template"] for m in a["messages"] if "template" in m]
        sources = [s for m in a["messages"] for s in (m.get("text"), m.get("uri"))
                   if isinstance(s, str)]
        described = a.get("resultDescription")
        if isinstance(described, str):
            sources.append(described)
        seen: set[str] = set()
        while sources or todo:
            if todo:
                name = todo.pop()
                if name in seen:
                    continue
                seen.add(name)
                source = old["templates"].get(name)
                if source != new["templates"].get(name):
                    return False
                if source is None:  # missing at both ends: the same failure at both
                    continue
            else:
                source = sources.pop()
            try:
                refs = self.index.references(source) if "{%" in source else ()
            except TemplateSyntaxError:
                return False
            for ref, _ in refs:
                norm = inside(ref) if ref is not None else None
                if ref is None or norm is None:
                    return False
                todo += [ref, norm]
        return True

    def render_all(self, units: list[tuple[str, str, list[dict[str, object]]]],
                   plan: gates.TestPlan | gates.CheckStatus, jobs: int | None = None) -> None:
        """Render each unit's argument sets at both ends, run HEAD's test cases and lint
        HEAD, on every core when it pays.

        A prompt's renders and its test cases run in one place (a process of the pool,
        or this one), so its templates compile once for both. While the pool renders,
        this process lints. Below the test runner's threshold a pool costs more than it
        saves and everything runs here.
        """
        tests = plan.cases if isinstance(plan, gates.TestPlan) else []
        by_name: dict[str, list[int]] = {}
        for i, case in enumerate(tests):
            by_name.setdefault(case.prompt, []).append(i)
        work: list[_Unit] = [(a, b, args, by_name.pop(b, [])) for a, b, args in units]
        work += [(name, name, [], idx) for name, idx in by_name.items()]  # unrendered prompts
        policy = plan.policy if isinstance(plan, gates.TestPlan) else None
        jobs = auto_jobs(sum(len(u[2]) * 2 + len(u[3]) for u in work)) if jobs is None else jobs
        done: list[tuple[list[tuple[Lines, Lines]], list[Outcome]]]
        if jobs <= 1:
            self.lint = self._lint()
            done = _work((self.old, self.new), tests, policy, work)
        else:
            from concurrent.futures import ProcessPoolExecutor

            size = max(1, min(250, len(work) // (jobs * 4) or 1))
            chunks = [work[i:i + size] for i in range(0, len(work), size)]
            with ProcessPoolExecutor(jobs, initializer=_init_render,
                                     initargs=(*self.bundles, tests, policy)) as pool:
                futures = [pool.submit(_render_chunk, chunk) for chunk in chunks]
                self.lint = self._lint()  # this process's share while the pool renders
                done = [pair for f in futures for pair in f.result()]
        outcomes: list[Outcome | None] = [None] * len(tests)
        for (a, b, args, idx), (lines, results) in zip(work, done, strict=True):
            for one, pair in zip(args, lines, strict=True):
                self.rendered[(a, b, _key(one))] = pair
            for i, outcome in zip(idx, results, strict=True):
                outcomes[i] = outcome
        self.outcomes = [o for o in outcomes if o is not None]
        assert len(self.outcomes) == len(tests)

    def _lint(self) -> gates.CheckStatus:
        return gates.lint_status(self.head)

    def render(self, a: str, b: str, args: dict[str, object]) -> tuple[Lines, Lines]:
        """The request's lines at BASE and at HEAD, each end with the arguments it
        accepts (:mod:`promptops.review.arguments`)."""
        done = self.rendered.get((a, b, _key(args)))
        if done is not None:
            return done
        return _render_pair(self.old, self.new, a, b, args)

    def adapted(self, a: str, b: str, args: dict[str, object]) -> tuple[list[str], list[str]]:
        """What each end's arguments leave out or add, and why (BASE's, HEAD's)."""
        pa, pb = self.old.prompts.get(a), self.new.prompts.get(b)
        return adapt(pa, pb, args)[1], adapt(pb, pa, args)[1]

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


def _render_pair(ra: Renderer, rb: Renderer, a: str, b: str, args: dict[str, object]
                 ) -> tuple[Lines, Lines]:
    pa, pb = ra.prompts.get(a), rb.prompts.get(b)
    return (render_lines(ra, a, adapt(pa, pb, args)[0]),
            render_lines(rb, b, adapt(pb, pa, args)[0]))


def _key(args: dict[str, object]) -> str:
    return json.dumps(args, sort_keys=True, default=str)


def _work(renderers: tuple[Renderer, Renderer], tests: list[Case],
          policy: SnapshotPolicy | None, units: list[_Unit]
          ) -> list[tuple[list[tuple[Lines, Lines]], list[Outcome]]]:
    """Each unit's lines at both ends and its test outcomes (run with the HEAD renderer)."""
    ra, rb = renderers
    out = []
    for a, b, args, idx in units:
        lines = [_render_pair(ra, rb, a, b, one) for one in args]
        assert policy is not None or not idx
        results = [run_case(rb, tests[i], policy) for i in idx] if policy is not None else []
        out.append((lines, results))
    return out


# set in a render_all worker process (inherited under fork)
_worker: tuple[tuple[Renderer, Renderer], list[Case], SnapshotPolicy | None] | None = None


def _init_render(old: Bundle, new: Bundle, tests: list[Case],
                 policy: SnapshotPolicy | None) -> None:
    global _worker
    code = CodeCache()
    _worker = ((Renderer(old, code), Renderer(new, code)), tests, policy)


def _render_chunk(units: list[_Unit]) -> list[tuple[list[tuple[Lines, Lines]], list[Outcome]]]:
    assert _worker is not None
    renderers, tests, policy = _worker
    return _work(renderers, tests, policy, units)


def _prompt(refs: Refs, shared: _Shared, old: Bundle, new: Bundle, base_src: Source | None,
            head_src: Source | None, a: Prompt, b: Prompt,
            cases: list[ReviewCase], changes: list[Change]) -> PromptReview:
    index = shared.index
    rendered = []
    for case in cases:
        diff = unified(*shared.render(a["name"], b["name"], case.arguments),
                       f"{refs.base_spec}: {case.name}", f"{refs.head_spec}: {case.name}")
        if diff:
            rendered.append(_rendered(case, diff, *shared.adapted(a["name"], b["name"],
                                                                   case.arguments)))
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
        level=level.value if level else None,
        changes=[_item(c, _excerpts(old, a, new, b, c)) for c in changes],
        source_diffs=sources, rendered=rendered, cases_rendered=len(cases),
        rendered_changed=bool(rendered),
    )


def _rendered(case: ReviewCase, diff: str, base: list[str], head: list[str]) -> RenderedDiff:
    return RenderedDiff(case=case.name, smoke=case.smoke, arguments=case.arguments, diff=diff,
                        base_arguments=base, head_arguments=head)


def _item(c: Change, excerpts: tuple[list[str], list[str]] | None = None) -> ChangeItem:
    item = ChangeItem.model_validate(c.to_json())
    if excerpts is None:
        return item
    return item.model_copy(update={"old_excerpt": excerpts[0], "new_excerpt": excerpts[1]})


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
        lx, ly = _first_change((x or "").splitlines(), (y or "").splitlines())
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


def _first_change(x: list[str], y: list[str]) -> tuple[str, str]:
    """The first line that differs at each end ('' when an end has none there)."""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, x, y, autojunk=False).get_opcodes():
        if tag != "equal":
            return (x[i1] if i1 < i2 else ""), (y[j1] if j1 < j2 else "")
    return "", ""


def _package(rel: str, status: str, old: Bundle, new: Bundle, changes: list[Change],
             prompts: list[PromptReview], unaffected: list[str], lint: gates.CheckStatus,
             tests: gates.CheckStatus) -> PackageReview:
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
        lint=lint, tests=tests,
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
