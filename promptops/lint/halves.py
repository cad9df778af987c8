"""Cold lint on both cores: a forked child lints part of the prompt files, this process the rest.

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
wrongly), and unpickling them was most of what taking the child's share cost.

Each part runs every prompt-scope rule but the FIRST ones (:data:`SPLIT`, session 13)
and :data:`TEXT_RULES`, and keeps its :data:`SPLIT` findings; the caller then validates
the whole package, handed what both parts computed, and runs only the other rules (the
package-scope ones, FIRST ones), merging the parts' findings as incremental lint merges
an edited prompt's (:meth:`Warm.merged`, :func:`finish`): the structural walk of 10,000
prompts by some 35 rules was a second on one core after the fork. Where the parts
cannot stand for the whole (a duplicate name across them: their validation differs from
the whole's), the whole run runs every rule, as it did before. Either way every finding is
the one-process run's (a table answers a text only with what computing it would give). A
child that fails hands over nothing, and the whole run runs every rule and computes what
is missing.

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
from collections.abc import Sequence
from dataclasses import dataclass

from promptops.errors import UsageError
from promptops.lint.context import Tables
from promptops.lint.engine import Result, Silenced, lint_source
from promptops.lint.incremental import Subset
from promptops.lint.problem import ORDER, Finding
from promptops.lint.registry import RULES, Rule
from promptops.lint.settings import LintSettings
from promptops.pipeline import prefetch
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import CachingSource, Source
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import Validated, is_prompt_file, prompt_key, validate
from promptops.problem import Problem

# How :func:`split` weighs a prompt file: its bytes and :data:`PER_PROMPT` more (what
# a prompt costs whatever its size: its model, the rules' loops over prompts), the
# child's weighing :data:`CHILD_WEIGHT` (it also pickles what it computed, and this
# process unpickles that only after its own half). Fitted on the tuning parts of speed
# and speed2, every copy distinct (docs/benchmarks.md, "lint's halves by cost, session
# 14"): a half's CPU over prompts grouped by size is 0.17-0.24 ms a prompt and 0.06 ms a
# KB (a prompt costs as much as 2.7-4.2 KB), the child's pickling 7-11% of its half. A
# share of the count (4 of every 9 prompt files, session 11) left speed2's 200 KB files
# where they fell: this process's half took 1.2x the child's whole life there.
PER_PROMPT = 3_500
CHILD_WEIGHT = 1.1
# The rules the halves run: those whose cost is mostly their answers by text (each text's
# scan, its template's facts, the positions of what they find), measured per rule on the
# tuning part of the speed corpus, every copy distinct (docs/benchmarks.md, "lint on both
# cores, session 11"): 2.6 of the rules' 3.5 s of CPU in one process, about 0.4 s left to
# the whole run handed their tables. The other rules cost as much with the tables as without
# (they walk the package's structure), so a half running them would only repeat that walk.
# PO207, PO510 and PO511 joined in session 12: they keep their answers from each template's
# AST by text, so with them here the child's ASTs need not be sent (nothing asks for them).
# Since session 13 the parts run :data:`SPLIT` too and keep those findings; of these only
# PO105 (FIRST) is not in it: the parts compute its answers, the whole run its findings.
# Which rules a part runs beyond :data:`SPLIT` decides only speed, never a finding.
TEXT_RULES = frozenset({"PO104", "PO105", "PO207", "PO501", "PO502", "PO503", "PO504",
                        "PO508", "PO509", "PO510", "PO511"})
SAMPLE = 400  # prompt files sampled to judge whether their texts repeat (:func:`new_share`)
# The rules whose findings the halves give the whole run (session 13): a prompt-scope rule's
# finding on a file depends only on the prompts that read it and what they read (the
# registry's contract, which incremental lint's merges rest on too), so a half that holds a
# prompt file and every file that is not a prompt file finds on it what the whole run
# finds, and on a shared file the whole run's findings are the union of its readers'
# halves'. Not FIRST rules (a shared template is judged by the package's first reader, in
# either half), not package-scope rules, not 6xx (no base revision here). The load rules
# report validation's problems: taken where both halves' problems are the whole's.
SPLIT = frozenset(r.code for r in RULES
                  if r.scope == "prompt" and not r.first and r.needs in ("raw", "load", "package"))
# The rules the whole run runs when the halves' findings merge (:meth:`Warm.rules`): the
# child sends only the tables they read (:meth:`Tables.for_rules`). The others' answers by
# text (a quarter of the CPU of the child's pickle and this process's unpickling on the
# fifth corpus) are asked for only when the merge is refused and every rule runs whole:
# then they are computed again.
WHOLE = frozenset(r.code for r in RULES if r.code not in SPLIT)


@dataclass(frozen=True)
class Part:
    """What a half found: its :data:`SPLIT` findings (suppressions applied, as per file in a
    whole run), what each of its prompts read, its own prompt files, whether its
    validation gave a package (the rules that need one ran), the problems it found and the
    suppressions of its files (both halves read every file that is not a prompt file)."""

    findings: list[Finding]
    deps: dict[str, list[str]]
    own: frozenset[str]
    loaded: bool
    problems: frozenset[Problem]
    silenced: Silenced  # the suppressions of every file the half read


@dataclass(frozen=True)
class Warm:
    """What both halves computed: the tables (answers by text) and, when the child's half
    arrived, both :class:`Part` s, whose :data:`SPLIT` findings the whole run takes instead
    of running those rules (:meth:`rules`, :meth:`merged`)."""

    tables: Tables
    parts: tuple[Part, ...] = ()

    def silenced(self) -> Silenced | None:
        """The package's suppressions, from both halves (each read the comments of every
        file it holds: its prompt files and every file that is not a prompt file, so
        together every file), or None when the child's half did not arrive. A half that
        met a code naming no rule raised (:func:`warm` returns None then), so nothing is
        left for the whole run to refuse; reading every file's text again for comments was
        a pass over the package's bytes after the halves (issue 26, session 16)."""
        if not self.parts:
            return None
        out: Silenced = {}
        for part in self.parts:
            for path, lines in part.silenced.items():
                into = out.setdefault(path, {})
                for line, codes in lines.items():
                    into.setdefault(line, set()).update(codes)
        return out

    def rules(self, rules: Sequence[Rule] = RULES) -> list[Rule]:
        """The rules the whole run runs: every one but :data:`SPLIT` when the halves have
        their findings."""
        return [r for r in rules if not self.parts or r.code not in SPLIT]

    def merged(self, whole: Result, validated: Validated) -> list[Finding] | None:
        """The whole run's findings (of :meth:`rules`) with the halves' :data:`SPLIT`
        findings, as one process would find them (its own where the child's half did not
        arrive: it ran every rule); None (run the :data:`SPLIT` rules in the whole run)
        unless both halves and the whole validated to a package, each prompt the whole
        loaded was loaded by its half, reading the same files, and the halves' problems
        are the whole's (a duplicate name across the halves is neither). From each half,
        the findings on its own prompt files, on the files its prompts read, and on files
        no prompt reads (both halves judge those alike, as unread)."""
        if not self.parts:  # the whole run ran every rule
            return whole.findings
        deps: dict[str, list[str]] = {}
        for part in self.parts:
            deps.update(part.deps)
        if (validated.package is None or not all(p.loaded for p in self.parts)
                or whole.deps != deps
                or set(validated.problems) != set().union(*(p.problems for p in self.parts))):
            return None
        read = {f for files in deps.values() for f in files}
        found = set(whole.findings)
        for part in self.parts:
            mine = part.own | {f for files in part.deps.values() for f in files}
            found.update(f for f in part.findings if f.path in mine or f.path not in read)
        return sorted(found, key=ORDER)


