"""A repeatable mutation run: how many small, wrong edits of a module its tests notice.

Why: line coverage says a line ran, not that a test would fail if the line were wrong.
A mutant is the module with one single-operator edit (a comparison, boolean or
arithmetic operator swapped, a constant or string literal changed, a condition negated,
a statement deleted, a return value dropped); it is *killed* when the module's tests
fail on it, *survives* when they pass. Survivors point at behaviour no test pins.

Usage (from the repository root, with the project's venv)::

    python benchmarks/mutation.py promptops/versioning/changes.py          # every mutant
    python benchmarks/mutation.py promptops/serve/methods.py --sample 40 --seed 1
    python benchmarks/mutation.py --all --sample 30 --seed 1               # every module below
    python benchmarks/mutation.py promptops/versioning/semver.py --list     # mutants, no runs

The mutants are enumerated from the AST in source order, so a run is deterministic given
the module's text, ``--seed`` and ``--sample`` (the figure does not depend on the machine's
load; only the timeouts do, and a timeout counts as killed, as mutmut counts it). Each
mutant runs in a scratch copy of the tree (``git ls-files``, tracked and untracked but not
ignored), never in the worktree; each run gets its own ``XDG_CACHE_HOME`` so no cache from
an earlier run can hide a mutant. Only the test files :data:`TESTS` maps the module to run,
with ``-x`` (the first failure kills the mutant), serially.

Equivalent mutants (an edit no caller can observe) are listed in :data:`EQUIVALENT` with
the reason, reviewed by hand; they are reported but left out of the kill rate, which is
killed / (mutants - equivalent).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module -> the test files (pytest arguments) that are its tests. Quick, in-process files
# first: -x stops at the first failure, so a killed mutant usually costs one file.
TESTS: dict[str, list[str]] = {
    "promptops/serve/methods.py": [
        "tests/serve/test_methods.py",
        "tests/serve/test_core.py",
        "tests/serve/test_tools.py",
    ],
    "promptops/pipeline/validate.py": [
        "tests/pipeline/test_validate.py",
        "tests/pipeline/test_format_errors.py",
        "tests/pipeline/test_memo_keys.py",
        "tests/pipeline/test_build.py",
    ],
    "promptops/versioning/changes.py": [
        "tests/versioning/test_json_golden.py",
        "tests/versioning/test_diff_engine.py",
    ],
    "promptops/versioning/semver.py": [
        "tests/versioning/test_semver.py",
        "tests/versioning/test_versioning.py",
    ],
    "promptops/versioning/arguments.py": [
        "tests/versioning/test_json_golden.py",
        "tests/versioning/test_diff_engine.py",
    ],
    "promptops/versioning/engine.py": [
        "tests/versioning/test_json_golden.py",
        "tests/versioning/test_diff_engine.py",
    ],
    "promptops/versioning/history.py": [
        "tests/versioning/test_json_golden.py",
        "tests/versioning/test_versioning.py",
    ],
    "promptops/versioning/releases.py": [
        "tests/versioning/test_versioning.py",
    ],
    "promptops/versioning/manifest_edit.py": [
        "tests/versioning/test_versioning.py",
    ],
    "promptops/versioning/channels.py": [
        "tests/versioning/test_channel_rules.py",
        "tests/versioning/test_channels.py",
    ],
    "promptops/versioning/__init__.py": [
        "tests/versioning/test_diff_engine.py",
    ],
}

# (module, the stripped source line, the edit as printed) -> why no caller can tell.
# Keyed by text rather than line number so the list survives edits elsewhere in the file.
EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("promptops/versioning/changes.py",
     'return (scope, self.prompt or "", _KIND_ORDER[self.kind], self.argument or "")',
     "'' -> 'XX' + ..."):
        "what None sorts as never meets a real name: package changes (prompt None) are set "
        "apart by `scope` first, and no kind has changes both with and without an argument "
        "in one prompt",
    ("promptops/pipeline/validate.py",
     "LOAD_CODES = frozenset({INVALID_YAML, SCHEMA, JINJA_SYNTAX, UNKNOWN_JINJA_NAME, "
     "DUPLICATE_NAME,",
     "delete `LOAD_CODES = frozenset({INVALID_YAML, SCHEMA, JINJA_SYNTA...`"):
        "nothing reads LOAD_CODES (dead code, reported to the lead, left in place)",
    ("promptops/versioning/semver.py",
     "_RANK = {Level.patch: 1, Level.minor: 2, Level.major: 3}", "3 -> 4"):
        "ranks are only compared (max, >=, sorting); 4 keeps major above minor",
    ("promptops/versioning/changes.py", "scope = 0 if self.prompt is None else 1", "0 -> 1"):
        "a package change's prompt sorts as '', before every prompt name, so scope 1 for it "
        "keeps the order scope 0 gives",
    ("promptops/versioning/changes.py", "scope = 0 if self.prompt is None else 1", "1 -> 2"):
        "scopes are only compared: 2 keeps prompt changes after package changes",
    ("promptops/pipeline/validate.py", 'M = TypeVar("M", bound=BaseModel)',
     'delete `M = TypeVar("M", bound=BaseModel)`'):
        "M appears only in annotations, which `from __future__ import annotations` never "
        "evaluates: deleting it changes nothing at run time (mypy would notice)",
    ("promptops/pipeline/validate.py", 'M = TypeVar("M", bound=BaseModel)', "'M' -> 'XX' + ..."):
        "the TypeVar's own name is read by nothing at run time (mypy would notice)",
}


@dataclass(frozen=True)
class Mutant:
    line: int
    col: int
    end_line: int
    end_col: int
    what: str  # the edit, e.g. "== -> !="
    replacement: str  # the text that replaces the node's span

    def apply(self, source: str) -> str:
        lines = source.splitlines(keepends=True)
        start = sum(len(x) for x in lines[: self.line - 1]) + _byte_col(lines[self.line - 1],
                                                                      self.col)
        end = sum(len(x) for x in lines[: self.end_line - 1]) + _byte_col(
            lines[self.end_line - 1], self.end_col)
        return source[:start] + self.replacement + source[end:]


def _byte_col(line: str, col: int) -> int:
    """ast columns count UTF-8 bytes; the string index of that column."""
    return len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))


_COMPARE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt,
            ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
            ast.In: ast.NotIn, ast.NotIn: ast.In}
_BINARY = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.Div: ast.Mult,
           ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv, ast.BitOr: ast.BitAnd,
           ast.BitAnd: ast.BitOr, ast.LShift: ast.RShift, ast.RShift: ast.LShift}
_SYMBOL = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
           ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
           ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.BitOr: "|", ast.BitAnd: "&", ast.LShift: "<<", ast.RShift: ">>",
           ast.And: "and", ast.Or: "or"}


class _Finder(ast.NodeVisitor):
    """Every mutant of a module, in source order."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.found: list[Mutant] = []

    def add(self, node: ast.AST, what: str, replacement: str) -> None:
        self.found.append(Mutant(node.lineno, node.col_offset,  # type: ignore[attr-defined]
                                 node.end_lineno, node.end_col_offset,  # type: ignore[attr-defined]
                                 what, replacement))

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ast.unparse(node)

    # -- never mutated: docstrings, imports, annotations, TYPE_CHECKING blocks, __all__ --
    def visit_Import(self, node: ast.Import) -> None:
        return

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return

    def _body(self, body: list[ast.stmt]) -> None:
        for i, stmt in enumerate(body):
            if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                    and isinstance(stmt.value.value, str):
                continue  # a docstring
            self.visit(stmt)

    def visit_Module(self, node: ast.Module) -> None:
        self._body(node.body)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.visit(default)
        for deco in node.decorator_list:
            self.visit(deco)
        self._body(node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            self.visit(base)
        self._body(node.body)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.statement(node)
            self.visit(node.value)

    def visit_arg(self, node: ast.arg) -> None:
        return

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        # the parts of an f-string have no reliable positions: change the whole string
        self.add(node, "f-string -> 'XX' + f-string", f'("XX" + {self.text(node)})')

    # -- statements --------------------------------------------------------------------
    def statement(self, node: ast.stmt) -> None:
        self.add(node, f"delete `{_short(self.text(node))}`", "pass")

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return
        self.negate(node.test)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self.negate(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.negate(node.test)
        self.generic_visit(node)

    def negate(self, test: ast.expr) -> None:
        self.add(test, f"negate `{_short(self.text(test))}`", f"(not ({self.text(test)}))")

    def visit_Expr(self, node: ast.Expr) -> None:
        self.statement(node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return  # only `import *` reads it, and promptops never star-imports
        self.statement(node)
        self.visit(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.statement(node)
        self.visit(node.value)

    def visit_Raise(self, node: ast.Raise) -> None:
        self.statement(node)
        self.generic_visit(node)

    def visit_Continue(self, node: ast.Continue) -> None:
        self.statement(node)

    def visit_Break(self, node: ast.Break) -> None:
        self.statement(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (isinstance(node.value, ast.Constant)
                                           and node.value.value is None):
            self.add(node, f"return None instead of `{_short(self.text(node.value))}`",
                     "return None")
            self.visit(node.value)

    # -- expressions -------------------------------------------------------------------
    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            other = _COMPARE.get(type(op))
            if other is None:
                continue
            mutated = ast.Compare(node.left, [*node.ops[:i], other(), *node.ops[i + 1:]],
                                  node.comparators)
            self.add(node, f"{_SYMBOL[type(op)]} -> {_SYMBOL[other]}",
                     f"({ast.unparse(mutated)})")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        other = _BINARY.get(type(node.op))
        if other is not None:
            mutated = ast.BinOp(node.left, other(), node.right)
            self.add(node, f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[other]}",
                     f"({ast.unparse(mutated)})")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self.add(node, f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[type(other)]}",
                 f"({ast.unparse(ast.BoolOp(other, node.values))})")
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self.add(node, "delete `not`", f"({self.text(node.operand)})")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self.add(node, f"{value} -> {not value}", repr(not value))
        elif isinstance(value, int):
            self.add(node, f"{value} -> {value + 1}", repr(value + 1))
        elif isinstance(value, float):
            self.add(node, f"{value} -> {value * 2 + 1}", repr(value * 2 + 1))
        elif isinstance(value, str):
            self.add(node, f"{_short(repr(value))} -> 'XX' + ...", f'("XX" + {self.text(node)})')


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def mutants(source: str,
            only: Collection[tuple[str, str]] | None = None) -> list[Mutant]:
    """The mutants of ``source`` that compile; with ``only`` ((stripped line, edit) pairs,
    as EQUIVALENT names them) just those: compiling every mutant of a module to look a few
    up took the smoke test (tests/test_benchmarks_smoke.py) seconds."""
    finder = _Finder(source)
    finder.visit(ast.parse(source))
    out = []
    lines = source.splitlines()
    for m in finder.found:
        if only is not None and (lines[m.line - 1].strip(), m.what) not in only:
            continue
        try:  # an edit that does not compile is no mutant (none should; this keeps it honest)
            compile(m.apply(source), "<mutant>", "exec")
        except SyntaxError:
            continue
        out.append(m)
    return sorted(out, key=lambda m: (m.line, m.col, m.what))


def line_of(source: str, m: Mutant) -> str:
    return source.splitlines()[m.line - 1].strip()


# ---- running ----------------------------------------------------------------------------
def scratch_copy(dest: Path) -> None:
    """The worktree's files (tracked and untracked, not ignored) copied to ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if not src.is_file():
            continue  # deleted in the worktree but still tracked
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


# Imported once by the runner and inherited by every forked test run: a run then pays for
# promptops and the tests only. promptops itself is never imported here (a fork must see
# the mutant), nor is anything that imports it.
PRELOAD = ("pytest", "_pytest.python", "_pytest.fixtures", "hypothesis", "git", "pydantic",
           "pydantic_core", "jinja2", "jinja2.sandbox", "ruamel.yaml", "click", "click.testing",
           "typer", "rich.console", "anyio", "httpx", "mcp.types", "jsonschema")


def preload() -> None:
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def run_tests(tree: Path, tests: list[str], timeout: float) -> tuple[str, float]:
    """``killed``, ``survived`` or ``timeout`` for the module as it is now in ``tree``.

    The tests run in a fork of this process (see :data:`PRELOAD`) with the scratch tree
    first on sys.path, in a session of its own so a timeout ends everything it started.
    """
    cache = tempfile.mkdtemp(prefix="xdg-", dir=tree / ".mutation")
    args = ["-x", "-q", "-p", "no:randomly", "-p", "no:xdist", "-p", "no:cacheprovider",
            "--no-header", "-o", "addopts=", *tests]
    start = time.monotonic()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 3
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.chdir(tree)
            os.environ.update({"PYTHONPATH": str(tree), "CI": "1", "XDG_CACHE_HOME": cache})
            os.environ.pop("PYTEST_ADDOPTS", None)
            sys.path.insert(0, str(tree))
            import pytest

            code = int(pytest.main(args))
        finally:
            os._exit(code)
    deadline = start + timeout
    status = None
    try:
        while status is None:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
            elif time.monotonic() > deadline:
                os.killpg(pid, 9)
                os.waitpid(pid, 0)
                shutil.rmtree(cache, ignore_errors=True)
                return "timeout", time.monotonic() - start
            else:
                time.sleep(0.05)
    except BaseException:  # interrupted (SIGINT, SIGTERM): end the run it started, too
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, 9)
        os.waitpid(pid, 0)
        raise
    shutil.rmtree(cache, ignore_errors=True)
    took = time.monotonic() - start
    if status == 0:
        return "survived", took
    # 1: a test failed; anything else (a collection or fixture error, a crash) is the
    # mutant's doing too, the tree being otherwise the one the baseline passed on
    return "killed" if status == 1 else f"killed (pytest exit {status})", took


def run_module(tree: Path, module: str, sample: int | None, seed: int, timeout: float | None,
               only: set[int] | None) -> dict[str, int]:
    path = tree / module
    source = path.read_text(encoding="utf-8")
    found = mutants(source)
    numbered = list(enumerate(found, 1))
    if only:
        numbered = [(i, m) for i, m in numbered if i in only]
    elif sample is not None and sample < len(numbered):
        numbered = sorted(random.Random(seed).sample(numbered, sample), key=lambda x: x[0])
    tests = TESTS[module]
    print(f"== {module}: {len(found)} mutants, running {len(numbered)}"
          f"{f' (seed {seed})' if sample and not only else ''} against {' '.join(tests)}",
          flush=True)
    status, base = run_tests(tree, tests, 1800)
    if status != "survived":
        raise SystemExit(f"the tests of {module} fail on the unmutated tree ({status}); "
                         "fix them first")
    limit = timeout if timeout is not None else max(30.0, 3 * base)
    print(f"   baseline {base:.1f}s, timeout {limit:.0f}s per mutant", flush=True)
    tally = {"killed": 0, "survived": 0, "timeout": 0, "equivalent": 0}
    survivors: list[str] = []
    stamp = path.stat().st_mtime
    try:
        for n, (i, m) in enumerate(numbered, 1):
            key = (module, line_of(source, m), m.what)
            if key in EQUIVALENT:  # reviewed: not run, not counted
                tally["equivalent"] += 1
                print(f"   #{i:<4} L{m.line:<4} {m.what:<50} equivalent: {EQUIVALENT[key]}")
                continue
            path.write_text(m.apply(source), encoding="utf-8")
            os.utime(path, (stamp + n, stamp + n))  # a new mtime: no stale .pyc is reused
            result, took = run_tests(tree, tests, limit)
            tally[result.split(" ")[0]] += 1
            print(f"   #{i:<4} L{m.line:<4} {m.what:<50} {result} ({took:.1f}s)", flush=True)
            if result == "survived":
                survivors.append(f"   #{i:<4} {module}:{m.line}: {m.what}\n"
                                 f"         {line_of(source, m)}")
    finally:
        path.write_text(source, encoding="utf-8")
        os.utime(path, (stamp + len(numbered) + 1, stamp + len(numbered) + 1))
    counted = tally["killed"] + tally["survived"] + tally["timeout"]
    killed = tally["killed"] + tally["timeout"]
    rate = 100.0 * killed / counted if counted else 100.0
    print(f"   {module}: killed {tally['killed']}, timeout {tally['timeout']}, survived "
          f"{tally['survived']}, equivalent {tally['equivalent']}: "
          f"{rate:.1f}% of the non-equivalent mutants killed", flush=True)
    if survivors:
        print("   survivors:\n" + "\n".join(survivors), flush=True)
    return {**tally, "rate_x10": round(rate * 10)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="module paths (keys of TESTS)")
    parser.add_argument("--all", action="store_true", help="every module TESTS maps")
    parser.add_argument("--sample", type=int, help="run this many mutants per module, "
                        "drawn with --seed (default: every mutant)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, help="seconds per mutant "
                        "(default: 3x the unmutated run, at least 30)")
    parser.add_argument("--only", type=int, action="append",
                        help="run mutant number N only (repeatable; numbers from --list)")
    parser.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    args = parser.parse_args(argv)
    modules = list(TESTS) if args.all else args.modules
    unknown = [m for m in modules if m not in TESTS]
    if unknown or not modules:
        parser.error(f"name modules among: {', '.join(TESTS)}" if unknown or not args.all
                     else "no modules")
    if args.list:
        for module in modules:
            source = (ROOT / module).read_text(encoding="utf-8")
            for i, m in enumerate(mutants(source), 1):
                mark = " [equivalent]" if (module, line_of(source, m), m.what) in EQUIVALENT \
                    else ""
                print(f"{module}:{m.line}: #{i} {m.what}{mark}")
        return 0
    # a SIGTERM (a background run's only polite stop) unwinds like Ctrl-C: the child's
    # tests are ended and the scratch tree removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="promptops-mutation-") as tmp:
        tree = Path(tmp)
        scratch_copy(tree)
        preload()
        (tree / ".mutation").mkdir()
        results = {m: run_module(tree, m, args.sample, args.seed, args.timeout,
                                 set(args.only) if args.only else None) for m in modules}
    print("\nmodule                                  killed/counted  equivalent  kill rate")
    for module, t in results.items():
        counted = t["killed"] + t["survived"] + t["timeout"]
        print(f"{module:<40} {t['killed'] + t['timeout']:>6}/{counted:<7}  {t['equivalent']:>10}"
              f"  {t['rate_x10'] / 10:>8.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
