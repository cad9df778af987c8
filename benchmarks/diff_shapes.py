"""`promptops diff` of one edited shared partial on packages of several shapes (issue 26).

``diff_bench.py`` measures one shape (``genpkg.py``'s); issue 26 found a differently shaped
5,000-prompt package 3-4x slower, so this generates N prompts (default 5,000) in each shape
below, commits them on ``main``, edits the partial every prompt reaches on a branch
``change`` (left checked out), and times, with lint's cache (``.git/promptops``) removed
before every run:

* ``promptops diff main --format markdown`` (main against the working tree), and
* ``promptops diff main change`` (two commits, text output).

Shapes:

* ``genpkg``: ``benchmarks/genpkg.py`` (a required and an optional enum argument; the
  edited ``partials/rules.j2`` is reached through ``partials/preamble.j2``);
* ``direct``: each prompt includes ``partials/shared.j2`` directly and has one required
  argument (the shape issue 26 reports); ``partials/shared.j2`` edited;
* ``chain``: each prompt includes ``partials/c0.j2``, which includes ``c1.j2`` ... down to
  ``c7.j2``; the deepest (``c7.j2``) edited;
* ``small`` (HELD OUT: measured, never profiled; do not tune on it): 200 small partials,
  each prompt includes four of them and ``partials/common.j2``, has two required arguments
  and a loop; ``partials/common.j2`` edited.
* ``wide`` (session 10, a tuning shape near ``small``, rule written before it was first
  run): 120 partials ``partials/w0.j2`` ... ``w119.j2`` (``Wide rule K: keep it {{ tone
  }}.``); each prompt includes ``partials/base.j2`` and three of them (``i % 120``,
  ``(11 i + 5) % 120``, ``(17 i + 9) % 120``), has three required arguments (``subject``,
  ``tone``, ``reader``), an ``if`` on ``reader`` and a loop over two items;
  ``partials/base.j2`` edited.
* ``macro`` (session 10, HELD OUT like ``small``: measured, never profiled; rule written
  before it was first run): 40 partials ``partials/m0.j2`` ... ``m39.j2``, each defining a
  macro ``line(x)`` that writes ``Rule K:`` and ``x | upper``; each prompt includes
  ``partials/head.j2`` (which writes ``{{ topic | title }}``), imports ``line`` from
  ``partials/m{i % 40}.j2`` and calls it on ``topic``, and writes ``{{ style | default(
  "plain") }}``; one required argument (``topic``) and one optional (``style``);
  ``partials/head.j2`` edited.
* ``multi`` (session 11, HELD OUT like ``small`` and ``macro``: measured, never profiled;
  rule written before it was first run): 80 partials ``partials/x0.j2`` ... ``x79.j2``
  (``Point K on {{ goal }}.``); each prompt has two messages: an ``assistant`` one that
  includes ``partials/policy.j2`` and ``partials/x{i % 80}.j2``, and a ``user`` one with an
  ``if``/``elif``/``else`` on ``level``, a loop over three items writing ``loop.index``,
  ``{{ extra | default("none") }}`` and an include of ``partials/x{(7 i + 3) % 80}.j2``;
  two required arguments (``goal``, ``level``) and one optional (``extra``);
  ``partials/policy.j2`` edited.

* ``dialog`` (session 17, a tuning shape stressing what ``multi`` does differently; rule
  written before it was first run): 60 partials ``partials/d0.j2`` ... ``d59.j2`` (``Step
  K: answer for {{ who | default("anyone") }}.``); each prompt has three messages: an
  ``assistant`` one including ``partials/style.j2``; a ``user`` one with a ``set``, a
  loop over four items writing ``loop.index`` and ``loop.last``, an ``if`` on ``mode in
  [...]``, ``{{ task | trim | title }}`` and an include of ``partials/d{i % 60}.j2``; an
  ``assistant`` one writing ``{{ task | replace("a", "A") }}`` and including
  ``partials/d{(5 i + 1) % 60}.j2``; arguments ``task``, ``mode`` (required), ``who``
  (optional); ``partials/style.j2`` edited.
* ``numbered`` (session 17, tuning): ``dialog`` with the prompt's own number in the
  ``set`` (``"case " ~ i``), as the first run of ``dialog`` had it: a number inside a tag
  is part of every shape key (only texts and template names are values), so no two
  prompts share a parse or a compile: the shape where nothing repeats.
* ``deep`` (session 17, tuning; rule written before it was first run): each prompt has
  two messages: a ``user`` one including ``partials/top.j2`` (which includes
  ``mid.j2``, which includes ``leaf.j2``) and ``partials/k{i % 30}.j2`` (30 partials,
  ``Keep {{ name }} in mind.``), then ten lines of text and arguments; an ``assistant``
  one importing ``card`` from ``partials/macros.j2`` (every prompt imports it) and
  calling it twice, with a loop over ``items.split(",")``; four arguments ``name``,
  ``goal``, ``items`` (required) and ``tone`` (optional); ``partials/leaf.j2`` edited.

* ``compared`` (session 18, HELD OUT like ``small``: measured, never profiled; rule
  written before it was first run): prompts that differ in the strings inside their tags,
  not in a number: 50 partials ``partials/q0.j2`` ... ``q49.j2`` (``Check K for {{ query
  }}.``); each prompt has two messages: a ``user`` one including ``partials/rules.j2``,
  an ``if`` comparing ``mode`` with ``"mode-{i}"`` and an ``elif`` comparing it with a
  word ``W`` (one of 20, by ``i % 20``), ``{{ query | replace("W", "[W]") }}``, ``{{ who
  | default("reader {i}") }}`` and an include of ``partials/q{i % 50}.j2``; an
  ``assistant`` one setting a dict ``{"id-{i}": query, "kind": mode}`` and writing ``{{
  tags["id-{i}"] | upper }}`` and ``{{ tags.kind }}``; arguments ``query``, ``mode``
  (required), ``who`` (optional); ``partials/rules.j2`` edited.
* ``counted`` (session 18, HELD OUT like ``compared``; rule written before it was first
  run): prompts that differ in the numbers inside their tags: 40 partials
  ``partials/n0.j2`` ... ``n39.j2`` (``Count K: {{ items }}.``); each prompt has one
  ``user`` message including ``partials/head.j2``, a loop over ``items.split(",")[:{i %
  9 + 1}]`` writing ``{{ loop.index + {i} }}``, ``{{ item | trim | truncate({i % 40 +
  10}) }}`` and an ``if loop.index > {i % 4 + 1}``, a loop over ``range({i % 6 + 1})``
  writing ``{{ n * {i % 11 + 2} }}``, ``{{ (limit | int) + {i} }}``, ``{{ start |
  default({i}) }}`` and an include of ``partials/n{i % 40}.j2``; arguments ``items``,
  ``limit`` (required), ``start`` (optional); ``partials/head.j2`` edited.

Shapes of real prompts (session 19): every shape above is generated text, and hand-written
prompts differ in structure, not only in literals, so a real package could miss where these
pass. Rule written and committed before any of them was first run:

* ``real`` (session 19, tuning: it may be profiled): the message texts are real prompt
  bodies. The tuning parts of the first five speed corpora (``tests/corpus/speed``,
  ``speed2`` ... ``speed5``) are each imported as ``benchmarks/corpus_pkg.py`` imports a
  part (``promptops import <corpus>/tuning``); their prompts are pooled (corpus order, then
  file order) and copied round-robin until there are N, named ``<name>-<corpus>-<k>`` for
  copy ``k`` (a ``template:`` file a prompt names copied with it, the template files the
  imports share copied once: a path two corpora write must hold the same bytes). Each
  prompt then gets one required argument ``shared_subject`` (first in its ``arguments``,
  which the prompt gets if it had none; its own arguments stay) and a first ``user``
  message ``{% include "partials/shared.j2" %} About {{ shared_subject }}.`` (issue 26's
  reported shape, one shared partial included directly and one required argument, on real
  bodies; placed as ``corpus_pkg.generate`` places its house rules); then every copy is
  made distinct as ``lint_ab.py --distinct`` makes it (``corpus_pkg._distinct``: a line
  ``Copy k of this prompt.`` first in every inline message, and first in every template
  file a prompt names), so no two prompts are the same text. ``partials/shared.j2``
  (``Follow the house rules: be accurate and brief.``) edited.
* ``realheld`` (session 19, HELD OUT: measured, never profiled): ``real``'s rule on the
  held-out parts of the same five corpora.
* ``realnew`` (session 19, HELD OUT: measured, never profiled): ``real``'s rule on the
  held-out part of ``tests/corpus/speed6`` alone (the newest corpus: long system prompts,
  Jinja with control flow, chat YAML, Prompty).

Prints wall and CPU seconds (this process's children: promptops and its render workers,
git) per shape and command, median of ``--runs``, with the load average before and after.

With ``--baseline CMD`` (e.g. ``"env PYTHONPATH=/tmp/old python -m promptops"``) each run of
this checkout's promptops is interleaved with one of CMD on the same package, so both see
the same load, and the two outputs are compared byte for byte (``same output`` column):
a speed-up must not change the review. ``--keep DIR`` generates the packages in DIR and
leaves them there (a later run with the same DIR reuses them), for profiling.

Usage: python benchmarks/diff_shapes.py [--prompts 5000]
       [--shapes genpkg,direct,chain,small,wide,macro,multi,dialog,deep,numbered,
                 compared,counted,real,realheld,realnew]
       [--runs 1] [--commands markdown,text]
       [--promptops CMD] [--baseline CMD] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench_common import GIT_ENV, genpkg, git, now, promptops_cmd

HELD_OUT = ("small", "macro", "multi", "compared", "counted", "realheld", "realnew")

TOPIC_ONLY = """\
description: Prompt {{i}} of the {shape} shape
arguments:
  - name: topic
    description: What to write about
    required: true
