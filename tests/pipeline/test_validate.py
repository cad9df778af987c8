"""Stage 2, validate(): what is complete, what is partial, what is refused, and what is read.

Through the public entry point on in-memory packages (a real :class:`MemorySource`, the
one rule cases use), so each case is a few milliseconds: a broken manifest never yields a
package, every templated field of a message is parsed (an embedded resource's ``uri``
included), problems carry their rule code and position, and a prompt file the memo has
seen is not read again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repo import SYMLINKS, posix_only

from promptops.errors import PackageError
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import MemorySource, WorktreeSource
from promptops.pipeline.validate import Validated, load_package, validate

MANIFEST = "name: demo\nversion: 1.0.0\n"
HELLO = "messages:\n  - role: user\n    text: hello {{ who }}\n"


def _package(**files: str) -> dict[str, str]:
    return {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": HELLO, **files}


def _codes(found: Validated) -> list[tuple[str, int, int, str]]:
    return [(p.path, p.line, p.col, p.code) for p in found.problems]


def test_a_sound_package_is_complete() -> None:
    found = validate(MemorySource(_package(**{"prompts/bye.prompt.yaml": HELLO.replace(
        "hello", "bye")})))
    assert found.complete and found.problems == []
    assert found.package is not None and found.require() is found.package
    assert [p.name for p in found.package.prompts] == ["bye", "hello"]
    assert found.package.prompt("bye") is not None and found.package.prompt("x") is None


@pytest.mark.parametrize(("manifest", "code"), [
    ("name: demo\nversion: [1\n", "PO101"),  # not YAML
    ("name: demo\nversion: one\n", "PO102"),  # not the schema
    ("- name\n", "PO102"),  # not a mapping
])
def test_a_broken_manifest_is_never_complete_and_gives_no_package(manifest: str,
                                                                  code: str) -> None:
    found = validate(MemorySource(_package(**{"promptops.yaml": manifest})))
    assert not found.complete and found.package is None
    assert [(p.path, p.code) for p in found.problems] == [("promptops.yaml", code)]
    with pytest.raises(PackageError):
        found.require()


def test_no_manifest_is_one_problem_and_no_package() -> None:
    found = validate(MemorySource({"prompts/hello.prompt.yaml": HELLO}))
    assert (found.package, found.complete) == (None, False)
    assert [(p.path, p.line, p.col, p.message, p.code) for p in found.problems] == [
        ("promptops.yaml", 1, 1, "no promptops.yaml in the package folder", "PO102")]
    with pytest.raises(PackageError):
        load_package(MemorySource({"prompts/hello.prompt.yaml": HELLO}))


def test_a_broken_prompt_leaves_the_others_as_a_partial_package() -> None:
    found = validate(MemorySource(_package(**{"prompts/bad.prompt.yaml": "messages: 3\n"})))
    assert not found.complete
    assert [(p.path, p.code) for p in found.problems] == [("prompts/bad.prompt.yaml", "PO102")]
    assert found.package is not None
    assert [p.name for p in found.package.prompts] == ["hello"]
    assert "prompts/bad.prompt.yaml" not in found.package.files
    with pytest.raises(PackageError):
        found.require()


def test_a_broken_manifest_and_a_broken_prompt_give_no_partial_package() -> None:
    found = validate(MemorySource(_package(**{"promptops.yaml": "name: demo\n",
                                              "prompts/bad.prompt.yaml": "messages: 3\n"})))
    assert (found.package, found.complete) == (None, False)
    assert {p.path for p in found.problems} == {"promptops.yaml", "prompts/bad.prompt.yaml"}


def test_a_partial_package_needs_its_templates_sound() -> None:
    """The sound prompt includes a template that is broken: no partial package."""
    files = _package(**{
        "prompts/hello.prompt.yaml": "messages:\n  - role: user\n    template: t/a.j2\n",
        "prompts/bad.prompt.yaml": "messages: 3\n",
        "t/a.j2": "{% include 't/missing.j2' %}\n"})
    found = validate(MemorySource(files))
    assert (found.package, found.complete) == (None, False)
    assert ("t/a.j2", 1, 1, "PO301") in _codes(found)


RESOURCE = """\
messages:
  - role: user
    resource:
      uri: "note://{{ topic"
      mimeType: text/plain
      text: About it
