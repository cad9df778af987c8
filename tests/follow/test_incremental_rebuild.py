"""serve's incremental rebuild (promptops.pipeline.rebuild): a commit is rebuilt from the
last bundle in proportion to what it changed, and the bundle served is byte for byte what
`promptops build` makes of that commit, after any series of commits (docs/following.md).

Real repositories, real commits; each step compares the served bundle with a full build of
the same commit, and says which path was taken (the cases a full build must handle: the
manifest, a commit that does not build; a removed prompt and a dropped include are
incremental, what they reached leaving the bundle unless something else reaches it)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from follow_helpers import Recorder
from helpers.readers import differences
from helpers.repo import commit_files, make_repo

from promptops.__main__ import _LintGate
from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise
from promptops.serve.follow import Follower

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def prompt(description: str, text: str, *, name: str | None = None, extra: str = "") -> str:
    head = f"name: {name}\n" if name else ""
    return (f"{head}description: {description}\n"
            "arguments:\n  - name: topic\n    required: true\n"
            f"messages:\n  - role: user\n    text: |\n      {text}\n{extra}")


GUIDE = ("  - role: user\n    resource:\n      uri: promptops://demo/docs/guide.md\n"
         "      file: docs/guide.md\n")
LOGO = "  - role: user\n    image:\n      file: img/logo.png\n"
TEMPLATE = "  - role: assistant\n    template: templates/answer.md.j2\n"

START = {
    "pkg/promptops.yaml": "name: demo\nversion: 1.0.0\ndescription: test package\n",
    "pkg/partials/preamble.j2": '{% include "partials/rules.j2" %}\nYou are careful.\n',
    "pkg/partials/rules.j2": "Follow the house style.\n",
    "pkg/templates/answer.md.j2": '{% include "partials/preamble.j2" %}Answer about {{ topic }}\n',
    "pkg/docs/guide.md": "# Guide\n",
    "pkg/img/logo.png": PNG,
    "pkg/prompts/alpha.prompt.yaml": prompt(
        "first", '{% include "partials/preamble.j2" %} Write about {{ topic }}', extra=GUIDE),
    "pkg/prompts/beta.prompt.yaml": prompt("second", "Beta {{ topic }}", extra=TEMPLATE),
    "pkg/prompts/gamma.prompt.yaml": prompt("third", "Gamma {{ topic }}", extra=LOGO),
    "pkg/prompts/zeta.prompt.yaml": prompt("last", "Zeta {{ topic }}"),
    "README.md": "outside the package\n",
}

# Each step: the files a commit writes (None deletes) and the path its rebuild must take.
STEPS: list[tuple[str, dict[str, str | bytes | None], str]] = [
    ("a description edited", {"pkg/prompts/alpha.prompt.yaml": prompt(
        "first, edited", '{% include "partials/preamble.j2" %} Write about {{ topic }}',
        extra=GUIDE)}, "incremental"),
    ("a shared partial edited", {"pkg/partials/rules.j2": "Follow the new house style.\n"},
     "incremental"),
    ("a prompt added, with a new partial", {
        "pkg/prompts/delta.prompt.yaml": prompt("new",
                                                '{% include "partials/new.j2" %} {{ topic }}'),
        "pkg/partials/new.j2": '{% include "partials/rules.j2" %}New.\n'}, "incremental"),
    ("a named file's text edited", {"pkg/docs/guide.md": "# Guide\n\nMore.\n"}, "incremental"),
    ("a prompt renamed (its name: field)", {"pkg/prompts/beta.prompt.yaml": prompt(
        "second", "Beta {{ topic }}", name="aaa-first", extra=TEMPLATE)}, "incremental"),
    ("a file outside the package, and one no prompt reads",
     {"README.md": "changed\n", "pkg/notes.txt": "not read\n"}, "incremental"),
    ("an include added to a prompt", {"pkg/prompts/zeta.prompt.yaml": prompt(
        "last", '{% include "partials/preamble.j2" %}Zeta {{ topic }}')}, "incremental"),
    ("a template file's include added", {
        "pkg/templates/answer.md.j2": '{% include "partials/new.j2" %}{% include '
                                      '"partials/preamble.j2" %}Answer {{ topic }}\n'},
     "incremental"),
    ("an include dropped (what it reached is still reached: by a template)", {
        "pkg/prompts/delta.prompt.yaml": prompt("new", "No partial {{ topic }}")},
     "incremental"),
    ("a prompt removed (the image only it named leaves)",
     {"pkg/prompts/gamma.prompt.yaml": None}, "incremental"),
    ("the only prompt of a template removed (the template and what only it reaches leave)",
     {"pkg/prompts/beta.prompt.yaml": None}, "incremental"),
    ("a named file no longer named, an include still reached by another prompt", {
        "pkg/prompts/alpha.prompt.yaml": prompt("first", "Write about {{ topic }}")},
     "incremental"),
    ("prompts naming partials through an escape and through adjacent literals", {
        "pkg/prompts/eta.prompt.yaml": prompt("esc", '{% include "partials/\\x72ules.j2" %}'
                                                     " {{ topic }}"),
        "pkg/prompts/theta.prompt.yaml": prompt("adj", '{% include "partials/" "pre" '
                                                       '"amble.j2" %} {{ topic }}')},
     "incremental"),
    ("the last plain include of a partial dropped (still reached, as written above)", {
        "pkg/prompts/zeta.prompt.yaml": prompt("last", "Zeta {{ topic }}")}, "incremental"),
    ("the prompts reaching the partials removed (they leave)",
     {"pkg/prompts/eta.prompt.yaml": None, "pkg/prompts/theta.prompt.yaml": None},
     "incremental"),
    ("a prompt and the file it names added, then a prompt renamed and removed at once", {
        "pkg/prompts/iota.prompt.yaml": prompt("io", "Io {{ topic }}", extra=GUIDE),
        "pkg/prompts/delta.prompt.yaml": None,
        "pkg/prompts/kappa.prompt.yaml": prompt("k", '{% include "partials/new.j2" %}'
                                                     " {{ topic }}", name="aaa-kappa")},
     "incremental"),
    ("the manifest edited", {"pkg/promptops.yaml": "name: demo\nversion: 1.1.0\n"}, "full"),
    ("after a full build, an edit again", {"pkg/prompts/zeta.prompt.yaml": prompt(
        "last!", '{% include "partials/preamble.j2" %}Zeta {{ topic }}')}, "incremental"),
]


def full_build(pkg: Path, commit: str) -> bytes:
    return serialise(Build(pkg, commit).bundle)


# The gate, the reach search's chunk and the warm-up are independent of one another: each
# is on in some case and off in another, not in every combination (the suite's time).
@pytest.mark.parametrize(("gated", "chunk", "warm"), [
    (False, None, False), (True, None, False), (False, 1, False), (True, None, True),
    (False, 2, True)], ids=["as is", "lint gate", "chunk 1", "lint gate, warmed up",
                            "warmed up, chunk 2"])
def test_each_commit_serves_what_a_full_build_makes_byte_for_byte(
        tmp_path: Path, gated: bool, chunk: int | None, warm: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """(``chunk``: the prompts reach.py searches at a time, small enough here that a search
    for who still reaches a name crosses chunks as it does at 100,000 prompts; ``warm``:
    the follower warmed up, so the prompts a removal's search validates whatever it looks
    for are known from the start and kept from commit to commit, not searched for)"""
    if chunk is not None:
        from promptops.pipeline import reach

        monkeypatch.setattr(reach, "CHUNK", chunk)
    repo = make_repo(tmp_path / "repo", START)
    pkg = tmp_path / "repo" / "pkg"
    Follower([pkg], ref=None, log=lambda m: None).initial()  # fills the build cache
    follower = Follower([pkg], ref=None, log=lambda m: None,
                        gate=_LintGate() if gated else None)
    got: list[list[dict[str, object]]] = []
    assert serialise(follower.initial()[0]) == full_build(pkg, repo.head.commit.hexsha)
    assert follower.how[pkg] == "cached"
    if warm:
        follower.warm_up()
        assert suspects_kept(follower, pkg) == set()
    for label, files, how in STEPS:
        commit = commit_files(repo, files, label)
        follower._moved(got.append)
        assert follower.how[pkg] == how, label
        assert got and got[-1][0]["source"]["commit"] == commit, label
        assert serialise(got[-1][0]) == full_build(pkg, commit), label  # type: ignore[arg-type]
        if gated:  # the gate's record is a full lint's, and its reader map the record's
            gate_kept(follower, pkg, commit, label)
        warm = warm and how == "incremental"  # a full build's are found on first need
        if warm:  # kept from commit to commit, as a search of every prompt finds them
            assert suspects_kept(follower, pkg) == suspects_found(follower, pkg), label


def gate_kept(follower: Follower, pkg: Path, commit: str, label: str) -> None:
    """The lint gate's last record holds a full lint's findings of ``commit``, and the map
    of who reads what it keeps patched (promptops.lint.readers) answers as a fresh one."""
    from promptops.lint.readers import Readers
    from promptops.lint.runner import Options, lint_package

    gate = follower._gate._gate  # type: ignore[union-attr]
    ((_, _, record),) = gate._last.values()
    full = lint_package(Build(pkg, commit), Options(use_cache=False))
    assert record["findings"] == full.findings, label
    ((of, readers),) = gate._readers.values()
    assert of is record, label
    # every file of the package and every file the record names (a patch that kept a
    # prompt's old reads answers about those), asked as incremental lint asks
    files = {f.relative_to(pkg).as_posix() for f in pkg.rglob("*")
             if f.is_file() and ".git" not in f.parts}
    files |= {f for read in record["deps"].values() for f in read}
    assert differences(readers, Readers(record["deps"], record["names"]), files,
                       record["names"].values()) == [], label


def suspects_kept(follower: Follower, pkg: Path) -> set[str] | None:
    last = follower._last[pkg.resolve()]
    assert not isinstance(last, tuple)
    return last.suspects


def suspects_found(follower: Follower, pkg: Path) -> set[str]:
    """What reach.suspects finds in the served bundle's prompts (eta's escape and theta's
    adjacent literals, while they are there)."""
    from promptops.pipeline.bundle import canonical
    from promptops.pipeline.reach import suspects

    last = follower._last[pkg.resolve()]
    assert not isinstance(last, tuple)
    prompts = last.bundle["prompts"]
    return {prompts[k]["source"] for k in suspects([canonical(p) for p in prompts])}


def test_the_first_commit_after_a_cached_start_parses_only_what_changed(
        tmp_path: Path) -> None:
    """The memo is not filled by a full parse first: the served bundle is the base."""
    files = dict(START)
    for i in range(40):
        files[f"pkg/prompts/p{i:02d}.prompt.yaml"] = prompt(f"p{i}", f"Prompt {i} {{{{ topic }}}}")
    repo = make_repo(tmp_path / "repo", files)
    pkg = tmp_path / "repo" / "pkg"
    Follower([pkg], ref=None, log=lambda m: None).initial()
    follower = Follower([pkg], ref=None, log=lambda m: None)
    follower.initial()
    assert len(follower._memo) == 0  # a start from the cache parses nothing
    got: list[list[dict[str, object]]] = []
    commit = commit_files(repo, {"pkg/prompts/p07.prompt.yaml": prompt("p7!", "Seven {{ topic }}")})
    follower._moved(got.append)
    assert follower.how[pkg] == "incremental"
    assert serialise(got[-1][0]) == full_build(pkg, commit)  # type: ignore[arg-type]
    # the edited prompt, its old version (what it named before) and their one template
    # source each: not the 44 prompts
    assert 0 < len(follower._memo) <= 6


def test_a_commit_that_does_not_build_keeps_the_last_good_bundle_and_the_next_is_incremental(
        tmp_path: Path, recorder: Recorder) -> None:
    repo = make_repo(tmp_path / "repo", START)
    pkg = tmp_path / "repo" / "pkg"
    follower = Follower([pkg], ref=None, log=recorder.log)
    first = follower.initial()
    got: list[list[dict[str, object]]] = []
    commit_files(repo, {"pkg/prompts/zeta.prompt.yaml": "description: [unclosed\n"}, "broken")
    follower._moved(got.append)
    assert got == [] and any("does not build" in line for line in recorder.logs)
    assert first[0]["source"]["commit"] != repo.head.commit.hexsha
    fixed = commit_files(repo, {"pkg/prompts/zeta.prompt.yaml": prompt("fixed", "Z {{ topic }}")},
                         "fixed")
    follower._moved(got.append)
    assert follower.how[pkg] == "incremental"
    assert serialise(got[-1][0]) == full_build(pkg, fixed)  # type: ignore[arg-type]


def test_a_lint_error_in_an_incremental_commit_is_refused_as_before(
        tmp_path: Path, recorder: Recorder) -> None:
    repo = make_repo(tmp_path / "repo", START)
    pkg = tmp_path / "repo" / "pkg"
    Follower([pkg], ref=None, log=lambda m: None, gate=_LintGate()).initial()
    follower = Follower([pkg], ref=None, log=recorder.log, gate=_LintGate())
    follower.initial()
    got: list[list[dict[str, object]]] = []
    commit_files(repo, {"pkg/prompts/zeta.prompt.yaml": prompt("z", "Hi {{ nobody }}")},
                 "lint error")
    follower._moved(got.append)
    assert got == []
    assert any("lint fails" in line and "PO201" in line for line in recorder.logs)
    fixed = commit_files(repo, {"pkg/prompts/zeta.prompt.yaml": prompt("z", "Hi {{ topic }}")})
    follower._moved(got.append)
    assert serialise(got[-1][0]) == full_build(pkg, fixed)  # type: ignore[arg-type]


def test_each_prompt_s_encoding_is_cut_from_the_bundle_file_only_when_that_is_exact(
        tmp_path: Path) -> None:
    """A prompt's metadata can hold the text that separates prompts in the file: the cut
    then gives one piece too many and the prompts are encoded instead."""
    from promptops.pipeline.bundle import canonical
    from promptops.pipeline.rebuild import Built

    repo = make_repo(tmp_path / "repo", {
        **START, "pkg/prompts/zeta.prompt.yaml": prompt("last", "Zeta {{ topic }}") + (
            "metadata:\n  x:\n    - {a: 1}\n    - {arguments: [1]}\n")})
    pkg = tmp_path / "repo" / "pkg"
    bundle = Build(pkg, repo.head.commit.hexsha).bundle
    file = tmp_path / "bundle.json"
    file.write_bytes(serialise(bundle))
    assert b'},{"arguments":[' in file.read_bytes().split(b'"prompts":[', 1)[1][1:]
    exact = [canonical(p) for p in bundle["prompts"]]
    assert Built("t", bundle, file=file).prompts_encoded() == exact
    plain = Build(pkg, repo.head.commit.hexsha).bundle
    plain["prompts"] = [p for p in plain["prompts"] if p["name"] != "zeta"]
    file.write_bytes(serialise(plain))
    built = Built("t", plain, file=file)
    assert built.prompts_encoded() == [canonical(p) for p in plain["prompts"]]
    file.unlink()
    assert Built("t", plain, file=file).prompts_encoded() == built.encoded


def test_a_swap_reuses_what_it_knew_only_of_the_same_prompt_objects(tmp_path: Path) -> None:
    """The snapshot of a new bundle starts from the last one (the follower swaps in a
    bundle per commit, most of whose prompts are the same objects): what it keeps must be
    what it would work out afresh, for a prompt that changed too. A new renderer keeps
    nothing: each prompt's plan, with its loop, is made at its first get."""
    from promptops.render.renderer import Renderer
    from promptops.serve.catalog import Snapshot

    repo = make_repo(tmp_path / "repo", START)
    first = Build(tmp_path / "repo" / "pkg", repo.head.commit.hexsha).bundle
    changed = {**first["prompts"][0], "messages": [
        {"role": "system", "type": "text", "text": "{{ item }}", "loopItem": "item",
         "loopOver": "topic"}]}
    second = {**first, "prompts": [changed, *first["prompts"][1:]], "digest": "sha256:other"}
    old = Snapshot.build([first])
    new = Snapshot.build([second], old)  # type: ignore[list-item]
    fresh = Snapshot.build([second])  # type: ignore[list-item]
    assert {n: e.shaped for n, e in new.index.items()} == {
        n: e.shaped for n, e in fresh.index.items()}
    assert new.index[changed["name"]].shaped and not old.index[changed["name"]].shaped
    renderer = Renderer(second)  # type: ignore[arg-type]
    assert {p["name"] for p in second["prompts"]  # type: ignore[index]
            if renderer._plan(p["name"]).looped} == {changed["name"]}


