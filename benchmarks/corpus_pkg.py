"""The real-prompt corpus package (tests/lint/corpus/package) replicated to real size.

Lint's synthetic benchmark prompts have almost no findings, so they hide what costs time on
real prompts (placing findings, judging rendered text). This copies the 78 ported corpus
prompts, their templates and their test files round-robin until there are ``n`` prompts
(``<name>-<k>``), and makes every prompt include one shared partial, so "one edited partial
included everywhere" can be measured. Used by ``benchmarks/lint_bench.py --corpus N``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "lint" / "corpus" / "package"
PARTIAL = "partials/house_rules.j2"


def _prompts() -> list[tuple[str, str, dict[str, str], str | None]]:
    """(name, prompt text, {template path: text}, test text or None) of each corpus prompt."""
    out = []
    for path in sorted((CORPUS / "prompts").glob("*.prompt.yaml")):
        name = path.name.removesuffix(".prompt.yaml")
        text = path.read_text(encoding="utf-8")
        templates = {t: (CORPUS / t).read_text(encoding="utf-8") for t in
                     re.findall(r"template: (templates/\S+)", text)}
        test = CORPUS / "tests" / f"{name}.test.yaml"
        out.append((name, text, templates, test.read_text(encoding="utf-8")
                    if test.exists() else None))
    return out


def generate(n: int, out: Path) -> Path:
    if out.exists():
        shutil.rmtree(out)
    for sub in ("prompts", "templates", "tests", "partials"):
        (out / sub).mkdir(parents=True)
    shutil.copy(CORPUS / "promptops.yaml", out / "promptops.yaml")
    (out / PARTIAL).write_text("Follow the house rules: be accurate and brief.\n")
    corpus = _prompts()
    for i in range(n):
        name, text, templates, test = corpus[i % len(corpus)]
        k = i // len(corpus)
        new = f"{name}-{k}"
        body = text.replace(f"name: {name}\n", f"name: {new}\n", 1)
        for path, source in templates.items():
            moved = path.replace(f"templates/{name}.", f"templates/{new}.", 1)
            body = body.replace(f"template: {path}\n", f"template: {moved}\n")
            (out / moved).write_text(source, encoding="utf-8", newline="")
        body = body.replace("messages:\n", "messages:\n- role: user\n  text: '{% include \""
                            + PARTIAL + "\" %}'\n", 1)
        (out / "prompts" / f"{new}.prompt.yaml").write_text(body, encoding="utf-8")
        if test is not None:
            (out / "tests" / f"{new}.test.yaml").write_text(
                test.replace(f"prompt: {name}\n", f"prompt: {new}\n", 1), encoding="utf-8")
    return out