"""


def test_templates_in_an_embedded_resource_uri_are_validated() -> None:
    found = validate(MemorySource(_package(**{"prompts/res.prompt.yaml": RESOURCE})))
    assert not found.complete
    [problem] = found.problems
    assert (problem.path, problem.line, problem.code) == ("prompts/res.prompt.yaml", 4, "PO103")
    assert problem.message.startswith("template: ")


@pytest.mark.parametrize(("field", "line", "col"), [
    ("resource:\n      uri: \"note://{% include 'gone.j2' %}\"\n      text: t", 4, 12),
    ("resource:\n      uri: note://x\n      text: \"{% include 'gone.j2' %}\"", 5, 13),
    ("resource_link:\n      uri: \"https://x/{% include 'gone.j2' %}\"\n      name: n", 4, 12),
    ("text: \"{% include 'gone.j2' %}\"", 3, 11),
])
def test_every_templated_field_has_its_includes_checked(field: str, line: int,
                                                        col: int) -> None:
    prompt = f"messages:\n  - role: user\n    {field}\n"
    found = validate(MemorySource(_package(**{"prompts/inc.prompt.yaml": prompt})))
    assert [(p.path, p.line, p.col, p.code) for p in found.problems] == [
        ("prompts/inc.prompt.yaml", line, col, "PO301")]
    assert "template 'gone.j2' not found in the package" in found.problems[0].message


def test_result_description_is_a_template_too() -> None:
    prompt = HELLO + "resultDescription: \"{{ who \"\n"
    found = validate(MemorySource(_package(**{"prompts/hello.prompt.yaml": prompt})))
    assert [p.code for p in found.problems] == ["PO103"]


def test_problem_codes_for_each_kind_of_include_trouble() -> None:
    files = _package(**{
        "prompts/a.prompt.yaml": "messages:\n  - role: user\n    text: "
                                 "\"{% include name %}\"\n",
        "prompts/b.prompt.yaml": "messages:\n  - role: user\n    text: "
                                 "\"{% include '../up.j2' %}\"\n",
        "prompts/c.prompt.yaml": "messages:\n  - role: user\n    text: \"{% frobnicate %}\"\n",
        "prompts/d.prompt.yaml": "messages:\n  - role: user\n    template: t/bad.j2\n",
        "t/bad.j2": "{% if %}\n",
    })
    found = validate(MemorySource(files))
    assert [(p.path, p.code) for p in found.problems] == [
        ("prompts/a.prompt.yaml", "PO301"), ("prompts/b.prompt.yaml", "PO304"),
        ("prompts/c.prompt.yaml", "PO104"), ("t/bad.j2", "PO103")]
    assert "dynamic include" in found.problems[0].message
    assert found.problems[1].message == ("include '../up.j2' is outside the package or not "
                                         "normalised")


def test_resource_files_missing_outside_or_of_unknown_type() -> None:
    def one(file: str, **extra: str) -> list[tuple[str, str]]:
        prompt = ("messages:\n  - role: user\n    resource:\n      uri: doc://x\n"
                  f"      file: {file}\n")
        found = validate(MemorySource(_package(**{"prompts/r.prompt.yaml": prompt}, **extra)))
        return [(p.code, p.message) for p in found.problems]

    assert one("docs/a.md", **{"docs/a.md": "# A\n"}) == []
    prompt = "messages:\n  - role: user\n    resource:\n      uri: doc://x\n      file: nope.md\n"
    found = validate(MemorySource(_package(**{"prompts/r.prompt.yaml": prompt})))
    assert [(p.line, p.col) for p in found.problems] == [(5, 13)]  # at the file name
    assert one("docs/b.md", **{"docs/a.md": "# A\n"}) == [
        ("PO306", "file 'docs/b.md' not found in the package; did you mean 'docs/a.md'?")]
    assert one("../x.md") == [("PO306", "'../x.md' is outside the package")]
    image = ("messages:\n  - role: user\n    image:\n      file: pics/a.weird\n")
    found = validate(MemorySource(_package(**{"prompts/i.prompt.yaml": image,
                                              "pics/a.weird": "x"})))
    assert [(p.code, p.message) for p in found.problems] == [
        ("PO102", "cannot tell the mimeType of 'pics/a.weird': set mimeType")]


def test_prompt_names_from_files_and_duplicates() -> None:
    found = validate(MemorySource(_package(**{
        "prompts/Bad Name!.prompt.yaml": HELLO,
        "prompts/other.prompt.yaml": "name: hello\n" + HELLO,
        "prompts/notes.yaml": "not a prompt file: never read as one\n",
        "elsewhere/x.prompt.yaml": HELLO,
    })))
    assert [(p.path, p.line, p.code) for p in found.problems] == [
        ("prompts/Bad Name!.prompt.yaml", 1, "PO102"),
        ("prompts/other.prompt.yaml", 1, "PO106")]
    assert "file name gives prompt name 'Bad Name!'" in found.problems[0].message
    assert "already used by prompts/hello.prompt.yaml" in found.problems[1].message


class CountingSource(MemorySource):
    """A memory package that records which files were read, and which were asked ahead."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__(files)
        self.reads: list[str] = []
        self.ahead: list[str] = []

    def read(self, path: str) -> bytes:
        self.reads.append(path)
        return super().read(path)

    def read_ahead(self, paths: list[str]) -> None:
        self.ahead += paths