def warm(source: CachingSource, settings: LintSettings, index: TemplateIndex) -> Warm | None:
    """Both halves linted (see the module docstring) into ``index`` and its memo, with the
    tables they filled and what they found; None (nothing done) where a fork does not pay or
    is not safe."""
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
    mine, theirs = split(source, todo)
    # the prompt files the memo holds are this process's: every prompt file is in one half
    held = set(prompts) - set(todo)

    def child() -> memoryview:
        own = TemplateIndex(FileMemo(), keep_asts=True)
        tables, part = _half(source, settings, rest, set(theirs), own)
        return _send(source, own, tables.for_rules(WHOLE), part)

    try:
        (tables, part), data = prefetch.forked(
            child, lambda: _half(source, settings, rest, set(mine) | held, index))
    except UsageError:  # a disable comment naming no rule: the whole run names the package's
        return None  # first such file, as one process does (a half knows its share's first)
    if data is None:
        return Warm(tables)
    return Warm(tables, (part, _take(source, data, index, tables)))


def finish(source: Source, settings: LintSettings, validated: Validated,
           warm: Warm) -> tuple[Result, list[Finding]]:
    """The whole run after :func:`warm`, and its findings: the rules the halves did not
    judge for it, with their findings merged in; every rule where that merge would not be
    the one-process run's (:meth:`Warm.merged` says when)."""
    silenced = warm.silenced()
    result = lint_source(source, settings, validated=validated, tables=warm.tables,
                         rules=warm.rules(), silenced=silenced)
    merged = warm.merged(result, validated)
    if merged is not None:
        return result, merged
    result = lint_source(source, settings, validated=validated, tables=warm.tables,
                         silenced=silenced)
    return result, result.findings


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


