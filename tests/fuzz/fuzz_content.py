"""Random hostile packages for the content fuzz test (tests/fuzz/test_fuzz_content.py).

Each package is a small valid one plus one to three hostile features drawn from the
classes of issue 12's invariants 1 and 2: YAML nested deep (flow, block, mixed, through
alias chains), alias bombs and recursive anchors, integers past the int-string limit,
templates nested deep (brackets, block tags, operator and filter chains), and symlinks
of every hostile kind (out of the package by absolute and relative paths, into
``.git``, loops, dangling, non-UTF-8 targets, symlinked folders on the way to a file,
symlinked snapshot and output folders, a manifest or prompt that is a link), and FIFOs
where files are read. The
feature is committed, so both sources (the working tree and ``--ref HEAD``) meet it.
"""

from __future__ import annotations

import math
import os
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST = "name: fuzz\nversion: 1.0.0\n"
SECRET = "ghp_FUZZSECRETFUZZSECRETFUZZSECRETFUZZ00"


def log_depth(rng: random.Random, top: int) -> int:
    return max(1, int(math.exp(rng.uniform(0, math.log(top)))))


def prompt(text: str = "About {{ topic }}", extra: str = "") -> str:
    return ("description: d\narguments:\n  - {name: topic, required: true}\nmessages:\n"
            f"  - role: user\n    text: {text!r}\n{extra}")


# ---- YAML ---------------------------------------------------------------------------
def deep_yaml(rng: random.Random) -> str:
    style = rng.choice(["flow seq", "flow map", "block seq", "block map", "mixed",
                        "alias chain", "laughs", "recursive", "big int", "hex int"])
    n = log_depth(rng, 50_000 if style in ("flow seq", "flow map", "mixed") else 1_500)
    if style == "flow seq":
        body = "x: " + "[" * n + "]" * n
    elif style == "flow map":
        body = "x: " + "{a: " * n + "1" + "}" * n
    elif style == "mixed":
        body = "x: " + "".join(rng.choice(["[", "{a: "]) for _ in range(n))
        body += "1"  # unbalanced on purpose half of the time
        if rng.random() < 0.5:
            body = "x: " + "[{a: " * (n // 2) + "1" + "}]" * (n // 2)
    elif style == "block seq":
        body = "x:\n" + "".join(" " * i + "- \n" for i in range(n))
    elif style == "block map":
        body = "x:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(n))
    elif style == "alias chain":
        body = "a0: &a0 []\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, n))
    elif style == "laughs":
        fan = rng.randint(2, 12)
        body = "a0: &a0 [" + ", ".join(["x" * rng.randint(1, 200)] * fan) + "]\n"
        body += "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]\n"
                        for i in range(1, min(n, 12)))
    elif style == "recursive":
        body = "x: &x [1, {k: *x}]"
    elif style == "big int":
        body = f"x: {'9' * rng.randint(4_000, 20_000)}"
    else:
        body = f"x: 0x{'f' * rng.randint(3_000, 6_000)}"
    return body + "\n"


def yaml_feature(rng: random.Random, pkg: Package) -> None:
    body = deep_yaml(rng)
    where = rng.choice(["prompt", "manifest", "test file", "prompt key"])
    if where == "manifest":
        pkg.files["promptops.yaml"] = MANIFEST + body
    elif where == "test file":
        pkg.files["tests/deep.test.yaml"] = "prompt: p0\ncases:\n  - name: one\n" + body
    elif where == "prompt key":
        pkg.files["prompts/deep.prompt.yaml"] = "? [complex]\n: key\n" + prompt() + body
    else:
        pkg.files["prompts/deep.prompt.yaml"] = prompt() + body
    pkg.features.append(f"yaml {where}: {body[:40]!r}... ({len(body):,} chars)")