messages:
"""

DIRECT = TOPIC_ONLY.format(shape="direct") + """\
  - role: user
    text: |
      {{% include "partials/shared.j2" %}}
      Write about {{{{ topic }}}} for case {i}.
"""

CHAIN = TOPIC_ONLY.format(shape="chain") + """\
  - role: assistant
    text: |
      {{% include "partials/c0.j2" %}}
  - role: user
    text: |
      Case {i}: {{{{ topic }}}}
"""

SMALL = """\
description: Prompt {i} of the small-partials shape
arguments:
  - name: topic
    description: What to write about
    required: true
  - name: audience
    description: Who reads the answer
    required: true
messages:
  - role: user
    text: |
      {{% include "partials/common.j2" %}}
      {{% include "partials/s{a}.j2" %}}
      {{% include "partials/s{b}.j2" %}}
      {{% for part in ["intro", "body", "end"] %}}
      {{{{ part }}}} of {{{{ topic }}}} for {{{{ audience }}}} ({i})
      {{% endfor %}}
      {{% include "partials/s{c}.j2" %}}
      {{% include "partials/s{d}.j2" %}}
"""

WIDE = """\
description: Prompt {i} of the wide shape
arguments:
  - name: subject
    description: What to write about
    required: true
  - name: tone
    description: How it should sound
    required: true
  - name: reader
    description: Who reads it
    required: true