def test_a_prompt_file_the_memo_has_seen_is_not_read_again() -> None:
    files = _package(**{"prompts/bye.prompt.yaml": HELLO.replace("hello", "bye")})
    memo = FileMemo()
    first = CountingSource(files)
    validate(first, memo=memo)
    assert "prompts/hello.prompt.yaml" in first.reads and "prompts/hello.prompt.yaml" in first.ahead
    again = CountingSource(files)
    found = validate(again, memo=memo)
    assert found.complete
    assert not [p for p in again.reads + again.ahead if p.endswith(".prompt.yaml")]
    assert again.ahead == ["promptops.yaml"]
    # an edited file has another content name: read and parsed again
    edited = CountingSource({**files, "prompts/bye.prompt.yaml": HELLO.replace("hello", "ciao")})
    found = validate(edited, memo=memo)
    assert [p for p in edited.reads if p.endswith(".prompt.yaml")] == ["prompts/bye.prompt.yaml"]
    assert found.package is not None
    assert found.package.prompt("bye").spec.messages[0].text == "ciao {{ who }}"  # type: ignore[union-attr]


class WorkTreeLike(CountingSource):
    """A source that, like the working tree, knows a file's content name only once read."""

    def blob_id(self, path: str) -> str | None:
        return None


def test_a_file_read_again_is_not_parsed_again_when_its_bytes_are_the_same() -> None:
    """The memo's second chance: a source that cannot name a file's content before reading
    it reads the file, and the git id of its bytes finds the parse already made."""
    files = _package()
    memo = FileMemo()
    first = validate(WorkTreeLike(files), memo=memo).package
    again = WorkTreeLike(files)
    second = validate(again, memo=memo).package
    assert "prompts/hello.prompt.yaml" in again.reads  # read: its name was unknown before
    assert first is not None and second is not None
    assert second.prompt("hello").file is first.prompt("hello").file  # not parsed again


def test_a_prompt_file_with_a_problem_is_not_memoised() -> None:
    files = _package(**{"prompts/bad.prompt.yaml": "messages: 3\n"})
    memo = FileMemo()
    validate(MemorySource(files), memo=memo)
    again = CountingSource(files)
    found = validate(again, memo=memo)
    assert "prompts/bad.prompt.yaml" in again.reads  # read again: its problems are reported
    assert [p.code for p in found.problems] == ["PO102"]


def test_template_files_that_cannot_be_read() -> None:
    files = _package(**{
        "prompts/a.prompt.yaml": "messages:\n  - role: user\n    template: t/bin.j2\n",
        "prompts/b.prompt.yaml": "messages:\n  - role: user\n    template: .git/x.j2\n",
        "t/bin.j2": "",
        ".git/x.j2": "hidden\n",
    })
    source = MemorySource(files)
    source._files["t/bin.j2"] = b"caf\xe9 {{ x }}\n"  # Latin-1, not UTF-8
    found = validate(source)
    assert [(p.path, p.code) for p in found.problems] == [
        ("prompts/b.prompt.yaml", "PO304"), ("t/bin.j2", "PO101")]
    assert found.problems[0].message.startswith("template '.git/x.j2' is ")


