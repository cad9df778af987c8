"""A prompt's reply is the same bytes whether served from the bundle just built or from its
file: serve answers a cold start from the compiled bundle in memory and a start from the
build cache from the bundle parsed back from its canonical (key-sorted) bytes, and a
client comparing replies, a cache keyed by a reply's hash, or a golden test must not see
two byte strings for one bundle. Found in session 15: a content's ``annotations`` kept the
model's field order in memory (audience, priority, lastModified) but came back sorted from
the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import write_files

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import parse_bundle, serialise
from promptops.render.renderer import Renderer

PROMPTS = {
    "annotated": "messages:\n  - role: user\n    text: 'About {{ topic }}'\n"
                 "    annotations: {audience: [user], priority: 0.5, "
                 "lastModified: '2025-01-02T03:04:05Z'}\n",
    "link": "messages:\n  - role: user\n    resource_link: {uri: 'file:///a.md', name: a, "
            "title: A, mimeType: text/markdown, description: the a}\n"
            "    annotations: {priority: 1, audience: [assistant, user]}\n",
    "plain": "messages:\n  - role: user\n    text: 'Plain {{ topic }}'\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root: Path = tmp_path_factory.mktemp("order")
    write_files(root, {
        "promptops.yaml": "name: order\nversion: 1.0.0\n",
        **{f"prompts/{n}.prompt.yaml": "arguments:\n  - {name: topic}\n" + body
           for n, body in PROMPTS.items()},
    })
    return Build(root).bundle


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_a_reply_is_the_same_bytes_from_memory_and_from_the_file(built: Any, name: str) -> None:
    from_file = parse_bundle(serialise(built), "order.bundle.json")
    replies = [json.dumps(Renderer(b).render(name, {"topic": "x"})[0], ensure_ascii=False)
               for b in (built, from_file)]
    assert replies[0] == replies[1]
    assert json.loads(replies[0])["messages"], replies[0]  # something was rendered
