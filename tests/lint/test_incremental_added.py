"""A commit that adds (or removes) files re-lints those only, and the findings equal a full run's.

What ``serve`` sees when a commit adds a prompt to a large package (issue 18: a commit must
reach the listeners in under a second at 1,000 prompts, and a full lint alone took one).
Each case commits a small package with old findings of every kind to a real git
repository (where lint keeps its record), lints that commit, commits the added files, lints
the new commit from the record, and compares with a run that uses no cache at all; the
cases also say whether the fast path was taken, so a change that makes it a full run (or
fast where it cannot be exact) fails. The generated sequences then chain many random
additions, each linted from the record the previous incremental run left.
"""

from __future__ import annotations

import random
from pathlib import Path

import git
import pytest
from helpers.repo import commit_files, make_repo, write_files

from promptops.lint.runner import Options, lint_package
from promptops.pipeline.build import Build

MANIFEST = "name: added\nversion: 1.0.0\ndescription: Prompts for the added-files cases\n"


def prompt(name: str | None = None, *, text: str = "Explain {{ topic }}.", args: str = "topic",
           description: str | None = "d", template: str | None = None,
           resource: str | None = None) -> str:
    lines = [f"name: {name}"] if name else []
    if description is not None:
        lines.append(f"description: {description}")
    if args:
        lines += ["arguments:"] + [f"- name: {a}\n  required: true" for a in args.split(",")]
    lines.append("messages:")
    if template is not None:
        lines += ["- role: user", f"  template: {template}"]
    else:
        lines += ["- role: user", "  text: |", *(f"    {t}" for t in text.split("\n"))]
    if resource is not None:
        lines += ["- role: user", "  resource:", f"    uri: promptops://{resource}",
                  f"    file: {resource}"]
    return "\n".join(lines) + "\n"


SHARED = '{% include "partials/shared.j2" %}'
Files = dict[str, str | bytes | None]
BASE: Files = {
    "promptops.yaml": MANIFEST,
    "prompts/alpha.prompt.yaml": prompt(text=f"{SHARED}\nOn {{{{ topic }}}}."),
    "prompts/beta.prompt.yaml": prompt(text=f"{SHARED}\nAbout {{{{ topic }}}}."),
    # old findings: a missing description, trailing whitespace, an unused argument
    "prompts/gamma.prompt.yaml": prompt(description=None, text="Gamma {{ topic }}.   ",
                                        args="topic,unused"),
    "prompts/delta.prompt.yaml": prompt(template="templates/delta.md.j2",
                                        resource="notes/guide.md"),
    "partials/shared.j2": "Be brief.\n",
    "partials/orphan.j2": "Nobody includes me. {{ topic }}\n",  # PO305
    "templates/delta.md.j2": "Delta on {{ topic }}.\n",
    "notes/guide.md": "A guide.\n",
    "notes/stray.md": "Read by nobody.\r\n",  # PO505 (CRLF): judged on every text file
    "README.md": "The package.\n",
    # an old PO105 on a shared partial: judged with the arguments of the first prompt (by
    # name) that renders it, and neither of these declares `branch`
    "partials/code.j2": "Run `{{ 'branch' }}` now.\n",
    "prompts/m_code.prompt.yaml": prompt(text='{% include "partials/code.j2" %}{{ topic }}'),
    "prompts/n_code.prompt.yaml": prompt(text='{% include "partials/code.j2" %}{{ topic }}'),
    **{f"prompts/filler{i}.prompt.yaml": prompt(text=f"Filler {i}: {{{{ topic }}}}")
       for i in range(6)},  # so that three added files are not most of the package
}


def _findings(pkg: Path, ref: str, *, cache: bool) -> tuple[list[str], str]:
    linted = lint_package(Build(pkg, ref, keep_asts=True), Options(use_cache=cache))
    return [f"{f.path}:{f.line}:{f.col}:{f.code}:{f.message}" for f in linted.findings], \
        linted.how


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    repo = make_repo(tmp_path / "pkg", BASE)
    found, how = _findings(tmp_path / "pkg", repo.head.commit.hexsha, cache=True)
    assert how == "full"
    codes = {line.split(":")[3] for line in found}
    assert {"PO105", "PO305", "PO401", "PO202", "PO504"} <= codes, found  # old findings kept
    assert not codes & {"PO101", "PO102", "PO103", "PO301", "PO306"}, found  # it validates
    return repo


