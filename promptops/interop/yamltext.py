"""YAML text that every reader types alike: YAML 1.1 (PyYAML) and the 1.2 core schema.

Our package loader and ruamel.yaml read YAML 1.2; Prompty reads frontmatter with PyYAML
(1.1); Dotprompt, VS Code and Claude Code with JavaScript readers of the 1.2 core schema.
PyYAML's dumper quotes a string only where 1.1 would type it, which leaves ``0E0``,
``1e3``, ``.5e1`` or ``0o17`` plain, and a 1.2 reader takes those for numbers: a
description "1e3" would reach Dotprompt as 1000. Every YAML writer of import and export
quotes such text here, in one place.
"""

from __future__ import annotations

from collections.abc import Mapping

import yaml

from promptops.pipeline.yamlio.fast import FastLoader


def typed_plain(value: str) -> bool:
    """Whether a YAML 1.2 core-schema reader types ``value`` written plain (PyYAML's own
    dumper already quotes what 1.1 types)."""
    return any(rx.match(value) for _tag, rx in
               FastLoader.yaml_implicit_resolvers.get(value[:1], ()))


class _Frontmatter(yaml.SafeDumper):
    """PyYAML's safe dumper, with text a 1.2 reader would type single-quoted."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value,
                                   style="'" if typed_plain(value) else None)


_Frontmatter.add_representer(str, _str)


def frontmatter(front: Mapping[str, object]) -> str:
    """``front`` as the YAML between a prompt file's ``---`` lines (insertion order kept)."""
    return yaml.dump(dict(front), Dumper=_Frontmatter, sort_keys=False, allow_unicode=True,
                     width=1000)