messages:
  - role: user
    text: |
      {{% include "partials/base.j2" %}}
      {{% include "partials/w{a}.j2" %}}
      {{% if reader %}}For {{{{ reader }}}}: {{% endif %}}write about {{{{ subject }}}} ({i}).
      {{% for step in ["plan", "write"] %}}
      {{{{ step }}}} it {{{{ tone }}}}.
      {{% endfor %}}
      {{% include "partials/w{b}.j2" %}}
      {{% include "partials/w{c}.j2" %}}
"""

MACRO = """\
description: Prompt {i} of the macro shape
arguments:
  - name: topic
    description: What to write about
    required: true
  - name: style
    description: How to write it
    required: false
messages:
  - role: user
    text: |
      {{% include "partials/head.j2" %}}
      {{% from "partials/m{a}.j2" import line %}}
      {{{{ line(topic) }}}}
      Write it {{{{ style | default("plain") }}}} ({i}).
"""

MULTI = """\
description: Prompt {i} of the multi shape
arguments:
  - name: goal
    description: What to reach
    required: true
  - name: level
    description: How deep to go
    required: true
  - name: extra
    description: Anything else
    required: false
messages:
  - role: assistant
    text: |
      {{% include "partials/policy.j2" %}}
      {{% include "partials/x{a}.j2" %}}
  - role: user
    text: |
      {{% if level == "high" %}}
      Go deep on {{{{ goal }}}} ({i}).
      {{% elif level == "low" %}}
      Skim {{{{ goal }}}} ({i}).
      {{% else %}}
      Cover {{{{ goal }}}} ({i}).
      {{% endif %}}
      {{% for step in ["find", "check", "tell"] %}}
      {{{{ loop.index }}}}. {{{{ step }}}} {{{{ goal }}}}
      {{% endfor %}}
      Also: {{{{ extra | default("none") }}}}.
      {{% include "partials/x{b}.j2" %}}
