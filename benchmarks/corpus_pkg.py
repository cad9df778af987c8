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




SPEED = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "speed"
PARTS = ("tuning", "heldout")


def import_part(part: str, out: Path, corpus: Path = SPEED) -> list[dict[str, object]]:
    """``promptops import <corpus>/<part> -o out``, one folder import as a team does it
    (issue 26's speed corpus, tests/corpus/speed/README.md, or another corpus laid out the
    same way: ``corpus`` is tests/corpus/speed2 for the second one, ``--corpus-dir``);
    returns the JSON report. Exit 1 (some file lossy or refused) is expected: the refusals
    are recorded in the corpus's import.yaml, the package holds everything else.

    The command runs in this process (``promptops.__main__.main``, the entry point the
    console script calls), not in a child: a child's interpreter start and imports were
    about half of each import's CPU (0.45 s of which ~0.22 s start, five corpora: 2.24 s
    as children, 1.07 s here), paid eleven times by ``diff_shapes.py``'s three real
    shapes, so by the suite's smoke test of it. Nothing measured runs in this process."""
    import contextlib
    import io
    import json

    from promptops.__main__ import main

    if part not in PARTS:
        raise SystemExit(f"--corpus-part is one of {', '.join(PARTS)}, not {part!r}")
    if out.exists():
        shutil.rmtree(out)
    if not (corpus / part).is_dir():
        raise SystemExit(f"{corpus} has no {part}/ folder (a corpus laid out as "
                         "tests/corpus/speed is: tuning/ and heldout/)")
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["import", str(corpus / part), "-o", str(out), "--format", "json"])
    if code not in (0, 1):
        raise SystemExit(f"import of {part} failed ({code}): {stderr.getvalue()}")
    report: list[dict[str, object]] = json.loads(stdout.getvalue())
    return report


def _distinct(text: str, k: int) -> str:
    """A prompt file's text with a literal line naming copy ``k`` first in every inline
    message (``text: |`` block, quoted or plain scalar): no two copies share a message text, so
    lint's once-per-distinct-text work (``LintContext.memo``, validation's one parse per
    source) is paid per copy, as on a corpus whose prompts are all different."""
    line = f"Copy {k} of this prompt."
    lines = text.split("\n")
    out: list[str] = []
    for i, row in enumerate(lines):
        # a quoted or plain scalar: the line goes first (inside the quotes)
        quoted = re.match(r"^(\s*(?:- )?text: ['\"])(.*)$", row) or \
            re.match(r"^(\s*(?:- )?text: )([^|>'\"&*!\[{#%@`\s].*)$", row)
        if quoted:
            out.append(f"{quoted.group(1)}{line} {quoted.group(2)}")
            continue
        out.append(row)
        if re.match(r"^\s*(?:- )?text: [|>][-+0-9]*$", row):
            first = next((r for r in lines[i + 1:] if r.strip()), "")
            indent = first[:len(first) - len(first.lstrip())]
            if len(indent) > len(row) - len(row.lstrip()):  # an empty block stays empty
                out.append(indent + line)
    return "\n".join(out)


def generate_part(part: str, n: int, out: Path, *, distinct: bool = False,
                  corpus: Path = SPEED) -> Path:
    """The speed corpus's ``part`` imported, then its prompts copied round-robin until there
    are ``n`` (``<name>-<k>``), each at its real size: a template file a prompt names
    (``template: path``) is copied with it. Nothing is added to the prompts (unlike
    ``generate``): the prompts are measured as imported, and the copies repeat their texts
    (as issue 26's own replication did). ``distinct``: each copy's inline messages and
    template files start with a line of its own (``Copy k of this prompt.``), so no text
    repeats (issue 26 session 9: lint where no text repeats); the shared partials the
    import wrote stay shared, as in the real package. ``corpus``: which speed corpus (the
    first, tests/corpus/speed, by default; tests/corpus/speed2 is the second)."""
    source = out.parent / f"{out.name}-import"
    import_part(part, source, corpus)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for item in source.iterdir():  # promptops.yaml, shared partials; not the prompts
        if item.name in ("prompts", ".git"):
            continue
        if item.is_dir():
            shutil.copytree(item, out / item.name)
        else:
            shutil.copy(item, out / item.name)
    (out / "prompts").mkdir()
    prompts = sorted((source / "prompts").glob("*.prompt.yaml"))
    if not prompts:
        raise SystemExit(f"the import of {part} wrote no prompt")
    texts = [(p.name.removesuffix(".prompt.yaml"), p.read_text(encoding="utf-8"))
             for p in prompts]
    for i in range(n):
        name, text = texts[i % len(texts)]
        k = i // len(texts)
        # A prompt whose name is not its file's stem says ``name:``; each replica needs its
        # own (a duplicate name fails the build before it compiles a bundle).
        body = re.sub(r"^name: (.+)$", rf"name: \1-{k}", text, count=1,
                      flags=re.M)
        for path in re.findall(r"^\s*template: (\S+)$", text, re.M):
            moved = f"{path}.{k}"
            body = body.replace(f"template: {path}\n", f"template: {moved}\n")
            target = out / moved
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source / path, target)
            if distinct:
                target.write_bytes(f"Copy {k} of this prompt.\n".encode() + target.read_bytes())
        if distinct:
            body = _distinct(body, k)
        (out / "prompts" / f"{name}-{k}.prompt.yaml").write_text(body, encoding="utf-8")
    shutil.rmtree(source)
    return out


