"""``--fix`` and ``--diff``: each fixable rule's own ``fix(text) -> text``, proven safe.

A rule module that can repair what it finds defines ``fix`` beside ``check`` (sqlfluff's
shape: the fix lives with the rule). This module only plans: for every file a fixable
finding is in, the text after each rule's fix alone and after all of them in registry order.
:mod:`promptops.lint.proof` then decides which of those may be written. A file is written
with ``atomic_write``, so an interrupted fix never leaves half a prompt.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from promptops.lint.problem import Finding
from promptops.lint.registry import BY_CODE

# The order fixes compose in: line endings first, so the others see LF text.
ORDER = ("PO505", "PO108", "PO504", "PO507")


def _apply(code: str, text: str) -> str:
    fix = BY_CODE[code].fix
    if fix is None:
        return text
    try:
        return fix(text)
    except Exception:  # a file the fix cannot parse (ruamel) is left for a human
        return text


def candidates(root: Path, findings: list[Finding]) -> dict[str, dict[str, str]]:
    """path -> {code: text after that fix alone, "*": text after all} for changed files."""
    by_path: dict[str, set[str]] = {}
    for f in findings:
        if BY_CODE[f.code].fix is not None:
            by_path.setdefault(f.path, set()).add(f.code)
    out: dict[str, dict[str, str]] = {}
    for path, codes in sorted(by_path.items()):
        old = (root / path).read_bytes().decode("utf-8")
        texts: dict[str, str] = {}
        new = old
        for code in sorted(codes, key=lambda c: ORDER.index(c) if c in ORDER else len(ORDER)):
            alone = _apply(code, old)
            if alone != old:
                texts[code] = alone
            new = _apply(code, new)
        if new != old:
            texts["*"] = new
            out[path] = texts
    return out


def unified(root: Path, changes: dict[str, str]) -> str:
    parts: list[str] = []
    for path, new in changes.items():
        old = (root / path).read_bytes().decode("utf-8")
        parts.extend(difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True),
            fromfile=f"a/{path}", tofile=f"b/{path}",
        ))
    return "".join(p if p.endswith("\n") else p + "\n\\ No newline at end of file\n"
                   for p in parts)


def apply(root: Path, changes: dict[str, str]) -> None:
    from promptops.fsutil import atomic_write

    for path, new in changes.items():
        full = root / path
        atomic_write(full, new.encode("utf-8"), mode=full.stat().st_mode & 0o777, root=root)
