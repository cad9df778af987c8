"""The one explicit table of rules.

A rule is a module under ``promptops.lint.rules``: its docstring is its documentation
(what, why, a failing and a passing example) and it defines ``CODE``, ``NAME``,
``LEVEL`` (``error``, ``warning`` or ``info``), ``NEEDS`` (what the engine must provide:
``raw`` files, ``load`` problems, a ``package``, the ``whole`` package or a ``base`` bundle)
and ``check``; a rule that can repair what it finds also defines ``fix(text) -> text``, and
one whose findings are the same advice on many files defines ``GROUP``, the sentence the text
format prints once instead of each of them (``{n}``: how many).

A rule also says how far what it finds in a file reaches (``SCOPE``, as pylint's
cross-file checkers declare themselves and sqlfluff's rules declare what they crawl), so
that incremental lint asks the rule instead of keeping a list of codes:

- ``"prompt"`` (the default): a finding on a file depends only on the prompts that read
  that file (and the files they read), so re-linting those prompts re-derives it;
- ``"package"``: a finding on one file can depend on other prompts, through the package's
  structure only: the prompt names (two names meet when they fold equal,
  promptops.pipeline.names), which files the prompts read, and the include graph. Incremental
  lint keeps such findings while a change leaves that structure as it was, and takes a full
  run when it cannot tell (promptops.lint.incremental says when);
- ``CYCLE = True`` besides: a finding of the rule means an include cycle, along which other
  package-scope results depend on the order prompts are visited, so incremental lint of an
  addition or a removal runs in full while one exists;
- ``FIRST = True`` besides, for a ``"prompt"`` rule: it judges a template many prompts render
  once, by the first of them in the package's order (by name), with what that prompt
  declares. Without it a prompt-scope rule's findings on a file are the union of what each
  prompt reading it finds there (what incremental lint settles a shared file by when one of
  its readers leaves: promptops.lint.shared).

Adding a rule means adding its module to the one import below; the table is what this
module imports from ``promptops.lint.rules``, in that order (explicit imports, as yamllint's
rules/__init__.py: the import graph, IDEs and dead-code tools see every rule, and it is
listed once). A rule never imports this module nor anything that does (it reads ``context``,
``settings``, ``problem``), so the registry, the rules and their context form no circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Literal, get_args

from promptops.errors import UsageError
from promptops.lint.rules import (  # one line per rule: the table is visible to every tool
    po101_invalid_yaml,
    po102_schema_violation,
    po103_jinja_syntax,
    po104_unknown_jinja_name,
    po105_literal_delimiters,
    po106_duplicate_prompt_name,
    po107_name_mismatch,
    po108_key_order,
    po201_undeclared_variable,
    po202_unused_argument,
    po203_required_with_default,
    po204_default_not_in_enum,
    po205_default_not_matching_pattern,
    po206_shadows_jinja_global,
    po207_unguarded_optional,
    po208_costly_pattern,
    po301_missing_include,
    po302_circular_include,
    po303_include_depth,
    po304_include_outside_package,
    po305_unused_partial,
    po306_resource_missing,
    po401_missing_description,
    po402_system_in_user_message,
    po403_enum_too_large,
    po404_media_type_mismatch,
    po405_empty_resource,
    po406_empty_message,
    po501_secret,
    po502_invisible_unicode,
    po503_html_comment,
    po504_trailing_whitespace,
    po505_crlf,
    po506_tab,
    po507_final_newline,
    po508_template_too_long,
    po509_undelimited_argument,
    po510_unsafe_template_access,
    po511_resource_exhaustion,
    po601_version_not_bumped,
    po602_insufficient_bump,
)

if TYPE_CHECKING:
    from promptops.lint.context import LintContext
    from promptops.lint.problem import Hit

Scope = Literal["prompt", "package"]  # SCOPE: how far a finding in one file reaches
SCOPES: tuple[Scope, ...] = get_args(Scope)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    level: str
    needs: str
    fixable: bool
    doc: str
    check: Callable[[LintContext], Iterable[Hit]]
    fix: Callable[[str], str] | None = None  # the rule's own repair of a file's text
    group: str | None = None  # GROUP: the text format's summary of many findings ("{n} ...")
    scope: Scope = "prompt"  # SCOPE (see the module docstring)
    cycle: bool = False  # CYCLE: a finding means an include cycle (see the module docstring)
    first: bool = False  # FIRST: a shared template judged by its first prompt (the docstring)

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0]


def rule_of(module: ModuleType) -> Rule:
    """The record of a rule module (a module-like object will do: a test defines one)."""
    scope = getattr(module, "SCOPE", "prompt")
    if scope not in SCOPES:
        raise ValueError(f"{module.__name__}: SCOPE {scope!r} is not one of {SCOPES}")
    return Rule(
        code=module.CODE,
        name=module.NAME,
        level=module.LEVEL,
        needs=module.NEEDS,
        fixable=hasattr(module, "fix"),
        doc=module.__doc__ or "",
        check=module.check,
        fix=getattr(module, "fix", None),
        group=getattr(module, "GROUP", None),
        scope=scope,
        cycle=getattr(module, "CYCLE", False) is True,
        first=getattr(module, "FIRST", False) is True,
    )


# The table: every rule module imported above, in the order of the import.
RULES: tuple[Rule, ...] = tuple(
    rule_of(m) for m in list(globals().values())
    if isinstance(m, ModuleType) and m.__name__.startswith(f"{__package__}.rules.po"))
BY_CODE = {r.code: r for r in RULES}
BY_NAME = {r.name: r for r in RULES}


def lookup(key: str) -> Rule | None:
    return BY_CODE.get(key.upper()) or BY_NAME.get(key.lower())


def resolve(keys: Iterable[str], where: str) -> set[str]:
    """Codes for the codes, names or code prefixes (``PO2``) given; unknown ones exit 2."""
    out: set[str] = set()
    for raw in keys:
        key = raw.strip()
        if not key:
            continue
        rule = lookup(key)
        if rule is not None:
            out.add(rule.code)
            continue
        group = [r.code for r in RULES if key.upper().startswith("PO") and r.code.startswith(
            key.upper())]
        if not group:
            raise UsageError(
                f"unknown lint rule {key!r} in {where}; `promptops rules` lists them"
            )
        out.update(group)
    return out
