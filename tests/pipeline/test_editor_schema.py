"""The editor schemas, judged by the real yaml-language-server over LSP.

What an author sees while typing a prompt package is what yaml-language-server makes of
``promptops schema``: hover text, completion and diagnostics. So the schemas `init`
writes are loaded by the real server (npm ``yaml-language-server``, driven over stdio
as VS Code's YAML extension drives it), and the test reads what it shows: hover
descriptions for manifest, prompt and test fields with human titles, completion of
keys and enum values, and the planted mistakes flagged in words, including two
content keys in one message (a rule only a model validator knew before).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.lsp import YAML_LS_VERSION, YamlLanguageServer, position_of
from helpers.node import npm_package

from promptops.commands.schema import schema_for


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    schemas = root / ".promptops" / "schema"
    schemas.mkdir(parents=True)
    for kind in ("manifest", "prompt", "test"):
        (schemas / f"{kind}.json").write_text(json.dumps(schema_for(kind), indent=2))
    return root


@pytest.fixture(scope="module")
def ls(workspace: Path) -> Iterator[YamlLanguageServer]:
    server = npm_package("yaml-language-server", YAML_LS_VERSION)
    with YamlLanguageServer(server / "bin" / "yaml-language-server", workspace) as client:
        yield client


def _write(root: Path, rel: str, kind: str, body: str) -> tuple[Path, str]:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    depth = len(Path(rel).parts) - 1
    schema = "/".join([".."] * depth + [".promptops", "schema", f"{kind}.json"])
    text = f"# yaml-language-server: $schema={schema}\n{body}"
    path.write_text(text, encoding="utf-8")
    return path, text


def _at(text: str, needle: str) -> tuple[int, int]:
    """Where ``needle`` first appears below the modeline (0-based line, character)."""
    line, col = position_of(text.split("\n", 1)[1], needle)
    return line + 1, col


def _messages(diagnostics: list[dict[str, object]]) -> list[str]:
    return [str(d["message"]) for d in diagnostics]


def test_hover_shows_human_titles_and_descriptions(ls: YamlLanguageServer,
                                                   workspace: Path) -> None:
    path, text = _write(workspace, "promptops.yaml", "manifest",
                        "name: acme\nversion: 1.0.0\ninstructions: be kind\n")
    uri = ls.open(path)
    assert ls.diagnostics(uri) == []
    hover = ls.hover(uri, *_at(text, "version"))
    assert hover.startswith("#### Version\n"), hover
    assert "SemVer" in hover
    path, text = _write(workspace, "prompts/sub/deep/review.prompt.yaml", "prompt",
                        "title: Review\narguments:\n  - name: code\n    maxLength: 100\n"
                        "messages:\n  - role: user\n    text: hi\n")
    uri = ls.open(path)
    assert ls.diagnostics(uri) == []  # the relative $schema of a subfolder file resolves
    title = ls.hover(uri, *_at(text, "title"))
    assert title.startswith("#### Title\n") and "||" not in title, title
    assert "prompt picker" in title
    assert ls.hover(uri, *_at(text, "maxLength")).startswith("#### Maximum length\n")
    assert "user, assistant or system" in ls.hover(uri, *_at(text, "role"))
    path, text = _write(workspace, "tests/review.test.yaml", "test",
                        "prompt: review\ncases:\n  - name: a\n    arguments: {code: x}\n")
    uri = ls.open(path)
    assert ls.diagnostics(uri) == []
    assert "Name of the prompt under test" in ls.hover(uri, *_at(text, "prompt"))
    assert "requests to make" in ls.hover(uri, *_at(text, "cases"))


def test_completion_offers_keys_and_enum_values(ls: YamlLanguageServer, workspace: Path) -> None:
    path, text = _write(workspace, "prompts/complete.prompt.yaml", "prompt",
                        "messages:\n  - role: \n    text: hi\n")
    uri = ls.open(path)
    line, col = _at(text, "role: ")
    assert {"user", "assistant"} <= set(ls.completion(uri, line, col + len("role: ")))
    path, text = _write(workspace, "prompts/keys.prompt.yaml", "prompt",
                        "messages:\n  - role: user\n    text: hi\n\n")
    uri = ls.open(path)
    keys = set(ls.completion(uri, text.count("\n"), 0))
    assert {"title", "description", "arguments"} <= keys, keys


def test_planted_mistakes_are_flagged_in_words(ls: YamlLanguageServer, workspace: Path) -> None:
    path, _ = _write(workspace, "bad/promptops.yaml", "manifest",
                     "name: Acme Prompts\nversion: '1.0'\n")
    found = _messages(ls.diagnostics(ls.open(path)))
    assert any(m.startswith("Use a SemVer 2.0.0 version") for m in found), found
    assert any(m.startswith("Lowercase letters, digits") for m in found), found
    assert not any("does not match the pattern" in m for m in found), found
    path, _ = _write(workspace, "prompts/two.prompt.yaml", "prompt",
                     "messages:\n  - role: user\n    text: hi\n    template: t.j2\n"
                     "  - role: user\n")
    found = _messages(ls.diagnostics(ls.open(path)))
    assert "Matches multiple schemas when only one must validate." in found, found
    assert any(m.startswith("A message needs exactly one content key") for m in found), found
    path, _ = _write(workspace, "prompts/more.prompt.yaml", "prompt",
                     "titel: x\nmessages:\n  - role: developer\n    text: hi\n"
                     "arguments:\n  - name: \"\"\n    required: yes please\n")
    found = " | ".join(sorted(_messages(ls.diagnostics(ls.open(path)))))
    assert found == ("Any name of 1 to 128 characters without control characters (a template "
                     "reads `code` as {{ code }}, and any name as {{ args[\"reference-file\"] }})."
                     " | Incorrect type. Expected \"boolean\". | Property titel is not allowed. "
                     "| Value is not accepted. Valid values: \"user\", \"assistant\", "
                     "\"system\".")
