"""The fast YAML path: PyYAML's libyaml parser with YAML 1.2 core-schema typing.

Measured on the 10,000-prompt benchmark package: ruamel.yaml's C safe loader takes
0.30 ms a file, PyYAML's CSafeLoader 0.10 ms; parsing is most of a build. PyYAML
resolves scalars by YAML 1.1 rules (``yes`` is true, ``1e3`` a string) and accepts
duplicate keys, so this loader swaps in the 1.2 core-schema resolvers ruamel.yaml
uses and refuses duplicates. Anything it cannot parse is re-parsed by ruamel.yaml, so
every reported problem reads the same whichever path found it, except a document over
the limits of :mod:`promptops.pipeline.yamlio.limits`, refused here (``LimitExceeded``) before it
is constructed: it must never reach a parser that recurses.
"""

from __future__ import annotations

import re
from collections.abc import Hashable

import yaml

from promptops.pipeline.yamlio.limits import (
    MAX_INT_DIGITS,
    TOO_DEEP,
    at,
    check_events,
    check_nodes,
    int_too_long,
    needs_check,
    too_big,
)

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9][0-9_]*|0o[0-7]+|0x[0-9a-fA-F]+)$")  # ruamel allows 1_000
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_TIMESTAMP = re.compile(
    r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}"
    r"(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$"
)


class DuplicateKey(yaml.MarkedYAMLError):
    pass


class FastLoader(yaml.CSafeLoader):

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False  # noqa: FBT001, FBT002  (PyYAML's signature)
                          ) -> dict[Hashable, object]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # merged keys may be overridden; only explicit keys must be unique
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, "found unhashable key",
                    key_node.start_mark,
                ) from None
            if duplicate:
                raise DuplicateKey(
                    "while constructing a mapping", node.start_mark,
                    f'found duplicate key "{key}"', key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        value = str(self.construct_scalar(node)).replace("_", "")
        if value.startswith("0o"):
            number = int(value[2:], 8)
        elif value.startswith("0x"):
            number = int(value[2:], 16)
        else:
            digits = len(value.lstrip("+-"))
            if digits > MAX_INT_DIGITS:  # int() itself would refuse, with a ValueError
                raise at(node.start_mark, int_too_long(digits))
            number = int(value, 10)
        if too_big(number):  # hex or octal: no digit limit when parsing, but when printed
            raise at(node.start_mark, int_too_long())
        return number


FastLoader.yaml_implicit_resolvers = {}  # replaced wholesale by the 1.2 core schema below
FastLoader.add_constructor("tag:yaml.org,2002:int", FastLoader.construct_yaml_int)
for _tag, _rx, _first in (
    ("tag:yaml.org,2002:bool", _BOOL, "tTfF"),
    ("tag:yaml.org,2002:int", _INT, "-+0123456789"),
    ("tag:yaml.org,2002:float", _FLOAT, "-+.0123456789"),
    ("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:timestamp", _TIMESTAMP, "0123456789"),
    ("tag:yaml.org,2002:merge", re.compile(r"^<<$"), "<"),
):
    FastLoader.add_implicit_resolver(_tag, _rx, list(_first))


def load(text: str) -> object:
    """Parse one document; yaml.YAMLError on anything wrong (the caller re-parses),
    LimitExceeded on a document over the limits (nothing else should parse it)."""
    loader = FastLoader(text)  # a safe loader subclass
    try:
        node = compose(loader, text)
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def compose(loader: yaml.CSafeLoader, text: str) -> yaml.Node | None:
    """The node graph of ``loader``'s single document (``text``), checked against the limits.

    libyaml refuses more than 1,000 levels itself; that too is the depth limit, not a
    syntax error to hand to ruamel.yaml (whose C composer would recurse on it).
    """
    try:
        if needs_check(text)[1]:  # maybe too many nodes: count them before composing any
            check_events(yaml.parse(text, Loader=yaml.CSafeLoader))
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):
            raise at(getattr(exc, "problem_mark", None), TOO_DEEP) from None
        raise
    if node is not None:
        check_nodes(node, text)
    return node
