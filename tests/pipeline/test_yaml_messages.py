"""YAML mistakes prompt authors make, and the exact message each one gets.

Every case is a real prompt file with one mistake. Each goes through the loader every
command uses (``load_yaml``), and through both parsers' own errors (PyYAML's libyaml
and ruamel.yaml's safe and round-trip loaders), which word the mistakes differently and
report them in other places: all must come out as the same message, at the place of the
mistake, saying how to fix it.
"""

from __future__ import annotations

import pytest
import yaml
from helpers.repo import make_repo, run_cli
from ruamel.yaml import YAML

from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml
from promptops.pipeline.yamlio.messages import yaml_syntax_message

CASES: dict[str, tuple[str, str]] = {
    "unclosed quote": (
        "title: 'Summarize a diff\ndescription: Writes a summary\narguments:\n  - name: diff\n"
        "    description: the diff\nmessages:\n  - role: user\n    text: Summarize this\n",
        "1:8: this '...' string is never closed: add the closing ' at the end of the value on "
        "line 1, or, for text over several lines, use a block scalar (`key: |`)"),
    "apostrophe in single quotes": (
        "title: 'Don't panic'\ndescription: Calms people down\nmessages:\n  - role: user\n"
        "    text: hi\n",
        "1:8: a ' inside a '...' string ends it: double it (title: 'Don''t panic') or use "
        "double quotes (title: \"Don't panic\")"),
    "runaway double quote": (
        "title: \"Review\ndescription: Reviews code\narguments:\n  - name: code\n"
        "    description: \"the code\"\nmessages:\n  - role: user\n    text: review it\n",
        "1:8: the string opened with \" on line 1 is not closed on that line, so it runs on to "
        "line 5 and swallows the keys in between: close it with \" on line 1"),
    "key: value: more": (
        "title: Review\ndescription: Reviews code: carefully\nmessages:\n  - role: user\n"
        "    text: hi\n",
        "2:26: ': ' inside the value of `description` reads as a new key: put the value in "
        "quotes: description: \"Reviews code: carefully\""),
    "description: Note: drafts": (
        "title: Drafts\nmessages:\n  - role: user\n    text: hi\ndescription: Note: drafts\n",
        "5:18: ': ' inside the value of `description` reads as a new key: put the value in "
        "quotes: description: \"Note: drafts\""),
    "key under-indented": (
        "title: Review\narguments:\n  - name: code\n    required: true\n"
        "   description: the code\nmessages:\n  - role: user\n    text: hi\n",
        "5:4: `description` starts in column 4, but `required` above it (line 4) starts in "
        "column 5: move it to column 5, or to column 1 to end the list (like `arguments`, "
        "line 2)"),
    "key over-indented": (
        "title: Review\n  description: Reviews code\nmessages:\n  - role: user\n    text: hi\n",
        "2:3: `description` is indented more than `title` on line 1, so YAML reads it as more "
        "of title's value: start it in column 1, like `title`"),
    "tab indentation": (
        "title: Review\nmessages:\n  - role: user\n\ttext: hi\n",
        "4:1: this line is indented with a tab; YAML indentation must be spaces: replace the "
        "tab with spaces"),
    "key at the column of the dash": (
        "title: Review\nmessages:\n  - role: user\n    text: hi\n  role: assistant\n"
        "  text: ok\n",
        "5:3: `role` is in column 3, the column of the '-' of the list item on line 3: start "
        "a new item with '- role:', or move it to column 5 to belong to the item above (like "
        "`text`, line 4)"),
    "dash out of line": (
        "title: Review\narguments:\n  - name: code\n - name: lang\nmessages:\n"
        "  - role: user\n    text: hi\n",
        "4:2: this list item's '-' is in column 2, the items above it (line 3) have theirs in "
        "column 3: align the '-'"),
    "value starting with {{": (
        "title: Greet\nmessages:\n  - role: user\n    text: {{ name }}\n",
        "4:11: the value of `text` starts with '{{', which YAML reads as a mapping: quote it "
        "(text: \"{{ name }}\") or use a block scalar (text: |)"),
    "value starting with {{ and more": (
        "title: Greet\nmessages:\n  - role: user\n    text: {{ name }}, welcome\n",
        "4:11: the value of `text` starts with '{{', which YAML reads as a mapping: quote it "
        "(text: \"{{ name }}, welcome\") or use a block scalar (text: |)"),
    "duplicate key": (
        "title: Review\ndescription: one\nmessages:\n  - role: user\n    text: hi\n"
        "description: two\n",
        "6:1: `description` appears twice in this mapping (first on line 2): keep one; YAML "
        "would silently use only the last"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_loader_says_where_and_how_to_fix_it(case: str) -> None:
    text, expected = CASES[case]
    with pytest.raises(YamlProblem) as info:
        load_yaml("prompts/p.prompt.yaml", text.encode())
    assert str(info.value.problem) == f"prompts/p.prompt.yaml:{expected}"


def _errors(text: str) -> list[Exception]:
    """What each parser raises for ``text`` (a parser that accepts it adds nothing)."""
    found: list[Exception] = []
    loaders = [lambda: yaml.load(text, Loader=yaml.CSafeLoader),
               lambda: YAML(typ="safe").load(text), lambda: YAML(typ="rt").load(text)]
    for load in loaders:
        try:
            load()
        except Exception as exc:
            found.append(exc)
    return found


@pytest.mark.parametrize("case", list(CASES))
def test_every_parser_gets_the_same_message(case: str) -> None:
    text, expected = CASES[case]
    errors = _errors(text)
    assert errors, "no parser refused the case"
    for exc in errors:
        (line, col), message = yaml_syntax_message(text, exc)
        assert f"{line}:{col}: {message}" == expected, type(exc)


def test_an_unknown_error_keeps_the_parsers_words() -> None:
    text = "a: [1, 2\n"
    (line, col), message = yaml_syntax_message(text, _errors(text)[0])
    assert message.startswith("invalid YAML: ") and line >= 1 and col >= 1


def test_a_command_shows_the_message_and_the_line(tmp_path: pytest.TempPathFactory) -> None:
    root = tmp_path / "pkg"  # type: ignore[operator]
    text, expected = CASES["description: Note: drafts"]
    make_repo(root, {"promptops.yaml": "name: p\nversion: 1.0.0\ndescription: d\n",
                     "prompts/p.prompt.yaml": text})
    done = run_cli("ls", str(root))
    assert done.returncode == 1
    assert f"prompts/p.prompt.yaml:{expected}" in done.stderr
