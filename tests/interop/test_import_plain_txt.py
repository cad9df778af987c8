"""Which ``.txt`` a folder import reads as a prompt (docs/interop.md, "Which .txt in a folder").

Session 19: a folder import skipped the plain system prompts agent repositories keep
(``prompts/system_prompt.txt``, no template tag: speed6 has eight) and read a bilingual
licence with a ``---`` line between its parts as prompts. The rule now is the other tools':
a ``.txt`` is a prompt by its place (the word ``prompt``/``prompts`` in its path) or by a
template tag, and never when it is a document by name, a licence by its first line, empty or
binary. The real files come from tests/corpus/speed6 (licences in tests/corpus/licenses), at
their places below their repositories; the edges are written here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import run_cli
from test_import_command import served, untimed

from promptops.interop import detect
from promptops.interop.hbs_layout import js_trim
from promptops.pipeline.build import Build
from promptops.render.renderer import Renderer

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
SIXTH = CORPUS / "speed6"
# speed6's plain .txt prompts, by part (its README's split): every one its folder import
# skipped before session 19 except the four under venv/, a folder an import never enters.
PLAIN = {
    "tuning": ["16Rohan+causrca/prompts/system_prompt.txt",
               "23f3003465+tds-quiz-solver/prompts/system_prompt.txt",
               "23f3003465+tds-quiz-solver/prompts/user_prompt.txt",
               "A3IO+riv2025-long-horizon-coding-agent-demo/prompts/canopy/system_prompt.txt",
               "OpenHands+software-agent-sdk/tests/sdk/context/prompts/snapshots/"
               "anthropic__browser-off__secana-on__cli-off.txt"],
    "heldout": ["24f1001118+TDS_Project2/prompts/system_prompt.txt",
                "A3IO+riv2025-long-horizon-coding-agent-demo/prompts/canopy/EXAMPLE_TEST.txt",
                "OpenHands+software-agent-sdk/tests/sdk/context/prompts/snapshots/"
                "anthropic__browser-off__secana-off__cli-on.txt"],
}
LICENCE = CORPUS / "licenses" / "Goblin1024+oh-my-kimi.txt"  # MIT, then "---", then thanks


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    return root


def imported(src: Path, out: Path, *more: str) -> tuple[int, dict[str, dict[str, Any]]]:
    done = run_cli("import", str(src), *more, "-o", str(out), "--format", "json")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, {Path(r["source"]).relative_to(src).as_posix()
                             if Path(r["source"]).is_relative_to(src) else r["source"]: r
                             for r in json.loads(done.stdout)}


@pytest.mark.parametrize("part", sorted(PLAIN))
def test_speed6_plain_prompts_import_exact_and_serve_their_text(tmp_path: Path,
                                                                part: str) -> None:
    """Each real plain prompt is found in a folder, reported exact, and served as one user
    message holding its text as promptfoo reads a .txt (trimmed), ``{http_code}`` and the
    like kept literally."""
    src = tmp_path / "src"
    for rel in PLAIN[part]:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SIXTH / part / rel, src / rel)
    code, reports = imported(src, tmp_path / "pkg")
    assert code == 0 and sorted(reports) == sorted(PLAIN[part]), reports
    renderer = Renderer(Build(tmp_path / "pkg").bundle)
    for rel in PLAIN[part]:
        r = reports[rel]
        assert r["outcome"] == "exact" and r["from"] == "promptfoo" and len(r["prompts"]) == 1
        text = (SIXTH / part / rel).read_text(encoding="utf-8")
        got = served(untimed(renderer, r["prompts"][0], {}))
        assert got == [{"role": "user", "text": js_trim(text)}], rel


def test_a_licence_with_a_rule_line_is_no_prompt_wherever_it_lies(tmp_path: Path) -> None:
    """The bilingual licence is skipped in a licences folder (no tag, no prompt place: the
    ``---`` line no longer counts), in a prompt folder under another name (its first line is
    a licence's) and as ``LICENSE.txt`` (a document's name), beside a prompt that imports."""
    text = LICENCE.read_text(encoding="utf-8")
    assert "\n---\n" in text
    src = write(tmp_path / "src", {"licenses/Goblin1024+oh-my-kimi.txt": text,
                                   "prompts/oh-my-kimi.txt": text,
                                   "prompts/LICENSE.txt": text,
                                   "prompts/system.txt": "You are terse.\n"})
    code, reports = imported(src, tmp_path / "pkg")
    assert code == 0 and sorted(reports) == ["prompts/system.txt"], reports
    named_code, named = imported(src, tmp_path / "named", str(src / "prompts" / "LICENSE.txt"))
    assert named["prompts/LICENSE.txt"]["outcome"] == "exact"  # named: never skipped
    assert named_code == 0


def test_the_edges_of_the_rule(tmp_path: Path) -> None:
    """Decided in docs/interop.md: empty, blank, binary (a NUL) and document-named files are
    skipped, and so is a .txt outside a prompt place with no tag (a ``---`` line included)
    or that is not UTF-8 there; not UTF-8 in a prompt place is refused, with its reason; a
    tag makes a prompt anywhere; a README.md beside prompts stays a document."""
    src = write(tmp_path / "src", {
        "prompts/empty.txt": "",
        "prompts/blank.txt": " \n\t\n",
        "prompts/nul.txt": "a\0b\n",
        "prompts/README.txt": "Use {{ name }} in a prompt.\n",
        "prompts/README.md": "# Our prompts\n",
        "prompts/latin1.txt": b"caf\xe9\n",
        "requirements.txt": "jinja2>=3\n",
        "notes/todo.txt": "one\n---\ntwo\n",
        "data/blob.txt": b"\xff\xfe\x00",
        "promptfoo/plain.txt": "a word, not the word prompt\n",
        "data/greet.txt": "Hello {{ name }}\n",
        "systemPrompt.txt": "You are kind.\n",
        "promptfoo/prompts.txt": "First\n---\nSecond\n",
    })
    code, reports = imported(src, tmp_path / "pkg")
    assert code == 1  # the refused Latin-1 file
    assert set(reports) == {"data/greet.txt", "prompts/latin1.txt", "promptfoo/prompts.txt",
                            "systemPrompt.txt"}, reports
    assert "not UTF-8" in reports["prompts/latin1.txt"]["refused"]
    assert reports["promptfoo/prompts.txt"]["prompts"] == ["prompts-1", "prompts-2"]
    assert reports["systemPrompt.txt"]["outcome"] == "exact"


def test_a_named_plain_file_is_always_read(tmp_path: Path) -> None:
    """The way out for a skipped file, as the doc says: name it."""
    src = write(tmp_path / "src", {"notes/greeting.txt": "Say hello.\n"})
    _, reports = imported(src, tmp_path / "pkg", str(src / "notes" / "greeting.txt"))
    assert [r["outcome"] for r in reports.values()] == ["exact"]


@pytest.mark.parametrize(("place", "want"), [
    ("prompts/system.txt", True), ("src/Prompts/a.txt", True), ("system_prompt.txt", True),
    ("systemPrompt.txt", True), ("SYSTEM_PROMPTS/x.txt", True), ("prompt-templates/q.txt", True),
    ("promptfoo/x.txt", False), ("promptly/x.txt", False), ("data/x.txt", False),
    ("repromptable.txt", False),
])
def test_a_prompt_place_is_a_word_of_the_path(place: str, want: bool) -> None:
    assert detect.prompt_place(place) is want


def test_a_licence_first_line_is_read_under_its_markdown() -> None:
    for head in ("MIT License\n", "# MIT License\n", "## __The MIT License (MIT)__\n",
                 "Copyright (c) 2024 x\n", "   Apache License\n   Version 2.0\n",
                 "Creative Commons Legal Code\n"):
        assert not detect.plain_prompt("prompts/x.txt", head + "Permission ...\n"), head
    assert detect.plain_prompt("prompts/x.txt", "Summarise the MIT License for a user.\n")
