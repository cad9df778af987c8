"""Cold lint on both cores: a forked child lints half the prompt files, for its answers.

Where no prompt text repeats (a real corpus of 10,000 different prompts), a cold lint is
per-file work on one core: each prompt file's YAML and model, a Jinja parse per template,
and the rules' scans of each text (issue 26 item 1, session 11). The build validates on
both cores (:mod:`promptops.pipeline.prefetch`), but its child hands back only what
validation memoises, and lint also needs each template's AST and each rule's answers, so
lint stayed on one core and took 2.5x the build's wall time.

The work that costs is computed once per distinct text and depends on that text alone:
the validator's memo (a prompt file's YAML and model by content, a template's references)
and the context's :class:`~promptops.lint.context.Tables` (each rule's ``ctx.memo``
answers, each template's facts, the positions placed). So :func:`warm` lints two parts
of the package at once, each a :class:`~promptops.lint.incremental.Subset` of the
manifest, every file that is not a prompt file and a share of the prompt files
(:func:`split`): the child's in a forked child, which pickles those answers down a pipe,
the rest here, into the caller's memo and index. The child's ASTs stay there: every rule
that reads an AST keeps its answer in the tables (session 12), so the whole run parses
none of the child's texts (one it did ask for would be parsed again, never answered
wrongly), and unpickling them was most of what taking the child's share cost. Only
:data:`TEXT_RULES` run in the parts, and their findings are thrown away: the caller
then lints the whole package exactly as in one process, every rule, handed what both
parts computed, so every finding is the one-process run's (a table answers a
text only with what computing it would give). A child that fails hands over nothing, and
the whole run computes what is missing.

It forks only where :func:`promptops.pipeline.prefetch.forkable` lets the build fork (a
Linux fork, two cores, no other thread), with at least
:data:`~promptops.pipeline.prefetch.MIN_FILES` prompt files to lint that the memo does
not hold, most of them new texts (where copies of a few prompts repeat their texts, the
halves would compute the same answers twice: :func:`new_share`), a memo that holds all of
them at once (:meth:`~promptops.pipeline.memo.FileMemo.holds`), no base revision (6xx
rules build one), and every file's bytes in this process (a commit's are read ahead in
one git call first).
"""

from __future__ import annotations

import io
import pickle

from promptops.lint.context import Tables
from promptops.lint.engine import lint_source
from promptops.lint.incremental import Subset
from promptops.lint.registry import RULES
from promptops.lint.settings import LintSettings
from promptops.pipeline import prefetch
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import CachingSource, Source
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import is_prompt_file, prompt_key, validate

# Of every 9 prompt files, the child lints 4: it also pickles what it computed, while this
# process lints its 5 (measured on the tuning part: the child's pickling is about a tenth
# of its half), so both are done at about the same time.
SHARE = (4, 9)
# The rules the halves run: those whose cost is mostly their answers by text (each text's
# scan, its template's facts, the positions of what they find), measured per rule on the
# tuning part of the speed corpus, every copy distinct (docs/benchmarks.md, "lint on both
# cores, session 11"): 2.6 of the rules' 3.5 s of CPU in one process, about 0.4 s left to
# the whole run handed their tables. The other rules cost as much with the tables as without
# (they walk the package's structure), so a half running them would only repeat that walk.
# PO207, PO510 and PO511 joined in session 12: they keep their answers from each template's
# AST by text, so with them here the child's ASTs need not be sent (nothing asks for them).
# Which rules run here decides only speed, never a finding: the whole run runs them all.
TEXT_RULES = frozenset({"PO104", "PO105", "PO207", "PO501", "PO502", "PO503", "PO504",
                        "PO508", "PO509", "PO510", "PO511"})
SAMPLE = 400  # prompt files sampled to judge whether their texts repeat (:func:`new_share`)


def warm(source: CachingSource, settings: LintSettings, index: TemplateIndex) -> Tables | None:
    """Both halves linted (see the module docstring) into ``index`` and its memo, and the
    tables they filled; None (nothing done) where a fork does not pay or is not safe."""
    files = source.files()
    prompts = [p for p in files if is_prompt_file(p)]
    todo = [p for p in prompts
            if (k := prompt_key(source, p)) is None or index.memo.prompt(k) is None]
    if (len(todo) < prefetch.MIN_FILES or new_share(source, todo) < 0.5
            or not index.memo.holds(3 * len(todo))
            or not index.keep_asts or settings.base is not None or not prefetch.forkable()):
        return None
    # a commit's files in one git call before the fork (validation would read them ahead
    # too): the child must not talk to this process's git processes
    source.read_ahead(files)
    if not all(source.held(p) for p in files):
        return None
    rest = {p for p in files if not is_prompt_file(p)}

    def child() -> memoryview:
        own = TemplateIndex(FileMemo(), keep_asts=True)
        return _send(own, _half(source, settings, rest | set(split(todo)[1]), own))

    tables, data = prefetch.forked(
        child, lambda: _half(source, settings, rest | set(split(todo)[0]), index))
    if data is not None:
        _take(data, index, tables)
    return tables


def new_share(source: Source, paths: list[str]) -> float:
    """The share of ``paths`` whose content is new, in an evenly spaced sample of
    :data:`SAMPLE` of them (by blob id, or by bytes where the id is known only once read:
    a folder's files, which lint reads anyway). Where most texts repeat (copies of a few
    prompts, as issue 26's replication makes) both halves would compute the same texts'
    answers: the fork bought no wall time there for 24-30% more CPU (docs/benchmarks.md,
    session 11), so it forks where most are new. Only whether to fork depends on it."""
    sample = paths[::max(1, len(paths) // SAMPLE)]
    seen = {_content(source, p) for p in sample}
    return len(seen) / len(sample) if sample else 0.0


def _content(source: Source, path: str) -> object:
    try:
        return source.blob_id(path) or source.read(path)
    except (OSError, ValueError):  # validation reports it; here it only counts once
        return path


def split(paths: list[str]) -> tuple[list[str], list[str]]:
    """(this process's share of ``paths``, the child's): :data:`SHARE`, interleaved."""
    theirs, every = SHARE
    return ([p for i, p in enumerate(paths) if i % every >= theirs],
            [p for i, p in enumerate(paths) if i % every < theirs])


def _half(source: Source, settings: LintSettings, keep: set[str],
          index: TemplateIndex) -> Tables:
    """The answers by text of a lint of ``keep`` alone by :data:`TEXT_RULES` (its
    findings are thrown away: they are not the package's)."""
    tables = Tables()
    part = Subset(source, keep)
    lint_source(part, settings, validated=validate(part, memo=index.memo, index=index),
                rules=[r for r in RULES if r.code in TEXT_RULES], tables=tables)
    return tables


def _send(index: TemplateIndex, tables: Tables) -> memoryview:
    """The memo's entries and the tables (plain data). Not the ASTs: every rule that reads
    a template's AST keeps its answer in the tables by text (facts, ``ctx.memo``), so the
    whole run asks for none of the child's (a text it does ask for is parsed again there);
    unpickling them was most of what the parent spent taking the child's share."""
    entries = index.memo.entries()
    for loaded, _ in entries[0].values():  # the tables hold the positions placed
        loaded.forget_positions()
    out = io.BytesIO()
    pickle.dump((entries, tables), out, protocol=pickle.HIGHEST_PROTOCOL)
    return out.getbuffer()


def _take(data: bytes, index: TemplateIndex, tables: Tables) -> None:
    """What :func:`_send` wrote, kept in ``index``'s memo and ``tables``."""
    entries, theirs = pickle.loads(data)
    index.memo.take(entries)
    tables.update(theirs)
