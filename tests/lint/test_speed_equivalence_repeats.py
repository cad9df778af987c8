"""Lint's answers once per distinct text (issue 26, session 8) are the answers it computed per
file, and its faster forms (PO501's scan, the findings' order, the JSON writer) give what the
simple forms did.

The rules and the placing of findings now compute what depends on a text alone once per
distinct text (``LintContext.memo``, ``block_start``, ``position``, ``locate``). A context
that computes every answer again is kept here as the oracle, and both run every rule on a
package whose files repeat (each prompt of the real-prompt corpus twice, and one edited
copy): a cached answer handed to the wrong file, or one that depended on more than its text,
fails here.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from promptops.lint.config import manifest_data, settings
from promptops.lint.context import LintContext
from promptops.lint.engine import run_rules, suppressions
from promptops.lint.output import Report, Texts
from promptops.lint.output import json as json_out
from promptops.lint.problem import ORDER, Finding
from promptops.lint.registry import RULES
from promptops.lint.rules.po501_secret import HINTS, PATTERNS, _scan, may_hold
from promptops.pipeline.source import CachingSource, open_source
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import validate
from promptops.pipeline.yamlio.loader import LoadedFile, Loc

CORPUS = Path(__file__).parent / "corpus" / "package"
T = TypeVar("T")


class Uncached(LintContext):
    """Every answer computed for the file that asks, as before the memo."""

    def memo(self, kind: str, text: str, compute: Callable[[str], T]) -> T:
        return compute(text)

    def block_start(self, file: LoadedFile, loc: Loc) -> tuple[int, int, bool]:
        return file.block_start(loc)

    def position(self, file: LoadedFile, loc: Loc, *, key: bool = False) -> tuple[int, int]:
        return file.position(loc, key=key)

    def locate(self, unit_path: str, loc: Loc | None, lineno: int,
               needle: str) -> tuple[int, int]:
        file = None if loc is None else self.loaded(unit_path)
        if loc is not None and file is None:
            return 1, 1
        text = (self.text(unit_path) or "") if file is None else file.text
        return self._place(file, text, loc, lineno, needle)

    @property
    def _decoded(self) -> dict[str, str]:  # type: ignore[override]
        return {}  # every file decoded from its bytes, as before


def _repeated(tmp: Path) -> Path:
    """The corpus package with every prompt file twice (the copy under another name) and a
    copy of one with a line of trailing whitespace and an HTML comment added."""
    pkg = tmp / "pkg"
    shutil.copytree(CORPUS, pkg)
    prompts = sorted((pkg / "prompts").glob("*.prompt.yaml"))
    assert len(prompts) > 20
    for p in prompts:
        text = p.read_text(encoding="utf-8")
        (p.parent / p.name.replace(".prompt.yaml", "-again.prompt.yaml")).write_text(
            text.replace("\nname: ", "\nname: again-", 1), encoding="utf-8")
    first = prompts[0]
    (first.parent / first.name.replace(".prompt.yaml", "-edited.prompt.yaml")).write_text(
        first.read_text(encoding="utf-8").replace("\nname: ", "\nname: edited-", 1)
        + "# <!-- a note -->  \n", encoding="utf-8")
    body = ("description: Trailing spaces reach the model\nmessages:\n- role: user\n"
            "  text: |\n    Summarise this.  \n    Keep it <!-- short -->.\n"
            "- role: assistant\n  text: \"Sure {{ x }}  \"\n")
    for name in ("spaces-a", "spaces-b"):
        (pkg / "prompts" / f"{name}.prompt.yaml").write_text(body, encoding="utf-8")
    return pkg


def _lint(pkg: Path, kind: type[LintContext]) -> tuple[list[Finding], dict[str, Any]]:
    files = CachingSource(open_source(pkg, None))
    conf = settings(manifest_data(files), [], [])
    validated = validate(files, index=TemplateIndex(keep_asts=True))
    ctx = kind(files, conf, validated, None)
    return run_rules(ctx, RULES), suppressions(ctx)


def test_answers_once_per_text_are_the_answers_per_file(tmp_path: Path) -> None:
    pkg = _repeated(tmp_path)
    fast, fast_off = _lint(pkg, LintContext)
    slow, slow_off = _lint(pkg, Uncached)
    assert fast == slow
    assert fast_off == slow_off
    again = [f for f in fast if "-again." in f.path]
    assert len(again) > 20  # the copies have findings of their own, placed in their own file
    pair = [[(f.line, f.col, f.code) for f in fast if f.path == f"prompts/spaces-{x}.prompt.yaml"]
            for x in "ab"]
    assert pair[0] == pair[1]
    assert {"PO503", "PO504"} <= {code for _, _, code in pair[0]}
    assert any(f.code == "PO503" and "-edited." in f.path for f in fast)


def _old_po501(text: str) -> list[tuple[int, int, str]]:
    """PO501's scan as it was: every hint tested, every line of a hinted file split."""
    out: list[tuple[int, int, str]] = []
    if not any(h in text for h in HINTS):
        return out
    for n, line in enumerate(text.split("\n"), 1):
        for what, rx in PATTERNS:
            m = rx.search(line)
            if m:
                out.append((n, m.start() + 1, what))
                break
    return out