SHARED = "partials/shared.j2"
SHARED_ARGUMENT = "shared_subject"


def _with_shared(text: str) -> str:
    """A prompt file's text with one required argument (``SHARED_ARGUMENT``, first) and a
    first ``user`` message including ``SHARED`` directly and using the argument: issue 26's
    reported diff shape, put on a real prompt (``benchmarks/diff_shapes.py``'s ``real``
    shapes). The import writes ``arguments:`` and ``messages:`` as block lists at column 0
    (every prompt of the six speed corpora); anything else is refused, not guessed at."""
    if re.search(rf"^- name: {SHARED_ARGUMENT}$", text, re.M):
        raise SystemExit(f"a corpus prompt already has an argument {SHARED_ARGUMENT}")
    argument = (f"- name: {SHARED_ARGUMENT}\n  description: What the shared rules apply to\n"
                "  required: true\n")
    message = (f"- role: user\n  text: '{{% include \"{SHARED}\" %}} About "
               f"{{{{ {SHARED_ARGUMENT} }}}}.'\n")
    if text.count("\nmessages:\n") != 1 or text.count("\narguments:\n") > 1:
        raise SystemExit("a corpus prompt without one block list of messages")
    if "\narguments:\n" in text:
        text = text.replace("\narguments:\n", "\narguments:\n" + argument, 1)
    else:
        text = text.replace("\nmessages:\n", "\narguments:\n" + argument + "messages:\n", 1)
    return text.replace("\nmessages:\n", "\nmessages:\n" + message, 1)


def generate_shared(corpora: list[Path], part: str, n: int, out: Path) -> Path:
    """``part`` of each corpus imported, the prompts pooled (corpus order, then file order)
    and copied round-robin to ``n`` (``<name>-<corpus>-<k>``), each given one required
    argument and a first message including ``SHARED`` (``_with_shared``), every copy
    distinct (``_distinct``; a ``template:`` file a prompt names starts with the same copy
    line). The real bodies stay as imported. Returns ``out / SHARED``, the partial the
    change edits. The rule: ``benchmarks/diff_shapes.py``'s docstring (``real``)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    pool: list[tuple[str, Path, str, str]] = []  # (corpus, import root, name, text)
    for corpus in corpora:
        source = out.parent / f"{out.name}-import-{corpus.name}"
        import_part(part, source, corpus)
        for item in sorted(source.rglob("*")):  # shared templates, schema: once
            rel = item.relative_to(source)
            if not item.is_file() or rel.parts[0] == "prompts" or rel.name in (
                    "promptops.yaml", "CONVERSION.md"):
                continue
            target = out / rel
            if target.exists():
                if target.read_bytes() != item.read_bytes():
                    raise SystemExit(f"two corpora write {rel} with different bytes")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(item, target)
        pool += [(corpus.name, source, p.name.removesuffix(".prompt.yaml"),
                  p.read_text(encoding="utf-8"))
                 for p in sorted((source / "prompts").glob("*.prompt.yaml"))]
    if not pool:
        raise SystemExit(f"the imports of {part} wrote no prompt")
    manifest = (out.parent / f"{out.name}-import-{corpora[0].name}" / "promptops.yaml")
    (out / "promptops.yaml").write_text(re.sub(r"^name: .+$", f"name: shape-{out.name}",
                                               manifest.read_text(), count=1, flags=re.M))
    (out / "prompts").mkdir()
    (out / "partials").mkdir()
    (out / SHARED).write_text("Follow the house rules: be accurate and brief.\n")
    for i in range(n):
        corpus_name, source, name, text = pool[i % len(pool)]
        k = i // len(pool)
        body = re.sub(r"^name: (.+)$", rf"name: \1-{corpus_name}-{k}", text, count=1,
                      flags=re.M)
        for path in re.findall(r"^\s*template: (\S+)$", text, re.M):
            moved = f"{path}.{corpus_name}.{k}"
            body = body.replace(f"template: {path}\n", f"template: {moved}\n")
            target = out / moved
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f"Copy {k} of this prompt.\n".encode()
                               + (source / path).read_bytes())
        body = _distinct(_with_shared(body), k)
        (out / "prompts" / f"{name}-{corpus_name}-{k}.prompt.yaml").write_text(
            body, encoding="utf-8")
    for corpus in corpora:
        shutil.rmtree(out.parent / f"{out.name}-import-{corpus.name}")
    return out / SHARED


def edit_one(pkg: Path) -> tuple[Path, bytes]:
    """Add a line to the text of one prompt's first block-literal message (an edit a
    reviewer would make); returns (file, its bytes before) so the caller can undo it.

    The line goes before the literal's first non-blank line, at its indent (a literal may
    open with blank lines); with no literal, a comment line is added. The edit must leave
    the prompt valid: a second ``description:`` key (the old fallback) made the first
    prompt of speed3's tuning part a load error, which lint answers with a full run, so
    the "one edit" figure measured a cold lint there (session 11)."""
    path = sorted((pkg / "prompts").glob("*.prompt.yaml"))[0]
    before = path.read_bytes()
    lines = before.decode("utf-8").split("\n")
    for i, line in enumerate(lines[:-1]):
        if not re.match(r"^\s*(- )?text: [|>][-+]?$", line):
            continue
        first = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
        if first is None:
            continue
        indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
        if len(indent) > line.index("text:"):  # content, not the next key
            lines.insert(first, f"{indent}Keep it short.")
            break
    else:
        lines.insert(0, "# edited by the benchmark")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path, before
