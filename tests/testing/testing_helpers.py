"""Fixtures for the `promptops test` tests: a small real package, the CLI, a JUnit XSD checker.

The XSD checker understands the subset of XML Schema that ``junit.xsd`` (next to this
file) is written in: global elements with complex types, ``xs:sequence`` of element
references with minOccurs/maxOccurs, typed attributes with ``use="required"``, and
``mixed`` text content. lxml is not installed, so this keeps the schema real and
checked without adding a dependency.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from repo_helpers import PYTHON, cli_env, write_files

HERE = Path(__file__).resolve().parent
XS = "{http://www.w3.org/2001/XMLSchema}"

MANIFEST = "name: greetings\nversion: 1.0.0\n"
GREET = """\
description: Greets someone
arguments:
  - name: who
    required: true
    examples: [Ada]
  - name: tone
    enum: [warm, cold]
    default: warm
messages:
  - role: assistant
    text: I greet people politely.
  - role: user
    text: "Say hello to {{ who }} in a {{ tone }} way."
"""
# Renders fine for its smoke case, fails while rendering (-32603) for who="zero".
FRAGILE = """\
arguments:
  - name: who
    required: true
    examples: [Ada]
messages:
  - role: user
    text: "{{ 10 // (0 if who == 'zero' else 1) }} for {{ who }}"
"""


def package(root: Path, tests: dict[str, str] | None = None, **extra: str) -> Path:
    """A package with prompts `greet` and `fragile` and the given test files (path -> YAML)."""
    files = {"promptops.yaml": MANIFEST, "prompts/greet.prompt.yaml": GREET,
             "prompts/fragile.prompt.yaml": FRAGILE}
    files.update({k: textwrap.dedent(v) for k, v in (tests or {}).items()})
    files.update(extra)
    write_files(root, files)
    return root


def promptops(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "promptops", *args], cwd=cwd, env=cli_env(**env),
                          capture_output=True, text=True, timeout=120, check=False)


# --- a checker for the XSD subset junit.xsd uses ---------------------------------------

_TYPES = {
    "xs:string": r"(?s).*",
    "xs:int": r"-?\d+",
    "xs:nonNegativeInteger": r"\d+",
    "xs:decimal": r"-?\d+(\.\d+)?",
}


def _schema(path: Path) -> dict[str, dict[str, Any]]:
    root = ET.parse(path).getroot()
    out: dict[str, dict[str, Any]] = {}
    for el in root.findall(f"{XS}element"):
        ctype = el.find(f"{XS}complexType")
        assert ctype is not None, el.get("name")
        attrs = {a.get("name"): (a.get("type", "xs:string"), a.get("use") == "required")
                 for a in ctype.findall(f"{XS}attribute")}
        seq = ctype.find(f"{XS}sequence")
        children = [] if seq is None else [
            (c.get("ref"), int(c.get("minOccurs", "1")),
             None if c.get("maxOccurs") == "unbounded" else int(c.get("maxOccurs", "1")))
            for c in seq.findall(f"{XS}element")]
        out[str(el.get("name"))] = {"attrs": attrs, "children": children,
                                    "mixed": ctype.get("mixed") == "true"}
    return out


def xsd_errors(document: bytes, xsd: Path = HERE / "junit.xsd") -> list[str]:
    """Every way ``document`` breaks the schema (empty when it is valid)."""
    schema = _schema(xsd)
    errors: list[str] = []

    def check(el: ET.Element, where: str) -> None:
        rule = schema.get(el.tag)
        if rule is None:
            errors.append(f"{where}: element <{el.tag}> is not declared")
            return
        for name, value in el.attrib.items():
            if name not in rule["attrs"]:
                errors.append(f"{where}: attribute {name!r} is not allowed")
            elif not re.fullmatch(_TYPES[rule["attrs"][name][0]], value):
                errors.append(f"{where}: {name}={value!r} is not a {rule['attrs'][name][0]}")
        for name, (_, required) in rule["attrs"].items():
            if required and name not in el.attrib:
                errors.append(f"{where}: required attribute {name!r} missing")
        if not rule["mixed"] and (el.text or "").strip():
            errors.append(f"{where}: text content is not allowed")
        kids, i = list(el), 0
        for name, low, high in rule["children"]:
            n = 0
            while i < len(kids) and kids[i].tag == name and (high is None or n < high):
                check(kids[i], f"{where}/{name}[{n}]")
                i, n = i + 1, n + 1
            if n < low:
                errors.append(f"{where}: needs at least {low} <{name}>")
        if i < len(kids):
            errors.append(f"{where}: unexpected <{kids[i].tag}> at position {i}")

    root = ET.fromstring(document)
    check(root, root.tag)
    return errors