# ---- templates ----------------------------------------------------------------------
def deep_template(rng: random.Random) -> str:
    kind = rng.choice(["parens", "lists", "dicts", "ifs", "fors", "sets", "macros", "filters",
                       "plus", "not", "cond", "dots", "calls", "mixed", "and"])
    n = log_depth(rng, 20_000 if kind in ("plus", "and", "filters", "dots") else 2_000)
    pieces: dict[str, Callable[[], str]] = {
        "parens": lambda: "{{ " + "(" * n + "topic" + ")" * n + " }}",
        "lists": lambda: "{{ " + "[" * n + "]" * n + "|length }}",
        "dicts": lambda: "{{ " + "{'a': " * n + "1" + "}" * n + " }}",
        "ifs": lambda: "{% if topic %}" * n + "x" + "{% endif %}" * n,
        "fors": lambda: "{% for i in [1] %}" * n + "x" + "{% endfor %}" * n,
        "sets": lambda: "{% set v %}" * n + "x" + "{% endset %}" * n,
        "macros": lambda: "{% macro m() %}" * n + "x" + "{% endmacro %}" * n,
        "filters": lambda: "{{ topic" + "|lower" * n + " }}",
        "plus": lambda: "{{ " + " + ".join(["1"] * n) + " }}",
        "not": lambda: "{{ " + "not " * n + "topic }}",
        "cond": lambda: "{{ " + "topic if topic else " * n + "topic }}",
        "dots": lambda: "{{ topic" + ".x" * n + " }}",
        "calls": lambda: "{{ topic.upper" + "()" * n + " }}",
        "and": lambda: "{{ " + " and ".join(["topic"] * n) + " }}",
        "mixed": lambda: "{% if topic %}" * (n % 30) + "{{ " + "(-" * (n % 40) + "1"
        + ")" * (n % 40) + " }}" + "{% endif %}" * (n % 30),
    }
    return pieces[kind]()


def template_feature(rng: random.Random, pkg: Package) -> None:
    body = deep_template(rng)
    if rng.random() < 0.5:
        pkg.files["partials/deep.j2"] = body + "\n"
        pkg.files["prompts/deep.prompt.yaml"] = prompt("{% include 'partials/deep.j2' %}")
    else:
        pkg.files["prompts/deep.prompt.yaml"] = (
            "description: d\narguments:\n  - {name: topic, required: true}\nmessages:\n"
            "  - role: user\n    text: |\n      " + body + "\n")
    pkg.features.append(f"template: {body[:40]!r}... ({len(body):,} chars)")


# ---- symlinks -----------------------------------------------------------------------
LINK_KINDS = ["absolute out", "relative out", "into .git", "git config by name", "folder out",
              "folder into .git", "loop", "dangling", "not utf-8", "package root",
              "snapshot folder out", "snapshot file out", "dist out", "manifest out",
              "prompt out", "test file out", "partials folder out", "GIT spelling", "fifo"]


