"""Change the version in promptops.yaml and nothing else: a byte-preserving edit.

A manifest is hand-written and reviewed, so a bump must show in a diff as one line.
The edit goes through ruamel.yaml's round-trip dumper, but ruamel may reflow
(indentation, flow mappings, line width, CRLF), so its output is accepted only when
it equals a precise in-place replacement of the version scalar at the position ruamel
reports; otherwise the in-place edit is used. Either way the result is re-parsed and
must differ from the original only in ``version``.
"""

from __future__ import annotations

import io
from typing import Any

from promptops.errors import PromptopsError, UsageError
from promptops.pipeline.source import MANIFEST

_BOM = "\ufeff"
_PLAIN_END = " \t\r\n,}]#"


def set_version(text: str, new: str) -> tuple[str, str]:
    """``text`` with its top-level version scalar replaced; (result, method used)."""
    from ruamel.yaml import YAML

    bom = _BOM if text.startswith(_BOM) else ""
    body = text.removeprefix(bom)
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 1 << 30
    doc: Any = rt.load(body)
    if not hasattr(doc, "lc") or not isinstance(doc.get("version"), str):
        raise UsageError(f"{MANIFEST} has no top-level `version:` string")
    old = str(doc["version"])
    line, col = doc.lc.value("version")
    expected = _in_place(body, line, col, old, new)
    node = doc["version"]
    doc["version"] = type(node)(new) if type(node) is not str else new
    out = io.StringIO()
    rt.dump(doc, out)
    via_ruamel = out.getvalue()
    result, method = (via_ruamel, "ruamel round-trip") if via_ruamel == expected else (
        expected, "in-place")
    _verify(body, result, new)
    return bom + result, method


def _in_place(text: str, line: int, col: int, old: str, new: str) -> str:
    start = 0
    for _ in range(line):
        nl = text.find("\n", start)
        if nl < 0:
            raise PromptopsError(f"cannot locate the version in {MANIFEST} (line {line + 1})")
        start = nl + 1
    at = start + col
    quote = text[at] if at < len(text) and text[at] in "'\"" else ""
    token = f"{quote}{old}{quote}"
    after = at + len(token)
    if not text.startswith(token, at) or (not quote and after < len(text)
                                          and text[after] not in _PLAIN_END):
        raise PromptopsError(
            f"the version in {MANIFEST} is not written as a simple scalar on line {line + 1}; "
            "edit it by hand"
        )
    return text[:at] + quote + new + quote + text[after:]


def _verify(before: str, after: str, new: str) -> None:
    """Same data but the version, and every line but one byte-identical."""
    from ruamel.yaml import YAML

    safe = YAML(typ="safe", pure=False)
    a, b = safe.load(before), safe.load(after)
    a["version"] = new
    changed = [
        i for i, (x, y) in enumerate(zip(before.splitlines(True), after.splitlines(True),
                                         strict=False)) if x != y
    ]
    same_shape = len(before.splitlines()) == len(after.splitlines())
    if a != b or len(changed) != 1 or not same_shape:
        raise PromptopsError(f"editing the version would change more of {MANIFEST}; "
                             "edit it by hand")