def test_two_packages_in_one_repository_each_rebuild_from_their_own_last_bundle(
        tmp_path: Path) -> None:
    files = dict(START)
    files.update({k.replace("pkg/", "other/"): v for k, v in START.items() if k.startswith("pkg/")})
    files["other/promptops.yaml"] = "name: other\nversion: 1.0.0\n"
    for name in ("alpha", "beta", "gamma", "zeta"):  # prompt names are unique across packages
        text = files.pop(f"other/prompts/{name}.prompt.yaml")
        files[f"other/prompts/o{name}.prompt.yaml"] = text
    repo = make_repo(tmp_path / "repo", files)
    pkgs = [tmp_path / "repo" / "pkg", tmp_path / "repo" / "other"]
    Follower(pkgs, ref=None, log=lambda m: None).initial()
    follower = Follower(pkgs, ref=None, log=lambda m: None)
    follower.initial()
    got: list[list[dict[str, object]]] = []
    for path in ("other/partials/rules.j2", "pkg/prompts/beta.prompt.yaml"):
        commit = commit_files(repo, {path: f"# {path}\n" if path.endswith(".j2") else prompt(
            "edited", "Beta {{ topic }}", extra=TEMPLATE)})
        follower._moved(got.append)
        edited = pkgs[1] if path.startswith("other/") else pkgs[0]
        assert follower.how[edited] == "incremental"
        assert [serialise(b) for b in got[-1]] == [  # type: ignore[arg-type]
            full_build(p, commit) for p in pkgs]


