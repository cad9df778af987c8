"""Apply the fifth speed corpus's rule (../README.md) with the first corpus's collector.

Why reuse: the rule's points 2, 5, 6 and 8 are the earlier speed corpora's, so the decisions
are made by the very same code (tests/corpus/speed/tools/collect_speed.py), pointed at this
directory. What this rule adds is here and only here: the MCP prompt-server family (point 3:
files under a ``prompts`` folder of a repository whose name holds ``mcp``; a candidate whose
name does not is decided before any fetch) and the stop at 1.5 MB of files taken (point 7).

Usage: python tests/corpus/speed5/tools/collect_speed5.py [--mirror DIR]
       python tests/corpus/speed5/tools/collect_speed5.py --todo N   (the next N to fetch)
"""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path
from typing import Any

SPEED5 = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SPEED5.parent / "speed" / "tools"))
import collect_speed  # noqa: E402

part_of = collect_speed.part_of
MAX_BYTES = 1_500_000
MCP_EXTS = (".md", ".txt", ".j2", ".jinja", ".jinja2", ".njk", ".prompt", ".prompty")
NOT_PROMPTS = re.compile(r"^(readme|changelog|license|licence|claude|agents)\b", re.I)
_family_files = collect_speed.family_files
_includes = collect_speed.includes


def excluded_repositories() -> set[str]:
    """Rule point 1: every repository named under tests/ or benchmarks/ outside speed5."""
    return collect_speed.excluded_repositories(own=SPEED5)


def precheck(family: str, repository: str) -> str | None:
    """Point 3: an MCP prompt server's files are only taken from a repository named so."""
    if family == "mcp" and "mcp" not in repository.split("/", 1)[1].lower():
        return "no file of the family (its name holds no mcp)"
    return None


def family_files(family: str, paths: list[str], read: Any) -> list[str]:
    """The earlier families as the first corpus's collector finds them, and MCP servers'
    prompt folders: a file under a folder named ``prompts`` with one of MCP_EXTS."""
    if family != "mcp":
        return _family_files(family, paths, read)
    out = []
    for path in paths:
        folders = [f.lower() for f in path.split("/")[:-1]]
        name = posixpath.basename(path)
        if "prompts" in folders and name.lower().endswith(MCP_EXTS) \
                and not NOT_PROMPTS.match(name):
            out.append(path)
    return sorted(out)


def includes(family: str, path: str, text: str, paths: set[str]) -> tuple[list[str], list[str]]:
    """An MCP server's Jinja file includes as a Jinja one does, a ``.prompt`` file its
    partials, a ``.prompty`` file its ``${file:}`` reads; Markdown and text include nothing."""
    if family == "mcp":
        low = path.lower()
        if low.endswith((".j2", ".jinja", ".jinja2", ".njk")):
            family = "jinja"
        elif low.endswith(".prompt"):
            family = "dotprompt"
        elif low.endswith(".prompty"):
            family = "prompty"
        else:
            return [], []
    return _includes(family, path, text, paths)


def _point_here() -> None:
    collect_speed.SPEED = SPEED5
    collect_speed.MAX_BYTES = MAX_BYTES
    collect_speed.PRECHECK = precheck
    collect_speed.family_files = family_files
    collect_speed.includes = includes
    collect_speed._MANIFEST_HEADER = (
        "# Every file of the fifth speed corpus (README.md). "
        "Written by tools/collect_speed5.py.\n")
    collect_speed._HEADER = (
        "# Every candidate repository the fifth speed corpus's rule (README.md) considered,"
        " in\n# order, and what happened to it. Outcomes written by tools/collect_speed5.py.\n")


def main() -> None:
    """The first corpus's collector run on this directory with this rule's additions. Its
    module globals are pointed here only when run as a script, so importing this module
    leaves the first corpus's collector untouched."""
    _point_here()
    if "--todo" in sys.argv:
        import yaml
        n = int(sys.argv[sys.argv.index("--todo") + 1])
        data = yaml.safe_load((SPEED5 / "candidates.yaml").read_text(encoding="utf-8"))
        todo = [c["repository"] for c in data["candidates"]
                if c.get("outcome") == "not fetched yet"]
        print("\n".join(todo[:n]))
        return
    collect_speed.main()


if __name__ == "__main__":
    main()
