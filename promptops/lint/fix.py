"""``--fix`` and ``--diff``: the safe, mechanical fixes.

Whitespace fixes (PO504 trailing whitespace, PO505 CRLF, PO507 final newline) are
plain text edits; key order (PO108) goes through ruamel.yaml round-trip editing so
comments move with their keys. A file is written with ``atomic_write``, so an
interrupted fix never leaves half a prompt.
"""

from __future__ import annotations

import difflib
import io
from pathlib import Path

from promptops.lint.problem import Finding
from promptops.lint.rules.po108_key_order import out_of_order, places

FIXABLE = frozenset({"PO504", "PO505", "PO507", "PO108"})


def fix_text(text: str, codes: set[str]) -> str:
    if "PO505" in codes:
        text = text.replace("\r\n", "\n")
    if "PO504" in codes:
        ends_crlf = "PO505" not in codes and "\r\n" in text
        sep = "\r\n" if ends_crlf else "\n"
        text = sep.join(line.rstrip(" \t") for line in text.split(sep))
    if "PO507" in codes and text and not text.endswith("\n"):
        text += "\n"
    return text


def reorder_keys(text: str) -> str:
    """Prompt, argument and message keys in the conventional order, comments kept."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    data = yaml.load(text)
    for _, mapping, order in places(data):
        if out_of_order(list(mapping), order) is None:
            continue
        rank = {k: i for i, k in enumerate(order)}
        for key in sorted(mapping, key=lambda k: rank.get(k, len(order))):
            mapping.move_to_end(key)  # type: ignore[attr-defined]  # a CommentedMap
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def planned(root: Path, findings: list[Finding]) -> dict[str, tuple[str, str]]:
    """path -> (old text, fixed text) for every file a fixable finding is in."""
    by_path: dict[str, set[str]] = {}
    for f in findings:
        if f.code in FIXABLE:
            by_path.setdefault(f.path, set()).add(f.code)
    out: dict[str, tuple[str, str]] = {}
    for path, codes in sorted(by_path.items()):
        full = root / path
        old = full.read_bytes().decode("utf-8")
        new = old
        if "PO108" in codes:
            try:
                new = reorder_keys(new.replace("\r\n", "\n") if "PO505" in codes else new)
            except Exception:  # a file ruamel cannot round-trip is left for a human
                new = old
        new = fix_text(new, codes)
        if new != old:
            out[path] = (old, new)
    return out


def unified(changes: dict[str, tuple[str, str]]) -> str:
    parts: list[str] = []
    for path, (old, new) in changes.items():
        parts.extend(difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True),
            fromfile=f"a/{path}", tofile=f"b/{path}",
        ))
    return "".join(p if p.endswith("\n") else p + "\n\\ No newline at end of file\n"
                   for p in parts)


def apply(root: Path, changes: dict[str, tuple[str, str]]) -> None:
    from promptops.fsutil import atomic_write

    for path, (_, new) in changes.items():
        full = root / path
        atomic_write(full, new.encode("utf-8"), mode=full.stat().st_mode & 0o777, root=root)