def test_secret_scan_matches_the_line_by_line_form() -> None:
    rnd = random.Random(268)
    pieces = ["AKIA" + "ABCDEFGHIJKLMNOP", "ASIA" + "Q" * 16, "ghp_" + "a" * 36,
              "github_pat_" + "b" * 60, "sk-" + "c" * 40, "sk-ant-" + "d" * 32, "task-x",
              "xoxb-" + "1" * 12, "AIza" + "e" * 35, "sk_live_" + "f" * 24,
              "-----BEGIN RSA PRIVATE KEY-----", "PRIVATE KEY", "gho_", "\n", "\r\n", " ",
              "word", "é", "日本", "_", "-", "AKIA", "\n\n"]
    found = 0
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        assert _scan(text) == _old_po501(text), text
        assert may_hold(text) == any(h in text for h in HINTS), text
        found += bool(_scan(text))
    assert found > 500
    for source in (p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*"))
                   if p.is_file() and p.suffix in (".yaml", ".md", ".j2", ".txt")):
        assert _scan(source) == _old_po501(source)


def _findings(rnd: random.Random, n: int) -> list[Finding]:
    words = ["a", "b.yaml", "prompts/x.prompt.yaml", 'q"uote', "back\\slash", "é日本", "\x00",
             "tab\there", "line\nbreak", "\u2028", "emoji 🙂", ""]
    return [Finding(rnd.choice(words), rnd.randint(0, 3), rnd.randint(0, 2**40),
                    rnd.choice(["PO501", "PO504"]), rnd.choice(words),
                    rnd.choice(["error", "warning", "info"]), rnd.choice(words),
                    rnd.choice([True, False])) for _ in range(n)]


def test_findings_order_is_the_dataclass_order() -> None:
    rnd = random.Random(26)
    for n in (0, 1, 2, 50, 400):
        found = _findings(rnd, n)
        assert sorted(found, key=ORDER) == sorted(found)


def test_json_output_is_what_json_dumps_writes() -> None:
    rnd = random.Random(8)
    for n in (0, 1, 3, 200):
        for package in (".", "pkg", "\x00findings\x00", 'we"ird é'):
            found = _findings(rnd, n)
            report = Report(package, ".", package, Texts(lambda _: ""), frozenset())
            doc = {"version": 1, "package": package,
                   "findings": [f.to_json() for f in found],
                   "summary": json.loads(json_out.render(found, report))["summary"]}
            assert json_out.render(found, report) == json.dumps(doc, indent=2,
                                                                ensure_ascii=False)


def test_the_text_lint_reads_is_the_file_decoded(tmp_path: Path) -> None:
    pkg = _repeated(tmp_path)
    files = CachingSource(open_source(pkg, None))
    conf = settings(manifest_data(files), [], [])
    ctx = LintContext(files, conf, validate(files, index=TemplateIndex(keep_asts=True)))
    checked = 0
    for path in ctx.text_files:
        raw = ctx.raw(path)
        assert raw is not None
        assert ctx.text(path) == raw.decode("utf-8-sig")
        checked += 1
    assert checked > 40
    assert re.search("again", " ".join(ctx.text_files))