def split(source: CachingSource, paths: list[str]) -> tuple[list[str], list[str]]:
    """(this process's share of ``paths``, the child's), each in order, balanced by what
    each prompt file costs (:data:`PER_PROMPT`, :data:`CHILD_WEIGHT`) through the build's
    split (:func:`promptops.pipeline.prefetch.halves`)."""
    return prefetch.halves(source, paths, weight=CHILD_WEIGHT, per_file=PER_PROMPT)


def _half(source: Source, settings: LintSettings, rest: set[str], own: set[str],
          index: TemplateIndex) -> tuple[Tables, Part]:
    """A lint of ``rest`` and the prompt files ``own`` alone by :data:`TEXT_RULES` and
    :data:`SPLIT`: the answers by text, and the :data:`SPLIT` findings (those of the
    others are thrown away: they are not the package's)."""
    tables = Tables()
    subset = Subset(source, rest | own)
    validated = validate(subset, memo=index.memo, index=index)
    result = lint_source(subset, settings, validated=validated,
                         rules=[r for r in RULES if r.code in TEXT_RULES | SPLIT],
                         tables=tables)
    return tables, Part([f for f in result.findings if f.code in SPLIT], result.deps or {},
                        frozenset(own), validated.package is not None,
                        frozenset(validated.problems), result.silenced or {})


def _send(source: Source, index: TemplateIndex, tables: Tables, part: Part) -> memoryview:
    """The memo's entries (without the bytes this process holds, as the build's child
    sends them), the tables (plain data: the child hands the ones the whole run reads,
    :data:`WHOLE`) and the child's :class:`Part`. Not the ASTs:
    every rule that reads a template's AST keeps its answer in the tables by text, so the
    whole run asks for none of the child's (a text it does ask for is parsed again there);
    unpickling them was most of what the parent spent taking the child's share. Nor each
    file's parsed YAML or its round-trip tree: only a half's rules read them (key order,
    the positions of findings), and either is parsed again on demand."""
    for loaded, _ in index.memo.entries()[0].values():
        loaded.forget_positions()  # the tables hold the positions placed
        loaded.shed()
    out = io.BytesIO()
    pickle.dump((prefetch.sendable(source, index.memo.entries()), tables, part), out,
                protocol=pickle.HIGHEST_PROTOCOL)
    return out.getbuffer()


def _take(source: Source, data: bytes, index: TemplateIndex, tables: Tables) -> Part:
    """What :func:`_send` wrote, kept in ``index``'s memo and ``tables``; the child's part."""
    sent, theirs, part = pickle.loads(data)
    index.memo.take(prefetch.received(source, sent))
    tables.update(theirs)
    return part  # type: ignore[no-any-return]
