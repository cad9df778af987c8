"""Test files -> cases: validated, positioned, plus one automatic smoke case per prompt.

Test files are read from the ``Source`` the package came from, so ``--ref`` tests
exactly what a commit holds. Each case's position comes from libyaml's node marks
(cheap); the slow round-trip parse runs only when a problem must be positioned.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from promptops.errors import PackageError
from promptops.pipeline import defaults
from promptops.pipeline.bundle_types import Bundle, Prompt
from promptops.pipeline.model import Smoke
from promptops.pipeline.source import Refused, Source
from promptops.pipeline.validate import Loader, Package
from promptops.pipeline.yamlio import fast as fastyaml
from promptops.pipeline.yamlio.limits import LimitExceeded
from promptops.pipeline.yamlio.loader import LoadedFile, Loc, YamlProblem, decode, load_yaml
from promptops.testing.model import Expectation, TestFile

TESTS_DIR = "tests/"
TEST_SUFFIX = ".test.yaml"
SNAPSHOT_DIR = "tests/__snapshots__"
SMOKE = "smoke"


class _CaseLoader(fastyaml.FastLoader):
    """FastLoader with memoised scalar resolution.

    PyYAML resolves every plain scalar's tag in Python, which is most of the cost of
    loading 10,000 cases; test files repeat the same keys and values endlessly.
    """

    _memo: dict[tuple[str, tuple[bool, bool]], object] = {}  # noqa: RUF012  a shared cache

    def resolve(self, kind: object, value: Any, implicit: Any) -> object:  # noqa: ANN401  (PyYAML's)
        if kind is not yaml.ScalarNode or len(value) > 64:
            return super().resolve(kind, value, implicit)
        key = (value, tuple(implicit))
        tag = self._memo.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(self._memo) < 50_000:
                self._memo[key] = tag
        return tag


class TestFileError(PackageError):
    """A test file that cannot be run: exit 1 with every problem listed, like any other package
    file that does not load (test files are package content, written by the same authors)."""

    __test__ = False


@dataclass(frozen=True)
class Case:
    prompt: str
    name: str
    arguments: dict[str, object]
    path: str  # package-relative test file ("" for smoke cases)
    line: int  # 1-based position of the case in its file (0 for smoke)
    col: int
    smoke: bool = False
    expectations: tuple[Expectation, ...] = ()
    skip: str | None = None  # the reason, when the case is skipped
    expect_invalid: str | None = None  # smoke: {skip: why}: must fail on its arguments

    @property
    def id(self) -> str:
        return f"{self.prompt}::{self.name}"

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.col}" if self.path else "(automatic smoke case)"

    @property
    def wants_snapshot(self) -> bool:
        return any(e.snapshot for e in self.expectations)

    @property
    def snapshot_path(self) -> str:
        return snapshot_path(self.prompt, self.name)


def slug(name: str) -> str:
    """A case name as a portable file name (documented in docs/testing.md).

    Lowercased so two names differing only in case cannot collide on case-insensitive
    file systems; every run of characters other than a-z, 0-9, '.', '_' and '-' becomes
    one '_'; leading and trailing '.', '_' and '-' are dropped; at most 100 characters.
    """
    out = re.sub(r"[^a-z0-9._-]+", "_", name.lower()).strip("._-")[:100].rstrip("._-")
    return out or "case"


def snapshot_path(prompt: str, name: str) -> str:
    return f"{SNAPSHOT_DIR}/{prompt}/{slug(name)}.json"


def is_test_file(path: str) -> bool:
    return path.startswith(TESTS_DIR) and path.endswith(TEST_SUFFIX)


def smoke_case(prompt: Prompt, mark: Smoke | None = None) -> Case:
    """The automatic smoke case of one bundle prompt (bundle["prompts"][i]).

    Each argument takes its first example, else its first enum value, else its
    default; a required argument with none of these gets a placeholder. The case
    passes when the prompt renders without error, unless the prompt file's ``smoke:``
    ``mark`` says it cannot: with ``error`` it passes when it fails exactly so; with
    ``skip`` it is skipped while it fails on its arguments, and fails when it renders or
    fails any other way, so the mark never hides a broken template or outlives its reason.
    """
    args: dict[str, object] = {}
    for arg in prompt["arguments"]:
        value = next((v[0] for v in (arg.get("examples"), arg.get("enum")) if v), None)
        if value is None:
            value = arg.get("default")
        if value is None and arg.get("required"):
            value = f"example {arg['name']}"[: arg.get("maxLength", defaults.MAX_LENGTH)]
        if value is not None:
            args[arg["name"]] = value
    expect = (Expectation(error=mark.error),) if mark is not None and mark.error else ()
    return Case(prompt=prompt["name"], name=SMOKE, arguments=args, path="", line=0, col=0,
                smoke=True, expectations=expect,
                expect_invalid=mark.skip if mark is not None else None)


def smoke_cases(package: Package, bundle: Bundle) -> list[Case]:
    """One smoke case per bundle prompt, each with its prompt file's ``smoke:`` mark."""
    marks = {p.name: p.spec.smoke for p in package.prompts}
    return [smoke_case(p, marks.get(p["name"])) for p in bundle["prompts"]]


