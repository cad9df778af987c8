"""Hostile templates: each fails with a clear -32603 error inside the time and size budget.

Memory bombs are checked against the process's peak RSS: without the size checks each
of them allocates from hundreds of megabytes to gigabytes before the output cap notices.
"""

from __future__ import annotations

import resource
from typing import Any

import pytest
from hardening_helpers import record

from promptops.errors import INTERNAL_ERROR, RenderError
from promptops.render import Renderer

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
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(RenderError) as info:
        renderer(template).get("p", {})
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    message = str(info.value).removeprefix("prompt 'p' message 0 failed to render: ")
    assert info.value.code == INTERNAL_ERROR
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
