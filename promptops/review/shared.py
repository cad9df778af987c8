"""The work every prompt of one reviewed package shares: one renderer per side over one
code cache, each source diff once, and the rendered diffs and test gate run together
(in a process pool when the package is large).

Kept apart from :mod:`promptops.review.build`, which decides what to compare; this module
does the comparing, and owns the pool worker's per-process state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from jinja2 import TemplateSyntaxError

from promptops.pipeline.build import Build
from promptops.pipeline.bundle_types import Bundle, Prompt
from promptops.pipeline.source import Source, blob_id, inside
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.textshape import Scan
from promptops.render.renderer import Renderer
from promptops.render.result import PromptResult
from promptops.review import gates
from promptops.review.arguments import adapt
from promptops.review.early import Lint
from promptops.review.model import ChangeItem, FileDiff
from promptops.review.refs import Refs
from promptops.review.rendered import Lines, hunks, render_lines, source_lines, unified
from promptops.review.skeleton import ShapeCache
from promptops.sandbox.limits import Budget
from promptops.testing.cases import Case
from promptops.testing.runner import Outcome, SnapshotPolicy, auto_jobs, run_case
from promptops.versioning.engine import Reached

# The package fields the renderer reads none of; any other difference (limits, system
# role, whitespace mode, or a field added later) renders every prompt at both ends.
_METADATA = frozenset({"name", "version", "description", "instructions", "cacheScope"})

_Unit = tuple[str, str, list[dict[str, object]], list[int]]  # base name, head name,
# the argument sets to render at both ends, the indices of HEAD's test cases to run


class Shared:
    """Work every prompt of one package shares.

    One renderer per side, both drawing on one :class:`CodeCache`, so a template source
    is compiled once however many prompts and sides hold it (an unchanged prompt's
    text is the same at BASE and HEAD); each file pair's source diff computed once
    however many prompts include the file (a partial 5,000 prompts include is one
    diff); and the test gate run with the HEAD renderer, whose templates the rendered
    diff has just compiled, instead of a second test run compiling them all again.
    """

    def __init__(self, old: Bundle, new: Bundle, index: TemplateIndex,
                 head: Build | None = None, lint: Lint | None = None,
                 reached: Reached | None = None) -> None:
        self.index = index
        # each prompt's reached templates at both ends, as the diff engine found them
        self.reached: Reached = reached if reached is not None else {}
        self.head = head
        self._lint_gate = lint if lint is not None else Lint(head, fork=False)
        self.bundles = (old, new)
        code = ShapeCache(index.written_scans())
        self.old, self.new = Renderer(old, code), Renderer(new, code)
        self.diffs: dict[tuple[str | None, str | None], FileDiff | None] = {}
        # each unit's argument sets, and their diff hunks (review.rendered.hunks) by the
        # set's identity (valid: the list keeps every set alive)
        self.rendered: dict[tuple[str, str],
                            tuple[list[dict[str, object]], dict[int, Lines]]] = {}
        self.outcomes: list[Outcome] = []
        self.lint = gates.NO_HEAD
        self.items: dict[int, ChangeItem] = {}  # each change's report item, by identity
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
                   plan: gates.TestPlan | gates.CheckStatus, jobs: int | None = None,
                   ready: Callable[[int], None] | None = None) -> None:
        """Render each unit's argument sets at both ends, run HEAD's test cases and lint
        HEAD, on every core when it pays.

        A prompt's renders and its test cases run in one place (a process of the pool,
        or this one), so its templates compile once for both. While the pool renders,
        this process lints, unless :mod:`promptops.review.early` forked a child for that
        as soon as HEAD was built; then this process calls ``ready(n)`` as soon as the
        first ``n`` units' diffs are stored (the pool's chunks, in order), so the caller
        can diff them while the pool renders the rest. Below the test runner's threshold
        a pool costs more than it saves and everything runs here.
        """
        tests = plan.cases if isinstance(plan, gates.TestPlan) else []
        by_name: dict[str, list[int]] = {}
        for i, case in enumerate(tests):
            by_name.setdefault(case.prompt, []).append(i)
        work: list[_Unit] = [(a, b, args, by_name.pop(b, [])) for a, b, args in units]
        work += [(name, name, [], idx) for name, idx in by_name.items()]  # unrendered prompts
        policy = plan.policy if isinstance(plan, gates.TestPlan) else None
        jobs = auto_jobs(sum(len(u[2]) * 2 + len(u[3]) for u in work)) if jobs is None else jobs
        outcomes: list[Outcome | None] = [None] * len(tests)
        if jobs <= 1:
            if not self._lint_gate.forked:  # else the child lints while this renders
                self.lint = self._lint()
            self._store(work, _work((self.old, self.new), tests, policy, work), outcomes)
            self.lint = self._lint()
        else:
            from concurrent.futures import ProcessPoolExecutor

            size = max(1, min(250, len(work) // (jobs * 4) or 1))
            chunks = [work[i:i + size] for i in range(0, len(work), size)]
            with ProcessPoolExecutor(jobs, initializer=_init_render,
                                     initargs=(*self.bundles, tests, policy,
                                               self.index.written_scans())) as pool:
                futures = [pool.submit(_render_chunk, chunk) for chunk in chunks]
                if not self._lint_gate.forked:
                    self.lint = self._lint()  # this process's share while the pool renders
                stored = 0
                for chunk, future in zip(chunks, futures, strict=True):
                    self._store(chunk, future.result(), outcomes)
                    stored += len(chunk)
                    if ready is not None and self._lint_gate.forked:
                        ready(min(stored, len(units)))
                self.lint = self._lint()
        if ready is not None:
            ready(len(units))
        self.outcomes = [o for o in outcomes if o is not None]
        assert len(self.outcomes) == len(tests)

    def _store(self, work: list[_Unit], done: list[tuple[list[Lines], list[Outcome]]],
               outcomes: list[Outcome | None]) -> None:
        for (a, b, args, idx), (diffs, results) in zip(work, done, strict=True):
            if args:
                self.rendered[(a, b)] = (args, dict(zip(map(id, args), diffs, strict=True)))
            for i, outcome in zip(idx, results, strict=True):
                outcomes[i] = outcome

    def _lint(self) -> gates.CheckStatus:
        return self._lint_gate.status()

    def rendered_diff(self, a: str, b: str, args: dict[str, object]) -> Lines:
        """The hunks of the diff of the request's lines at BASE and at HEAD, each end
        with the arguments it accepts (:mod:`promptops.review.arguments`); [] when they
        are the same. Label them with :func:`promptops.review.rendered.labelled`.

        The pool's answer for the very argument set the unit held (the review asks with
        the same objects it gave :meth:`render_all`), else one equal to it as JSON: no
        key made per request (10,000 ``json.dumps`` at 5,000 prompts)."""
        asked, by_id = self.rendered.get((a, b), ((), {}))
        body = by_id.get(id(args))
        if body is not None:
            return body
        key = _key(args)
        for one in asked:
            if _key(one) == key:
                return by_id[id(one)]
        return hunks(*_render_pair(self.old, self.new, a, b, args))

    def adapted(self, a: str, b: str, args: dict[str, object]) -> tuple[list[str], list[str]]:
        """What each end's arguments leave out or add, and why (BASE's, HEAD's)."""
        pa, pb = self.old.prompts.get(a), self.new.prompts.get(b)
        return adapt(pa, pb, args)[1], adapt(pb, pa, args)[1]

    def source_diff(self, refs: Refs, base_src: Source | None, head_src: Source | None,
                    pa: str | None, pb: str | None) -> FileDiff | None:
        """The diff of the file at ``pa`` at BASE and ``pb`` at HEAD, None when the same:
        one report item however many prompts reach the file (a partial 5,000 include)."""
        key = (pa, pb)
        if key not in self.diffs:
            known = _content_id(base_src, pa)  # equal ids: equal bytes, so no diff
            same = known is not None and known == _content_id(head_src, pb)
            diff = "" if same else unified(
                source_lines(base_src, pa), source_lines(head_src, pb),
                f"{refs.base_spec}: {pa or '/dev/null'}", f"{refs.head_spec}: {pb or '/dev/null'}")
            self.diffs[key] = FileDiff(old_path=pa, new_path=pb, diff=diff) if diff else None
        return self.diffs[key]


