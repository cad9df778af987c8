"""A misspelt name gets the closest real one, from every command that meets it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.repo import make_repo, run_cli
from hypothesis import given
from hypothesis import strategies as st

from promptops.errors import closest

MANIFEST = "name: p\nversion: 1.0.0\ndescription: d\n"
REVIEW = ("arguments:\n  - name: language\nmessages:\n  - role: user\n"
          "    text: '{{ language }}'\n")


def test_render_suggests_the_prompt_and_the_argument(tmp_path: Path) -> None:
    make_repo(tmp_path, {"promptops.yaml": MANIFEST, "prompts/code_review.prompt.yaml": REVIEW})
    done = run_cli("render", "code_reveiw", cwd=tmp_path)
    assert done.returncode != 0
    assert "unknown prompt 'code_reveiw'; did you mean 'code_review'?" in done.stderr
    done = run_cli("render", "code_review", "-a", "langauge=go", cwd=tmp_path)
    assert "unknown argument 'langauge' for prompt 'code_review' (declared: language); " \
           "did you mean 'language'?" in done.stderr


def test_lint_suggests_the_argument_and_the_filter(tmp_path: Path) -> None:
    make_repo(tmp_path, {"promptops.yaml": MANIFEST, "prompts/code_review.prompt.yaml":
                         "arguments:\n  - name: language\nmessages:\n  - role: user\n"
                         "    text: '{{ langauge | uper }}'\n"})
    done = run_cli("lint", cwd=tmp_path)
    assert "variable 'langauge' is not a declared argument; did you mean 'language'?" \
        in done.stdout, done.stdout
    assert "unknown Jinja filter 'uper'; did you mean 'upper'?" in done.stdout, done.stdout


def test_missing_include_and_file_suggest_the_package_file(tmp_path: Path) -> None:
    make_repo(tmp_path, {
        "promptops.yaml": MANIFEST,
        "partials/header.j2": "Hi",
        "resources/logo.png": b"\x89PNG\r\n\x1a\n",
        "prompts/a.prompt.yaml": "messages:\n  - role: user\n"
                                 "    text: '{% include \"partials/haeder.j2\" %}'\n"
                                 "  - role: user\n    image: {file: resources/logo.pgn}\n",
    })
    done = run_cli("check", cwd=tmp_path)
    assert done.returncode == 1
    assert "template 'partials/haeder.j2' not found in the package; did you mean " \
           "'partials/header.j2'?" in done.stderr
    assert "file 'resources/logo.pgn' not found in the package; did you mean " \
           "'resources/logo.png'?" in done.stderr


def test_a_repository_with_the_package_in_a_subfolder_names_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    from helpers.repo import cli_env

    make_repo(tmp_path, {"prompts/promptops.yaml": MANIFEST,
                         "prompts/prompts/code_review.prompt.yaml": REVIEW})
    for args in (["serve", str(tmp_path)], ["serve", "--worktree", str(tmp_path)]):
        done = subprocess.run([sys.executable, "-m", "promptops", *args], env=cli_env(),
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 2
        assert f"{tmp_path} is not a package folder (no promptops.yaml); the package below " \
               f"it: {tmp_path / 'prompts'}; pass the package folder" in done.stderr
        assert "promptops.yaml:1:1" not in done.stderr
    done = run_cli("ls", str(tmp_path))
    assert f"the package below it: {tmp_path / 'prompts'}" in done.stderr


@given(st.text("abcde_", max_size=12), st.lists(st.text("abcde_", max_size=12), max_size=8))
def test_closest_answers_as_difflib_does(word: str, names: list[str]) -> None:
    """Ruling names out by length first changes no answer (the ratio's own upper bound)."""
    import difflib

    expected = difflib.get_close_matches(word, [n for n in names if n != word], n=1)
    assert closest(word, names) == (expected[0] if expected else None)


def test_a_huge_unknown_argument_name_is_not_indexed(kit_bundle_bytes: bytes,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5 MB argument name from a client cost 1.4 s of difflib before the -32602 (and a
    loaded CI runner turned that into the request's 2 s timeout): the hint looks at
    nothing a 0.6 ratio rules out by length."""
    import difflib

    from promptops.pipeline.bundle import parse_bundle
    from promptops.serve import jsonrpc
    from promptops.serve.connection import Connection

    indexed: list[int] = []
    set_seq2 = difflib.SequenceMatcher.set_seq2

    def spy(self: difflib.SequenceMatcher[str], b: str) -> None:
        indexed.append(len(b))
        set_seq2(self, b)

    monkeypatch.setattr(difflib.SequenceMatcher, "set_seq2", spy)
    server = Connection([parse_bundle(kit_bundle_bytes, "kit")], send=lambda _: None)
    huge = "n" * 5_000_000
    for arg in (huge, "langauge"):
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": {}},
            "name": "code_review", "arguments": {arg: "x", "code": "y"}}}).encode()
        [reply] = server.handle(jsonrpc.parse(line))
        assert reply["error"]["code"] == -32602, reply
    assert "did you mean 'language'?" in reply["error"]["message"]  # the hint still works
    assert indexed and max(indexed) < 100, indexed


@pytest.fixture
def kit_bundle_bytes(tmp_path: Path) -> bytes:
    from promptops.pipeline.build import Build
    from promptops.pipeline.bundle import serialise

    make_repo(tmp_path, {"promptops.yaml": MANIFEST, "prompts/code_review.prompt.yaml":
                         "arguments:\n  - name: language\n  - name: code\nmessages:\n"
                         "  - role: user\n    text: '{{ language }} {{ code }}'\n"})
    return serialise(Build(tmp_path, "HEAD").bundle)
