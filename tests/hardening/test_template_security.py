"""Hostile templates: each fails with a clear -32603 error inside the time and size budget.

Memory bombs are checked against the process's peak RSS: without the size checks each
of them allocates from hundreds of megabytes to gigabytes before the output cap notices.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hardening_helpers import record
from helpers.repo import peak_rss_mb, write_files

from promptops.errors import RenderError
from promptops.render.mcp import INTERNAL_ERROR, error_code
from promptops.render.renderer import Renderer

AREA = "template security"
GROWTH_LIMIT_MB = 150

# (what is tried, template, expected error type and message fragment)
HOSTILE: list[tuple[str, str, str]] = [
    ("`%` with a huge width", "{{ '%999999999s' % 'x' }}", "BudgetExceeded: `%` format width"),
    ("`%` with a `*` width", "{{ '%*s' % (999999999, 'x') }}", "BudgetExceeded: `%` format"),
    ("str.ljust to 10**9", "{{ 'x'.ljust(10**9) }}", "BudgetExceeded: `ljust` width"),
    ("str.center to 10**9", "{{ 'x'.center(10**9) }}", "BudgetExceeded: `center` width"),
    ("str.zfill to 10**9", "{{ 'x'.zfill(10**9) }}", "BudgetExceeded: `zfill` width"),
    ("str.format with a huge width", "{{ '{0:>999999999}'.format('x') }}",
     "BudgetExceeded: format spec width"),
    ("str.format with a nested width", "{{ '{0:>{1}}'.format('x', 999999999) }}",
     "BudgetExceeded: format spec width"),
    ("str.expandtabs(10**9)", "{{ '\\t'.expandtabs(10**9) }}", "BudgetExceeded: `expandtabs`"),
    ("str.replace growth", "{{ ('x' * 1000000).replace('x', 'xxxxxxxxxx') }}",
     "BudgetExceeded: `replace`"),
    ("|center(10**9)", "{{ 'x'|center(10**9) }}", "BudgetExceeded: `center` width"),
    ("|indent(10**8)", "{{ 'x'|indent(10**8) }}", "BudgetExceeded: `indent`"),
    ("|format with a huge width", "{{ '%999999999s'|format('x') }}", "BudgetExceeded: `%`"),
    ("|slice into 10**9 parts", "{{ [1]|slice(10**9)|list }}", "BudgetExceeded: `slice`"),
    ("|tojson(indent=10**9)", "{{ 1|tojson(indent=10**9) }}", "BudgetExceeded: `tojson`"),
    ("`~` doubling in a loop", "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(40) %}"
     "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}", "BudgetExceeded: `~`"),
    ("`+` doubling in a loop", "{% set ns = namespace(s='x' * 1000000) %}{% for i in range(40) %}"
     "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}", "BudgetExceeded: `+`"),
    ("list.extend doubling", "{% set l = ['x'] * 1000000 %}{% for i in range(40) %}"
     "{{ l.extend(l) }}{% endfor %}", "BudgetExceeded: `extend`"),
    ("integer tower", "{{ ((10**1000)**1000)**1000 }}", "BudgetExceeded: `**`"),
    ("`*` 10**8", "{{ 'x' * 10**8 }}", "BudgetExceeded: `*`"),
    ("|wordwrap(1) on a million characters", "{{ ('x' * 999999)|wordwrap(1) }}",
     "BudgetExceeded: render took longer than 2 s"),
    ("loops that call nothing", "{% set s = 'x' * 20000 %}{% for a in s %}{% for b in s %}"
     "{% endfor %}{% endfor %}", "BudgetExceeded: render took longer than 2 s"),
    ("recursive macro", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
     "BudgetExceeded: macros nested deeper than 100"),
    ("a method printed without calling it", "{{ 'a'.upper }}",
     "SecurityError: cannot print builtin_function_or_method upper"),
    ("an object printed by address", "{{ [1, 2]|map('string') }}",
     "SecurityError: cannot print a generator"),
    ("walk to __globals__", "{{ cycler.__init__.__globals__ }}", "SecurityError: access to"),
    ("walk to __subclasses__", "{{ ''.__class__.__mro__[1].__subclasses__() }}",
     "SecurityError: access to"),
    ("format-string attribute walk", "{{ '{0.__globals__}'.format(cycler.__init__) }}",
     "SecurityError: access to"),
    ("__builtins__ / open()", "{{ __builtins__.open('/etc/passwd').read() }}",
     "UndefinedError"),
    ("environment variables", "{{ environ }}{{ os.environ }}", "UndefinedError"),
    ("the clock", "{{ now() }}", "UndefinedError"),
    ("include of a file outside the package", "{% include '/etc/passwd' %}",
     "TemplateNotFound: /etc/passwd"),
    ("range(10**9)", "{{ range(10**9)|list|length }}", "OverflowError: Range too big"),
]


def renderer(text: str) -> Renderer:
    bundle: dict[str, Any] = {
        "prompts": [{"name": "p", "arguments": [],
                     "messages": [{"role": "user", "type": "text", "text": text}]}],
        "templates": {}, "resources": {}}
    return Renderer(bundle)


@pytest.mark.parametrize(("what", "template", "expected"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_template_is_refused(what: str, template: str, expected: str) -> None:
    before = peak_rss_mb()
    with pytest.raises(RenderError) as info:
        renderer(template).get("p", {})
    grown_mb = peak_rss_mb() - before
    message = str(info.value).removeprefix("prompt 'p' message 0 failed to render: ")
    assert error_code(info.value) == INTERNAL_ERROR
    assert message.startswith(expected), message
    assert grown_mb < GROWTH_LIMIT_MB, f"peak RSS grew by {grown_mb:.0f} MB"
    assert "root:x:" not in message and " at 0x" not in message
    record(AREA, what, "render/serve", f"-32603 {message[:110]}",
           f"test_template_security.py::test_hostile_template_is_refused[{what}]")


def test_argument_values_are_never_evaluated() -> None:
    r = renderer("{{ a }}")
    r.prompts["p"]["arguments"] = [{"name": "a"}]
    for value in ("{{ 7 * 7 }}", "{% include '/etc/passwd' %}", "{{ cycler.__init__ }}"):
        assert r.get("p", {"a": value})["messages"][0]["content"]["text"] == value
    record(AREA, "template syntax inside an argument value", "render/serve",
           "rendered verbatim as text, never evaluated",
           "test_template_security.py::test_argument_values_are_never_evaluated")


# What lint reports in review, before the template ever renders (the rest are found only
# by running them: growth inside loops, printing, names that do not exist, includes).
LINTED = {
    "PO510": ["walk to __globals__", "walk to __subclasses__", "format-string attribute walk",
              "__builtins__ / open()"],
    "PO511": ["`%` with a huge width", "`%` with a `*` width", "str.ljust to 10**9",
              "str.center to 10**9", "str.zfill to 10**9", "str.format with a huge width",
              "str.format with a nested width", "str.expandtabs(10**9)", "|center(10**9)",
              "|indent(10**8)", "|format with a huge width", "|slice into 10**9 parts",
              "|tojson(indent=10**9)", "integer tower", "`*` 10**8", "recursive macro",
              "range(10**9)"],
}


def test_lint_reports_hostile_templates_in_review(tmp_path: Path) -> None:
    from promptops.lint.config import settings
    from promptops.lint.engine import lint_source
    from promptops.pipeline.source import WorktreeSource

    names = {f"h{i:02d}": what for i, (what, _, _) in enumerate(HOSTILE)}
    files = {"promptops.yaml": "name: hostile\nversion: 1.0.0\n"}
    for (key, _), (_, template, _) in zip(names.items(), HOSTILE, strict=True):
        files[f"prompts/{key}.prompt.yaml"] = (
            f"description: d\nmessages:\n  - role: user\n    text: {json.dumps(template)}\n")
    write_files(tmp_path, files)
    conf = settings(None, ["PO510", "PO511"], [])
    found: dict[str, list[str]] = {"PO510": [], "PO511": []}
    for f in lint_source(WorktreeSource(tmp_path), conf, tmp_path).findings:
        what = names[f.path.removeprefix("prompts/").removesuffix(".prompt.yaml")]
        assert f.level == "error" and f.line == 4, f
        if what not in found[f.code]:
            found[f.code].append(what)
    order = [what for what, _, _ in HOSTILE]
    assert {c: sorted(w, key=order.index) for c, w in found.items()} == LINTED
    record(AREA, "hostile templates linted before they are merged", "lint",
           f"{len(LINTED['PO510']) + len(LINTED['PO511'])} of the {len(HOSTILE)} hostile "
           "templates above are reported as errors: PO510 unsafe-template-access ("
           + ", ".join(LINTED["PO510"]) + "); PO511 resource-exhaustion ("
           + ", ".join(LINTED["PO511"]) + "); the rest are refused only when rendered",
           "test_template_security.py::test_lint_reports_hostile_templates_in_review")
