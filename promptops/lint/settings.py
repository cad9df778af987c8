"""Which rules run and their limits: what the rules read from ``ctx.settings``.

Its own small module (it was in ``config``, which imports the registry to resolve rule
codes): the rule context names this type, and a rule may import nothing that imports the
rules, or the registry, the rules and the context form one import circle. It imports
only the format's defaults, so lint's cached path stays as light as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from promptops.pipeline import defaults


@dataclass(frozen=True)
class LintSettings:
    enabled: frozenset[str]
    max_template_chars: int = defaults.MAX_TEMPLATE_CHARS
    max_include_depth: int = defaults.MAX_INCLUDE_DEPTH
    strict: bool = False
    base: str | None = None

    def key(self) -> str:
        """What the cached results depend on besides the files."""
        return "|".join(
            (",".join(sorted(self.enabled)), str(self.max_template_chars),
             str(self.max_include_depth), self.base or "")
        )
