"""Exported frontmatter reads back as the same text under YAML 1.1 and YAML 1.2.

The targets' own tools read frontmatter with different YAML versions: Prompty with PyYAML
(1.1), Dotprompt, VS Code and Claude Code with JavaScript readers of the 1.2 core schema.
PyYAML's dumper quotes a string by 1.1's rules only, which leave ``1e3``, ``0E0``, ``.5e1``
or ``0o17`` plain, and a 1.2 reader types those as numbers: a description "1e3" would reach
Dotprompt as the number 1000. Each text below is a description, a title and an argument
description; both readers must give it back as that string.
"""

from __future__ import annotations

import re

import pytest
import yaml
from ruamel.yaml import YAML

from promptops.interop import ir
from promptops.interop.exporters import EXPORTERS

# Scalars some YAML version types when they are written plain
TYPED = ["1e3", "0E0", ".5e1", "-1E-3", "0o17", "0x1F", "012", "1_000", "+12", "1.0", ".inf",
         "-.Inf", ".NaN", "yes", "No", "on", "OFF", "y", "true", "False", "null", "Null", "~",
         "12:30", "1:20:30", "2026-12-02", "0b101", "=", "<<"]
_FRONT = re.compile(r"\A---\n(.*?)^---\n", re.S | re.M)


def _prompt(text: str) -> ir.IRPrompt:
    return ir.IRPrompt("p", "p.prompt.md", "test", (ir.Message("user", (ir.Text(
        "Answer {{ q }}"),)),), (ir.Argument("q", description=text),), title=text,
        description=text)


def _strings(node: object) -> list[str]:
    """Every scalar of a parsed frontmatter that is not a mapping key, in order."""
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node]  # type: ignore[list-item]


@pytest.mark.parametrize("target", sorted(EXPORTERS))
def test_frontmatter_text_reads_back_as_text_in_both_yaml_versions(target: str) -> None:
    new_reader = YAML(typ="safe")
    for text in TYPED:
        files, _losses = EXPORTERS[target](_prompt(text))
        fronts = [(name, found.group(1)) for name, written in files.items()
                  if isinstance(written, str) and (found := _FRONT.match(written))]
        assert fronts, (target, text)
        for name, front in fronts:
            old, new = yaml.safe_load(front), new_reader.load(front)
            assert old == new, (name, front)
            assert text in _strings(new), (name, front)  # the text went somewhere, as text