def test_a_resource_file_the_package_rules_refuse() -> None:
    prompt = "messages:\n  - role: user\n    resource:\n      uri: doc://x\n      file: .git/x\n"
    found = validate(MemorySource(_package(**{"prompts/r.prompt.yaml": prompt,
                                              ".git/x": "secret\n"})))
    assert [(p.line, p.code) for p in found.problems] == [(5, "PO306")]
    assert found.problems[0].message.startswith("file '.git/x' is ")


def test_a_template_two_prompts_include_is_read_once() -> None:
    inc = "messages:\n  - role: user\n    text: \"{% include 't/a.j2' %}{% include 't/b.j2' %}\"\n"
    files = _package(**{"prompts/x.prompt.yaml": inc, "prompts/y.prompt.yaml": inc,
                        "t/a.j2": "{% include 't/b.j2' %}a\n", "t/b.j2": "b\n"})
    source = CountingSource(files)
    found = validate(source)
    assert found.complete and found.package is not None
    assert dict(found.package.templates) == {"t/a.j2": "{% include 't/b.j2' %}a\n",
                                             "t/b.j2": "b\n"}
    assert source.reads.count("t/a.j2") == 1 and source.reads.count("t/b.j2") == 1


BLOCK = """\
messages:
  - role: user
    text: |
      line one
      line two {{ oops
"""


def test_template_problems_point_at_the_line_inside_the_yaml() -> None:
    found = validate(MemorySource(_package(**{"prompts/blk.prompt.yaml": BLOCK})))
    [problem] = found.problems
    assert (problem.line, problem.code) == (5, "PO103")  # the line of `{{ oops`
    inc = "messages:\n  - role: user\n    text: |\n      one\n      {% include 'gone.j2' %}\n"
    found = validate(MemorySource(_package(**{"prompts/inc.prompt.yaml": inc})))
    [problem] = found.problems
    assert (problem.line, problem.col, problem.code) == (5, 7, "PO301")
    inline = "messages:\n  - role: user\n    text: \"{% include 'gone.j2' %}\"\n"
    found = validate(MemorySource(_package(**{"prompts/inc.prompt.yaml": inline})))
    assert [(p.line, p.col) for p in found.problems] == [(3, 11)]


@posix_only(SYMLINKS)
def test_prompt_files_that_cannot_be_read(tmp_path: Path) -> None:
    """A dangling link is not found (PO102); a link out of the package is refused (PO306)."""
    pkg = tmp_path / "pkg"
    (pkg / "prompts").mkdir(parents=True)
    (pkg / "promptops.yaml").write_text(MANIFEST, encoding="utf-8")
    (tmp_path / "secret.yaml").write_text(HELLO, encoding="utf-8")
    (pkg / "prompts" / "dangling.prompt.yaml").symlink_to("nowhere.yaml")
    (pkg / "prompts" / "out.prompt.yaml").symlink_to(tmp_path / "secret.yaml")
    found = validate(WorktreeSource(pkg))
    assert [(p.path, p.line, p.col, p.code, p.message.split(" pointing")[0])
            for p in found.problems] == [
        ("prompts/dangling.prompt.yaml", 1, 1, "PO102", "file not found"),
        ("prompts/out.prompt.yaml", 1, 1, "PO306", "this file is a symlink")]


def test_a_template_file_problem_is_on_its_own_line() -> None:
    files = _package(**{"prompts/d.prompt.yaml": "messages:\n  - role: user\n"
                                                 "    template: t/bad.j2\n",
                        "t/bad.j2": "fine\nstill fine\n{% if %}\n"})
    found = validate(MemorySource(files))
    assert [(p.path, p.line, p.col, p.code) for p in found.problems] == [
        ("t/bad.j2", 3, 1, "PO103")]


def test_a_given_mime_type_is_enough_for_any_extension() -> None:
    image = "messages:\n  - role: user\n    image:\n      file: pics/a.weird\n" \
            "      mimeType: image/png\n"
    found = validate(MemorySource(_package(**{"prompts/i.prompt.yaml": image,
                                              "pics/a.weird": "x"})))
    assert found.problems == [] and found.complete


def test_a_name_taken_from_the_file_name_collides_at_the_top_of_the_file() -> None:
    found = validate(MemorySource(_package(**{"prompts/more/hello.prompt.yaml": HELLO})))
    assert [(p.path, p.line, p.col, p.code) for p in found.problems] == [
        ("prompts/more/hello.prompt.yaml", 1, 1, "PO106")]
