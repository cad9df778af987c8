"""A synthetic package with the shape issue 26 gave real prompts: long, branchy, include-heavy.

The issue measured lint at 4.4x the build on real prompts from other repositories, against
1.9x on ours (benchmarks/corpus_pkg.py), and said why: real prompts are longer, branchier
and include more. Until a real corpus of that shape is in the repository, this generates
one to profile lint on. Each prompt (4-8 KB of package per prompt) has five arguments
(required, optional with an enum, a list), a template file of 40-120 lines with many
``{% if %}`` / ``{% for %}`` blocks, a macro imported from a shared macro file, three to
six includes of partials drawn from a pool of 60 (a third of which include another
partial, so chains are two or three deep), and an inline user message with its own
branches. Deterministic: the same ``n`` gives the same bytes.

Usage: python benchmarks/heavy_pkg.py N OUT_DIR [--git]
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

PARTIALS = 60
MACROS = "partials/macros.j2"

PROMPT = """\
title: Heavy task {i}
description: Generated long, branchy prompt number {i}
arguments:
  - name: topic
    description: What the task is about
    required: true
  - name: tone
    description: Voice of the answer
    default: neutral
    enum: [neutral, friendly, formal, terse]
  - name: audience
    description: Who reads the answer
    default: engineers
  - name: items
    description: Points the answer must cover
    type: array
    default: []
  - name: depth
    description: How deep the answer goes
    default: medium
    enum: [shallow, medium, deep]
messages:
  - role: assistant
    text: |
{assistant}
  - role: user
    template: templates/heavy{i}.md.j2
  - role: user
    text: |
{user}
"""

SENTENCES = [
    "Read the material carefully before you answer and keep the structure the reader expects.",
    "When something is uncertain, say so plainly and name what would settle the question.",
    "Prefer concrete examples over general statements, and cite the part of the input you use.",
    "Do not invent facts; if the input lacks what is needed, ask for it in one short sentence.",
    "Keep each section short: a heading, two to four sentences, and a list only when it helps.",
    "Use the terminology of the field, but define any term a newcomer would not know.",
    "Check the answer against every requirement listed above before you return it.",
]


def _para(rnd: random.Random, k: int) -> str:
    return " ".join(rnd.choice(SENTENCES) for _ in range(k))


def _branchy(rnd: random.Random, blocks: int, indent: str = "") -> list[str]:
    """Template lines with if/elif/else and for blocks over the declared arguments."""
    out: list[str] = []
    for b in range(blocks):
        kind = rnd.randrange(5)
        if kind == 0:
            out += ['{% if tone == "formal" %}', _para(rnd, 2), '{% elif tone == "terse" %}',
                    "Answer in as few words as the task allows.", "{% else %}",
                    _para(rnd, 1), "{% endif %}"]
        elif kind == 1:
            out += ["{% for item in items %}", f"- Point {b}.{{{{ loop.index }}}}: {{{{ item }}}}",
                    "{% if not loop.last %}", "  (then the next point)", "{% endif %}",
                    "{% endfor %}"]
        elif kind == 2:
            out += ['{% if depth == "deep" %}', _para(rnd, 3),
                    '{% for section in ["scope", "risks", "plan"] %}',
                    "### {{ section | title }} for {{ topic }}", _para(rnd, 1), "{% endfor %}",
                    "{% endif %}"]
        elif kind == 3:
            out += [f"Section {b} for {{{{ audience }}}}: " + _para(rnd, 2),
                    "{% set n = items | length %}",
                    "{% if n > 3 %}There are {{ n }} points; group them.{% endif %}"]
        else:
            out += [_para(rnd, 2), f"{{{{ m.note('step {b}', topic) }}}}"]
    return [indent + line for line in out]


def generate(n: int, out: Path) -> Path:
    if out.exists():
        shutil.rmtree(out)
    for sub in ("prompts", "templates", "partials"):
        (out / sub).mkdir(parents=True)
    (out / "promptops.yaml").write_text(f"name: heavy-{n}\nversion: 1.0.0\n")
    rnd = random.Random(26)
    (out / MACROS).write_text(
        "{% macro note(label, subject) -%}\n"
        "Note ({{ label }}): keep {{ subject }} in view.\n"
        "{%- endmacro %}\n"
        "{% macro bullet(text) -%}\n- {{ text }}\n{%- endmacro %}\n")
    for p in range(PARTIALS):
        lines = [f"Partial {p}: " + _para(rnd, 2)]
        lines += ["{% if tone is defined and tone == \"friendly\" %}", _para(rnd, 1),
                  "{% endif %}"]
        if p % 3 == 0 and p + 1 < PARTIALS:
            lines.append(f'{{% include "partials/p{(p + 7) % PARTIALS:02d}.j2" %}}')
        lines += [_para(rnd, 3)]
        (out / "partials" / f"p{p:02d}.j2").write_text("\n".join(lines) + "\n")
    for i in range(n):
        body = [f'{{% import "{MACROS}" as m %}}', f"# Task {i}: {{{{ topic }}}}", ""]
        includes = rnd.sample(range(PARTIALS), rnd.randint(3, 6))
        blocks = rnd.randint(6, 18)
        chunks = _branchy(rnd, blocks)
        step = max(1, len(chunks) // len(includes))
        for k, p in enumerate(includes):
            at = min(len(chunks), (k + 1) * step)
            chunks.insert(at, f'{{% include "partials/p{p:02d}.j2" %}}')
        body += chunks
        (out / "templates" / f"heavy{i}.md.j2").write_text("\n".join(body) + "\n")
        assistant = "\n".join("      " + line for line in [
            f'{{% include "partials/p{rnd.randrange(PARTIALS):02d}.j2" %}}',
            "You answer in a {{ tone }} tone for {{ audience }}.", _para(rnd, 2)])
        user = "\n".join("      " + line for line in
                         ["Topic: {{ topic }}", *_branchy(rnd, rnd.randint(2, 5))]
                         ).replace("{{ m.note(", "{{ (").replace("', topic) }}", "') }}")
        (out / "prompts" / f"heavy_{i:05d}.prompt.yaml").write_text(
            PROMPT.format(i=i, assistant=assistant, user=user))
    return out


if __name__ == "__main__":
    from genpkg import main

    main(generate, __doc__)
