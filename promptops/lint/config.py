"""Which rules run, from promptops.yaml (``lint:``) and the command line.

The manifest is read on its own, leniently, because lint must still run (and report
PO1xx findings) when the manifest itself does not validate; unknown rule codes are a
configuration error (exit 2) wherever they appear.
"""

from __future__ import annotations

from typing import Any

from promptops.lint.registry import RULES, resolve
from promptops.lint.settings import LintSettings
from promptops.pipeline import defaults
from promptops.pipeline.source import MANIFEST, Source


def manifest_lint(data: Any) -> dict[str, Any]:
    lint = data.get("lint") if isinstance(data, dict) else None
    return lint if isinstance(lint, dict) else {}


def _codes(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def settings(
    manifest_data: Any,
    select: list[str],
    ignore: list[str],
    *,
    strict: bool = False,
    base: str | None = None,
) -> LintSettings:
    """Manifest select/ignore first, then the command line's on top of them."""
    lint = manifest_lint(manifest_data)
    enabled = {r.code for r in RULES}
    m_select = resolve(_codes(lint.get("select")), "promptops.yaml lint.select")
    m_ignore = resolve(_codes(lint.get("ignore")), "promptops.yaml lint.ignore")
    c_select = resolve(_flat(select), "--select")
    c_ignore = resolve(_flat(ignore), "--ignore")
    if c_select:
        enabled = c_select
    elif m_select:
        enabled = m_select
    else:  # info rules are advice: shown when selected, never by default
        enabled -= {r.code for r in RULES if r.level == "info"}
    enabled -= m_ignore | c_ignore
    if base is None:  # 6xx compare against a base revision; without one they cannot run
        enabled = {c for c in enabled if not c.startswith("PO6")}
    chars = lint.get("maxTemplateChars", defaults.MAX_TEMPLATE_CHARS)
    depth = lint.get("maxIncludeDepth", defaults.MAX_INCLUDE_DEPTH)
    return LintSettings(
        enabled=frozenset(enabled),
        max_template_chars=chars if isinstance(chars, int) else defaults.MAX_TEMPLATE_CHARS,
        max_include_depth=depth if isinstance(depth, int) else defaults.MAX_INCLUDE_DEPTH,
        strict=strict,
        base=base,
    )


def _flat(values: list[str]) -> list[str]:
    return [part for v in values for part in v.split(",")]


def manifest_data(source: Source) -> object:
    """The manifest's plain data, leniently: a broken manifest is reported as a finding
    and lint runs with the defaults (fast YAML path only; positions are not needed)."""
    from promptops.pipeline.yamlio import fast as fastyaml

    try:
        return fastyaml.load(source.read(MANIFEST).decode("utf-8-sig"))
    except Exception:
        return None
