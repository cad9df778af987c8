"""Cold lint on both cores finds what one core finds, checked in a fresh process.

``promptops.lint.halves`` forks only when no other thread is alive, and a test run may
have threads left by earlier tests: here a fresh interpreter, which has none, compares the
two outcomes (``test_halves.one_and_both``; on one core it checks that lint stays in one
process).
"""

from __future__ import annotations

from pathlib import Path

from helpers.fresh import fresh_stdout

SCRIPT = """
import test_halves
pairs = test_halves.one_and_both()
print("same" if all(one == both for one, both in pairs) else "different")
print([len(one) for one, _ in pairs])
"""


def test_both_halves_find_what_one_process_finds_in_a_fresh_process() -> None:
    lines = fresh_stdout(SCRIPT, Path(__file__).parent)
    assert lines[0] == "same", lines


def test_an_unknown_silenced_rule_is_named_as_one_process_names_it() -> None:
    """The halves stop on a disable comment naming no rule, each at the first of its own
    share; the error must be the one-process run's (the package's first such file)."""
    lines = fresh_stdout("import test_halves\none, both = test_halves.unknown_code_errors()\n"
                         "print(one)\nprint(both)\n", Path(__file__).parent)
    assert "unknown lint rule 'PO999'" in lines[0], lines
    assert lines[0] == lines[1], lines
