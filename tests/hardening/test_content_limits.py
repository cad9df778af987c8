"""Invariant 2: no YAML or template content crashes anything; each is a positioned problem.

Before: 40,000 nested ``[`` made ruamel.yaml's C composer overflow the C stack (SIGSEGV,
killing `check` and a `serve` following HEAD), 1,000 to 10,000 raised RecursionError
(exit 3); a 4,301-digit integer raised ValueError (exit 3); aliases of aliases expanded a
100 KB file into a 50 MB bundle; 70 nested parentheses, 300 nested ``{% if %}`` or a
20,000-term ``+`` chain raised RecursionError out of Jinja's parser (exit 3). Now each is
refused before anything recursive runs (``promptops/yaml_limits.py``,
``promptops/template_limits.py``) with file, line, column and the limit, exit 1.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from content_helpers import MANIFEST, PROMPT, cli, serves_the_next_good_commit
from hardening_helpers import Serve, record
from helpers.repo import commit_files, make_repo, run_cli_process

from promptops.errors import PackageError
from promptops.pipeline.build import Build

YAML_RULE = "invalid YAML for a package: "
AREA = "hostile content"


def deep_flow(n: int) -> str:
    return ("description: d\narguments:\n  - name: a\n    default: " + "[" * n + "]" * n
            + "\nmessages:\n  - {role: user, text: hi}\n")


def deep_block(n: int) -> str:
    return ("description: d\nmessages:\n  - {role: user, text: hi}\nx:\n"
            + "".join(" " * i + "- \n" for i in range(n)))


def package(root: Path, files: dict[str, str | bytes]) -> Path:
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/ok.prompt.yaml": PROMPT, **files})
    return root


def problems(root: Path, ref: str | None = None) -> list[str]:
    with pytest.raises(PackageError) as err:
        _ = Build(root, ref).bundle
    return [str(p) for p in err.value.problems]


# Depth counts every collection of the document (the top mapping, `arguments`, its item
# are 3 of them), so with `default:` at column 14 the 98th `[` (column 111) is level 101.
# libyaml stops at 1,000 levels itself; that position is reported then (column 1011).
@pytest.mark.parametrize(("shape", "depth", "where"), [
    ("flow", 98, "4:111"), ("flow", 1_000, "4:1011"), ("flow", 5_000, "4:1011"),
    ("flow", 40_000, "4:1011"), ("block", 150, "104:100"), ("block", 1_500, "1004:1000"),
])
def test_deep_yaml_is_a_positioned_problem(tmp_path: Path, shape: str, depth: int,
                                           where: str) -> None:
    text = deep_flow(depth) if shape == "flow" else deep_block(depth)
    root = package(tmp_path / "pkg", {"prompts/deep.prompt.yaml": text})
    expected = (f"prompts/deep.prompt.yaml:{where}: {YAML_RULE}collections nested more than "
                "100 levels deep (limits: SECURITY.md)")
    assert problems(root) == [expected]
    assert problems(root, "HEAD") == [expected]
    for args in (["check", str(root)], ["lint", str(root)], ["build", str(root), "-o",
                                                              str(tmp_path / "d")]):
        run = cli(*args, at=tmp_path, allowed=(1,))
        assert "prompts/deep.prompt.yaml:" + where in run.err + run.out, run
    record(AREA, f"YAML nested {depth:,} deep ({shape})", "check, lint, build",
           f"refused: exit 1: {expected}", "test_content_limits.py::"
           f"test_deep_yaml_is_a_positioned_problem[{shape}-{depth}-{where}]")


@pytest.mark.parametrize("shape", ["flow", "block"])
def test_nesting_up_to_the_limit_loads(shape: str) -> None:
    from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

    def doc(depth: int) -> str:
        if shape == "flow":
            return "[" * depth + "]" * depth
        return "".join(" " * i + "-\n" for i in range(depth))

    data = load_yaml("x.yaml", doc(100).encode()).data
    for _ in range(99):
        data = data[-1]
    assert data in ([], [None])  # the 100th level
    with pytest.raises(YamlProblem) as err:
        load_yaml("x.yaml", doc(101).encode())
    assert "collections nested more than 100 levels deep" in str(err.value)


def test_a_file_of_too_many_nodes_is_refused_before_it_is_composed(tmp_path: Path) -> None:
    """10 MB of small nested values (2.5 million nodes) took 8 minutes and 7 GB (ruamel.yaml's
    round-trip tree, for the position of a schema problem); the node count is checked on
    libyaml's event stream first, which stops at the limit."""
    unit = "[" * 96 + "1" + "]" * 96
    text = PROMPT + "x:\n" + "".join(f"  - {unit}\n" for _ in range(50_000))
    root = package(tmp_path / "pkg", {"prompts/big.prompt.yaml": text})
    found = problems(root)
    assert len(found) == 1 and re.match(
        rf"prompts/big.prompt.yaml:\d+:\d+: {YAML_RULE}more than 250,000 nodes \(values, "
        r"mappings and sequences, aliases expanded\)", found[0]), found
    record(AREA, "10 MB of values nested 99 deep (2.5 million nodes)", "check",
           f"refused: exit 1: {re.sub(':[0-9]+:[0-9]+:', ':<line>:<col>:', found[0])} (was: 8 "
           "minutes and 7.4 GB)", "test_content_limits.py::"
           "test_a_file_of_too_many_nodes_is_refused_before_it_is_composed")
    aliased = PROMPT + "a: &a [" + ", ".join(["1"] * 1_000) + "]\nb: [" + ", ".join(
        ["*a"] * 300) + "]\n"  # 2,000 characters repeated 300 times: under the other bound
    root = package(tmp_path / "pkg2", {"prompts/big.prompt.yaml": aliased})
    assert "more than 250,000 nodes" in problems(root)[0]


