"""Fixtures every test module may use; the plain helpers live in helpers/repo.py."""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import git
import pytest
from helpers.bytecode import DATA, compile_trees, rewrite_tests
from helpers.repo import make_repo
from hypothesis import settings

# CI must not be a lottery: property tests draw the same examples on every CI run
# (derandomize). Locally they explore new ones each run, which is how bugs get found.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


# Where tmp_path lives when the machine has a RAM file system with room: /dev/shm, else
# the default (the system's temp folder). Every file a command writes goes through
# fsutil.atomic_write, which fsyncs it, and on a disk each fsync is a journal commit the
# test waits for: tests/interop/test_export_command.py alone makes 6,218 (idle-core wall
# and kernel CPU, in a run that is CPU-bound on two cores). The code under test is the
# same (it still calls fsync; a RAM file system answers at once): no test checks that
# bytes reached a disk, which no test could. pytest's own numbered folders
# (pytest-of-USER/pytest-N, the last three kept) are made there, so concurrent runs
# never share one; --basetemp or PYTEST_DEBUG_TEMPROOT, when given, win.
RAM_TEMP = Path("/dev/shm")
RAM_TEMP_FREE = 4 << 30  # bytes: far above a whole run's temp folders


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # once a run, before any worker imports
        compile_trees(config.rootpath)
        part = whole_part(config)
        if part is not None and config.getoption("assertmode") == "rewrite":
            rewrite_tests(config, run_modules(config.rootpath, part))
    if config.option.basetemp or "PYTEST_DEBUG_TEMPROOT" in os.environ:
        return  # chosen by the caller (an xdist worker gets its controller's basetemp)
    try:
        # tests run what they write there (git hooks, a virtualenv's scripts): a noexec
        # mount (Docker's /dev/shm) will not do
        roomy = (RAM_TEMP.is_dir() and os.access(RAM_TEMP, os.W_OK | os.X_OK)
                 and not os.statvfs(RAM_TEMP).f_flag & os.ST_NOEXEC
                 and shutil.disk_usage(RAM_TEMP).free >= RAM_TEMP_FREE)
    except (OSError, AttributeError):  # AttributeError: no os.statvfs (Windows)
        roomy = False
    if roomy:
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(RAM_TEMP)


@pytest.fixture(scope="session", autouse=True)
def _own_user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Each test session (each xdist worker) caches in a folder of its own, never the user's:
    lint results a warm ``~/.cache/promptops`` kept from other code must not pass a test,
    and a test must not leave entries there. Processes the tests start inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
        yield


@pytest.fixture(autouse=True)
def _signals_unblocked() -> Iterator[None]:
    """Every test starts and ends with SIGINT and SIGTERM deliverable in the main thread.

    ``serve_main`` run in-process ends with ``Signals.hold()`` and ``Signals.ignore()``,
    which block and ignore both for the rest of the process: right for a server about to
    exit, wrong for a test worker that goes on. A signal mask and an ignored signal are
    inherited across exec, so every process a later test of that worker starts would
    ignore the SIGINT or SIGTERM the test sends it (a watch or an HTTP server that never
    stops). ``run_cli`` puts both back itself; this catches any other in-process path, at
    the end of the test too: a later module's module-scoped server is started before this
    fixture's next setup runs (tests/serve/transports/http/test_http_old_sse.py's did,
    after tests/channels/test_channel_follow.py's in-process serve on the same worker).
    """
    _deliverable()
    yield
    _deliverable()


def _deliverable() -> None:
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture
def repo_factory(tmp_path: Path) -> Callable[..., git.Repo]:
    """``repo_factory(files, message=...)`` -> a fresh repository under tmp_path."""
    counter = iter(range(1_000_000))

    def factory(files: Mapping[str, str | bytes], message: str = "initial commit") -> git.Repo:
        return make_repo(tmp_path / f"repo{next(counter)}", files, message)

    return factory


# A module that starts processes (promptops itself, node, a load balancer, a venv's
# python) puts the process under test: its tests are the `process` job (CI runs both).
# ``fuzz_stdio.run``: the driver beside its test starts a real `promptops serve` (the
# test's own text names no process, so it had run in the default part).
SPAWNS = re.compile(
    r'serve_cmd|serve_process|ServeProcess|RawClient|\bServe\(|run_cli_process|"-m", "promptops"'
    r"|stdio_client|Popen|fuzz_stdio\.run\("
    r"|helpers\.node|helpers\.fresh|haproxy|nginx|uvicorn|\bpty\b|sys\.executable|\bPYTHON\b"
    r"|hardening_helpers import .*\bcli\b|http_helpers|venv")


@functools.cache
def starts_processes(path: Path) -> bool:
    return bool(SPAWNS.search(path.read_text(encoding="utf-8")))


def whole_part(config: pytest.Config) -> str | None:
    """``"default"`` for a bare ``pytest``, ``"process"`` for a bare ``pytest -m process``
    (the two runs of ``.ci/run``), None for any other selection."""
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return None
    mark = config.option.markexpr
    return "default" if not mark else "process" if mark == "process" else None


