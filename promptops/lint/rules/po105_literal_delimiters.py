"""Jinja delimiters inside inline code in prose, where they were probably meant literally.

Why: a prompt that *explains* template syntax (``write `{{ name }}` to insert a
name``) has its example rendered away: Jinja evaluates it, usually to an error or to
nothing. Wrap literal text in ``{% raw %}...{% endraw %}``.

Fails::

    text: "Use `{{ name }}` to insert the user's name."

Passes::

    text: "Use `{% raw %}{{ name }}{% endraw %}` to insert the user's name."
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

CODE, NAME, LEVEL, NEEDS = "PO105", "literal-delimiters", "warning", "package"

_SPAN = re.compile(r"`[^`\n]*?(\{\{|\{%|\{#)[^`\n]*?`")
_RAW = re.compile(r"\{%-?\s*raw\s*-?%\}.*?\{%-?\s*endraw\s*-?%\}", re.S)


def check(ctx: Any) -> Iterator[Hit]:
    done: set[str] = set()
    for prompt in prompts(ctx):
        for unit in ctx.units(prompt):
            for path, loc, source in [(unit.path, unit.loc, unit.source)] + [
                (p, None, ctx.package.templates[p]) for p in ctx.reached(unit.path, unit.source)
            ]:
                key = f"{path}:{loc}"
                if key in done:
                    continue
                done.add(key)
                masked = _RAW.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), source)
                for m in _SPAN.finditer(masked):
                    lineno = source.count("\n", 0, m.start()) + 1
                    line, col = ctx.locate(path, loc, lineno, m.group(0))
                    yield Hit(path, line, col,
                              f"{m.group(1)!r} inside inline code is evaluated by Jinja; "
                              "if it is meant literally wrap it in {% raw %}...{% endraw %}")
