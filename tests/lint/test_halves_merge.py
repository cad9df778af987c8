"""The halves' prompt-scope findings, merged, are the one-process run's (``halves.Warm``).

Since session 13 each half of a cold lint judges its prompt files, and every file that is
not one, with every prompt-scope rule (``halves.SPLIT``), and the whole run runs only the
other rules and merges: from each half its own prompt files' findings, those on the files
its prompts read, and those on files no prompt reads. Both halves run here in this
process (the merge does not depend on the fork; ``test_halves_process.py`` checks the
forked path), on generated packages whose findings a careless merge gets wrong:

- a partial every prompt includes, where prompts declaring different arguments find
  different things (PO201: the union of both halves' is the one-process run's);
- a template file each prompt names, whose trailing whitespace a reader judges as
  rendered text, and the other half, where nobody reads it, as a plain file's raw lines
  (a different message: a merge that kept it would add a finding);
- an unused partial (both halves report its hygiene findings: kept once), an include chain
  over the depth limit and a template shared by prompts with different arguments (PO303 and
  PO105, which the whole run keeps);
- a prompt that renders another half's prompt file as its template (exact: a part reads
  what its prompts name), and a duplicate name across the halves (the whole run drops one
  prompt, its half does not: the whole run then runs every rule).
"""

from __future__ import annotations

from promptops.lint import halves
from promptops.lint.config import manifest_data, settings
from promptops.lint.engine import lint_source
from promptops.lint.problem import Finding
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import CachingSource, MemorySource
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import is_prompt_file, validate

MANIFEST = "name: demo\nversion: 1.0.0\nlint:\n  maxIncludeDepth: 2\n"
PROMPT = ("description: prompt {k}\narguments:\n  - name: {arg}\n    required: true\n"
          "  - name: unused\n"
          "messages:\n  - role: system\n    text: |\n      Copy {k}.   \n"
          "      <!-- note {k} -->\n"
          "      {{% include 'partials/shared.j2' %}}\n"
          "  - role: user\n    template: partials/t{k}.j2\n"
          "  - role: user\n    template: partials/{deep}.j2\n")


def _package(n: int = 36) -> dict[str, str]:
    files = {"promptops.yaml": MANIFEST,
             # read by every prompt: `who` is undeclared where a prompt declares `what`
             "partials/shared.j2": "Shared {{ who }}.  \n",
             "partials/unused.j2": "Nobody includes me.  \n",
             # a chain over the depth limit (PO303, package scope) for some prompts
             "partials/a.j2": "A {% include 'partials/b.j2' %}\n",
             "partials/b.j2": "B {% include 'partials/c.j2' %}\n",
             "partials/c.j2": "C\n",
             # judged once, by the first prompt by name (PO105, FIRST): `who` is meant there
             "partials/code.j2": "Run `{{ who }}` now.\n"}
    for k in range(n):
        files[f"prompts/p-{k}.prompt.yaml"] = PROMPT.format(
            k=k, arg="who" if k % 3 else "what", deep="a" if k % 4 == 1 else "code")
        # rendered trailing whitespace for its reader, raw lines for anyone else
        files[f"partials/t{k}.j2"] = f"Template {k} {{{{ unused }}}}  \n{{# note #}}  \n"
    return files


def _runs(files: dict[str, str]) -> tuple[list[Finding], halves.Warm, list[Finding] | None,
                                          list[Finding]]:
    """(one process's findings, both halves, their merge or None, ``finish``'s findings)."""
    source = CachingSource(MemorySource(files))
    conf = settings(manifest_data(source), [], [], strict=False, base=None)
    one = lint_source(source, conf).findings
    rest = {p for p in files if not is_prompt_file(p)}
    mine, theirs = halves.split(source, sorted(p for p in files if is_prompt_file(p)))
    index = TemplateIndex(keep_asts=True)
    tables, part = halves._half(source, conf, rest, set(mine), index)
    other_tables, other = halves._half(source, conf, rest, set(theirs),
                                       TemplateIndex(FileMemo(), keep_asts=True))
    tables.update(other_tables)
    warm = halves.Warm(tables, (part, other))
    validated = validate(source, memo=index.memo, index=index)
    whole = lint_source(source, conf, validated=validated, tables=tables, rules=warm.rules())
    merged = warm.merged(whole, validated)
    return one, warm, merged, halves.finish(source, conf, validated, warm)[1]


