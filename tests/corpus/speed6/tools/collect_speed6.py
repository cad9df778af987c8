"""Apply the sixth speed corpus's rule (../README.md) with the first corpus's collector.

Why reuse: the rule's points 2, 5, 6 and 8 are the earlier speed corpora's, so the decisions
are made by the very same code (tests/corpus/speed/tools/collect_speed.py), pointed at this
directory, with speed5's byte stop. What this rule adds is here and only here: the ``folder``
family (speed5's MCP prompt folders without the condition on the repository's name, and
never a Claude command or a VS Code prompt file) and the ``chat`` family (YAML or JSON chat
prompts, decided by the very detection ``promptops import`` uses, so a file taken is one the
import reads).

Usage: python tests/corpus/speed6/tools/collect_speed6.py [--mirror DIR]
       python tests/corpus/speed6/tools/collect_speed6.py --todo N   (the next N to fetch)
"""

from __future__ import annotations

import posixpath
import subprocess
import sys
from pathlib import Path
from typing import Any

SPEED6 = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SPEED6.parent / "speed" / "tools"))
sys.path.insert(0, str(SPEED6.parent / "speed5" / "tools"))
import collect_speed  # noqa: E402
import collect_speed5  # noqa: E402

part_of = collect_speed.part_of
MAX_BYTES = collect_speed5.MAX_BYTES
CHAT_EXTS = (".yaml", ".yml", ".json")
_family_files = collect_speed.family_files
_includes = collect_speed.includes


def excluded_repositories() -> set[str]:
    """Rule point 1: every repository named under tests/ or benchmarks/ outside speed6."""
    return collect_speed.excluded_repositories(own=SPEED6)


def _not_claude_or_vscode(path: str) -> bool:
    """Point 3: the earlier corpora's two families are not collected here."""
    return not (path.startswith(".claude/") or "/.claude/" in path
                or path.lower().endswith(".prompt.md"))


def _is_chat(path: str, text: str) -> bool:
    """Point 3's ``chat`` family: what ``promptops import`` reads as a chat array."""
    from promptops.interop.detect import sniff
    return sniff(posixpath.basename(path), text, named=False) == "promptfoo"


PER_REPO_MORE = 2


def _family(family: str) -> str:
    """Amendment 1's fallback lists are the ``folder`` family under a stop of their own
    (recorded as ``folder-fallback``, so ``folder``'s 25 and the fallback's 25 make the
    amendment's 50), amendment 2's third list likewise (``folder-more``): the same files,
    the same includes."""
    return "folder" if family in ("folder-fallback", "folder-more") else family


def per_repo(family: str) -> int:
    """Amendment 2: ``folder-more`` takes at most 2 prompt files a repository, the rest 6."""
    return PER_REPO_MORE if family == "folder-more" else collect_speed.PER_REPO


def family_files(family: str, paths: list[str], read: Any) -> list[str]:
    """The earlier families as the first corpus's collector finds them; ``folder`` as
    speed5's MCP family (a file under a ``prompts`` folder) for any repository; ``chat`` a
    YAML or JSON file whose path holds ``prompt`` that the import reads as a chat prompt."""
    family = _family(family)
    if family == "folder":
        return [p for p in collect_speed5.family_files("mcp", paths, read)
                if _not_claude_or_vscode(p)]
    if family == "chat":
        out = []
        for path in paths:
            low = path.lower()
            if "prompt" not in low or not low.endswith(CHAT_EXTS):
                continue
            try:
                text = read(path).decode("utf-8", "replace")
            except subprocess.CalledProcessError:
                continue  # a blob the snapshot lists but does not hold (too large)
            if _is_chat(path, text):
                out.append(path)
        return sorted(out)
    return _family_files(family, paths, read)


def includes(family: str, path: str, text: str, paths: set[str]) -> tuple[list[str], list[str]]:
    """A ``folder`` file includes as speed5's MCP one does (by its extension); a chat
    prompt reads nothing; the others as the first corpus's collector."""
    family = _family(family)
    if family == "folder":
        return collect_speed5.includes("mcp", path, text, paths)
    if family == "chat":
        return [], []
    return _includes(family, path, text, paths)


def _point_here() -> None:
    collect_speed.SPEED = SPEED6
    collect_speed.MAX_BYTES = MAX_BYTES
    collect_speed.PRECHECK = None
    collect_speed.PER_REPO_OF = per_repo
    collect_speed.family_files = family_files
    collect_speed.includes = includes
    collect_speed._MANIFEST_HEADER = (
        "# Every file of the sixth speed corpus (README.md). "
        "Written by tools/collect_speed6.py.\n")
    collect_speed._HEADER = (
        "# Every candidate repository the sixth speed corpus's rule (README.md) considered,"
        " in\n# order, and what happened to it. Outcomes written by tools/collect_speed6.py.\n")


def main() -> None:
    """The first corpus's collector run on this directory with this rule's additions. Its
    module globals are pointed here only when run as a script, so importing this module
    leaves the first corpus's collector untouched."""
    _point_here()
    if "--todo" in sys.argv:
        import yaml
        n = int(sys.argv[sys.argv.index("--todo") + 1])
        data = yaml.safe_load((SPEED6 / "candidates.yaml").read_text(encoding="utf-8"))
        todo = [c["repository"] for c in data["candidates"]
                if c.get("outcome") == "not fetched yet"]
        print("\n".join(todo[:n]))
        return
    collect_speed.main()


if __name__ == "__main__":
    main()
