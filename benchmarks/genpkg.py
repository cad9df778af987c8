"""Generate a realistic prompt package of N prompts (with partials) for benchmarks.

Each prompt has a required and an optional enum argument, an assistant preamble that
includes a shared partial, and a user message; every tenth prompt uses a template file.
Usage: python benchmarks/genpkg.py N OUT_DIR [--git]
"""

from __future__ import annotations

import argparse
import subprocess
from collections.abc import Callable
from pathlib import Path

PROMPT = """\
title: Task {i}
description: Generated prompt number {i} for benchmarks
arguments:
  - name: topic
    description: What to write about
    required: true
  - name: tone
    description: Voice of the answer
    default: neutral
    enum: [neutral, friendly, formal]
    examples: [neutral]
messages:
  - role: assistant
    text: |
      {{% include "partials/preamble.j2" %}}
      You answer in a {{{{ tone }}}} tone.
  - role: user
{body}
"""
INLINE = """\
    text: |
      Topic {i}: {{{{ topic }}}}
      {{% if tone == "formal" %}}
      Use complete sentences.
      {{% endif %}}
"""
FILE = "    template: templates/t{i}.md.j2\n"


def generate(n: int, out: Path) -> Path:
    (out / "prompts").mkdir(parents=True, exist_ok=True)
    (out / "partials").mkdir(exist_ok=True)
    (out / "templates").mkdir(exist_ok=True)
    (out / "promptops.yaml").write_text(f"name: bench-{n}\nversion: 1.0.0\n")
    (out / "partials" / "preamble.j2").write_text(
        '{% include "partials/rules.j2" %}\nYou are a careful assistant.\n'
    )
    (out / "partials" / "rules.j2").write_text("Follow the house style.\n")
    for i in range(n):
        if i % 10 == 0:
            body = FILE.format(i=i)
            (out / "templates" / f"t{i}.md.j2").write_text(f"Template {i} about {{{{ topic }}}}\n")
        else:
            body = INLINE.format(i=i)
        (out / "prompts" / f"task_{i:05d}.prompt.yaml").write_text(PROMPT.format(i=i, body=body))
    return out


def commit(out: Path) -> None:
    env = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x", "PATH": "/usr/bin:/bin:/usr/local/bin"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "bench"]):
        subprocess.run(cmd, cwd=out, check=True, env=env)


def main(make: Callable[[int, Path], Path], doc: str | None) -> None:
    """The command line of a package generator: N OUT_DIR [--git]."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("n", type=int)
    ap.add_argument("out", type=Path)
    ap.add_argument("--git", action="store_true", help="git init and commit")
    a = ap.parse_args()
    make(a.n, a.out)
    if a.git:
        commit(a.out)


if __name__ == "__main__":
    main(generate, __doc__)