"""


DIALOG = """\
description: Prompt {i} of the dialog shape
arguments:
  - name: task
    description: What to do
    required: true
  - name: mode
    description: How to do it
    required: true
  - name: who
    description: Who asks
    required: false
messages:
  - role: assistant
    text: |
      {{% include "partials/style.j2" %}}
  - role: user
    text: |
      {{% set label = "case " ~ {num} %}}
      Task for {{{{ label }}}}: {{{{ task | trim | title }}}}
      {{% for part in ["read", "plan", "do", "check"] %}}
      {{{{ loop.index }}}}. {{{{ part }}}}{{% if loop.last %}} (last){{% endif %}}
      {{% endfor %}}
      {{% if mode in ["fast", "quick"] %}}Be quick.{{% else %}}Be thorough.{{% endif %}}
      {{% include "partials/d{a}.j2" %}}
  - role: assistant
    text: |
      Noted: {{{{ task | replace("a", "A") }}}} ({i}).
      {{% include "partials/d{b}.j2" %}}
"""

DEEP = """\
description: Prompt {i} of the deep shape
arguments:
  - name: name
    description: Who it is for
    required: true
  - name: goal
    description: What to reach
    required: true
  - name: items
    description: Comma-separated things to cover
    required: true
  - name: tone
    description: How it sounds
    required: false
messages:
  - role: user
    text: |
      {{% include "partials/top.j2" %}}
      {{% include "partials/k{a}.j2" %}}
      This is request {i} from {{{{ name }}}}.
      The goal is {{{{ goal }}}}, and it should be reached step by step.
      Write plainly; avoid jargon unless {{{{ name }}}} uses it first.
      Say what you assume before you rely on it.
      Prefer short sentences and concrete examples.
      When unsure, ask one question rather than guessing.
      Keep the answer under a page.
      Number the steps.
      End with what to do next.
      Tone: {{{{ tone | default("neutral") }}}}.
  - role: assistant
    text: |
      {{% from "partials/macros.j2" import card %}}
      {{{{ card(name, goal) }}}}
      {{% for item in items.split(",") %}}
      - {{{{ item | trim }}}} ({i})
      {{% endfor %}}
      {{{{ card(goal, name) }}}}
"""


COMPARED = """\
description: Prompt {i} of the compared shape
arguments:
  - name: query
    description: What is asked
    required: true
  - name: mode
    description: Which path to take
    required: true
  - name: who
    description: Who asks
    required: false
messages:
  - role: user
    text: |
      {{% include "partials/rules.j2" %}}
      {{% if mode == "mode-{i}" %}}Use the special path for {i}.\
{{% elif mode == "{w}" %}}Use the {w} path.{{% else %}}Use the usual path.{{% endif %}}
      Question: {{{{ query | replace("{w}", "[{w}]") }}}}
      From: {{{{ who | default("reader {i}") }}}}
      {{% include "partials/q{a}.j2" %}}
  - role: assistant
    text: |
      {{% set tags = {{"id-{i}": query, "kind": mode}} %}}
      {{{{ tags["id-{i}"] | upper }}}} / {{{{ tags.kind }}}}
