"""Findings on files other prompts read too, after some of their readers changed or left.

A commit that removes a prompt, or edits one so that the files it reads change (an include
dropped), leaves the files that prompt shared with others (every genpkg prompt includes one
preamble) to be judged again. Re-linting every prompt that reads them is a full run at
100,000 prompts (58 s in serve's gate, docs/benchmarks.md "lint gate for removals, session
10"); this answers from a handful of them.

Why it is exact. A ``SCOPE = "prompt"`` rule (promptops.lint.registry) finds on a file what
the prompts reading it find there, each on its own: its findings on file ``F`` are the union,
over the prompts that read ``F``, of what each prompt contributes (a per-prompt judgement, as
PO201's undeclared variable, or one that depends on ``F``'s text alone, as trailing
whitespace, which every reader "contributes" alike). That holds while ``F`` stays what it
was to the package: a template (judged through the lexer) or a plain file (judged line by
line, and a partial nobody includes is PO305's), which one reader's includes decide. So,
with ``old`` the readers that changed or left, ``new`` what the changed ones contribute now,
and ``others`` the unchanged readers:

- after = new | (the union over ``others``), and that union is within the findings before;
- an unchanged reader (a *witness*) linted with what it reads gives a part of that union, so
  a finding before is kept when ``new`` or a witness gives it; when every reader of ``F`` is
  a witness, one no witness gives is gone; otherwise only a full run can tell;
- ``F`` was and stays a template when a witness includes it; a changed reader's findings on
  ``F`` count only when it includes ``F`` too (a resource read alone is judged as a plain
  file, which ``F`` is not). Anything else, and any package-scope finding on ``F`` before or
  after (the package's structure around ``F`` is not recorded), is a full run.

A ``FIRST`` rule (PO105) judges a shared template once, by its first reader in the
package's order (by name): its findings on ``F`` are kept while that reader is the same
unchanged prompt, and are otherwise the new first reader's (a changed prompt's from ``new``,
an unchanged one's as a witness; names that tie at the first place are a full run).

One witness per shared file is linted (the first reader by name, which the ``FIRST`` rules
need; one prompt covers the preamble), then, only for a file whose findings no witness or
changed prompt gave, every reader of it, up to :data:`WITNESSES` prompts. A witness reads
no prompt file (else that prompt would be linted with it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from promptops.pipeline.source import MANIFEST

if TYPE_CHECKING:
    from promptops.lint.cache import Record
    from promptops.lint.engine import Result
    from promptops.lint.incremental import Scopes
    from promptops.lint.problem import Finding
    from promptops.lint.readers import Readers

#: At most this many unchanged prompts are linted to settle the shared files (past it a full
#: run is as good: each witness costs what one prompt of a full run does, plus its reach).
WITNESSES = 64

Lint = Callable[[set[str]], "Result"]  # a run on these files alone (incremental.Subset)
Found = dict[str, set["Finding"]]  # path -> findings on it


def settle(lint: Lint, last: Record, readers: Readers, scopes: Scopes, shared: set[str],
           leaving: set[str],
           new: tuple[Result, Mapping[str, list[str]]] | None) -> set[Finding] | None:
    """The findings on ``shared`` (files read by prompts not in ``leaving``) once the prompts
    in ``leaving`` changed or left; ``new`` is the changed ones linted together and what they
    read now; ``readers``: who reads what in ``last``. None when only a full run can tell
    (see the module docstring)."""
    deps = last["deps"]
    # each shared file's first unchanged reader (the preamble of 100,000 prompts is read by
    # all of them: a walk of the record was 40-120 ms of a commit at 100,000)
    best = {f: got for f in shared if (got := readers.first(f, leaving)) is not None}
    firsts = _firsts(best, deps, last["names"], shared, leaving,
                     new[1] if new is not None else {})
    if firsts is None:
        return None
    before = _on(last["findings"], shared, scopes)
    mine = _contributed(new, shared, leaving, scopes)
    if before is None or mine is None:
        return None
    chosen = {new_first for _, new_first in firsts.values() if new_first not in leaving}
    covered = {f for p in chosen for f in deps[p]}
    for f in sorted(shared - covered):  # its first reader now is a changed prompt
        chosen.add(best[f][1])
        covered.update(deps[best[f][1]])
    found = _witnessed(lint, deps, chosen, shared, before, scopes)
    if found is None:
        return None
    open_ = {f for f in shared if _union(before[f], scopes) - mine[f] - found[f]}
    if open_:  # findings no witness gave: every reader of those files decides
        chosen |= {p for f in open_ for p in readers.readers(f) if p not in leaving}
        if len(chosen) > WITNESSES:
            return None
        found = _witnessed(lint, deps, chosen, shared, before, scopes)
        if found is None:
            return None
    return _assemble(shared, leaving, firsts, before, mine, found, scopes)


def _firsts(best: dict[str, tuple[str, str, bool]], deps: Mapping[str, list[str]],
            names: Mapping[str, str], shared: set[str], leaving: set[str],
            now: Mapping[str, list[str]]) -> dict[str, tuple[str, str]] | None:
    """Each shared file's first reader before and after; None on a tie, or a file no
    unchanged prompt reads (not shared after all: the caller's to judge)."""
    firsts: dict[str, tuple[str, str]] = {}
    for f in shared:
        if f not in best:
            return None
        old_first = _first(best[f], [p for p in leaving if f in deps.get(p, ())], names)
        new_first = _first(best[f], [p for p in leaving if f in now.get(p, ())], names)
        if old_first is None or new_first is None:
            return None
        firsts[f] = old_first, new_first
    return firsts


def _assemble(shared: set[str], leaving: set[str], firsts: dict[str, tuple[str, str]],
              before: Found, mine: Found, found: Found, scopes: Scopes) -> set[Finding]:
    """The findings on the shared files: the union rules' from the changed prompts and the
    witnesses, a FIRST rule's from the same first reader as before or from the new one."""
    out: set[Finding] = set()
    for f in shared:
        old_first, new_first = firsts[f]
        union = _union(found[f] | mine[f], scopes)
        out |= union
        if old_first == new_first and new_first not in leaving:
            out |= before[f] - _union(before[f], scopes)  # judged by the same prompt: kept
        else:
            out |= (mine[f] if new_first in leaving else found[f]) - union
    return out


def _first(best: tuple[str, str, bool], changed: list[str],
           names: Mapping[str, str]) -> str | None:
    """The first reader in the package's order (by name) of the unchanged one ``best`` and
    the ``changed`` ones; None on a tie there (the order among equal names is the files',
    which the record does not keep)."""
    name, first, tie = best
    for p in changed:
        if names[p] < name:
            name, first, tie = names[p], p, False
        elif names[p] == name:
            tie = True
    return None if tie else first


def _union(findings: set[Finding], scopes: Scopes) -> set[Finding]:
    """The findings of the rules whose findings on a file are a union over its readers."""
    return {x for x in findings if x.code not in scopes.first}


def _on(findings: list[Finding], paths: set[str], scopes: Scopes) -> Found | None:
    """The findings on each of ``paths``; None when one is of a package-scope rule."""
    out: Found = {f: set() for f in paths}
    for x in findings:
        if x.path in out:
            if not scopes.local(x):
                return None
            out[x.path].add(x)
    return out


def _contributed(new: tuple[Result, Mapping[str, list[str]]] | None, shared: set[str],
                 leaving: set[str], scopes: Scopes) -> Found | None:
    """What the changed prompts find now on the shared files they read (including them)."""
    if new is None:
        return {f: set() for f in shared}
    result, now = new
    if result.package is None:
        return None
    reading = {f for p in leaving for f in now.get(p, ()) if f in shared}
    if any(f not in result.package.templates or f in result.package.resources
           for f in reading):
        return None  # read as a plain file here: judged apart, or not by a FIRST rule
    found = _on(result.findings, reading, scopes)
    if found is None:
        return None
    return {f: found.get(f, set()) for f in shared}


def _witnessed(lint: Lint, deps: Mapping[str, list[str]], chosen: set[str], shared: set[str],
               before: Found, scopes: Scopes) -> Found | None:
    """What the witnesses find on the shared files, when each is a template to them and
    what they find is within what was found before (an unchanged reader cannot add)."""
    reach = {f for p in chosen for f in deps[p]}
    if any(f in deps for f in reach):
        return None  # a witness reads a prompt file: that prompt would be linted too
    result = lint({MANIFEST} | chosen | reach)
    if result.package is None or any(f not in result.package.templates
                                     or f in result.package.resources for f in shared):
        return None
    found = _on(result.findings, shared, scopes)
    if found is None or any(not _union(found[f], scopes) <= before[f] for f in shared):
        return None
    return found
