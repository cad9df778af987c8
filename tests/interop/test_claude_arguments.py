"""Claude Code's positional arguments are 0-based: ``$0`` is the first word typed.

Claude Code's current docs (skills, which custom commands now share) give ``$ARGUMENTS[N]``
and its shorthand ``$N`` as a 0-based index into the arguments (docs/interop.md, "Claude
Code arguments"). The import and the corpus judge must agree with that and with each other:
the same body, the same words, the same text.
"""

from __future__ import annotations

import pytest
from fidelity import judges
from ir_render import render

from promptops.interop.importers import IMPORTERS

BODY = "---\ndescription: migrate\n---\nMigrate $0 from $1 to $2 ($ARGUMENTS[1]; $3|$ARGUMENTS)"


@pytest.mark.parametrize(("typed", "want"), [
    ("SearchBar React Vue",
     "Migrate SearchBar from React to Vue (React; |SearchBar React Vue)"),
    ("SearchBar", "Migrate SearchBar from  to  (; |SearchBar)"),
    ("", "Migrate  from  to  (; |)"),
])
def test_dollar_n_is_zero_based_in_import_and_judge(typed: str, want: str) -> None:
    [prompt] = IMPORTERS["claude"]("migrate.md", BODY, {})
    assert render(prompt, {"ARGUMENTS": typed}) == [{"role": "user", "text": want}]
    assert judges.render_claude(BODY, {"ARGUMENTS": typed}) == [{"role": "user", "text": want}]


def test_a_body_with_only_dollar_zero_gets_no_arguments_appended() -> None:
    [prompt] = IMPORTERS["claude"]("one.md", "Explain $0.", {})
    assert render(prompt, {"ARGUMENTS": "monads please"}) == [
        {"role": "user", "text": "Explain monads."}]
