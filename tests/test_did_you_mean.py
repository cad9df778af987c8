"""A misspelt name gets the closest real one, from every command that meets it."""

from __future__ import annotations

from pathlib import Path

from repo_helpers import make_repo, run_cli

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

    from repo_helpers import cli_env

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
