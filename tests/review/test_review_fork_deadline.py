"""A render in a forked process is held to the time bound as one in the parent is.

The watchdog is a thread, and a fork copies only the forking thread: the review's pool
workers (:meth:`promptops.review.shared.Shared.render_all`) inherited a watchdog marked as
started but had none running, so a template that loops without calling anything ran
unbounded there. That takes a process that rendered before it forked: a fresh
``promptops diff`` or ``check`` forks its pool before its first render (measured: bounded
even before the fix), but a process that runs commands in-process (``test --watch``'s
loop, ``promptops ui``, the suite's ``run_cli``) has its watchdog running by then.

The package's HEAD edits a template into a loop over a long string (within the output
bound, calling nothing, so only the watchdog can stop it), and has enough test cases
(2,000 renders) that the review renders them in a pool.
"""

from __future__ import annotations

import time
from pathlib import Path

from helpers.repo import commit_files, make_repo, run_cli

from promptops.sandbox import watchdog

BASE = ("arguments:\n  - name: who\nmessages:\n  - role: user\n    text: 'Hi {{ who }}'\n")
# 6 x 10^8 iterations of a loop that calls nothing: some 15 s of CPU, were it not stopped
# (short enough that the test fails, not hangs, without the bound: the render then ends
# and the diff shows "Hi spin")
SPIN = ("arguments:\n  - name: who\nmessages:\n  - role: user\n    text: |\n"
        "      {% if who == 'spin' %}{% set s = 'x' * 25000 %}{% for a in s %}"
        "{% for b in s %}{% endfor %}{% endfor %}{% endif %}Hi {{ who }}\n")
CASES = 1_001  # at both ends: 2,002 renders, over the pool's threshold (2,000)


def _tests() -> str:
    names = ["spin", *(f"w{i}" for i in range(CASES - 1))]
    return "prompt: p\ncases:\n" + "".join(
        f"  - name: c{i}\n    arguments: {{who: {who}}}\n" for i, who in enumerate(names))


def test_a_diff_stops_a_looping_render_in_its_pool_workers(tmp_path: Path) -> None:
    watchdog.wake()  # started here, before the pool forks (as any earlier render starts it)
    repo = make_repo(tmp_path / "r", {
        "promptops.yaml": "name: p\nversion: 1.0.0\nlimits:\n  renderTimeoutMs: 300\n",
        "prompts/p.prompt.yaml": BASE, "tests/p.test.yaml": _tests()})
    commit_files(repo, {"prompts/p.prompt.yaml": SPIN}, "loop")
    start = time.monotonic()
    done = run_cli("diff", "HEAD~1", "HEAD", "--format", "json", cwd=tmp_path / "r")
    assert done.returncode == 0, done.stderr
    # the positioned error at HEAD, where BASE rendered
    assert ("+error -32603: prompt 'p' message 0 failed to render: BudgetExceeded: render "
            "took longer than 0.3 s") in done.stdout
    assert "+Hi spin" not in done.stdout
    assert time.monotonic() - start < 120
