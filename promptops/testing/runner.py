"""Running cases: render through the served code path, then check every expectation.

A case's outcome depends only on the bundle, the case and the stored snapshots, so
cases can run in any process: large suites are split into contiguous chunks over a
process pool and the outcomes come back in case order, identical to a serial run.
Workers never write files; new snapshot content travels back in the outcome and the
main process writes it.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

from promptops.errors import ArgumentError, RenderError
from promptops.pipeline.bundle_types import Bundle
from promptops.pipeline.model import ErrorExpectation
from promptops.render.mcp import error_code
from promptops.render.renderer import Renderer
from promptops.render.result import PromptMessage, PromptResult
from promptops.render.transcript import searchable_text as message_text
from promptops.render.transcript import test_transcript as transcript
from promptops.testing.cases import Case
from promptops.testing.model import Expectation

PARALLEL_THRESHOLD = 2000  # cases; below this a pool costs more than it saves


@dataclass(frozen=True)
class Failure:
    message: str
    diff: str | None = None  # a unified diff of rendered text, when one explains the failure


@dataclass(frozen=True)
class Outcome:
    status: str  # passed | failed | skipped | error
    failures: tuple[Failure, ...] = ()
    rendered: str | None = None  # the transcript, shown with a failure
    snapshot: str | None = None  # content the main process must write to the case's snapshot
    snapshot_state: str | None = None  # new | changed, when ``snapshot`` is set
    seconds: float = 0.0


@dataclass(frozen=True)
class SnapshotPolicy:
    stored: dict[str, bytes]  # package-relative snapshot path -> stored bytes
    update: bool = False  # --update-snapshots: write new and changed ones
    writable: bool = True  # False with --ref: snapshots come from the commit, never written
    ci: bool = False  # CI=true: a missing snapshot fails instead of being written


def serialise(result: PromptResult) -> str:
    """The stored form of a snapshot: stable key order, readable, UTF-8."""
    return json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def text_diff(expected: object, actual: object, label: str) -> str:
    """A unified diff of the transcripts (messages, or results holding them); of the JSON
    when the transcripts agree (a changed description or mimeType) or cannot be made."""
    a = b = None
    with contextlib.suppress(KeyError, TypeError, AttributeError):
        a, b = transcript(_messages(expected)), transcript(_messages(actual))
    if a is None or a == b:
        a = json.dumps(expected, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        b = json.dumps(actual, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert b is not None
    lines = difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                 fromfile=label, tofile="rendered")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _messages(obj: object) -> list[PromptMessage]:
    """The messages of a result, or a list of messages (a snapshot or ``equals`` is JSON
    as a person wrote or kept it: whatever it holds, a bad one fails the transcript)."""
    found = obj["messages"] if isinstance(obj, dict) else obj
    return cast("list[PromptMessage]", list(cast("list[object]", found)))


def run_case(renderer: Renderer, case: Case, policy: SnapshotPolicy) -> Outcome:
    start = time.perf_counter()
    outcome = _evaluate(renderer, case, policy)
    return Outcome(outcome.status, outcome.failures, outcome.rendered, outcome.snapshot,
                   outcome.snapshot_state, time.perf_counter() - start)


def _evaluate(renderer: Renderer, case: Case, policy: SnapshotPolicy) -> Outcome:
    if case.skip is not None:
        return Outcome("skipped")
    wanted = next((e.error for e in case.expectations if e.error is not None), None)
    try:
        result = renderer.get(case.prompt, case.arguments)
    except RenderError as exc:
        return _refused(case, exc, wanted)
    except Exception as exc:  # a bug in the renderer, not a property of the prompt
        return Outcome("error", (Failure(f"internal error: {type(exc).__name__}: {exc}"),))
    messages = result["messages"]
    if case.expect_invalid is not None:
        return Outcome("failed", (Failure(
            f"the smoke case renders, but the prompt file says it cannot (`smoke: skip: "
            f"{case.expect_invalid}`): remove the mark"),), transcript(messages))
    if wanted is not None:
        return Outcome("failed", (Failure(f"expected error {_describe(wanted)}, but the prompt "
                                          "rendered"),), transcript(messages))
    failures: list[Failure] = []
    for exp in case.expectations:
        failures += _check(exp, messages)
    snap: tuple[str | None, str | None] = (None, None)
    if case.wants_snapshot:
        found, snap, status = _snapshot(case, result, policy)
        if status == "error":
            return Outcome("error", tuple(found))
        failures += found
    rendered = transcript(messages) if failures else None
    return Outcome("failed" if failures else "passed", tuple(failures), rendered, *snap)


def _refused(case: Case, exc: RenderError, wanted: ErrorExpectation | None) -> Outcome:
    """The outcome of a case whose render raised: as expected (the code and message
    checked), a smoke case's refused arguments, or a failure that says what to do."""
    code = error_code(exc)
    if case.expect_invalid is not None and isinstance(exc, ArgumentError):
        return Outcome("skipped")
    if case.expect_invalid is not None:
        return Outcome("failed", (Failure(
            f"render failed with error {code}: {exc}; the prompt file's `smoke: skip:` "
            "covers the smoke case's arguments being refused (-32602), not a failure of "
            "the prompt itself"),))
    if wanted is None:
        message = f"render failed with error {code}: {exc}"
        if case.smoke and exc.argument is not None:
            message += (
                f"; the smoke case had no valid value for {exc.argument!r}: give the "
                "argument `examples:` (a value that passes its rules) to render it with, "
                "or say why it cannot in the prompt file (`smoke: {skip: <why>}`)"
            )
        return Outcome("failed", (Failure(message),))
    bad = []
    if wanted.code is not None and wanted.code != code:
        bad.append(Failure(f"error code is {code}, expected {wanted.code} ({exc})"))
    if wanted.message is not None and wanted.message != str(exc):
        bad.append(Failure(f"error message is {str(exc)!r}, expected {wanted.message!r}"))
    if wanted.message_contains is not None and wanted.message_contains not in str(exc):
        bad.append(Failure(f"error message {str(exc)!r} does not contain "
                           f"{wanted.message_contains!r}"))
    return Outcome("failed" if bad else "passed", tuple(bad))


