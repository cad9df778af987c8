"""Every string a package controls is inert in the review comment (issue 23, defect 18).

A pull request author controls test case names, argument names and enum values, and
through them the change messages; the comment is posted by a bot with the repository's
authority. Rendered as GitHub renders it (GitHub-flavoured markdown, with autolinks), the
comment of a package full of hostile names must have exactly the structure of a clean
one: no extra ``<details>`` closed or opened, no fake "Lint: passed" line, no image, no
link, no raw HTML; and each hostile string must be shown, literally, as text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from review_helpers import fixed_commit, fixed_repo, starter_files

from promptops.review import build_report, to_markdown
from promptops.review.markdown import code, text

HOSTILE = [
    "x`` </details>\n\n**Lint:** ✅ passed\n\n![t](https://evil.example/t.png)",
    "<img src=https://evil.example/i.png> & <details><summary>open</summary>",
    "www.evil.example @octo-org/security :shipit: $\\color{red}{X}$ [a](https://e.example)",
    "| cell | break |\r\n- list item\u2028### heading",
    "```` fenced\n````\n<script>alert(1)</script>",
]


def _prompt(values: list[str]) -> str:
    enum = ", ".join(_yaml(v) for v in values)
    return ("title: Hostile\ndescription: A prompt whose tests have hostile names\n"
            "arguments:\n  - name: tone\n    title: Tone\n    description: The tone\n"
            f"    enum: [{enum}]\n"
            "messages:\n  - role: user\n    text: 'Say hello in a {{ tone }} tone'\n")


def _yaml(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") \
        .replace("\r", "\\r").replace("\u2028", "\\L") + '"'


def _tests(names: list[str]) -> str:
    cases = "".join(f"  - name: {_yaml(n)}\n    arguments: {{tone: {_yaml(n)}}}\n"
                    for n in names)
    return f"prompt: hostile\ncases:\n{cases}"


def _comment(tmp: Path, names: list[str]) -> str:
    files = starter_files()
    files["prompts/hostile.prompt.yaml"] = _prompt([*names, "calm"])
    files["tests/hostile.test.yaml"] = _tests(names)
    repo = fixed_repo(tmp / "repo", files)
    repo.git.checkout("-q", "-b", "feature")
    edited = _prompt([*names[1:], "calm"]).replace("Say hello", "Say goodbye")
    fixed_commit(repo, {"prompts/hostile.prompt.yaml": edited}, "feature", 1)
    return to_markdown(build_report(Path(repo.working_tree_dir or "."), "main...feature",
                                    None, None))


def _html(markdown: str) -> str:
    return MarkdownIt("gfm-like").render(markdown)


def _structure(html: str) -> list[str]:
    """The tags a rendered comment is made of (code and text excluded)."""
    return re.findall(r"</?(?!code\b)[a-z][a-z0-9]*", html)


@pytest.fixture(scope="module")
def comments(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    clean = [f"case {i}" for i in range(len(HOSTILE))]
    return (_comment(tmp_path_factory.mktemp("clean"), clean),
            _comment(tmp_path_factory.mktemp("hostile"), HOSTILE))


def test_hostile_names_change_nothing_but_text(comments: tuple[str, str]) -> None:
    clean, hostile = (_html(c) for c in comments)
    assert "<img" not in hostile and "<a " not in hostile and "<script" not in hostile
    assert _structure(hostile) == _structure(clean)
    assert hostile.count("<strong>Lint:</strong>") == clean.count("<strong>Lint:</strong>") == 1
    # each hostile case name is shown, as text, whole (line breaks shown as ␤)
    for name in HOSTILE:
        shown = re.sub(r"\r\n|[\r\n\u2028]", "␤", name)
        shown = shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert shown in hostile.replace('&quot;', '"'), name


@pytest.mark.parametrize("value", HOSTILE)
def test_code_and_text_are_literal_anywhere(value: str) -> None:
    """The two escapes alone, in a table cell, a list item and a heading."""
    for cell in (False, True):
        span = code(value, cell=cell)
        assert "\n" not in span and "\r" not in span and "\u2028" not in span
        html = _html(f"| a |\n| --- |\n| {span} |" if cell else f"- {span}")
        assert _structure(html) == _structure(_html("| a |\n| --- |\n| `x` |" if cell
                                                    else "- `x`"))
    html = _html(f"### {text(value)} and {text(value)}")
    assert _structure(html) == ["<h3", "</h3"]
