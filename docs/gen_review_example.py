"""Regenerate the example report in docs/review.md and docs/review.schema.json.

The example is real: the starter package is committed into a throw-away repository,
a feature branch edits a partial, removes an argument and renames a prompt (the same
scenario the review tests use, from tests/review/review_helpers.py), and
`promptops diff main...feature --format markdown` is run on it. Commit dates are
fixed, so the output is byte-for-byte reproducible.

    python docs/gen_review_example.py          # rewrite both files
    python docs/gen_review_example.py --check  # exit 1 when either is stale (a test runs this)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "review.md"
SCHEMA = ROOT / "docs" / "review.schema.json"
START = "<!-- generated:review-example:start (docs/gen_review_example.py) -->"
END = "<!-- generated:review-example:end -->"

sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "review")]


def example_markdown() -> str:
    from review_helpers import STARTER, feature_change, fixed_commit, fixed_repo, starter_files

    with tempfile.TemporaryDirectory() as tmp:
        files = starter_files(root=STARTER)  # the live starter: what `promptops init` writes
        repo = fixed_repo(Path(tmp) / "repo", files)
        repo.git.checkout("-q", "-b", "feature")
        fixed_commit(repo, feature_change(files), "feature: shorter house style, drop type", 1)
        done = subprocess.run(
            [sys.executable, "-m", "promptops", "--color", "never", "diff", "main...feature",
             "--format", "markdown"],
            cwd=repo.working_tree_dir, capture_output=True, text=True, check=True,
        )
        return done.stdout


def expected() -> tuple[str, str]:
    from promptops.review import json_schema

    doc = DOC.read_text(encoding="utf-8")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    new_doc = f"{head}{START}\n\n{example_markdown().rstrip()}\n\n{END}{tail}"
    schema = json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
    return new_doc, schema


def main(argv: list[str]) -> int:
    doc, schema = expected()
    if "--check" in argv:
        stale = [p.name for p, want in ((DOC, doc), (SCHEMA, schema))
                 if not p.exists() or p.read_text(encoding="utf-8") != want]
        if stale:
            print(f"stale: {', '.join(stale)}; run python docs/gen_review_example.py")
            return 1
        return 0
    DOC.write_text(doc, encoding="utf-8")
    SCHEMA.write_text(schema, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
