"""An edit that makes a prompt file invalid re-lints that file, not the package, and the
findings equal a full run's (``promptops.lint.incremental.Broken``).

Validation drops a prompt file whose YAML or schema fails and lints the rest as the
package without it, so the findings are a removal's plus the broken file's own; but an
unloaded prompt file's text still counts (a partial it names is not reported unused), and
the shared partials lose the broken prompt's part of their findings. Each case edits a
package in a git repository (where lint keeps its record), lints it from the record, and
compares with a run that uses no cache; then undoes the edit and compares again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.repo import make_repo

from promptops.lint.runner import Options, lint_package
from promptops.pipeline.build import Build


def _lint(pkg: Path, *, cache: bool = True) -> tuple[list[str], str]:
    linted = lint_package(Build(pkg, None, keep_asts=True), Options(use_cache=cache))
    return [f"{f.path}:{f.line}:{f.col}:{f.code}:{f.message}" for f in linted.findings], \
        linted.how


def _prompt(name: str, *partials: str, extra: str = "") -> str:
    includes = "".join(f'{{% include "partials/{p}.j2" %}}' for p in partials)
    return (f"name: {name}\ndescription: prompt {name}\narguments:\n- name: topic\n"
            f"  required: true\n{extra}messages:\n- role: user\n"
            f"  text: '{includes}Say {{{{ topic }}}} {name}.'\n")


FILES = {
    "promptops.yaml": "name: demo\nversion: 1.0.0\n",
    # read by a and b, with a finding (trailing whitespace): settled when a breaks
    "partials/shared.j2": "Shared {{ topic }}.  \n",
    "partials/mine.j2": "Only a reads me, {{ topic }}.\n",  # an orphan when a breaks
    "partials/lone.j2": "Only c reads me, {{ topic }}.\n",
    "partials/unused.j2": "Nobody reads me.\n",  # unused partial (package scope)
    "prompts/a.prompt.yaml": _prompt("a", "shared", "mine"),
    "prompts/b.prompt.yaml": _prompt("b", "shared"),
    "prompts/c.prompt.yaml": _prompt("c", "lone"),
    **{f"prompts/p{k}.prompt.yaml": _prompt(f"p{k}") for k in range(6)},
}

Edit = tuple[str, Callable[[str], str]]


def DUPLICATE_KEY(text: str) -> str:
    """PO101, as an editor leaves it mid-edit (and as lint_bench's fallback edit does)."""
    return text.replace("description:", "description: edited\ndescription:", 1)


def BAD_ROLE(text: str) -> str:
    """PO102: a schema violation."""
    return text.replace("role: user", "role: nobody")


CASES: dict[str, tuple[list[Edit], str]] = {
    "a duplicate key in a prompt that reads a shared and an own partial":
        ([("prompts/a.prompt.yaml", DUPLICATE_KEY)], "incremental"),
    "a schema violation in the same prompt":
        ([("prompts/a.prompt.yaml", BAD_ROLE)], "incremental"),
    "its text no longer names its own partial: that one is unused now":
        ([("prompts/a.prompt.yaml", lambda t: BAD_ROLE(t).replace(
            '{% include "partials/mine.j2" %}', ""))], "incremental"),
    "two prompts broken at once":
        ([("prompts/a.prompt.yaml", DUPLICATE_KEY), ("prompts/c.prompt.yaml", BAD_ROLE)],
         "incremental"),
    "a broken prompt that names an unused partial: full run":
        ([("prompts/p1.prompt.yaml", lambda t: "# see partials/unused.j2\n" + BAD_ROLE(t))],
         "full"),
    "a broken prompt and an edited partial: full run":
        ([("prompts/a.prompt.yaml", DUPLICATE_KEY),
          ("partials/lone.j2", lambda t: t + "More.\n")], "full"),
    "a broken prompt and a valid edit: full run":
        ([("prompts/a.prompt.yaml", DUPLICATE_KEY),
          ("prompts/b.prompt.yaml", lambda t: t.replace("prompt b", "prompt bee"))], "full"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_prompt_made_invalid_relints_as_a_full_run_would(tmp_path: Path, case: str) -> None:
    pkg = tmp_path / "pkg"
    make_repo(pkg, FILES)
    first, how = _lint(pkg)
    assert how == "full"
    assert any(":PO305:" in f and "unused.j2" in f for f in first)  # the material holds
    assert any(":PO504:" in f and "shared.j2" in f for f in first)
    edits, expected = CASES[case]
    kept = {}
    for path, change in edits:
        target = pkg / path
        kept[path] = target.read_text(encoding="utf-8")
        target.write_text(change(kept[path]), encoding="utf-8")
    found, how = _lint(pkg)
    full = _lint(pkg, cache=False)[0]
    assert how == expected
    assert found == full
    assert any(":PO101:" in f or ":PO102:" in f for f in found)  # the prompt is broken
    for path, text in kept.items():  # undone: the record no longer has the prompt's reads
        (pkg / path).write_text(text, encoding="utf-8")
    found, how = _lint(pkg)
    assert found == _lint(pkg, cache=False)[0] == first


def _linted_then_a_broken(tmp_path: Path) -> tuple[Path, Path]:
    """The package linted once (the record), then prompt a given a duplicate key and
    linted again, which must stay incremental: the start both record tests share."""
    pkg = tmp_path / "pkg"
    make_repo(pkg, FILES)
    _lint(pkg)
    a = pkg / "prompts/a.prompt.yaml"
    a.write_text(DUPLICATE_KEY(a.read_text(encoding="utf-8")), encoding="utf-8")
    assert _lint(pkg)[1] == "incremental"
    return pkg, a


def test_the_record_after_a_broken_prompt_is_a_full_runs(tmp_path: Path) -> None:
    """Lint after lint from the record the broken run left: a second broken edit, then a
    valid edit elsewhere, each equal to a full run."""
    pkg, a = _linted_then_a_broken(tmp_path)
    c = pkg / "prompts/c.prompt.yaml"
    c.write_text(c.read_text(encoding="utf-8").replace("prompt c", "prompt sea"),
                 encoding="utf-8")
    found, _ = _lint(pkg)
    assert found == _lint(pkg, cache=False)[0]
    a.write_text(BAD_ROLE(FILES["prompts/a.prompt.yaml"]), encoding="utf-8")
    found, _ = _lint(pkg)
    assert found == _lint(pkg, cache=False)[0]


def test_a_partial_only_a_broken_prompt_names_is_not_unused(tmp_path: Path) -> None:
    """After a breaks, b stops including the partial it shared with a: nobody reads that
    partial now, but a's unloaded text names it, so a full run does not call it unused; an
    edit judging it alone did (before session 12, from any incomplete record)."""
    pkg, _ = _linted_then_a_broken(tmp_path)
    b = pkg / "prompts/b.prompt.yaml"
    b.write_text(b.read_text(encoding="utf-8").replace('{% include "partials/shared.j2" %}', ""),
                 encoding="utf-8")
    found, _ = _lint(pkg)
    assert found == _lint(pkg, cache=False)[0]
    assert not any(":PO305:" in f and "shared.j2" in f for f in found)
