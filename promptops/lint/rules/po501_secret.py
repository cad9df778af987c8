"""A secret (API key, access token, private key) is committed in a template or resource.

Why: bundles are published and served to any client; a key in a prompt is a leaked
key. Rotate it, then pass what the prompt needs as an argument.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    text: "Call the API with key sk-proj-AbCdEf0123456789AbCdEf0123456789"

Passes::

    text: "Call the API with the key the user configured."
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO501", "secret", "error", "raw"

PATTERNS = (
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})")),
    ("OpenAI/Anthropic API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("Stripe secret key", re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}")),
    ("private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
)


#: Every pattern needs one of these substrings; files without any are skipped cheaply.
HINTS = ("AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xox",
         "AIza", "k_live_", "PRIVATE KEY")


def check(ctx: LintContext) -> Iterator[Hit]:
    for path in ctx.text_files:
        text = ctx.text(path)
        if not text or not any(h in text for h in HINTS):
            continue
        for n, line in enumerate(text.split("\n"), 1):
            for what, rx in PATTERNS:
                m = rx.search(line)
                if m:
                    yield Hit(path, n, m.start() + 1, f"possible {what} committed in the package")
                    break
