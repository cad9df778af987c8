"""Template code keeps its parts once (sandbox/codeshare.py): the same code but its table.

The environment rewrites each compiled template's location table to lines alone and takes
every part another template's code holds alike (the table, the names, strings, tuples)
from that code (issue 26: ~5 KB less a served prompt). The judge is Jinja's own compile
of the same generated source: the same instructions, values and line of every instruction,
the same names and constants; and the same line for every code unit of any code, the
tests' templates and Python's own modules included.
"""

from __future__ import annotations

import dis
import inspect
import json
import traceback
from types import CodeType

import pytest
from helpers.templates import dump_code, template_files
from jinja2 import Environment
from jinja2.exceptions import UndefinedError

from promptops.sandbox import codeshare
from promptops.sandbox.codeshare import CodeParts, lines_only
from promptops.sandbox.environment import environment

SHAPED = [
    "Hello {{ name }}, welcome to {{ place }}.\n{% for s in ['a', 'b'] %}{{ loop.index }}. "
    "{{ s | upper }} {{ name }}\n{% endfor %}{% if tone == 'formal' %}Sir.{% else %}Hi.{% endif %}",
    "{% set x = name ~ '!' %}{{ x }}{% macro m(a) %}<{{ a }}>{% endmacro %}{{ m(place) }}\n"
    "{% for k, v in items %}{{ k }}={{ v }}{% if not loop.last %}, {% endif %}{% endfor %}",
]


def _codes(code: CodeType) -> list[CodeType]:
    return [code, *(c for k in code.co_consts if isinstance(k, CodeType) for c in _codes(k))]


def _unit_lines(code: CodeType) -> list[int | None]:
    return [p[0] for p in code.co_positions()]


def _merged(code: CodeType) -> list[tuple[int, int, int | None]]:
    """``co_lines`` with adjacent ranges of one line joined (how many entries a run takes
    is the table's business)."""
    out: list[tuple[int, int, int | None]] = []
    for start, end, line in code.co_lines():
        if out and out[-1][2] == line and out[-1][1] == start:
            out[-1] = (out[-1][0], end, line)
        elif end > start:
            out.append((start, end, line))
    return out


def _jinjas(env: Environment, source: str) -> CodeType:
    """The code Jinja's own compile makes of the environment's generated source."""
    return Environment._compile(env, env.compile(source, raw=True), "<template>")


def _templates(env: Environment) -> list[str]:
    """:data:`SHAPED` and the tests' template files that compile."""
    out = list(SHAPED)
    for source in template_files()[:80]:
        try:
            env.compile(source, raw=True)
        except Exception:
            continue
        out.append(source)
    return out


def _python_code() -> list[CodeType]:
    """Code with every kind of location entry: long lines, lines far apart, lines going
    back (loops), no line (exception handlers), nested functions and classes."""
    modules = [dis, inspect, json.decoder, traceback, codeshare]
    out = [compile(codeshare._SAMPLE, "<sample>", "exec")]
    for module in modules:
        out.append(compile(inspect.getsource(module), module.__name__, "exec"))
    return [c for code in out for c in _codes(code)]


def test_lines_only_keeps_every_code_units_line() -> None:
    env = environment({})
    codes = _python_code() + [c for s in _templates(env) for c in _codes(_jinjas(env, s))]
    assert len(codes) > 400
    none = 0
    for code in codes:
        table = lines_only(code)
        slim = code.replace(co_linetable=table)
        assert _unit_lines(slim) == _unit_lines(code), code
        assert _merged(slim) == _merged(code), code
        assert len(table) <= len(code.co_linetable)
        none += None in _unit_lines(code)
    assert none  # the no-line entries were among them


def test_template_code_is_jinjas_but_its_table() -> None:
    env = environment({})
    for source in _templates(env):
        ours, jinjas = env.compile(source), _jinjas(env, source)
        assert dump_code(ours) == dump_code(jinjas)  # each instruction, value and line
        for a, b in zip(_codes(ours), _codes(jinjas), strict=True):
            assert (a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars, a.co_flags,
                    a.co_exceptiontable, a.co_filename, a.co_qualname, a.co_stacksize) == \
                   (b.co_names, b.co_varnames, b.co_freevars, b.co_cellvars, b.co_flags,
                    b.co_exceptiontable, b.co_filename, b.co_qualname, b.co_stacksize)
            assert [k for k in a.co_consts if not isinstance(k, CodeType)] == \
                   [k for k in b.co_consts if not isinstance(k, CodeType)]
            assert _unit_lines(a) == _unit_lines(b)


def test_templates_of_one_shape_hold_one_table() -> None:
    env = environment({})
    texts = [SHAPED[0].replace("welcome to", f"welcome, reader{' x' * i}, to") for i in range(3)]
    roots = [next(c for c in _codes(env.compile(t)) if c.co_name == "root") for t in texts]
    plain = [next(c for c in _codes(_jinjas(env, t)) if c.co_name == "root") for t in texts]
    assert plain[0].co_linetable != plain[1].co_linetable  # the columns follow the text
    assert roots[0].co_linetable is roots[1].co_linetable is roots[2].co_linetable
    assert roots[0].co_names is roots[2].co_names
    assert roots[0].co_exceptiontable is roots[2].co_exceptiontable
    shared = [next(k for k in r.co_consts if k == "Sir.") for r in roots]
    assert shared[0] is shared[1] is shared[2]
    assert roots[0].co_consts != roots[1].co_consts  # each keeps its own text


def test_a_template_error_names_the_template_line() -> None:
    source = "one\ntwo {{ name }}\nthree {{ missing.attr }}\n"
    for env in (environment({}), Environment()):
        with pytest.raises(UndefinedError) as caught:
            env.from_string(source).render(name="x")
        frames = traceback.extract_tb(caught.value.__traceback__)
        assert [f.lineno for f in frames if f.filename == "<template>"] == [3]


def test_the_parts_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codeshare, "MAX_PARTS", 8)
    parts = CodeParts()
    env = environment({})
    for source in SHAPED:
        code = parts.share(_jinjas(env, source))
        assert dump_code(code) == dump_code(_jinjas(env, source))
    assert len(parts._parts) == 8


def test_a_python_that_reads_the_table_otherwise_keeps_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codeshare, "lines_only", lambda code: b"")  # reads back wrong
    env = environment({})
    code = _jinjas(env, SHAPED[0])
    shared = CodeParts().share(code)
    assert [c.co_linetable for c in _codes(shared)] == [c.co_linetable for c in _codes(code)]


def test_a_template_renders_as_before() -> None:
    env, plain = environment({}), environment({})
    values = {"name": "Ann", "place": "Oslo", "tone": "formal", "items": [("a", 1), ("b", 2)]}
    for source in SHAPED:
        ours = env.from_string(source).render(values)
        theirs = plain.template_class.from_code(plain, _jinjas(plain, source),
                                                plain.make_globals(None)).render(values)
        assert ours == theirs