def _after(repo: git.Repo, files: Files) -> tuple[list[str], str, list[str]]:
    pkg = Path(repo.working_tree_dir or ".")
    ref = commit_files(repo, files)
    found, how = _findings(pkg, ref, cache=True)
    return found, how, _findings(pkg, ref, cache=False)[0]


CASES: dict[str, tuple[Files, str]] = {
    "a prompt with inline text": (
        {"prompts/epsilon.prompt.yaml": prompt()}, "incremental"),
    "a prompt with findings of its own": (
        {"prompts/zeta.prompt.yaml": prompt(description=None, text="Z {{ topic }} \t\n{{ x }}",
                                            args="topic,spare")}, "incremental"),
    "a prompt that includes a partial old prompts include (no findings there)": (
        {"prompts/eta.prompt.yaml": prompt(text='{% include "partials/shared.j2" %}\n{{ topic }}')},
        "incremental"),
    "a prompt that includes the unused partial: its PO305 goes": (
        {"prompts/theta.prompt.yaml": prompt(text='{% include "partials/orphan.j2" %}')},
        "incremental"),
    "a prompt that reads the stray note as a resource": (
        {"prompts/iota.prompt.yaml": prompt(resource="notes/stray.md")}, "incremental"),
    "a partial nobody includes (PO305 on it) with trailing whitespace": (
        {"partials/lonely.j2": "Alone.  \n"}, "incremental"),
    "a partial and the prompt that includes it": (
        {"partials/fresh.j2": "Fresh {{ topic }}.\n",
         "prompts/kappa.prompt.yaml": prompt(text='{% include "partials/fresh.j2" %}')},
        "incremental"),
    "a prompt whose included new partial uses an undeclared variable": (
        {"partials/needs.j2": "Needs {{ other }}.\n",
         "prompts/lambda.prompt.yaml": prompt(text='{% include "partials/needs.j2" %}')},
        "incremental"),
    "a resource with a secret and no final newline, and its prompt": (
        {"notes/key.md": "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
         "prompts/mu.prompt.yaml": prompt(resource="notes/key.md")}, "incremental"),
    "a test file": (
        {"tests/epsilon.test.yaml": "prompt: alpha\ncases: []\n"}, "incremental"),
    "two prompts whose names differ only in case: PO106 between them": (
        {"prompts/nu.prompt.yaml": prompt("Nu_Prompt"),
         "prompts/xi.prompt.yaml": prompt("nu-prompt")}, "incremental"),
    "a prompt named like an old one up to '-'/'_': full run": (
        {"prompts/omicron.prompt.yaml": prompt("Gamma")}, "full"),
    "a prompt whose name equals an old one's: full run": (
        {"prompts/aaa.prompt.yaml": prompt("beta")}, "full"),
    "a prompt that does not parse: full run": (
        {"prompts/pi.prompt.yaml": "name: [unclosed\n"}, "full"),
    "a prompt that includes a missing template: full run": (
        {"prompts/rho.prompt.yaml": prompt(text='{% include "partials/nowhere.j2" %}')}, "full"),
    "partials that include each other, and a prompt reaching them: full run": (
        {"partials/c1.j2": '{% include "partials/c2.j2" %}',
         "partials/c2.j2": '{% include "partials/c1.j2" %}',
         "prompts/sigma.prompt.yaml": prompt(text='{% include "partials/c1.j2" %}')}, "full"),
    "a prompt added and one that shares a partial edited out of it (settled by a witness)": (
        {"prompts/upsilon.prompt.yaml": prompt(),
         "prompts/alpha.prompt.yaml": prompt(text="Edited {{ topic }}.")}, "incremental"),
    "a prompt added and another edited (a pull of two commits)": (
        {"prompts/upsilon.prompt.yaml": prompt(),
         "prompts/gamma.prompt.yaml": prompt(description=None, text="Gamma {{ topic }}!",
                                             args="topic,unused")}, "incremental"),
    "a prompt added that includes the template an edit gave a finding": (
        {"templates/delta.md.j2": "Delta on {{ topic }} and {{ ghost }}.\n",
         "prompts/omega.prompt.yaml": prompt(text='{% include "templates/delta.md.j2" %}')},
        "full"),
    "a partial added and an edited prompt now including it: full run": (
        {"partials/late.j2": "Late.\n",
         "prompts/gamma.prompt.yaml": prompt(text='{% include "partials/late.j2" %}')}, "full"),
    "a prompt removed that shares a partial: settled by a witness": (
        {"prompts/beta.prompt.yaml": None}, "incremental"),
    "a prompt that includes an old prompt file: full run": (
        {"prompts/phi.prompt.yaml": prompt(text='{% include "prompts/alpha.prompt.yaml" %}')},
        "full"),
    "a prompt that reads an old prompt file as a resource: full run": (
        {"prompts/phi.prompt.yaml": prompt(resource="prompts/alpha.prompt.yaml")}, "full"),
    "a prompt sorted first that declares what the shared partial's old PO105 lacked: full run": (
        {"prompts/a_code.prompt.yaml": prompt(text='{% include "partials/code.j2" %}{{ topic }}',
                                              args="topic,branch")}, "full"),
    "the manifest changed with a prompt added: full run": (
        {"promptops.yaml": MANIFEST + "instructions: more\n",
         "prompts/chi.prompt.yaml": prompt()}, "full"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_an_addition_relints_as_a_full_run_would(repo: git.Repo, case: str) -> None:
    files, how = CASES[case]
    found, used, full = _after(repo, files)
    assert found == full
    assert used == how


def test_a_new_prompt_that_renders_a_shared_partial_with_a_finding_is_a_full_run(
        tmp_path: Path) -> None:
    """The shared partial's undeclared variable is reported per prompt that renders it, so
    an added one adds a finding there that only a full run places exactly."""
    repo = make_repo(tmp_path / "pkg", {
        **BASE, "partials/shared.j2": "Brief, {{ style }}.\n",
        "prompts/alpha.prompt.yaml": prompt(text='{% include "partials/shared.j2" %}\n{{ topic }}',
                                            args="topic,style"),
        "prompts/beta.prompt.yaml": prompt(text='{% include "partials/shared.j2" %}\n{{ topic }}',
                                           args="topic,style")})
    pkg = tmp_path / "pkg"
    before, _ = _findings(pkg, repo.head.commit.hexsha, cache=True)
    assert not any(line.startswith("partials/shared.j2:") for line in before), before
    found, how, full = _after(repo, {"prompts/psi.prompt.yaml": prompt(
        text='{% include "partials/shared.j2" %}')})
    assert found == full
    assert how == "full"
    assert any("rendered by prompt 'psi'" in line for line in full)


def test_a_package_that_did_not_validate_relints_an_addition_in_full(tmp_path: Path) -> None:
    """A prompt with a template error is left out of the package, so the record knows
    neither its name nor what it reads: an added prompt of the same name is a duplicate
    only a full run sees."""
    repo = make_repo(tmp_path / "pkg", {**BASE, "prompts/lost.prompt.yaml": prompt(
        text="{% if %}")})
    _findings(tmp_path / "pkg", repo.head.commit.hexsha, cache=True)
    found, how, full = _after(repo, {"prompts/found.prompt.yaml": prompt("lost")})
    assert found == full
    assert how == "full"
    assert any(":PO106:" in line for line in full)


def test_an_edit_next_to_a_template_judged_by_its_first_prompt_keeps_its_judgement(
        tmp_path: Path) -> None:
    """PO105 judges a shared template once, with the arguments of the first prompt (by
    name) that renders it: re-linting a later prompt alone would judge it with that
    prompt's arguments and report what a full run does not (it declares FIRST, and the
    first prompt is unchanged: its judgement stays)."""
    files = {"promptops.yaml": MANIFEST,
             "partials/code.j2": "Run `{{ 'branch' }}` now.\n",
             "prompts/a_first.prompt.yaml": prompt(
                 text='{% include "partials/code.j2" %}{{ topic }}', args="topic,branch"),
             "prompts/b_second.prompt.yaml": prompt(
                 text='{% include "partials/code.j2" %}{{ topic }}'),
             **{f"prompts/other{i}.prompt.yaml": prompt() for i in range(4)}}
    repo = make_repo(tmp_path / "pkg", files)
    pkg = tmp_path / "pkg"
    _findings(pkg, repo.head.commit.hexsha, cache=True)
    found, how, full = _after(repo, {"prompts/b_second.prompt.yaml": prompt(
        text='{% include "partials/code.j2" %}{{ topic }}', description="edited")})
    assert found == full
    assert how == "incremental"
    assert not any(":PO105:" in line for line in full)


REMOVALS: dict[str, tuple[Files, str]] = {
    "a prompt with inline text": ({"prompts/filler0.prompt.yaml": None}, "incremental"),
    "a prompt with findings of its own": ({"prompts/gamma.prompt.yaml": None}, "incremental"),
    "a prompt and the template only it reads": (
        {"prompts/delta.prompt.yaml": None, "templates/delta.md.j2": None}, "incremental"),
    "a prompt whose template and resource stay, unused now (PO305, raw judgement)": (
        {"prompts/delta.prompt.yaml": None}, "incremental"),
    "a file nobody reads, and an unused partial": (
        {"notes/stray.md": None, "partials/orphan.j2": None}, "incremental"),
    "a prompt that shares a partial: settled by a witness": (
        {"prompts/alpha.prompt.yaml": None}, "incremental"),
    "a prompt first to judge a shared partial (PO105): the next one judges it": (
        {"prompts/m_code.prompt.yaml": None}, "incremental"),
    "a file a prompt reads: full run": ({"partials/shared.j2": None}, "full"),
    "a resource a prompt reads: full run": ({"notes/guide.md": None}, "full"),
    "a prompt removed and one added: full run": (
        {"prompts/filler1.prompt.yaml": None, "prompts/new.prompt.yaml": prompt()}, "full"),
}


@pytest.mark.parametrize("case", list(REMOVALS), ids=list(REMOVALS))
def test_a_removal_relints_as_a_full_run_would(repo: git.Repo, case: str) -> None:
    files, how = REMOVALS[case]
    found, used, full = _after(repo, files)
    assert found == full
    assert used == how


def test_a_package_that_did_not_validate_relints_a_removal_in_full(tmp_path: Path) -> None:
    """The later of two prompts with one name is left out of the package (a load problem):
    removing the earlier one brings it in, with findings only a full run gives."""
    repo = make_repo(tmp_path / "pkg", {**BASE, "prompts/zz.prompt.yaml": prompt(
        "filler0", description=None)})
    before, _ = _findings(tmp_path / "pkg", repo.head.commit.hexsha, cache=True)
    assert any(line.startswith("prompts/zz.prompt.yaml:") and ":PO106:" in line
               for line in before)
    found, how, full = _after(repo, {"prompts/filler0.prompt.yaml": None})
    assert found == full
    assert how == "full"
    assert any(line.startswith("prompts/zz.prompt.yaml:") and ":PO401:" in line
               for line in full)


def test_removing_one_of_two_names_that_fold_together_is_a_full_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "pkg", {**BASE, "prompts/nu.prompt.yaml": prompt("Nu_Prompt"),
                                        "prompts/xi.prompt.yaml": prompt("nu-prompt")})
    before, _ = _findings(tmp_path / "pkg", repo.head.commit.hexsha, cache=True)
    assert any(":PO106:" in line for line in before)
    found, how, full = _after(repo, {"prompts/nu.prompt.yaml": None})
    assert found == full
    assert how == "full"
    assert not any(":PO106:" in line for line in full)


# ---- generated sequences of additions ---------------------------------------------------------
def _random_addition(rng: random.Random, step: int, names: list[str]) -> Files:
    """One commit's additions, drawn from what packages gain: prompts (clean, with
    findings, including old or new partials, reading resources, duplicating names),
    partials (unused, cyclic), resources and other files."""
    out: Files = {}
    for k in range(rng.choice([1, 1, 1, 2, 3])):
        kind = rng.choice(["prompt", "prompt", "prompt", "warned", "warned", "include-old",
                           "include-old", "include-new", "include-new", "resource", "partial",
                           "other", "cycle", "dup", "broken"])
        tag = f"g{step}_{k}_{kind}"
        path = f"prompts/{tag}.prompt.yaml"
        if kind == "prompt":
            out[path] = prompt()
        elif kind == "warned":
            out[path] = prompt(description=None, text=f"{tag} {{{{ topic }}}} ", args="topic,spare")
        elif kind == "include-old":
            partial = rng.choice(["partials/shared.j2", "partials/orphan.j2",
                                  "templates/delta.md.j2"] + [n for n in names
                                                              if n.startswith("partials/")])
            out[path] = prompt(text=f'{{% include "{partial}" %}}{{{{ topic }}}}')
        elif kind == "include-new":
            out[f"partials/{tag}.j2"] = rng.choice(["New.\n", "New {{ nope }}.\n", "Tabbed\t.\n"])
            out[path] = prompt(text=f'{{% include "partials/{tag}.j2" %}}')
        elif kind == "resource":
            out[f"notes/{tag}.md"] = rng.choice(["Fine.\n", "No newline", "Trailing  \n"])
            out[path] = prompt(resource=f"notes/{tag}.md")
        elif kind == "partial":
            out[f"partials/{tag}.j2"] = rng.choice(["Unused.\n", "Unused  \n"])
        elif kind == "cycle":
            out[f"partials/{tag}a.j2"] = f'{{% include "partials/{tag}b.j2" %}}'
            out[f"partials/{tag}b.j2"] = f'{{% include "partials/{tag}a.j2" %}}'
        elif kind == "dup":
            out[path] = prompt(rng.choice(names) if names else "alpha")
        elif kind == "broken":
            out[path] = rng.choice(["name: [x\n", "messages: 3\n", prompt(text="{% if %}")])
        else:
            out[f"docs/{tag}.txt"] = rng.choice(["Plain.\n", "Bad\r\nline\r\n", "x \n"])
    return out


HOSTILE = ("cycle", "dup", "broken")  # kinds a package does not keep: removed next commit


@pytest.mark.parametrize("seed", range(4))
def test_generated_additions_relint_as_full_runs(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    repo = make_repo(tmp_path / "pkg", BASE)
    pkg = tmp_path / "pkg"
    _findings(pkg, repo.head.commit.hexsha, cache=True)
    names = ["alpha", "beta", "gamma", "delta"]
    fast, undo = 0, []
    added: list[list[str]] = []
    for step in range(16):
        if undo:  # a hostile addition is removed again, with a clean prompt (a full run)
            files: Files = {**dict.fromkeys(undo), f"prompts/fix{step}.prompt.yaml": prompt()}
            undo = []
        elif step % 4 == 3 and added:  # an earlier commit's additions removed again
            files = dict.fromkeys(added.pop(rng.randrange(len(added))))
            names = [n for n in names if n not in files
                     and f"prompts/{n}.prompt.yaml" not in files]
        else:
            files = _random_addition(rng, step, names)
            new = list(files)
            clean = [p for group in added for p in group
                     if p.startswith("prompts/") and "_prompt." in p]
            if clean and rng.random() < 0.4:  # and an edit of an earlier addition
                files[rng.choice(clean)] = prompt(text=f"Edited at {step}: {{{{ topic }}}}")
            if any(f"_{kind}" in path for path in new for kind in HOSTILE):
                undo = new
            else:
                added.append(new)
        found, how, full = _after(repo, files)
        assert found == full, (step, sorted(files))
        fast += how == "incremental"
        if not undo and files and all(v is not None for v in files.values()):
            for path in new:
                name = path.removeprefix("prompts/").removesuffix(".prompt.yaml")
                if path.startswith(("prompts/", "partials/")) and name not in names:
                    names.append(name if path.startswith("prompts/") else path)
    assert fast >= 3, f"only {fast} generated changes took the fast path"


@pytest.mark.parametrize("files", [
    {"prompts/wt.prompt.yaml": prompt(description=None)},
    {"prompts/filler2.prompt.yaml": None},
    {"prompts/wt.prompt.yaml": prompt(), "prompts/gamma.prompt.yaml": prompt(text="G {{ topic }}")},
], ids=["added", "removed", "added-and-edited"])
def test_the_working_tree_relints_as_a_full_run_would(repo: git.Repo, files: Files) -> None:
    """`promptops lint` on uncommitted files: the same paths from the working tree."""
    pkg = Path(repo.working_tree_dir or ".")
    lint_package(Build(pkg, None, keep_asts=True))  # the working tree's own record
    write_files(pkg, files)

    def lint(cache: bool) -> tuple[list[str], str]:
        linted = lint_package(Build(pkg, None, keep_asts=True), Options(use_cache=cache))
        return [f"{f.path}:{f.line}:{f.col}:{f.code}:{f.message}" for f in linted.findings], \
            linted.how

    found, how = lint(True)
    assert found == lint(False)[0]
    assert how == "incremental"