def symlink_feature(rng: random.Random, pkg: Package) -> None:
    kind = rng.choice(LINK_KINDS)
    use = rng.choice(["include", "template", "resource"])
    name = "partials/link.j2" if use != "resource" else "resources/link.md"
    target: str | bytes = ""
    if kind == "absolute out":
        target = str(pkg.secret)
    elif kind == "relative out":
        target = "../../secret.txt"
    elif kind == "into .git":
        target = "../.git/config"
    elif kind == "git config by name":
        name = rng.choice([".git/config", ".GIT/config", "sub/.git", ".Git/HEAD"])
    elif kind == "GIT spelling":
        pkg.files[".GIT/config"] = SECRET + "\n"
        name = ".GIT/config"
    elif kind == "folder out":
        pkg.links["shared"] = str(pkg.secret.parent / "outside")
        name = "shared/x.md"
    elif kind == "folder into .git":
        pkg.links["gitdir"] = ".git"
        name = "gitdir/config"
    elif kind == "loop":
        pkg.links["partials/b.j2"] = "link.j2"
        target = "b.j2"
        name = "partials/link.j2"
    elif kind == "dangling":
        target = "nowhere.j2"
    elif kind == "not utf-8":
        target = b"\xff\xfe\xfd.j2"
    elif kind == "package root":
        target = ".."
    elif kind == "snapshot folder out":
        pkg.links["tests/__snapshots__/p0"] = str(pkg.secret.parent / "outside")
    elif kind == "snapshot file out":
        pkg.links["tests/__snapshots__/p0/one.json"] = str(pkg.secret)
    elif kind == "dist out":
        pkg.links["dist"] = str(pkg.secret.parent / "outside")
    elif kind == "manifest out":
        pkg.links["promptops.yaml"] = str(pkg.secret.parent / "outside" / "promptops.yaml")
        pkg.files.pop("promptops.yaml", None)
    elif kind == "prompt out":
        pkg.links["prompts/p0.prompt.yaml"] = "../../outside/p.prompt.yaml"
        pkg.files.pop("prompts/p0.prompt.yaml", None)
    elif kind == "test file out":
        pkg.links["tests/p0.test.yaml"] = str(pkg.secret.parent / "outside" / "t.test.yaml")
        pkg.files.pop("tests/p0.test.yaml", None)
    elif kind == "fifo":  # not a link, but as hostile: an open() that never returns
        pkg.fifos += [name, rng.choice(["notes.md", "prompts/f.prompt.yaml",
                                        "tests/f.test.yaml", "tests/__snapshots__/p0/one.json"])]
    elif kind == "partials folder out":
        pkg.links["partials"] = str(pkg.secret.parent / "outside")
        name = "partials/x.md"
    if target:
        pkg.links[name] = target
    reference = {"include": f"{{% include '{name}' %}}", "template": None,
                 "resource": None}[use]
    if use == "include":
        pkg.files["prompts/link.prompt.yaml"] = prompt(reference or "")
    elif use == "template":
        pkg.files["prompts/link.prompt.yaml"] = (
            "description: d\nmessages:\n  - role: user\n    template: " + name + "\n")
    else:
        pkg.files["prompts/link.prompt.yaml"] = (
            "description: d\nmessages:\n  - role: user\n    resource: {uri: 'doc://x', file: '"
            + name + "'}\n")
    pkg.features.append(f"symlink {kind} ({use} {name!r} -> {target!r})")


FEATURES = [yaml_feature, template_feature, symlink_feature]


@dataclass
class Package:
    """A package to write: files, symlinks (path -> target) and what makes it hostile."""

    secret: Path
    files: dict[str, str] = field(default_factory=dict)
    links: dict[str, str | bytes] = field(default_factory=dict)
    fifos: list[str] = field(default_factory=list)
    features: list[str] = field(default_factory=list)

    def write(self, root: Path) -> None:
        for rel, text in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for rel, target in self.links.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir() and not path.is_symlink():  # a folder another feature filled
                shutil.rmtree(path)
            elif os.path.lexists(path):
                path.unlink()
            os.symlink(target, os.fsencode(path) if isinstance(target, bytes) else path)
        for rel in self.fifos:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if not os.path.lexists(path):
                os.mkfifo(path)


def outside_world(around: Path) -> Path:
    """The files a hostile package reaches for: a secret, and a folder of plausible files."""
    around.mkdir(parents=True)
    secret = around / "secret.txt"
    secret.write_text(SECRET + "\n")
    out = around / "outside"
    out.mkdir()
    (out / "x.md").write_text(SECRET + "\n")
    (out / "promptops.yaml").write_text(MANIFEST)
    (out / "p.prompt.yaml").write_text(prompt(SECRET))
    (out / "t.test.yaml").write_text("prompt: p0\ncases:\n  - name: one\n")
    return secret


def hostile_package(rng: random.Random, secret: Path) -> Package:
    pkg = Package(secret)
    pkg.files["promptops.yaml"] = MANIFEST
    pkg.files["prompts/p0.prompt.yaml"] = prompt()
    pkg.files["tests/p0.test.yaml"] = ("prompt: p0\ncases:\n  - name: one\n    arguments: "
                                       "{topic: x}\n    expect: {snapshot: true}\n")
    for feature in rng.sample(FEATURES, rng.randint(1, 2)):
        feature(rng, pkg)
    return pkg