def test_a_file_just_under_the_node_limit_loads_and_is_positioned() -> None:
    from promptops.pipeline.yamlio.loader import load_yaml

    text = "x: [" + ", ".join(["a"] * 249_990) + "]\n"  # 249,993 nodes
    loaded = load_yaml("x.yaml", text.encode())
    assert len(loaded.data["x"]) == 249_990
    assert loaded.position(("x", 249_989)) == (1, 5 + 3 * 249_989)
    assert loaded.position(("x",), key=True) == (1, 1)


@pytest.mark.parametrize("which", ["promptops.yaml", "tests/ok.test.yaml"])
def test_deep_manifest_and_test_files(tmp_path: Path, which: str) -> None:
    body = ("name: demo\nversion: 1.0.0\nx: " if which == "promptops.yaml"
            else "prompt: ok\ncases:\n  - name: c\n    arguments: {topic: ") + "[" * 5_000
    root = package(tmp_path / "pkg", {which: body + "]" * 5_000 + ("}\n" if "test" in which
                                                                    else "\n")})
    run = cli("check", str(root), at=tmp_path, allowed=(1, 2))
    assert re.search(rf"{re.escape(which)}:\d+:\d+: {YAML_RULE}collections nested more than 100",
                     run.err), run.err
    if which == "promptops.yaml":
        assert cli("bump", "patch", str(root), at=tmp_path, allowed=(1,)).err.startswith(
            f"{which}:3:1003: {YAML_RULE}collections nested")


def test_40000_deep_yaml_kills_neither_check_nor_a_following_serve(tmp_path: Path) -> None:
    """The process is what is under test (a signal, not an exception): real subprocesses."""
    root = package(tmp_path / "pkg", {})
    repo = make_repo(root, {})
    server = Serve(str(root), cwd=tmp_path)
    try:
        server.initialize()
        assert server.text("ok", topic="x") == "About x"
        commit_files(repo, {"prompts/deep.prompt.yaml": deep_flow(40_000)}, "deep")
        check = run_cli_process("check", str(root), timeout=120)
        assert check.returncode == 1, (check.returncode, check.stderr)
        assert "collections nested more than 100 levels deep" in check.stderr
        line = server.wait_log("does not build")
        assert "prompts/deep.prompt.yaml:4:1011" in "".join(server.stderr), line
        assert server.text("ok", topic="x") == "About x"  # the last good set, still served
        serves_the_next_good_commit(server, repo, {"prompts/deep.prompt.yaml": PROMPT}, "deep",
                                    "About x")
    finally:
        server.kill()
    record(AREA, "YAML nested 40,000 deep committed while serving", "check, serve",
           "check: exit 1 with the positioned problem (was: SIGSEGV); serve logs `does not "
           "build`, keeps serving the last good bundle, serves the next good commit",
           "test_content_limits.py::"
           "test_40000_deep_yaml_kills_neither_check_nor_a_following_serve")


@pytest.mark.parametrize("spelling", ["9" * 4_301, "-" + "1" * 5_000, "0x" + "f" * 3_600,
                                      "1_" * 4_400 + "1"],
                         ids=["4301 digits", "negative", "hex", "underscores"])
