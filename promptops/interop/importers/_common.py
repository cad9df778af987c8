"""What several importers share: frontmatter, YAML with positions, names, Jinja variables.

Kept small on purpose: each format's own rules (where its frontmatter ends, which keys mean
what) live in its module; only mechanics that are genuinely the same are here.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable
from pathlib import PurePosixPath

import yaml
from jinja2 import Environment, TemplateSyntaxError, meta, nodes

from promptops.interop.errors import InteropError
from promptops.interop.ir import ArgType, Argument, Json
from promptops.pipeline.yamlio import limits as yaml_limits

# VS Code and Claude Code: "---" line, YAML, "---" line; an unclosed block is no frontmatter.
_MD_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.S)
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")


def markdown_frontmatter(text: str) -> tuple[str | None, str, int]:
    """(frontmatter or None, body, line number of the body's first line)."""
    m = _MD_FRONTMATTER.match(text)
    if not m:
        return None, text, 1
    return m.group(1) or "", text[m.end():], text.count("\n", 0, m.end()) + 1


def load_yaml(path: str, text: str, first_line: int = 1) -> object:
    """YAML (safe subset) with errors positioned in the file, dates kept as ISO strings.

    Foreign YAML is held to the package's own limits (:mod:`promptops.pipeline.yamlio.limits`:
    nesting, alias expansion, node count, integer size), checked on the parser's event
    stream before anything is built: deep nesting, a recursive anchor, an alias bomb or a
    5,000-digit integer is a positioned error, not a crash or a huge prompt.
    """
    try:
        yaml_limits.check_events(yaml.parse(text, Loader=_EventLoader))
        data = yaml.safe_load(text)
        yaml_limits.check_ints(data)
    except yaml_limits.LimitExceeded as e:
        line, col = (e.line, e.col) if (e.line, e.col) != (1, 1) else _long_int(text)
        raise InteropError(path, f"YAML over the limits promptops holds all YAML to: "
                           f"{e.message} (SECURITY.md)", line + first_line - 1, col) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = (mark.line + first_line) if mark else first_line
        col = (mark.column + 1) if mark else 0
        raise InteropError(path, f"invalid YAML: {e.problem or e}", line, col) from None
    except yaml.YAMLError as e:
        raise InteropError(path, f"invalid YAML: {e}", first_line) from None
    except ValueError:  # an integer past Python's int-string limit
        line, col = _long_int(text)
        raise InteropError(path, f"YAML over the limits promptops holds all YAML to: "
                           f"{yaml_limits.int_too_long()} (SECURITY.md)",
                           line + first_line - 1, col) from None
    return to_json(data)


_EventLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_LONG_INT = re.compile(rf"[0-9_]{{{yaml_limits.MAX_INT_DIGITS},}}|0[xXoObB][0-9a-fA-F_]{{3500,}}")


def _long_int(text: str) -> tuple[int, int]:
    """1-based line and column of the first over-long integer in ``text`` (1, 1 if none)."""
    found = _LONG_INT.search(text)
    if found is None:
        return 1, 1
    line = text.count("\n", 0, found.start()) + 1
    return line, found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1


def to_json(value: object) -> Json:
    """A parsed YAML value as JSON (dates and times become their ISO text)."""
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return value


def mapping(path: str, value: object, what: str) -> dict[str, Json]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InteropError(path, f"{what} must be a mapping, not {type(value).__name__}", 1)
    return value


def prompt_name(path: str, suffixes: Iterable[str]) -> str:
    """The prompt's name from its file name, minus the format's suffix, made MCP-safe."""
    name = PurePosixPath(path.replace("\\", "/")).name
    for suffix in sorted(suffixes, key=len, reverse=True):
        if name.lower().endswith(suffix):
            name = name[:-len(suffix)]
            break
    name = _NAME_CHARS.sub("-", name).strip("-.") or "prompt"
    return name if name[0].isalnum() else "p" + name


def tools_list(value: Json) -> list[str]:
    """A tool list written as a YAML list or as ``"Read, Edit, Bash"``."""
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, list):
        return [str(t) for t in value]
    return []


# --------------------------------------------------------------------------- Jinja analysis

_PARSER = Environment(keep_trailing_newline=True)


class JinjaNames:
    """The arguments a Jinja template reads, in order of first use, and how it uses them."""

    def __init__(self, source: str) -> None:
        self.ordered: list[str] = []
        self.iterated: set[str] = set()
        self.attributes: set[str] = set()
        self.error: TemplateSyntaxError | None = None
        try:
            ast = _PARSER.parse(source)
            # Compiling for the analysis also checks filter and test names: an unknown one
            # (TemplateAssertionError, a TemplateSyntaxError) is the template's error.
            free = meta.find_undeclared_variables(ast)
        except TemplateSyntaxError as e:
            self.error = e
            return
        for node in ast.find_all(nodes.Name):
            if node.ctx == "load" and node.name in free and node.name not in self.ordered:
                self.ordered.append(node.name)
        for loop in ast.find_all(nodes.For):
            if isinstance(loop.iter, nodes.Name) and loop.iter.name in free:
                self.iterated.add(loop.iter.name)
        for get in ast.find_all(nodes.Getattr):
            if isinstance(get.node, nodes.Name) and get.node.name in free:
                self.attributes.add(get.node.name)


def infer_type(value: Json) -> ArgType:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def empty_default(kind: ArgType) -> Json:
    """The value that renders as a template engine renders a missing one, if any: ``""``
    for a string (printed empty, false), ``[]`` for an array (iterates nothing, false)."""
    return {"string": "", "array": []}.get(kind)


def optional_argument(name: str, kind: ArgType, notes: list[str], description: str | None = None,
                      schema: dict[str, Json] | None = None) -> Argument:
    """An argument the source treats as optional (a missing one renders empty).

    When no value renders the same as a missing one (an object, a number), the argument is
    required instead, and ``notes`` says so.
    """
    default = empty_default(kind)
    if default is None:
        notes.append(f"{name}: the source renders a missing {kind} as empty; no {kind} value "
                     "renders the same, so the imported argument is required")
        return Argument(name, kind, True, description=description, schema=schema or {})
    return Argument(name, kind, False, default, description, schema or {})