"""

WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
         "sierra", "tango")

COUNTED = """\
description: Prompt {i} of the counted shape
arguments:
  - name: items
    description: Comma-separated things to count
    required: true
  - name: limit
    description: How many at most
    required: true
  - name: start
    description: Where to start
    required: false
messages:
  - role: user
    text: |
      {{% include "partials/head.j2" %}}
      {{% for item in items.split(",")[:{cut}] %}}
      {{{{ loop.index + {i} }}}}. {{{{ item | trim | truncate({width}) }}}}\
{{% if loop.index > {more} %}} (more){{% endif %}}
      {{% endfor %}}
      {{% for n in range({reps}) %}}{{{{ n * {factor} }}}} {{% endfor %}}
      Limit: {{{{ (limit | int) + {i} }}}}, from {{{{ start | default({i}) }}}}.
      {{% include "partials/n{a}.j2" %}}
"""


def _write_prompts(out: Path, n: int, template: str, **extra: Callable[[int], int]) -> None:
    (out / "prompts").mkdir(parents=True, exist_ok=True)
    (out / "partials").mkdir(exist_ok=True)
    (out / "promptops.yaml").write_text(f"name: shape-{out.name}\nversion: 1.0.0\n")
    for i in range(n):
        fields = {k: f(i) for k, f in extra.items()}
        (out / "prompts" / f"p_{i:05d}.prompt.yaml").write_text(template.format(i=i, **fields))


def gen_genpkg(n: int, out: Path) -> Path:
    genpkg.generate(n, out)
    return out / "partials" / "rules.j2"


def gen_direct(n: int, out: Path) -> Path:
    _write_prompts(out, n, DIRECT)
    (out / "partials" / "shared.j2").write_text("You are a careful assistant.\n")
    return out / "partials" / "shared.j2"


def gen_chain(n: int, out: Path, depth: int = 8) -> Path:
    _write_prompts(out, n, CHAIN)
    for k in range(depth):
        nxt = f'{{% include "partials/c{k + 1}.j2" %}}\n' if k + 1 < depth else ""
        (out / "partials" / f"c{k}.j2").write_text(f"Rule {k}: be precise.\n{nxt}")
    return out / "partials" / f"c{depth - 1}.j2"


def gen_small(n: int, out: Path, partials: int = 200) -> Path:
    _write_prompts(out, n, SMALL, a=lambda i: i % partials, b=lambda i: (i * 7 + 1) % partials,
                   c=lambda i: (i * 13 + 2) % partials, d=lambda i: (i * 31 + 3) % partials)
    for k in range(partials):
        (out / "partials" / f"s{k}.j2").write_text(f"Small rule {k} for {{{{ topic }}}}.\n")
    (out / "partials" / "common.j2").write_text("Answer in plain words.\n")
    return out / "partials" / "common.j2"


def gen_wide(n: int, out: Path, partials: int = 120) -> Path:
    _write_prompts(out, n, WIDE, a=lambda i: i % partials, b=lambda i: (i * 11 + 5) % partials,
                   c=lambda i: (i * 17 + 9) % partials)
    for k in range(partials):
        (out / "partials" / f"w{k}.j2").write_text(f"Wide rule {k}: keep it {{{{ tone }}}}.\n")
    (out / "partials" / "base.j2").write_text("Be brief and exact.\n")
    return out / "partials" / "base.j2"


def gen_macro(n: int, out: Path, partials: int = 40) -> Path:
    _write_prompts(out, n, MACRO, a=lambda i: i % partials)
    for k in range(partials):
        (out / "partials" / f"m{k}.j2").write_text(
            f"{{% macro line(x) %}}Rule {k}: {{{{ x | upper }}}}{{% endmacro %}}\n")
    (out / "partials" / "head.j2").write_text("On {{ topic | title }}:\n")
    return out / "partials" / "head.j2"


def gen_multi(n: int, out: Path, partials: int = 80) -> Path:
    _write_prompts(out, n, MULTI, a=lambda i: i % partials, b=lambda i: (7 * i + 3) % partials)
    for k in range(partials):
        (out / "partials" / f"x{k}.j2").write_text(f"Point {k} on {{{{ goal }}}}.\n")
    (out / "partials" / "policy.j2").write_text("Stay on topic.\n")
    return out / "partials" / "policy.j2"


def gen_dialog(n: int, out: Path, partials: int = 60, *, numbered: bool = False) -> Path:
    _write_prompts(out, n, DIALOG, a=lambda i: i % partials, b=lambda i: (5 * i + 1) % partials,
                   num=(lambda i: i) if numbered else (lambda i: 7))
    for k in range(partials):
        (out / "partials" / f"d{k}.j2").write_text(
            f'Step {k}: answer for {{{{ who | default("anyone") }}}}.\n')
    (out / "partials" / "style.j2").write_text("Answer as a patient teacher.\n")
    return out / "partials" / "style.j2"


def gen_numbered(n: int, out: Path) -> Path:
    return gen_dialog(n, out, numbered=True)


def gen_deep(n: int, out: Path, partials: int = 30) -> Path:
    _write_prompts(out, n, DEEP, a=lambda i: i % partials)
    for k in range(partials):
        (out / "partials" / f"k{k}.j2").write_text(f"Keep {{{{ name }}}} in mind ({k}).\n")
    (out / "partials" / "top.j2").write_text('Top rules.\n{% include "partials/mid.j2" %}\n')
    (out / "partials" / "mid.j2").write_text('Middle rules.\n{% include "partials/leaf.j2" %}\n')
    (out / "partials" / "leaf.j2").write_text("Leaf rule: be exact.\n")
    (out / "partials" / "macros.j2").write_text(
        "{% macro card(a, b) %}[{{ a | upper }} -> {{ b }}]{% endmacro %}\n")
    return out / "partials" / "leaf.j2"


def gen_compared(n: int, out: Path, partials: int = 50) -> Path:
    (out / "prompts").mkdir(parents=True, exist_ok=True)
    (out / "partials").mkdir(exist_ok=True)
    (out / "promptops.yaml").write_text(f"name: shape-{out.name}\nversion: 1.0.0\n")
    for i in range(n):
        (out / "prompts" / f"p_{i:05d}.prompt.yaml").write_text(
            COMPARED.format(i=i, w=WORDS[i % len(WORDS)], a=i % partials))
    for k in range(partials):
        (out / "partials" / f"q{k}.j2").write_text(f"Check {k} for {{{{ query }}}}.\n")
    (out / "partials" / "rules.j2").write_text("Answer only what is asked.\n")
    return out / "partials" / "rules.j2"


def gen_counted(n: int, out: Path, partials: int = 40) -> Path:
    _write_prompts(out, n, COUNTED, cut=lambda i: i % 9 + 1, width=lambda i: i % 40 + 10,
                   more=lambda i: i % 4 + 1, reps=lambda i: i % 6 + 1,
                   factor=lambda i: i % 11 + 2, a=lambda i: i % partials)
    for k in range(partials):
        (out / "partials" / f"n{k}.j2").write_text(f"Count {k}: {{{{ items }}}}.\n")
    (out / "partials" / "head.j2").write_text("Count carefully.\n")
    return out / "partials" / "head.j2"


CORPORA = Path(__file__).resolve().parent.parent / "tests" / "corpus"
FIVE = ("speed", "speed2", "speed3", "speed4", "speed5")


def gen_real(n: int, out: Path, part: str = "tuning", corpora: tuple[str, ...] = FIVE) -> Path:
    from corpus_pkg import generate_shared

    return generate_shared([CORPORA / c for c in corpora], part, n, out)


def gen_realheld(n: int, out: Path) -> Path:
    return gen_real(n, out, "heldout")


def gen_realnew(n: int, out: Path) -> Path:
    return gen_real(n, out, "heldout", ("speed6",))


SHAPES: dict[str, Callable[[int, Path], Path]] = {
    "genpkg": gen_genpkg, "direct": gen_direct, "chain": gen_chain, "small": gen_small,
    "wide": gen_wide, "macro": gen_macro, "multi": gen_multi, "dialog": gen_dialog,
    "deep": gen_deep, "numbered": gen_numbered, "compared": gen_compared,
    "counted": gen_counted, "real": gen_real, "realheld": gen_realheld,
    "realnew": gen_realnew}


def make(shape: str, n: int, root: Path) -> Path:
    """The package on main, and branch ``change`` (checked out) editing the shared partial."""
    out = root / shape
    edited = SHAPES[shape](n, out)
    git(out, "init", "-q", "-b", "main")
    git(out, "add", "-A")
    git(out, "commit", "-qm", "bench")
    git(out, "checkout", "-q", "-b", "change")
    edited.write_text(edited.read_text() + "Cite your sources.\n")
    git(out, "commit", "-qam", "edit the shared partial")
    return out


def run(pkg: Path, args: list[str], cmd: list[str] | None = None) -> tuple[float, float, str]:
    shutil.rmtree(pkg / ".git" / "promptops", ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = now()
    proc = subprocess.run([*(cmd or promptops_cmd()), "diff", *args], cwd=pkg,
                          capture_output=True,
                          text=True, env={**GIT_ENV, "NO_COLOR": "1"})
    wall = now() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1: --fail-on semantics are not asked, but be lenient
        raise SystemExit(f"diff {' '.join(args)} in {pkg.name}: exit {proc.returncode}\n"
                         + proc.stderr[-2000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=int, default=5000)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--promptops", default=None,
                    help="the promptops command to measure (default: this interpreter's)")
    ap.add_argument("--baseline", default=None,
                    help="a promptops command to compare with, interleaved, output compared")
    ap.add_argument("--commands", default="markdown,text",
                    help="which of the two commands to run (markdown: `diff main --format "
                         "markdown`, text: `diff main change`)")
    ap.add_argument("--keep", type=Path, default=None,
                    help="generate the packages in this folder and keep them (reused)")
    a = ap.parse_args(argv)
    shapes = [s.strip() for s in a.shapes.split(",") if s.strip()]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        ap.error(f"unknown shape(s) {', '.join(unknown)}; known: {', '.join(SHAPES)}")
    print(f"load average before: {load()} (cpus: {os.cpu_count()})", flush=True)
    commands = {"diff main --format markdown": ["main", "--format", "markdown"],
                "diff main change": ["main", "change"]}
    wanted = {"markdown": "diff main --format markdown", "text": "diff main change"}
    chosen = {wanted[c.strip()] for c in a.commands.split(",") if c.strip() in wanted}
    commands = {k: v for k, v in commands.items() if k in chosen}
    cmds: dict[str, list[str] | None] = {
        "this": shlex.split(a.promptops) if a.promptops else None}
    if a.baseline:
        cmds["baseline"] = shlex.split(a.baseline)
    print("| shape | prompts | command | promptops | wall s | cpu s | output chars |"
          + (" same output |" if a.baseline else ""))
    print("| --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if a.baseline else ""))
    with tempfile.TemporaryDirectory(prefix="promptops-diff-shapes-") as tmp:
        root = a.keep if a.keep is not None else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        for shape in shapes:
            pkg = root / shape
            if a.keep is None or not (pkg / ".git").is_dir():
                shutil.rmtree(pkg, ignore_errors=True)
                pkg = make(shape, a.prompts, root)
            for label, args in commands.items():
                got: dict[str, list[tuple[float, float, str]]] = {k: [] for k in cmds}
                for _ in range(a.runs):  # interleaved: this, baseline, this, ...
                    for key, cmd in cmds.items():
                        got[key].append(run(pkg, args, cmd))
                texts = {k: g[-1][2] for k, g in got.items()}
                for key, runs in got.items():
                    text = texts[key]
                    if "Cite your sources." not in text:
                        raise SystemExit(f"{shape}: {label} ({key}) does not show the edited "
                                         "partial")
                    name = shape + (" (held out)" if shape in HELD_OUT else "")
                    same = (f" {'yes' if text == texts['this'] else 'NO'} |"
                            if a.baseline else "")
                    print(f"| {name} | {a.prompts} | `{label}` | {key} | "
                          f"{statistics.median(g[0] for g in runs):.2f} | "
                          f"{statistics.median(g[1] for g in runs):.2f} | {len(text)} |{same}",
                          flush=True)
            if a.keep is None:
                shutil.rmtree(pkg)
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