def _describe(wanted: ErrorExpectation) -> str:
    parts = [str(wanted.code)] if wanted.code is not None else []
    if wanted.message is not None:
        parts.append(repr(wanted.message))
    if wanted.message_contains is not None:
        parts.append(f"containing {wanted.message_contains!r}")
    return " ".join(parts)


def _check(exp: Expectation, messages: list[PromptMessage]) -> Iterator[Failure]:
    scope = "" if exp.message is None else f"message {exp.message}: "
    msgs = messages if exp.message is None else messages[exp.message : exp.message + 1]
    if exp.message is not None and not msgs:
        yield Failure(f"{scope}does not exist (the result has {len(messages)} messages)")
        return
    text = "\n".join(message_text(m) for m in msgs)
    if exp.messages is not None and len(msgs) != exp.messages:
        yield Failure(f"expected {exp.messages} messages, got {len(msgs)}")
    roles = [m["role"] for m in msgs]
    if exp.roles is not None and roles != exp.roles:
        yield Failure(f"{scope}expected roles {exp.roles}, got {roles}")
    for s in exp.contains or ():
        if s not in text:
            yield Failure(f"{scope}does not contain {s!r}")
    for s in exp.not_contains or ():
        if s in text:
            yield Failure(f"{scope}contains {s!r}, which it must not")
    for rx in exp.matches or ():
        if re.search(rx, text) is None:
            yield Failure(f"{scope}no match for regex {rx!r}")
    if exp.equals is not None and msgs != exp.equals:
        yield Failure(f"{scope}messages differ from `equals`",
                      text_diff(exp.equals, msgs, "equals"))
    if exp.max_chars is not None and len(text) > exp.max_chars:
        yield Failure(f"{scope}rendered text is {len(text)} characters, over max_chars "
                      f"{exp.max_chars}")


def _snapshot(
    case: Case, result: PromptResult, policy: SnapshotPolicy
) -> tuple[list[Failure], tuple[str | None, str | None], str]:
    path = case.snapshot_path
    fresh = serialise(result)
    stored = policy.stored.get(path)
    if stored is None:
        if policy.writable and (policy.update or not policy.ci):
            return [], (fresh, "new"), "passed"
        why = ("CI=true: snapshots are not written in CI; run `promptops test` locally and "
               "commit the file" if policy.writable else
               "snapshots are read from the commit and never written with --ref")
        return [Failure(f"snapshot {path} is missing ({why})")], (None, None), "failed"
    try:
        old = json.loads(stored)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [Failure(f"snapshot {path} is not valid JSON: {exc}")], (None, None), "error"
    if old == result:
        return [], (None, None), "passed"
    if policy.update and policy.writable:
        return [], (fresh, "changed"), "passed"
    hint = "; run `promptops test --update-snapshots` if the change is intended"
    failure = Failure(f"rendered result differs from snapshot {path}{hint}",
                      text_diff(old, result, path))
    return [failure], (None, None), "failed"


# Parallel execution: worker state is set once per process (inherited under fork).
_worker: tuple[Renderer, list[Case], SnapshotPolicy] | None = None


def _init_worker(bundle: Bundle, cases: list[Case], policy: SnapshotPolicy) -> None:
    global _worker
    _worker = (Renderer(bundle), cases, policy)


def _run_chunk(bounds: tuple[int, int]) -> list[Outcome]:
    assert _worker is not None
    renderer, cases, policy = _worker
    return [run_case(renderer, cases[i], policy) for i in range(*bounds)]


def auto_jobs(n_cases: int) -> int:
    return (os.cpu_count() or 1) if n_cases > PARALLEL_THRESHOLD else 1


def run_cases(
    bundle: Bundle,
    cases: list[Case],
    policy: SnapshotPolicy,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[Outcome]:
    """One outcome per case, in case order, whatever ``jobs`` is."""
    if jobs <= 1 or len(cases) < 2:
        renderer = Renderer(bundle)
        outcomes = []
        for case in cases:
            outcomes.append(run_case(renderer, case, policy))
            if progress is not None:
                progress(1)
        return outcomes
    from concurrent.futures import ProcessPoolExecutor

    size = max(1, min(500, len(cases) // (jobs * 4) or 1))
    chunks = [(i, min(i + size, len(cases))) for i in range(0, len(cases), size)]
    out: list[Outcome] = []
    with ProcessPoolExecutor(jobs, initializer=_init_worker,
                             initargs=(bundle, cases, policy)) as pool:
        for part in pool.map(_run_chunk, chunks):
            out += part
            if progress is not None:
                progress(len(part))
    return out
