"""Pull-request review: what a change between two git revisions does to served prompts.

    from promptops.review import build_report, to_markdown
    report = build_report(Path("."), "origin/main...HEAD", None, None)
    print(to_markdown(report))
"""

from __future__ import annotations

from promptops.review.build import build_report
from promptops.review.markdown import COMMENT_LIMIT, to_markdown
from promptops.review.model import FORMAT, ReviewReport, json_schema
from promptops.review.text import to_text

__all__ = [
    "COMMENT_LIMIT",
    "FORMAT",
    "ReviewReport",
    "build_report",
    "json_schema",
    "to_markdown",
    "to_text",
]
