"""A folder of Jinja files that extend, include and import one another imports as one tree.

Session 13's fourth corpus (tests/corpus/speed4/import.yaml): every refusal was a Jinja file
extending a ``base.j2``; with the ``base.j2`` beside them the import made it a prompt, and
refused each file extending it (``template 'base.j2' not found in the package``). The judge
here is jinja2 itself on the original folder: a ``FileSystemLoader`` rooted at the folder,
with the ``join_path`` override Jinja's documentation gives for names relative to the naming
file (``./x``, ``../x``, which Nunjucks resolves so too), and ``keep_trailing_newline=True``
(the family's single-file import keeps a file's last newline, as Nunjucks and promptfoo do:
docs/interop.md). Real files in temp folders, the real CLI, a real git repository for
``--commit``.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

import git
import jinja2
import pytest
import yaml
from helpers.repo import run_cli

from promptops.interop import jinja_tree

BASE = """{# the layout every role extends #}
You are **{{ role }}**.
{% block intro %}Default intro.{% endblock %}
{% for cap in capabilities %}- {{ cap }}
{% endfor %}
{% include "partials/footer.j2" %}
Task: {{ task }}
"""
FOOTER = "Reply in {{ language }}.{# a partial, reached by include #}\n"
MACROS = ("{% macro shout(text) %}{{ text | upper }}!{% endmacro %}\n"
          "{% macro quiet(text) %}({{ text | lower }}){% endmacro %}\n")
LESSON = """{# Lesson #}
{% extends "base.j2" %}

{% set instruction = \"\"\"Write a lesson.\"\"\" %}
{% block intro %}{{ instruction }} {{ super() }}{% endblock %}
"""
WRITER = """{% extends "../../base.j2" %}
{% import "macros.j2" as m %}
{% block intro %}{{ m.shout(topic) }}{% endblock %}
"""
CRITIC = """{% from "macros.j2" import quiet %}
Critique {{ quiet(topic) }}:
{% include "./notes.md" %}
"""
NOTES = "- be kind to {{ author }}\n"  # a .md a Jinja file includes: a partial, not a command
FILES = {"base.j2": BASE, "partials/footer.j2": FOOTER, "macros.j2": MACROS,
         "lesson.j2": LESSON, "role/creative/writer.j2": WRITER,
         "role/creative/critic.j2": CRITIC, "role/creative/notes.md": NOTES}
ARGS = {"role": "Writer", "task": "Explain <tags> & \"quotes\"", "language": "French",
        "capabilities": ["one", "two"], "topic": "Jinja", "author": "Ann"}


class _Relative(jinja2.Environment):
    """jinja2 as Jinja's documentation shows for names relative to the naming template."""

    def join_path(self, template: str, parent: str) -> str:
        if template.startswith(("./", "../")):
            return posixpath.normpath(posixpath.join(posixpath.dirname(parent), template))
        return template


def judge(root: Path, rel: str, args: dict[str, object]) -> str:
    """What jinja2 renders from the original folder."""
    env = _Relative(loader=jinja2.FileSystemLoader(root), keep_trailing_newline=True)
    return env.get_template(rel).render(**args)


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def served(pkg: Path, prompt: str, args: dict[str, object], *more: str) -> str:
    """The prompt served with those of ``args`` it declares (the package refuses others)."""
    spec = yaml.safe_load((pkg / "prompts" / f"{prompt}.prompt.yaml").read_text("utf-8"))
    declared = {a["name"] for a in spec.get("arguments", [])}
    given = {k: v for k, v in args.items() if k in declared}
    done = run_cli("render", prompt, "-p", str(pkg), "--format", "json", *more,
                   "--args-file", str(_args_file(pkg, given)))
    assert done.returncode == 0, done.stdout + done.stderr
    messages = json.loads(done.stdout)["messages"]
    assert len(messages) == 1, messages
    return str(messages[0]["content"]["text"])


def _args_file(pkg: Path, args: dict[str, object]) -> Path:
    path = pkg.parent / f"args-{len(list(pkg.parent.glob('args-*')))}.json"
    path.write_text(json.dumps(args), encoding="utf-8")
    return path


def imported(src: Path, out: Path, *extra: str) -> list[dict[str, object]]:
    done = run_cli("import", str(src), *extra, "-o", str(out), "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_tree_of_jinja_files_renders_what_jinja2_renders(tmp_path: Path) -> None:
    src = write(tmp_path / "prompts", FILES)
    out = tmp_path / "pkg"
    report = {Path(str(r["source"])).relative_to(src).as_posix(): r
              for r in imported(src, out)}
    assert {k: (r["outcome"], r["prompts"]) for k, r in report.items()} == {
        "base.j2": ("exact", []), "partials/footer.j2": ("exact", []),
        "macros.j2": ("exact", []), "role/creative/notes.md": ("exact", []),
        "lesson.j2": ("exact", ["lesson"]), "role/creative/writer.j2": ("exact", ["writer"]),
        "role/creative/critic.j2": ("exact", ["critic"])}
    assert report["base.j2"]["templates"] == ["templates/base.j2"]
    assert sorted(p.name for p in (out / "prompts").iterdir()) == [
        "critic.prompt.yaml", "lesson.prompt.yaml", "writer.prompt.yaml"]
    for prompt, rel in (("lesson", "lesson.j2"), ("writer", "role/creative/writer.j2"),
                        ("critic", "role/creative/critic.j2")):
        for args in (ARGS, {}, {"task": "only a task", "capabilities": []}):
            assert served(out, prompt, args) == judge(src, rel, args), (prompt, args)
    assert run_cli("lint", str(out)).returncode == 0  # every name the tree reads is declared


def test_a_file_named_as_well_is_also_a_prompt_rendering_its_template(tmp_path: Path) -> None:
    """A file other files extend is a template; naming it on the command line says it is a
    prompt too: one text (the template), served by both."""
    src = write(tmp_path / "prompts", FILES)
    out = tmp_path / "pkg"
    report = imported(src, out, str(src / "base.j2"))
    base = next(r for r in report if str(r["source"]).endswith("base.j2"))
    assert (base["outcome"], base["prompts"], base["templates"]) == \
        ("exact", ["base"], ["templates/base.j2"])
    assert "{% include \"templates/base.j2\" %}" in (out / "prompts" / "base.prompt.yaml"
                                                      ).read_text(encoding="utf-8")
    assert served(out, "base", ARGS) == judge(src, "base.j2", ARGS)
    assert served(out, "lesson", ARGS) == judge(src, "lesson.j2", ARGS)


def test_a_name_that_leaves_the_folder_is_refused_and_nothing_outside_is_read(
        tmp_path: Path) -> None:
    write(tmp_path / "prompts", FILES)
    inner = tmp_path / "prompts" / "role" / "creative"
    out = tmp_path / "pkg"
    done = run_cli("import", str(inner), "-o", str(out), "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    report = {Path(str(r["source"])).name: r for r in json.loads(done.stdout)}
    why = str(report["writer.j2"]["refused"])
    assert why.startswith(f"{inner / 'writer.j2'}:1:12: extends '../../base.j2' names "
                          f"{tmp_path / 'prompts' / 'base.j2'}, outside the folder being "
                          f"imported ({inner})"), why
    assert f"import the folder that holds both, e.g. `promptops import {tmp_path / 'prompts'}`" \
        in why
    assert report["critic.j2"]["refused"].startswith(f"{inner / 'critic.j2'}:1:9: from "
                                                     "'macros.j2': no such file")
    written = "".join(p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file())
    assert "the layout every role extends" not in written and "macro shout" not in written


def test_a_missing_template_is_refused_with_its_position(tmp_path: Path) -> None:
    src = write(tmp_path / "src", {"a.j2": "Hi\n{%- extends 'layout/base.j2' %}\n",
                                   "b.j2": "Plain {{ x }}\n"})
    done = run_cli("import", str(src), "-o", str(tmp_path / "pkg"))
    assert done.returncode == 1
    assert (f"{src / 'a.j2'}:2:13: extends 'layout/base.j2': no such file in the folder "
            "being imported (looked for layout/base.j2); import the folder that holds it, "
            "or add it") in done.stdout
    assert (tmp_path / "pkg" / "prompts" / "b.prompt.yaml").exists()


def test_a_template_that_does_not_parse_refuses_the_files_reaching_it(tmp_path: Path) -> None:
    src = write(tmp_path / "src", {"base.j2": "A\n{% if x %}never closed\n",
                                   "child.j2": "{% extends 'base.j2' %}\n",
                                   "other.j2": "Plain {{ y }}\n"})
    done = run_cli("import", str(src), "-o", str(tmp_path / "pkg"), "--format", "json")
    assert done.returncode == 1
    report = {Path(str(r["source"])).name: r for r in json.loads(done.stdout)}
    assert str(report["base.j2"]["refused"]).startswith(f"{src / 'base.j2'}:2:0: ")
    assert report["child.j2"]["refused"] == (
        f"{src / 'child.j2'}:1:12: extends 'base.j2' reaches {src / 'base.j2'}, which cannot "
        f"be imported: {report['base.j2']['refused']}")
    assert report["other.j2"]["outcome"] == "exact"
    assert not (tmp_path / "pkg" / "templates").exists()


def test_a_template_the_package_format_refuses_refuses_the_files_reaching_it(
        tmp_path: Path) -> None:
    """Refused by the build (a dynamic include), not by the import's own reading: the files
    extending it are refused naming where they reach it, not with "not found"."""
    src = write(tmp_path / "src", {"base.j2": "A {% include name %}\n",
                                   "child.j2": "{% extends \"base.j2\" %}\n",
                                   "other.j2": "Plain {{ y }}\n"})
    done = run_cli("import", str(src), "-o", str(tmp_path / "pkg"), "--format", "json")
    assert done.returncode == 1
    report = {Path(str(r["source"])).name: r for r in json.loads(done.stdout)}
    assert report["base.j2"]["refused"] == (
        f"{src / 'base.j2'}: the package format refuses the imported template: "
        "templates/base.j2:1:1: dynamic include: name the template with a string literal")
    assert report["child.j2"]["refused"] == (
        f"{src / 'child.j2'}:1:12: extends 'base.j2' reaches {src / 'base.j2'}, which is "
        "refused")
    assert report["other.j2"]["outcome"] == "exact"
    assert not (tmp_path / "pkg" / "templates").exists()


def test_commit_commits_the_templates_and_the_commit_serves(tmp_path: Path) -> None:
    src = write(tmp_path / "prompts", FILES)
    out = tmp_path / "pkg"
    imported(src, out, "--commit")
    tree = git.Repo(out).head.commit.tree
    assert {"templates/base.j2", "templates/partials/footer.j2", "templates/macros.j2",
            "templates/role/creative/notes.md"} <= {b.path for b in tree.traverse()
                                                    if b.type == "blob"}
    assert served(out, "lesson", ARGS, "--ref", "HEAD") == judge(src, "lesson.j2", ARGS)


def test_a_template_path_the_package_has_is_never_replaced(tmp_path: Path) -> None:
    taken = "templates/base.j2"
    out = write(tmp_path / "pkg", {taken: "theirs\n"})
    src = write(tmp_path / "prompts", FILES)
    imported(src, out)
    assert (out / taken).read_text(encoding="utf-8") == "theirs\n"
    assert (out / "templates" / "prompts" / "base.j2").read_text(encoding="utf-8") == \
        BASE.replace('"partials/', '"templates/partials/')  # its own name rewritten
    assert served(out, "lesson", ARGS) == judge(src, "lesson.j2", ARGS)



def test_how_a_name_is_looked_for() -> None:
    assert jinja_tree.candidates("base.j2", "a/b/c.j2") == ["a/b/base.j2", "a/base.j2", "base.j2"]
    assert jinja_tree.candidates("/base.j2", "a/c.j2") == ["a/base.j2", "base.j2"]
    assert jinja_tree.candidates("../x.j2", "a/b.j2") == ["x.j2"]
    assert jinja_tree.candidates("./x.j2", "a/b.j2") == ["a/x.j2"]
    assert jinja_tree.candidates("../../x.j2", "a/b.j2") == ["../x.j2"]  # the caller refuses
    assert isinstance(jinja_tree.candidates("a/../b.j2", "c.j2"), str)
    assert [r.name for r in jinja_tree.references(
        "{% raw %}{% include 'no.j2' %}{% endraw %}{# {% extends 'no.j2' %} #}"
        "{% include name %}{% include ['a.j2'] %}{% import 'm.j2' as m %}"
        "{%- from \"f.j2\" import g with context -%}{% include 'i.j2' ignore missing %}")] == \
        ["m.j2", "f.j2", "i.j2"]


def test_a_name_found_at_two_levels_takes_the_nearest_and_says_so(tmp_path: Path) -> None:
    src = write(tmp_path / "src", {"base.j2": "root {{ a }}\n", "sub/base.j2": "sub {{ b }}\n",
                                   "sub/child.j2": "{% extends 'base.j2' %}\n"})
    out = tmp_path / "pkg"
    row = next(r for r in imported(src, out) if str(r["source"]).endswith("child.j2"))
    assert "'base.j2' read as sub/base.j2, the nearest of 2 files of that name (base.j2 " \
        "too)" in " ".join(map(str, row["notes"]))  # type: ignore[call-overload]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(src / "sub"),
                             keep_trailing_newline=True)
    assert served(out, "child", {"b": "B"}) == env.get_template("child.j2").render(b="B")


CORPORA = Path(__file__).resolve().parents[1] / "corpus"


@pytest.mark.parametrize("part", ["tuning", "heldout"])
def test_the_speed_corpora_jinja_files_render_as_jinja2_renders_them(
        tmp_path: Path, part: str) -> None:
    """Every prompt imported exact from a Jinja file of a speed corpus part that extends,
    includes or imports another, served, is what jinja2 renders from the part's folder,
    each declared argument given a value (a string, or a list for an array). The loader
    searches the part's folder, then the file's own folder and those above it: the
    import's rule (jinja_tree.py)."""
    judged = 0
    for corpus in sorted(CORPORA.glob("speed*/")):
        src = corpus / part
        out = tmp_path / corpus.name
        done = run_cli("import", str(src), "-o", str(out), "--format", "json")
        assert done.returncode in (0, 1), done.stdout + done.stderr
        for row in json.loads(done.stdout):
            rel = Path(str(row["source"])).relative_to(src).as_posix()
            if row["outcome"] != "exact" or not rel.endswith(jinja_tree.SUFFIXES) or \
                    not jinja_tree.references((src / rel).read_text(encoding="utf-8")):
                continue
            for prompt in row["prompts"]:
                spec = yaml.safe_load((out / "prompts" / f"{prompt}.prompt.yaml")
                                      .read_text("utf-8"))
                args = {a["name"]: ["a", "b"] if a.get("type") == "array" else f"<{a['name']}>"
                        for a in spec.get("arguments", [])}
                folders = [src / posixpath.dirname(rel)]
                while folders[-1] != src:
                    folders.append(folders[-1].parent)
                env = _Relative(loader=jinja2.FileSystemLoader([src, *folders]),
                                keep_trailing_newline=True)
                assert served(out, prompt, args) == env.get_template(rel).render(**args), rel
                judged += 1
    assert judged  # each part holds such files (speed4): the judge saw them
