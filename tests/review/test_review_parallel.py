"""The review renders a large change on every core, with the same lines and test outcomes
as in process."""

from __future__ import annotations

from pathlib import Path

from helpers.repo import make_repo

from promptops.pipeline.build import Build
from promptops.pipeline.templates import TemplateIndex
from promptops.review import gates
from promptops.review.shared import Shared as _Shared

PROMPT = ("arguments:\n  - name: who\nmessages:\n  - role: user\n"
          "    text: '{{% include \"partials/p.j2\" %}} {n} {{{{ who }}}}'\n")
TESTS = ("prompt: p1\ncases:\n  - name: greets\n    arguments: {who: a}\n"
         "    expect:\n      contains: ['Hello 1 a']\n"
         "  - name: fails\n    arguments: {who: b}\n    expect:\n      contains: ['nope']\n")


def test_render_all_in_a_pool_equals_rendering_in_process(tmp_path: Path) -> None:
    files = {"promptops.yaml": "name: p\nversion: 1.0.0\n", "partials/p.j2": "Hi",
             "tests/p1.test.yaml": TESTS}
    files.update({f"prompts/p{n}.prompt.yaml": PROMPT.format(n=n) for n in range(30)})
    repo = make_repo(tmp_path / "r", files)
    (tmp_path / "r" / "partials" / "p.j2").write_text("Hello")
    repo.git.commit("-qam", "edit")
    old = Build(tmp_path / "r", "HEAD~1").bundle
    head = Build(tmp_path / "r", "HEAD")
    new = head.bundle
    plan = gates.test_plan(head)
    assert isinstance(plan, gates.TestPlan)
    units = [(f"p{n}", f"p{n}", [{"who": w} for w in ("a", "b")]) for n in range(30)]
    units[0][2].append({"nobody": "x"})  # an error is rendered as its error
    pooled = _Shared(old, new, TemplateIndex(), head)
    pooled.render_all(units, plan, jobs=2)
    assert sum(len(bodies) for _, bodies in pooled.rendered.values()) == 61  # by unit
    alone = _Shared(old, new, TemplateIndex(), head)
    alone.render_all(units, plan, jobs=1)
    assert pooled.rendered == alone.rendered
    assert pooled.outcomes == [o.__class__(o.status, o.failures, o.rendered, o.snapshot,
                                           o.snapshot_state, p.seconds)
                               for o, p in zip(alone.outcomes, pooled.outcomes, strict=True)]
    assert [o.status for o in pooled.outcomes].count("failed") == 1
    assert len(pooled.outcomes) == 32  # two test cases and thirty smoke cases
    body = pooled.rendered_diff("p3", "p3", {"who": "a"})  # the hunks, made in the pool
    assert body[0].startswith("@@ ")
    assert any(line.startswith("-") and "Hi 3 a" in line for line in body)
    assert any(line.startswith("+") and "Hello 3 a" in line for line in body)
    assert pooled.rendered_diff("p0", "p0", {"nobody": "x"}) == []  # the same error at both
    assert pooled.lint == alone.lint and pooled.lint.status == "passed"