def _content_id(source: Source | None, path: str | None) -> str | None:
    """The git blob id of what ``source`` reads at ``path``: from the tree, unread, for a
    commit; else hashed from the bytes (a working tree's, which the build read already and
    the source keeps); None when there is nothing to read."""
    if source is None or path is None:
        return None
    known = source.blob_id(path)
    if known is not None:
        return known
    try:
        return blob_id(source.read(path))
    except FileNotFoundError:
        return None


def _render_pair(ra: Renderer, rb: Renderer, a: str, b: str, args: dict[str, object],
                 kept: _Kept | None = None) -> tuple[Lines, Lines]:
    """Both ends' lines; HEAD's result, when it rendered, added to ``kept``."""
    pa, pb = ra.prompts.get(a), rb.prompts.get(b)
    head = adapt(pb, pa, args)[0]
    keep = None if kept is None else (lambda result: kept.append((head, result)))
    return (render_lines(ra, a, adapt(pa, pb, args)[0]), render_lines(rb, b, head, keep))


# HEAD's requests of one prompt that rendered, and their results
_Kept = list[tuple[dict[str, object], PromptResult]]


class _Replay(Renderer):
    """HEAD's renderer for one prompt's test cases: a request the rendered diff made
    already, with the very same arguments, answers with that render's result (a render
    is a function of the bundle, the prompt and the arguments) instead of rendering it
    a second time; any other request, or one whose render failed there, renders.

    Not set up as a renderer of its own (no ``super().__init__``): it answers only
    :meth:`get`, the one method ``run_case`` calls, and forwards what it cannot answer.
    """

    def __init__(self, renderer: Renderer, name: str, kept: _Kept) -> None:
        self._renderer = renderer
        self._name = name
        self._kept = kept

    def get(self, name: str, arguments: object = None, budget: Budget | None = None
            ) -> PromptResult:
        if budget is None and name == self._name and isinstance(arguments, dict):
            same = _same(arguments)
            for args, result in self._kept:
                if args == arguments and same is not None and _same(args) == same:
                    return result
        return self._renderer.get(name, arguments, budget)


