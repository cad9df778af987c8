"""Record what ``promptops import`` does with each prompt file of a speed corpus.

Why: the benchmark measures the package a team gets from one folder import of each part
(README.md, "Layout"); a file the import refuses or skips is not measured, so which files
those are, and why, must be on record (and is a finding for the import issue).

Usage: python tests/corpus/speed/tools/import_report.py [CORPUS]  (writes CORPUS/import.yaml;
CORPUS is tests/corpus/speed by default, or tests/corpus/speed2 ... speed6: one script for
all)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from promptops.interop.sources import SKIP_DIRS

FIRST = Path(__file__).resolve().parent.parent
NAMES = {"speed": "the speed corpus", "speed2": "the second speed corpus",
         "speed3": "the third speed corpus", "speed4": "the fourth speed corpus",
         "speed5": "the fifth speed corpus", "speed6": "the sixth speed corpus"}


def main() -> None:
    speed = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else FIRST
    manifest = yaml.safe_load((speed / "manifest.yaml").read_text(encoding="utf-8"))["files"]
    out: dict[str, object] = {}
    for part in ("tuning", "heldout"):
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([sys.executable, "-m", "promptops", "import",
                                   str(speed / part), "-o", str(Path(tmp) / "pkg"),
                                   "--format", "json"], capture_output=True, text=True,
                                  check=False)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"import of {part}: exit {proc.returncode}: {proc.stderr}")
        report = {Path(e["source"]).resolve().relative_to(speed / part).as_posix(): e
                  for e in json.loads(proc.stdout)}
        files = []
        for f in manifest:
            if f["part"] != part or f["role"] != "prompt":
                continue
            key = f"{f['repository'].replace('/', '+')}/{f['path']}"
            entry = report.get(key)
            row: dict[str, object] = {"file": key}
            if entry is None:
                row["outcome"] = "skipped"
                row["why"] = _why_skipped(key)
            else:
                row["outcome"] = entry["outcome"]
                row["prompts"] = entry["prompts"]
                if entry.get("templates"):  # a file other Jinja files reach (jinja_tree.py)
                    row["templates"] = entry["templates"]
                if entry["outcome"] == "refused":
                    row["why"] = entry["refused"].split(f"{part}/", 1)[-1]
                elif entry["outcome"] == "lossy":
                    row["why"] = sorted({loss["what"] for loss in entry["losses"]})
            files.append(row)
        counts: dict[str, int] = {}
        for row in files:
            counts[str(row["outcome"])] = counts.get(str(row["outcome"]), 0) + 1
        out[part] = {"exit": proc.returncode, "outcomes": counts, "files": files}
    (speed / "import.yaml").write_text(
        "# What `promptops import <part> -o PKG --format json` did with each prompt file of\n"
        f"# {NAMES.get(speed.name, speed.name)} (README.md). Written by tools/import_report.py.\n"
        + yaml.safe_dump(out, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    for part in ("tuning", "heldout"):
        print(part, out[part]["outcomes"])  # type: ignore[index]


def _why_skipped(key: str) -> str:
    """Why a folder import left a prompt file out: a folder it never enters, or its rule."""
    entered = [d for d in key.split("/")[:-1] if d in SKIP_DIRS]
    if entered:
        return (f"under {entered[0]}/, a folder an import never enters (dependencies and "
                "environments, docs/interop.md)")
    return ("not read as a prompt: the folder import tells formats by name, place and "
            "content (docs/interop.md), and does not know this one")


if __name__ == "__main__":
    main()
