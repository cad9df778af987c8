"""No process-global switches: nothing in ``promptops/`` rebinds or mutates module state.

Issue 13 removed the loader's ``_parser``/``_MEMO`` swaps, ``console.settings``,
``release.GATES`` filled on import and serve's ``holder`` list. This keeps them out:
a static scan of every module for ``global`` statements, for writes into module-level
lists, dicts and sets from inside functions, and for assignments to another module's
attributes (monkeypatching). The few process resources that must be per process are
listed with the reason; anything new fails here. And the behaviour it buys: in-process
runs with different switches do not see each other's settings.
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.repo import run_cli

PACKAGE = Path(__file__).resolve().parents[1] / "promptops"
MUTATORS = {"append", "extend", "update", "add", "pop", "clear", "insert", "remove",
            "setdefault", "popitem", "discard"}
CONTAINERS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)

# (module, name): why it is per process by nature, not a switch.
ALLOWED = {
    ("sandbox/watchdog.py", "_started"): "one watchdog thread per process, started once",
    ("sandbox/watchdog.py", "_active"): "the threads the watchdog watches, under its lock",
    ("sandbox/watchdog.py", "_wake"): "when the one watchdog thread wakes next",
    ("sandbox/watchdog.py", "_alarm"): "replaced in a forked child: the parent's watchdog "
    "thread may have held its lock at the fork",
    ("testing/runner.py", "_worker"): "a multiprocessing pool worker's initializer state, "
                                      "set in the child process only",
    ("review/shared.py", "_worker"): "the review's render pool worker's initializer state, "
                                    "set in the child process only",
}


def _module_state(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(imported module names, module-level names bound to mutable containers)."""
    modules: set[str] = set()
    containers: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value
            mutable = isinstance(value, CONTAINERS) or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id in {"list", "dict", "set", "defaultdict", "deque"})
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if mutable:
                containers |= {t.id for t in targets if isinstance(t, ast.Name)}
    return modules, containers


def violations(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    modules, containers = _module_state(tree)
    found: list[tuple[int, str]] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found += [(node.lineno, name) for name in node.names]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and isinstance(node.func.value, ast.Name)
                  and node.func.value.id in containers and node.func.attr in MUTATORS):
                found.append((node.lineno, node.func.value.id))
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) \
                    else [node.target]
                for t in targets:
                    if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                            and t.value.id in containers):
                        found.append((node.lineno, t.value.id))
                    if (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                            and t.value.id in modules):
                        found.append((node.lineno, f"{t.value.id}.{t.attr}"))
    return found


def test_no_module_state_is_written_at_run_time() -> None:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for line, name in violations(path.read_text(encoding="utf-8")):
            if (rel, name) not in ALLOWED:
                bad.append(f"promptops/{rel}:{line}: {name}")
    assert not bad, "module state written at run time:\n" + "\n".join(bad)


def test_the_scan_catches_each_kind() -> None:
    """The scan can fail: each pattern the issue names is caught."""
    source = (
        "import console\nfrom x import y\n_MEMO = {}\nGATES = []\nflag = False\n"
        "def a():\n    global flag\n    flag = True\n"
        "def b():\n    _MEMO['k'] = 1\n"
        "def c():\n    GATES.append(c)\n"
        "def d():\n    console.settings = 1\n"
    )
    assert [name for _, name in violations(source)] == ["flag", "_MEMO", "GATES",
                                                         "console.settings"]


def test_switches_do_not_leak_between_in_process_runs(tmp_path: Path) -> None:
    (tmp_path / "promptops.yaml").write_text("name: demo\nversion: 1.0.0\n", encoding="utf-8")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.prompt.yaml").write_text(
        "messages:\n  - role: user\n    text: 'Hi {{ who }}'\n", encoding="utf-8")
    coloured = run_cli("--color", "always", "lint", "--no-cache", str(tmp_path), NO_COLOR="")
    assert "\x1b[" in coloured.stdout
    plain = run_cli("lint", "--no-cache", str(tmp_path), NO_COLOR="")
    assert "\x1b[" not in plain.stdout and plain.stdout.strip()
    args = ("build", "--worktree", "--no-lint", "-o", str(tmp_path / "dist"), str(tmp_path))
    quiet = run_cli("-q", *args)
    loud = run_cli(*args)
    assert quiet.returncode == loud.returncode == 0, loud.stderr
    assert quiet.stderr == "" and "unchanged" in loud.stderr
