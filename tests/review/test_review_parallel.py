"""The review renders a large change on every core, with the same lines as in process."""

from __future__ import annotations

from pathlib import Path

from repo_helpers import make_repo

from promptops.pipeline.build import Build
from promptops.pipeline.templates import TemplateIndex
from promptops.review.build import _Shared

PROMPT = ("arguments:\n  - name: who\nmessages:\n  - role: user\n"
          "    text: '{{% include \"partials/p.j2\" %}} {n} {{{{ who }}}}'\n")


def test_render_ahead_in_a_pool_equals_rendering_in_process(tmp_path: Path) -> None:
    files = {"promptops.yaml": "name: p\nversion: 1.0.0\n", "partials/p.j2": "Hi"}
    files.update({f"prompts/p{n}.prompt.yaml": PROMPT.format(n=n) for n in range(30)})
    repo = make_repo(tmp_path / "r", files)
    (tmp_path / "r" / "partials" / "p.j2").write_text("Hello")
    repo.git.commit("-qam", "edit")
    old = Build(tmp_path / "r", "HEAD~1").bundle
    new = Build(tmp_path / "r", "HEAD").bundle
    requests = [(f"p{n}", f"p{n}", {"who": w}) for n in range(30) for w in ("a", "b")]
    requests.append(("p0", "p0", {"nobody": "x"}))  # an error is rendered as its error
    pooled = _Shared(old, new, TemplateIndex())
    pooled.render_ahead(requests, jobs=2)
    assert len(pooled.rendered) == len(requests)
    alone = _Shared(old, new, TemplateIndex())
    for a, b, args in requests:
        assert pooled.render(a, b, args) == alone.render(a, b, args)
    base, head = pooled.render("p3", "p3", {"who": "a"})
    assert "Hi 3 a" in "\n".join(base) and "Hello 3 a" in "\n".join(head)
    assert pooled.render("p0", "p0", {"nobody": "x"})[1][0].startswith("error -32602")