def load_cases(package: Package, source: Source) -> list[Case]:
    """All cases of the package's tests/**/*.test.yaml, in file order; raises TestFileError
    (a PackageError, exit 1, with positioned problems) on a bad test file."""
    ld = Loader(source)
    cases: list[Case] = []
    taken: dict[tuple[str, str], Case] = {}  # (prompt, snapshot file) -> first case
    by_name = {p.name: p for p in package.prompts}
    for path in sorted(p for p in package.files if is_test_file(p)):
        parsed = _parse(ld, path)
        if parsed is None:
            continue
        loaded, node = parsed
        spec = _validate(ld, loaded)
        if spec is None:
            continue
        prompt = by_name.get(spec.prompt)
        if prompt is None:
            known = [p.name for p in package.prompts]
            close = difflib.get_close_matches(spec.prompt, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; prompts: {', '.join(known)}"
            ld.problem(path, loaded.position(("prompt",)), f"unknown prompt {spec.prompt!r}{hint}")
            continue
        count = len(prompt.spec.messages)
        for i, tc in enumerate(spec.cases):
            line, col = _case_position(loaded, node, i)
            case = Case(
                prompt=spec.prompt, name=tc.name, arguments=dict(tc.arguments), path=path,
                line=line, col=col, expectations=tc.expectations,
                skip=(tc.skip if isinstance(tc.skip, str) else "skipped") if tc.skip else None,
            )
            for j, exp in enumerate(tc.expectations):
                if exp.message is not None and exp.message >= count:
                    loc: Loc = ("cases", i, "expect", *((j,) if isinstance(tc.expect, list)
                                                        else ()), "message")
                    ld.problem(path, loaded.position(loc), f"message {exp.message} does not "
                               f"exist: prompt {spec.prompt!r} renders {count} messages "
                               f"(0-{count - 1})")
            key = (case.prompt, case.snapshot_path)
            first = taken.setdefault(key, case)
            if first is not case:
                same = "name" if first.name == case.name else f"snapshot file as {first.name!r}"
                ld.problem(path, loaded.position(("cases", i, "name")),
                           f"case {case.name!r} has the same {same} for prompt {case.prompt!r} "
                           f"({first.where}); rename one")
            cases.append(case)
    if ld.problems:
        raise TestFileError(ld.problems)
    return cases


def _validate(ld: Loader, loaded: LoadedFile) -> TestFile | None:
    """The validated file, or None with its problems recorded.

    ``expect`` is a mapping or a list of them; pydantic reports a bad one against
    both shapes under synthetic union steps (``list[...]``). Only the errors of the
    shape the user wrote are kept, with those steps dropped, so each problem reads
    like the key path in the file.
    """
    if not isinstance(loaded.data, dict):
        return ld.validate(TestFile, loaded, loaded.data)
    try:
        return TestFile.model_validate(loaded.data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = _plain_loc(err["loc"], loaded.data)
            if loc is not None:
                ld.schema_problem(TestFile, loaded, {**err, "loc": loc})
    return None


def _plain_loc(loc: tuple[object, ...], data: Any) -> tuple[Any, ...] | None:  # noqa: ANN401
    out: list[object] = []
    node = data
    for step in loc:
        if isinstance(step, str) and "[" in step:  # a union member's tag, not a key
            if step.startswith("list[") != isinstance(node, list):
                return None
            continue
        out.append(step)
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            node = None
    return tuple(out)


def _parse(ld: Loader, path: str) -> tuple[LoadedFile, object] | None:
    """The loaded file and its libyaml node tree (None when only ruamel.yaml parses it)."""
    try:
        raw = ld.source.read(path)
        text = decode(path, raw)
    except YamlProblem as exc:
        ld.problems.append(exc.problem)
        return None
    except Refused as exc:
        ld.problem(path, (1, 1), f"this file is {exc.why}")
        return None
    except FileNotFoundError as exc:  # listed, then gone, or not a regular file (a FIFO)
        ld.unreadable(path, exc)
        return None
    loader = _CaseLoader(text)
    try:
        node = fastyaml.compose(loader, text)
        data = loader.construct_document(node) if node is not None else None
        return LoadedFile(path=path, text=text, data=data), node
    except (yaml.YAMLError, LimitExceeded):  # load_yaml says why, positioned
        pass
    finally:
        loader.dispose()
    try:
        return load_yaml(path, raw), None
    except YamlProblem as exc:
        ld.problems.append(exc.problem)
        return None


def _case_position(loaded: LoadedFile, node: object, index: int) -> tuple[int, int]:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "cases" and isinstance(value, yaml.SequenceNode):
                mark = value.value[index].start_mark
                return int(mark.line) + 1, int(mark.column) + 1
    return loaded.position(("cases", index))


def select(cases: list[Case], patterns: list[str]) -> list[Case]:
    """The cases whose id (``prompt::case name``) matches any -k pattern.

    A pattern with a glob character (``*?[``) is matched against the whole id,
    otherwise it is a substring; both ignore case. No patterns selects everything.
    """
    if not patterns:
        return cases
    lowered = [p.lower() for p in patterns]

    def hit(case: Case) -> bool:
        ident = case.id.lower()
        return any(fnmatch.fnmatchcase(ident, p) if any(c in p for c in "*?[") else p in ident
                   for p in lowered)

    return [c for c in cases if hit(c)]