@pytest.mark.parametrize("path", ["fast", "fallback"])
def test_an_integer_past_the_int_string_limit(tmp_path: Path, spelling: str, path: str) -> None:
    # A complex key (`? [a]`) is something only ruamel.yaml constructs: the file takes the
    # fallback path, where the integer used to raise ValueError out of ruamel.yaml.
    lead = "? [a]\n: b\n" if path == "fallback" else ""
    text = lead + PROMPT + f"x: {spelling}\n"
    root = package(tmp_path / "pkg", {"prompts/big.prompt.yaml": text})
    found = problems(root)
    assert len(found) == 1 and re.match(  # the fallback points at the digits themselves
        rf"prompts/big.prompt.yaml:{9 if lead else 7}:[45]: {YAML_RULE}an integer of ",
        found[0]), found
    assert "is over the limit of 4,300; quote it to keep it as text" in found[0]
    cli("check", str(root), at=tmp_path, allowed=(1,))
    if spelling == "9" * 4_301:
        record(AREA, f"an integer of 4,301 digits ({path} YAML path)", "check",
               f"refused: exit 1: {found[0]} (was: exit 3, ValueError)",
               f"test_content_limits.py::test_an_integer_past_the_int_string_limit"
               f"[{path}-4301 digits]")


@pytest.mark.parametrize("lead", ["", "? [a]\n: b\n"], ids=["fast", "fallback"])
def test_the_largest_integer_within_the_limit_loads(lead: str) -> None:
    from promptops.pipeline.yamlio.loader import load_yaml

    data = load_yaml("x.yaml", f"{lead}x: {'9' * 4_300}\ny: 0x{'f' * 3_500}\n".encode()).data
    assert data["x"] == int("9" * 4_300) and data["y"] == int("f" * 3_500, 16)