def _same(args: dict[str, object]) -> str | None:
    """The arguments as JSON, types kept (1, 1.0, True and "1" differ), so two argument
    sets equal by ``==`` and by this are one request; None when not JSON."""
    try:
        return json.dumps(args, sort_keys=True)
    except (TypeError, ValueError):
        return None


def _key(args: dict[str, object]) -> str:
    return json.dumps(args, sort_keys=True, default=str)


def _work(renderers: tuple[Renderer, Renderer], tests: list[Case],
          policy: SnapshotPolicy | None, units: list[_Unit]
          ) -> list[tuple[list[Lines], list[Outcome]]]:
    """Each unit's diff hunks, one list per argument set, and its test outcomes (run with
    the HEAD renderer). The hunks, not both ends' lines: the diff is made here, in the
    render worker, and what goes back to the reviewing process is a few lines a request
    (nothing when the render is the same), not both ends' hundreds."""
    ra, rb = renderers
    out = []
    for a, b, args, idx in units:
        kept: _Kept = []
        diffs = [hunks(*_render_pair(ra, rb, a, b, one, kept if idx else None))
                 for one in args]
        assert policy is not None or not idx
        replay = _Replay(rb, b, kept) if kept else rb
        results = ([run_case(replay, tests[i], policy) for i in idx] if policy is not None
                   else [])
        out.append((diffs, results))
    return out


# set in a render_all worker process (inherited under fork)
_worker: tuple[tuple[Renderer, Renderer], list[Case], SnapshotPolicy | None] | None = None


def _init_render(old: Bundle, new: Bundle, tests: list[Case], policy: SnapshotPolicy | None,
                 scans: Mapping[str, Scan | None] | None = None) -> None:
    """The worker's renderers; ``scans``: the build's scans of the texts, inherited under
    fork (not sent), so the layouts of the texts the build scanned are not scanned again."""
    global _worker
    code = ShapeCache(scans)
    _worker = ((Renderer(old, code), Renderer(new, code)), tests, policy)


def _render_chunk(units: list[_Unit]) -> list[tuple[list[Lines], list[Outcome]]]:
    assert _worker is not None
    renderers, tests, policy = _worker
    return _work(renderers, tests, policy, units)