def test_the_merge_is_the_one_process_run() -> None:
    one, warm, merged, finished = _runs(_package())
    assert merged is not None  # the merge was made, not the whole run's fallback
    assert merged == one and finished == one
    codes = {f.code for f in one}
    assert {"PO105", "PO201", "PO202", "PO207", "PO303", "PO305", "PO503",
            "PO504"} <= codes, sorted(codes)
    mine, theirs = warm.parts
    # a shared file's findings come from both halves, and neither half has all of them
    shared = {f for f in one if f.path == "partials/shared.j2" and f.code == "PO201"}
    assert shared and not shared <= set(mine.findings) and not shared <= set(theirs.findings)
    # each half judges the other's template files as unread, differently: the merge drops it
    for part, other in ((mine, theirs), (theirs, mine)):
        read_by_other = {f for files in other.deps.values() for f in files}
        read_here = {f for files in part.deps.values() for f in files}
        foreign = [f for f in part.findings if f.path in read_by_other - read_here]
        assert foreign and not set(foreign) & set(one)
    # the unused partial's hygiene findings, from both halves, are kept once
    unused = [f for f in one if f.path == "partials/unused.j2"]
    assert len(unused) == len(set(unused)) >= 2
    assert all(f in mine.findings and f in theirs.findings for f in unused
               if f.code in halves.SPLIT)


def test_a_duplicate_name_across_the_halves_runs_every_rule_whole() -> None:
    """The whole run drops the second of two prompts of one name (a load problem), the
    half holding it alone does not: its findings are not the whole's, nor merged."""
    files = _package()
    mine, theirs = halves.split(CachingSource(MemorySource(files)),
                                sorted(p for p in files if is_prompt_file(p)))
    first, other = mine[0], theirs[-1]  # one prompt file of each half
    files[other] = f"name: {first.removeprefix('prompts/').split('.')[0]}\n" + files[other]
    one, _, merged, finished = _runs(files)
    assert merged is None
    assert finished == one and "PO106" in {f.code for f in one}


def test_a_prompt_rendering_another_halfs_prompt_file_merges_exactly() -> None:
    """A prompt whose template is a prompt file of the other half: its half reads that
    file (a part reads what its prompts name) and judges it as that prompt renders it,
    the other half judges it as a prompt: the union is the whole run's."""
    files = _package()
    mine, theirs = halves.split(CachingSource(MemorySource(files)),
                                sorted(p for p in files if is_prompt_file(p)))
    first, other = mine[0], theirs[-1]
    files[first] = files[first].replace(f"template: partials/t{first[10:-12]}.j2",
                                        f"template: {other}")
    one, warm, merged, finished = _runs(files)
    assert any(other in part.deps.get(first, ()) for part in warm.parts)
    assert merged == one and finished == one


def test_a_broken_package_gives_the_one_process_findings() -> None:
    """Prompt files that do not load (broken YAML, schema, Jinja syntax, a missing include)
    in both halves: the load rules' findings are validation's problems, which the halves
    give as the whole does, so they merge (and with a duplicate name in one half)."""
    from helpers.broken import BROKEN
    from test_halves import _generated

    files = _generated(45)
    duplicate = next(k for k, text in BROKEN.items() if text.startswith("name:"))
    del files[f"prompts/p-{duplicate}.prompt.yaml"]
    one, _, merged, finished = _runs(files)
    assert merged == one and finished == one
    assert {"PO101", "PO102", "PO103", "PO301"} <= {f.code for f in one}
    one, _, merged, finished = _runs(_generated(45))
    assert merged in (None, one) and finished == one


def test_the_whole_runs_suppressions_are_both_halves() -> None:
    """The whole run applies the suppressions the halves read (``Warm.silenced``) instead of
    reading every file's comments again: a comment silencing the whole run's own finding
    (PO105 on a partial, judged once by its first reader) holds there as in one process."""
    plain = _package()
    files = dict(plain)
    files["partials/code.j2"] = "{# promptops: disable=PO105 #}\n" + files["partials/code.j2"]
    unsilenced, _, _, _ = _runs(plain)
    assert any(f.code == "PO105" and f.path == "partials/code.j2" for f in unsilenced)
    one, warm, merged, finished = _runs(files)
    assert merged is not None and finished == one
    assert not any(f.code == "PO105" and f.path == "partials/code.j2" for f in finished)
    assert warm.silenced() == {"partials/code.j2": {1: {"PO105"}}}