def laughs(levels: int, fan: int = 10) -> str:
    """Each anchor repeats the one before ``fan`` times: fan**levels copies of a 100-char text."""
    lines = ["description: d", "messages:", "  - {role: user, text: hi}",
             "a0: &a0 [" + ", ".join(["x" * 100] * fan) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_alias_expansion_is_bounded(tmp_path: Path) -> None:
    text = laughs(6)  # 1,000,000 copies of 100 characters: 100 MB from 600 bytes
    root = package(tmp_path / "pkg", {"prompts/lol.prompt.yaml": text})
    assert problems(root) == [
        f"prompts/lol.prompt.yaml:7:5: {YAML_RULE}aliases repeat more than 1,000,000 characters "
        "in all (expanded, a small file would become a huge bundle) (limits: SECURITY.md)"]
    run = cli("build", str(root), "-o", str(tmp_path / "dist"), at=tmp_path, allowed=(1,))
    assert not (tmp_path / "dist").exists(), run
    record(AREA, "600 bytes of aliases expanding to 100 MB (billion laughs)", "build",
           f"refused: exit 1: {problems(root)[0]} (was: a 50 MB bundle from 100 KB)",
           "test_content_limits.py::test_alias_expansion_is_bounded")


def test_ordinary_aliases_still_work(tmp_path: Path) -> None:
    text = ("description: d\narguments:\n  - &arg {name: topic, required: true, description: "
            "the subject}\nmessages:\n  - &msg {role: user, text: 'About {{ topic }}'}\n"
            "  - *msg\n")
    root = package(tmp_path / "pkg", {"prompts/alias.prompt.yaml": text})
    prompt = next(p for p in Build(root).bundle["prompts"] if p["name"] == "alias")
    assert prompt["messages"] == [{"role": "user", "type": "text", "text": "About {{ topic }}"}] * 2


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    root = package(tmp_path / "pkg", {"prompts/rec.prompt.yaml": PROMPT + "x: &x [1, *x]\n"})
    assert problems(root) == [f"prompts/rec.prompt.yaml:7:4: {YAML_RULE}a recursive alias (an "
                              "anchor that contains itself) (limits: SECURITY.md)"]


def template(body: str) -> str:
    return f"description: d\nmessages:\n  - role: user\n    text: |\n      {body}\n"


TEMPLATES = {
    "70 nested parentheses": ("{{ " + "(" * 70 + "1" + ")" * 70 + " }}",
                              "more than 16 brackets open inside each other"),
    "300 nested ifs": ("{% if 1 %}" * 300 + "x" + "{% endif %}" * 300,
                       "more than 16 block tags open inside each other"),
    "a 20,000-term + chain": ("{{ " + " + ".join(["1"] * 20_000) + " }}",
                              "an expression nested more than 48 levels deep"),
    "200 chained filters": ("{{ 1" + "|string" * 200 + " }}",
                            "an expression nested more than 48 levels deep"),
    "21 nested for loops": ("{% for i in [1] %}" * 21 + "x" + "{% endfor %}" * 21,
                            "more than 16 block tags open inside each other"),
}


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_deep_templates_are_positioned_problems(tmp_path: Path, name: str) -> None:
    body, why = TEMPLATES[name]
    root = package(tmp_path / "pkg", {"prompts/deep.prompt.yaml": template(body),
                                      "partials/deep.j2": body + "\n",
                                      "prompts/inc.prompt.yaml": template(
                                          "{% include 'partials/deep.j2' %}")})
    message = f"template: template too deeply nested: {why}"
    found = problems(root)
    assert [p.split(": ", 1)[0] for p in found] == ["partials/deep.j2:1:1",
                                                    "prompts/deep.prompt.yaml:5:7"], found
    assert all(message in p for p in found)
    repo = make_repo(root, {})
    for args in (["check", str(root)], ["lint", str(root)], ["lint", str(root), "--ref", "HEAD"],
                 ["build", str(root), "-o", str(tmp_path / "d")], ["test", str(root)]):
        run = cli(*args, at=tmp_path, allowed=(1,))
        assert "prompts/deep.prompt.yaml:5:7" in run.err + run.out, (args, run)
    record(AREA, f"a template with {name}", "check, lint, build, test, diff",
           f"refused: exit 1: {found[1]} (and at the partial that holds it)",
           f"test_content_limits.py::test_deep_templates_are_positioned_problems[{name}]")
    good = commit_files(repo, {"prompts/deep.prompt.yaml": template("fine"),
                               "partials/deep.j2": "fine\n"}, "fixed")
    run = cli("diff", good, "HEAD~1", at=root)  # the review reports the head as invalid
    assert f"prompts/deep.prompt.yaml:5:7: {message}" in run.out, run


def test_after_refusing_deep_templates_the_interpreter_is_sound(tmp_path: Path) -> None:
    """No RecursionError is left half-handled: the same process loads and renders normally,
    and nothing changed the recursion limit (no process-global switch)."""
    limit = sys.getrecursionlimit()
    for i, (body, _) in enumerate(TEMPLATES.values()):
        root = package(tmp_path / f"p{i}", {"prompts/deep.prompt.yaml": template(body)})
        assert len(problems(root)) == 1
    assert sys.getrecursionlimit() == limit
    from promptops.render.renderer import Renderer

    root = package(tmp_path / "fine", {})
    reply = Renderer(Build(root).bundle).get("ok", {"topic": "x"})
    assert reply["messages"][0]["content"]["text"] == "About x"


def test_the_worst_template_within_the_limits_renders_deep_in_a_stack() -> None:
    """The limits are low enough: everything they allow at once parses, compiles (Python's
    own limits: 200 nested parentheses, 20 nested loops, 100 indentation levels) and renders
    with 600 frames of the stack already used."""
    from promptops.sandbox import nesting as tl
    from promptops.sandbox.environment import environment, render_bounded

    env = tl.guard(environment({}))
    blocks, brackets, depth = tl.MAX_BLOCK_DEPTH, tl.MAX_BRACKET_DEPTH, tl.MAX_EXPRESSION_DEPTH
    loops = "{% for i in x %}" * (blocks - 1) + "{% include 'p' ignore missing %}"
    worst = ["{{ " + "(" * brackets + "a" + ")" * brackets + " }}",
             "{{ " + "not " * (depth - 1) + "a }}",
             "{{ a" + "|string" * (depth - 1) + " }}",
             "{{ " + " + ".join(["a"] * depth) + " }}",
             "{{ " + "a if a else " * ((depth - 1) // 2) + "a }}"]

    def at_depth(n: int, source: str) -> str:
        if n:
            return at_depth(n - 1, source)
        tl.parse(env, source)
        return render_bounded(env.from_string(source), {"a": 1, "x": [1]})

    for body in worst:
        source = loops + body + "{% endfor %}" * (blocks - 1)
        assert at_depth(600, source) in ("1", "True", "False", str(depth))


def test_security_md_states_the_limits_the_code_enforces() -> None:
    from promptops.pipeline.yamlio import limits as yl
    from promptops.sandbox import nesting as tl

    text = (Path(__file__).resolve().parents[2] / "SECURITY.md").read_text(encoding="utf-8")
    section = text.split("## What a package may read and write")[1]
    for stated in (f"| YAML nesting | {yl.MAX_DEPTH} levels", f"| YAML nodes | {yl.MAX_NODES:,} ",
                   f"at most {yl.MAX_ALIAS_EXPANSION:,} characters",
                   f"| YAML integers | {yl.MAX_INT_DIGITS:,} decimal digits",
                   f"| template block tags | {tl.MAX_BLOCK_DEPTH} ",
                   f"| template brackets | {tl.MAX_BRACKET_DEPTH} ",
                   f"| template expressions | {tl.MAX_EXPRESSION_DEPTH} levels"):
        assert stated in section, stated
