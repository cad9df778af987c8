"""BASE takes HEAD's render of a message the edit cannot reach: the review is the one
that renders every message at both ends (promptops/review/reuse.py).

Each scenario edits a branch of one package whose prompts have a message including the
edited partial and a message that does not; the report with reuse must equal the report
with none (``Shared.reusable`` answering no message), and the messages taken are counted,
so a reuse that never happens, or one that ignores the budget, fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_helpers import fixed_commit, fixed_repo

from promptops.review import build_report
from promptops.review import reuse as review_reuse
from promptops.review import shared as review_shared

# 70 characters of output at most: the second message writes 34 + the name, the first
# what partials/pre.j2 holds; "Short." leaves room, a long preamble does not
MANIFEST = "name: reuse\nversion: 1.0.0\nlimits:\n  maxOutputChars: 70\n"
PROMPT = ("arguments:\n  - name: who\n    examples: [ann]\nmessages:\n"
          "  - role: assistant\n    text: '{{% include \"partials/pre.j2\" %}}'\n"
          "  - role: user\n    text: '{{{{ who }}}} asks {n}: {{{{ \"y\" * 20 }}}}"
          "{{% include \"partials/tail.j2\" %}}'\n")
LONG = "A preamble long enough to leave no room."
SCENARIOS: dict[str, tuple[dict[str, str | bytes | None], dict[str, str | bytes | None], int]] = {
    # name: (main's files over the defaults, the branch's edit, messages BASE takes)
    "grows": ({}, {"partials/pre.j2": "Short. Cite."}, 3),
    "shrinks": ({}, {"partials/pre.j2": "S."}, 0),  # BASE has less left: rendered
    "over at base": ({"partials/pre.j2": LONG}, {"partials/pre.j2": "S."}, 0),
    "over at head": ({}, {"partials/pre.j2": LONG}, 0),  # HEAD fails: nothing kept
    "second message edited": ({}, {"partials/pre.j2": "Short. Cite.",
                                   "prompts/p1.prompt.yaml": PROMPT.format(n=11)}, 2),
    "both reach the edit": ({}, {"partials/pre.j2": "Short. Cite.", "partials/tail.j2": "!"},
                            0),
}


def _files(extra: dict[str, str | bytes | None]) -> dict[str, str | bytes | None]:
    files: dict[str, str | bytes | None] = {
        "promptops.yaml": MANIFEST, "partials/pre.j2": "Short.", "partials/tail.j2": "."}
    files.update({f"prompts/p{n}.prompt.yaml": PROMPT.format(n=n) for n in range(3)})
    files.update(extra)
    return files


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    out: dict[str, Path] = {}
    for n, (name, (base, change, _)) in enumerate(SCENARIOS.items(), 1):
        root = tmp_path_factory.mktemp("reuse") / "r"
        repo = fixed_repo(root, _files(base))
        repo.git.checkout("-q", "-b", "change")
        fixed_commit(repo, change, name, n)
        repo.git.checkout("-q", "main")
        out[name] = root
    yield out


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_taking_heads_render_gives_the_report_of_rendering_both_ends(
        repos: dict[str, Path], scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repos[scenario]
    monkeypatch.chdir(root)
    taken: list[int] = []
    real = review_reuse._Message.render

    def counting(self: Any, ctx: Any, budget: Any, parent: Any = None) -> str:
        before = self.side.taken
        try:
            return real(self, ctx, budget, parent)
        finally:
            taken.append(self.side.taken - before)

    monkeypatch.setattr(review_reuse._Message, "render", counting)
    fast = build_report(root, "main", "change", None)
    monkeypatch.setattr(review_shared.Shared, "reusable", lambda *_: ())
    slow = build_report(root, "main", "change", None)
    assert fast.model_dump() == slow.model_dump()
    assert sum(taken) == SCENARIOS[scenario][2]
    rendered = [r.diff for p in fast.packages[0].prompts for r in p.rendered]
    assert rendered  # every scenario changes what the prompts render
    if scenario == "over at base":
        assert all("error" in d for d in rendered)
