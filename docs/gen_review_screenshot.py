"""Render the golden review comment of a breaking change as GitHub would, and screenshot it.

The comment (tests/review/golden/breaking.md, checked byte for byte by
tests/review/test_review_breaking.py) is turned into HTML by a GitHub-flavoured markdown
renderer (markdown-it-py's ``gfm-like`` preset: tables, strikethrough, autolinks) with a
plain GitHub-like style sheet, and Debian's headless chromium saves a PNG of it to
docs/review-breaking.png, which docs/review.md shows. A person reads the PNG to check what
a test cannot: that both ends of every rendered diff read as prompt text.

    python docs/gen_review_screenshot.py   # needs chromium (apt-get install chromium)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "review" / "golden" / "breaking.md"
PNG = ROOT / "docs" / "review-breaking.png"
STYLE = """
body { font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       max-width: 1000px; margin: 16px auto; padding: 0 16px; }
h2 { border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
code { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; background: #eff1f3;
       padding: .2em .4em; border-radius: 6px; }
pre { background: #f6f8fa; padding: 12px; border-radius: 6px; overflow: auto; }
pre code { background: none; padding: 0; white-space: pre; }
table { border-collapse: collapse; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 4px 10px; vertical-align: top; }
details { margin: 8px 0; }
"""


def html(markdown: str) -> str:
    body = MarkdownIt("gfm-like").render(markdown)
    # what a reader sees on GitHub: folded sections opened, as a reviewer would
    body = body.replace("<details>", "<details open>")
    return f"<!doctype html><meta charset=utf-8><style>{STYLE}</style><body>{body}</body>"


def main() -> int:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium is not installed: apt-get install -y chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "comment.html"
        page.write_text(html(GOLDEN.read_text(encoding="utf-8")), encoding="utf-8")
        subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={tmp}/profile", "--hide-scrollbars",
             "--window-size=1100,2560", f"--screenshot={PNG}", page.as_uri()],
            check=True, capture_output=True, timeout=120)
    print(f"wrote {PNG.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
