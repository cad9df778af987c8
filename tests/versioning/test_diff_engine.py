"""The diff engine on real repositories: two commits, every change kind, its level."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import commit_files, make_repo
from versioning_helpers import PLAIN, REVIEW, SUMMARY, apply, base_files, prompt_file, spec

from promptops.pipeline.build import Build
from promptops.versioning import (
    Change,
    Kind,
    Level,
    by_level,
    content_digest,
    diff_bundles,
    diff_refs,
    required_bump,
)

MAJOR, MINOR, PATCH = Level.major, Level.minor, Level.patch
Row = tuple[Kind, Level, str | None, str | None]


def _review(**changes: Any) -> dict[str, str | None]:
    s = spec(REVIEW)
    s.update(changes)
    return {"prompts/review.prompt.yaml": prompt_file(s)}


def _review_arg(name: str, **fields: Any) -> dict[str, str | None]:
    s = spec(REVIEW)
    arg = next(a for a in s["arguments"] if a["name"] == name)
    for key, value in fields.items():
        if value is None:
            arg.pop(key, None)
        else:
            arg[key] = value
    return {"prompts/review.prompt.yaml": prompt_file(s)}


def _with_args(*extra: dict[str, Any]) -> dict[str, str | None]:
    s = spec(REVIEW)
    s["arguments"] = [*s["arguments"], *extra]
    return {"prompts/review.prompt.yaml": prompt_file(s)}


def _without_arg(name: str) -> dict[str, str | None]:
    s = spec(REVIEW)
    s["arguments"] = [a for a in s["arguments"] if a["name"] != name]
    return {"prompts/review.prompt.yaml": prompt_file(s)}


_RENAMED = spec(PLAIN) | {"name": "greet"}
_SUMMARY_TITLED = spec(SUMMARY) | {"title": "Summary"}

CASES: dict[str, tuple[dict[str, str | None], list[Row]]] = {
    "prompt added": (
        {"prompts/new.prompt.yaml": prompt_file(PLAIN | {"description": "new"})},
        [(Kind.prompt_added, MINOR, "new", None)],
    ),
    "prompt removed": (
        {"prompts/plain.prompt.yaml": None},
        [(Kind.prompt_removed, MAJOR, "plain", None)],
    ),
    "prompt renamed": (
        {"prompts/plain.prompt.yaml": prompt_file(_RENAMED)},
        [(Kind.prompt_renamed, MAJOR, "greet", None)],
    ),
    "required argument added": (
        _with_args({"name": "focus", "required": True}),
        [(Kind.argument_added, MAJOR, "review", "focus")],
    ),
    "optional argument added": (
        _with_args({"name": "focus"}),
        [(Kind.argument_added, MINOR, "review", "focus")],
    ),
    "argument removed": (
        _without_arg("style"),
        [(Kind.argument_removed, MAJOR, "review", "style")],
    ),
    "argument made required": (
        _review_arg("style", required=True),
        [(Kind.argument_made_required, MAJOR, "review", "style")],
    ),
    "argument made optional": (
        _review_arg("code", required=None),
        [(Kind.argument_made_optional, MINOR, "review", "code")],
    ),
    "enum narrowed": (
        _review_arg("language", enum=["python"]),
        [(Kind.enum_narrowed, MAJOR, "review", "language")],
    ),
    "enum added": (
        _review_arg("style", enum=["pep8"], pattern=None),
        [(Kind.enum_narrowed, MAJOR, "review", "style"),
         (Kind.pattern_changed, MINOR, "review", "style")],
    ),
    "enum widened": (
        _review_arg("language", enum=["python", "go", "rust"]),
        [(Kind.enum_widened, MINOR, "review", "language")],
    ),
    "enum removed": (
        _review_arg("language", enum=None),
        [(Kind.enum_widened, MINOR, "review", "language")],
    ),
    "enum narrowed and widened": (
        _review_arg("language", enum=["python", "rust"]),
        [(Kind.enum_changed, MAJOR, "review", "language")],
    ),
    "enum reordered": (
        _review_arg("language", enum=["go", "python"]),
        [(Kind.enum_changed, PATCH, "review", "language")],
    ),
    "pattern changed": (
        _review_arg("style", pattern="[a-z]{1,8}"),
        [(Kind.pattern_changed, MAJOR, "review", "style")],
    ),
    "pattern added": (
        _review_arg("language", pattern="[a-z]+"),
        [(Kind.pattern_changed, MAJOR, "review", "language")],
    ),
    "pattern removed": (
        _review_arg("style", pattern=None),
        [(Kind.pattern_changed, MINOR, "review", "style")],
    ),
    "maxLength tighter": (
        _review_arg("code", maxLength=4000),
        [(Kind.max_length_changed, MAJOR, "review", "code")],
    ),
    "maxLength looser (from the default)": (
        _review_arg("style", maxLength=200_000),
        [(Kind.max_length_changed, MINOR, "review", "style")],
    ),
    "default changed": (
        _review_arg("language", default="go"),
        [(Kind.default_changed, PATCH, "review", "language")],
    ),
    "argument description changed": (
        _review_arg("style", description="the team's style"),
        [(Kind.argument_description_changed, PATCH, "review", "style")],
    ),
    "arguments reordered": (
        {"prompts/review.prompt.yaml": prompt_file(
            spec(REVIEW) | {"arguments": list(reversed(REVIEW["arguments"]))})},
        [(Kind.arguments_reordered, PATCH, "review", None)],
    ),
    "template file text changed": (
        {"templates/review.j2": '{% include "partials/header.j2" %}\nI review {{ language }}!\n'},
        [(Kind.template_changed, PATCH, "review", None)],
    ),
    "inline text changed": (
        {"prompts/plain.prompt.yaml": prompt_file(
            spec(PLAIN) | {"messages": [{"role": "user", "text": "Hello!"}]})},
        [(Kind.template_changed, PATCH, "plain", None)],
    ),
    "partial edit reaches every including prompt": (
        {"partials/header.j2": "You are very careful.\n"},
        [(Kind.template_changed, PATCH, "review", None),
         (Kind.template_changed, PATCH, "summary", None)],
    ),
    "message role changed": (
        {"prompts/plain.prompt.yaml": prompt_file(
            spec(PLAIN) | {"messages": [{"role": "assistant", "text": "Hello there"}]})},
        [(Kind.template_changed, PATCH, "plain", None)],
    ),
    "title and description changed": (
        _review(title="Code review", description="Reviews code"),
        [(Kind.title_changed, PATCH, "review", None),
         (Kind.description_changed, PATCH, "review", None)],
    ),
    "title added": (
        {"prompts/summary.prompt.yaml": prompt_file(_SUMMARY_TITLED)},
        [(Kind.title_changed, PATCH, "summary", None)],
    ),
    "icons changed": (
        _review(icons=[{"src": "https://example.com/r2.png", "mimeType": "image/png"}]),
        [(Kind.icons_changed, PATCH, "review", None)],
    ),
    "resource file changed": (
        {"docs/guide.md": "# Guide\n\nRead me.\n"},
        [(Kind.resource_changed, PATCH, "summary", None)],
    ),
    "manifest description and instructions changed": (
        {"promptops.yaml":
         "name: demo\nversion: 1.0.0\ndescription: Demo\ninstructions: Be kind.\n"},
        [(Kind.package_description_changed, PATCH, None, None),
         (Kind.instructions_changed, PATCH, None, None)],
    ),
    "only the version changed": (
        {"promptops.yaml": base_files()["promptops.yaml"].replace("1.0.0", "1.0.1")}, [],
    ),
    "a file no prompt reaches changed": ({"partials/unused.j2": "Still unused.\n"}, []),
    "a prompt file moved, same name": (
        {"prompts/plain.prompt.yaml": None,
         "prompts/more/plain.prompt.yaml": prompt_file(PLAIN)},
        [],
    ),
}


def _two_commits(root: Path, edits: dict[str, str | None]) -> Path:
    repo = make_repo(root, base_files(), "v1")
    apply(root, edits)
    commit_files(repo, {}, "v2")
    return root


def _rows(changes: list[Change]) -> list[Row]:
    return [(c.kind, c.level, c.prompt, c.argument) for c in changes]


@pytest.mark.parametrize("case", list(CASES))
def test_change_kind_and_level(tmp_path: Path, case: str) -> None:
    edits, expected = CASES[case]
    root = _two_commits(tmp_path / "repo", edits)
    changes = diff_refs(root, "HEAD~1", "HEAD")
    assert _rows(changes) == expected
    assert required_bump(changes) == (max((r[1] for r in expected), key=lambda lv: lv.rank)
                                       if expected else None)
    for c in changes:
        assert c.message and c.summary().startswith(c.level.value)


def test_rename_shown_once_not_as_remove_and_add(tmp_path: Path) -> None:
    root = _two_commits(tmp_path / "repo", CASES["prompt renamed"][0])
    [change] = diff_refs(root, "HEAD~1", "HEAD")
    assert (change.old, change.new) == ("plain", "greet")
    assert "renamed from 'plain'" in change.message


def test_partial_change_names_the_partial(tmp_path: Path) -> None:
    root = _two_commits(tmp_path / "repo", {"partials/header.j2": "Changed.\n"})
    changes = diff_refs(root, "HEAD~1", "HEAD")
    assert all("partials/header.j2" in c.message for c in changes)


def test_many_changes_ordered_and_bump_is_the_largest(tmp_path: Path) -> None:
    edits: dict[str, str | None] = {
        "partials/header.j2": "New header.\n",
        "prompts/plain.prompt.yaml": None,
        "prompts/zeta.prompt.yaml": prompt_file(PLAIN | {"description": "z"}),
        **_review_arg("language", enum=["python", "go", "rust"]),
        "promptops.yaml": "name: demo\nversion: 1.0.0\ndescription: Demo\ninstructions: x\n",
    }
    root = _two_commits(tmp_path / "repo", edits)
    changes = diff_refs(root, "HEAD~1", "HEAD")
    assert _rows(changes) == [
        (Kind.package_description_changed, PATCH, None, None),
        (Kind.instructions_changed, PATCH, None, None),
        (Kind.prompt_removed, MAJOR, "plain", None),
        (Kind.enum_widened, MINOR, "review", "language"),
        (Kind.template_changed, PATCH, "review", None),
        (Kind.template_changed, PATCH, "summary", None),
        (Kind.prompt_added, MINOR, "zeta", None),
    ]
    assert required_bump(changes) is MAJOR
    assert [c.level for c in by_level(changes)][:2] == [MAJOR, MINOR]
    # the working tree (ref None) against a commit gives the same answer as two commits
    assert diff_refs(root, "HEAD~1") == changes


def test_working_tree_against_commit_and_content_digest(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, base_files(), "v1")
    apply(root, _review_arg("code", maxLength=10))
    assert _rows(diff_refs(root, "HEAD")) == [(Kind.max_length_changed, MAJOR, "review", "code")]
    head, tree = Build(root, "HEAD").bundle, Build(root).bundle
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", content_digest(head))  # as tags record it
    assert content_digest(head) != content_digest(tree)
    apply(root, {"prompts/review.prompt.yaml": prompt_file(REVIEW)})
    tree = Build(root).bundle
    assert head["digest"] != tree["digest"]  # provenance differs (dirty working tree) ...
    assert content_digest(head) == content_digest(tree)  # ... what is served does not
    assert diff_bundles(head, tree) == []


def test_change_json_is_plain_data(tmp_path: Path) -> None:
    root = _two_commits(tmp_path / "repo", CASES["enum narrowed"][0])
    [change] = diff_refs(root, "HEAD~1", "HEAD")
    assert change.to_json() == {
        "kind": "enum_narrowed", "level": "major", "prompt": "review", "argument": "language",
        "message": "argument 'language' enum narrowed (removed ['go'])",
        "old": ["python", "go"], "new": ["python"],
    }


def test_the_same_argument_list_at_both_ends_is_compared_only_where_it_can_differ(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One compiled prompt at both ends (a review's unchanged files) hands the very same
    argument list to both: the changes are those of an equal copy (a NaN default is
    "changed" either way: NaN != NaN), and only such an argument is compared field by
    field."""
    import copy
    import math

    from promptops.versioning import arguments

    args: list[Any] = [
        {"name": "who", "required": True, "enum": ["a", "b"], "examples": [math.nan]},
        {"name": "n", "type": "number", "default": math.nan, "schema": {"x": [1]}},
        {"name": "who", "description": "twice: the last one counts"}, {"name": "plain"}]
    alone = [c.to_json() for c in arguments.diff_arguments("p", args, copy.deepcopy(args))]
    compared: list[str] = []
    real = arguments._argument

    def counted(p: str, name: str, a: Any, b: Any) -> Any:
        compared.append(name)
        return real(p, name, a, b)

    monkeypatch.setattr(arguments, "_argument", counted)
    same = [c.to_json() for c in arguments.diff_arguments("p", args, args)]
    assert same == alone and [(c["argument"], c["kind"]) for c in same] == [
        ("n", "default_changed")]
    assert compared == ["n"]