def test_a_removal_whose_search_gives_up_is_built_in_full_and_exact(tmp_path: Path) -> None:
    """Prompts whose text could name a template without spelling it (here, two quotes
    with nothing between, as adjacent literals would be) are each validated alone; past
    reach.MAX_VALIDATED of them a full build is made, with the same bytes."""
    from promptops.pipeline.reach import MAX_VALIDATED

    files = dict(START)
    for i in range(MAX_VALIDATED + 6):
        files[f"pkg/prompts/q{i:03d}.prompt.yaml"] = prompt(f"q{i}", "{{ topic or '' }}")
    repo = make_repo(tmp_path / "repo", files)
    pkg = tmp_path / "repo" / "pkg"
    Follower([pkg], ref=None, log=lambda m: None).initial()
    follower = Follower([pkg], ref=None, log=lambda m: None)
    follower.initial()
    got: list[list[dict[str, object]]] = []
    few = commit_files(repo, {"pkg/prompts/q000.prompt.yaml": None,  # reaches nothing: no search
                              "pkg/prompts/zeta.prompt.yaml": None})
    follower._moved(got.append)
    assert follower.how[pkg] == "incremental"
    assert serialise(got[-1][0]) == full_build(pkg, few)  # type: ignore[arg-type]
    commit = commit_files(repo, {"pkg/prompts/beta.prompt.yaml": None})  # its template: search
    follower._moved(got.append)
    assert follower.how[pkg] == "full"
    assert serialise(got[-1][0]) == full_build(pkg, commit)  # type: ignore[arg-type]