def run_modules(root: Path, part: str) -> list[Path]:
    """The test modules and conftest files a whole run of ``part`` imports (its workers'
    assertion rewriting is done once, before they start: helpers/bytecode.py); modules in
    the data folders are left to the workers, so nothing is written into a corpus."""
    tests = [p for p in sorted((root / "tests").rglob("*.py"))
             if not DATA.intersection(p.relative_to(root).parts)]
    return [p for p in tests if p.name == "conftest.py" or (
        p.name.startswith("test_") and starts_processes(p) == (part == "process"))]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the two whole runs, a test module of the other run is not imported at all.

    Collecting it only to deselect every test (below) cost each xdist worker about 2 s of
    CPU per run, imports of the other half's helpers and libraries; the tests run are the
    same. Any other selection (a file named, another ``-m``) collects everything.
    """
    name = collection_path.name
    if not (name.startswith("test_") and name.endswith(".py")) or collection_path.is_dir():
        return None
    part = whole_part(config)
    if part is None:
        return None
    return True if starts_processes(collection_path) == (part == "default") else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of modules that start processes ``process``; a bare ``pytest`` runs
    the others (the quick, in-process default), ``-m process`` runs these.

    Only a run with no arguments and no ``-m`` leaves them out, so naming a file or a
    test (``pytest tests/serve/test_sdk.py``) always runs what it names.
    """
    for item in items:
        if starts_processes(item.path):
            item.add_marker(pytest.mark.process)
    if config.option.markexpr or config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return
    keep = [item for item in items if item.get_closest_marker("process") is None]
    if len(keep) < len(items):
        config.hook.pytest_deselected(
            items=[item for item in items if item.get_closest_marker("process") is not None])
        items[:] = keep


# The modules that judge the whole corpus: one xdist work unit, so they run in one worker
# and share its one import of the corpus (tests/interop/conftest.py) and one engine render
# (judges.render_all's cache) instead of making both in each worker. xdist's own
# `--dist loadgroup` would say this with a mark, but it does not group under pytest 9.2
# (pytest-dev/pytest-xdist#1386), so the scheduler below names the files.
CORPUS_MODULES = frozenset({
    "tests/corpus/test_corpus.py", "tests/interop/test_corpus_import.py",
    "tests/interop/test_export_command.py", "tests/interop/test_folder_import_figure.py",
    "tests/interop/test_import_command.py"})


# Seconds each module took in a measured `-n 2` run (summed test wall time; written by
# `python benchmarks/suite_times.py PREFIX --costs tests/module_costs.json`). Only the
# order matters: the scheduler deals the costliest units first.
MODULE_COSTS = Path(__file__).with_name("module_costs.json")


def unit_cost(scope: str, tests: int, costs: Mapping[str, float]) -> float:
    """A work unit's measured seconds; a module not in the table (new since it was
    measured) is guessed at 0.2 s a test."""
    modules = CORPUS_MODULES if scope == "corpus" else (scope,)
    known = [costs[m] for m in modules if m in costs]
    return sum(known) if known else 0.2 * tests


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``-n`` without ``--dist`` (the addopts): one work unit per module, the corpus
    modules one unit together, the costliest units first.

    xdist's default (``load``) deals tests out one by one, so both workers build most
    module-scoped fixtures (a served package, a built corpus) and start most module
    servers; a module as the unit builds each once. An explicit ``--dist`` is kept.

    xdist's loadscope deals the units with the most tests first, so a module of a few
    long tests (the README's install, the kill tests, the benchmark scripts) came last
    and ran alone while the other worker sat idle. Dealt longest first by measured time
    (``MODULE_COSTS``), both workers end within about the last unit's length.
    """
    if config.getvalue("dist") != "load":
        return None
    import json
    from collections import OrderedDict

    from xdist.scheduler import LoadScopeScheduling

    costs: dict[str, float] = (json.loads(MODULE_COSTS.read_text(encoding="utf-8"))
                               if MODULE_COSTS.exists() else {})

    class ModuleScheduling(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "corpus" if module in CORPUS_MODULES else module

        def _assign_work_unit(self, node: object) -> None:
            if not self.ordered:  # the queue is complete before the first unit is dealt
                self.ordered = True
                units = sorted(self.workqueue.items(),
                               key=lambda unit: -unit_cost(unit[0], len(unit[1]), costs))
                self.workqueue = OrderedDict(units)
            super()._assign_work_unit(node)  # type: ignore[arg-type]

    return ModuleScheduling(config, log)


# Workers per core for `pytest -m process`. Its tests mostly wait: on the servers and
# commands they start, on polls, sockets, a browser, pip. With one worker per core an idle
# 2-core CI machine ran that part at about half its CPU (372.5 s wall for ~400 s CPU), so
# a worker per core leaves a core idle whenever its test waits; two keep both busy.
PROCESS_WORKERS_PER_CORE = 2


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (the addopts) for the whole process run: ``PROCESS_WORKERS_PER_CORE``
    workers a core. Every other run keeps xdist's one a core (the default run's tests
    compute; more workers would only add collections), and ``PYTEST_XDIST_AUTO_NUM_WORKERS``
    still overrides both."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or whole_part(config) != "process":
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return PROCESS_WORKERS_PER_CORE * (cores or 1)
