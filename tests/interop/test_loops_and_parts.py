"""The format's message loop (``for: ITEM in ARGUMENT``) and message parts (``continues``).

Real packages in temp folders, built by the real pipeline and rendered by the renderer serve
uses (docs/format.md, "Message loops" and "Messages of several parts").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from promptops.errors import ArgumentError, PackageError
from promptops.pipeline import bundle_check
from promptops.pipeline.build import Build
from promptops.render.renderer import MAX_HISTORY, Renderer
from promptops.versioning.changes import Kind
from promptops.versioning.engine import diff_bundles


def build(tmp: Path, prompt: dict[str, Any]) -> Renderer:
    (tmp / "prompts").mkdir(parents=True, exist_ok=True)
    (tmp / "promptops.yaml").write_text(yaml.safe_dump({"name": "demo", "version": "1.0.0"}))
    (tmp / "prompts" / "p.prompt.yaml").write_text(yaml.safe_dump(prompt, sort_keys=False))
    bundle = Build(tmp).bundle
    assert bundle_check.problems(bundle) == []  # serve's load-time check agrees
    return Renderer(bundle)


def served(result: Any) -> list[tuple[str, str]]:
    out = []
    for m in result["messages"]:
        c = m["content"]
        out.append((m["role"], c["text"] if c["type"] == "text" else f"<{c['type']} {c['uri']}>"))
    return out


CONVERSATION = {
    "arguments": [{"name": "turns", "type": "array", "default": []},
                  {"name": "question", "required": True}],
    "messages": [
        {"role": "system", "text": "Be brief."},
        {"role": "user", "text": "{{ turn.prompt[-1].content }}", "for": "turn in turns"},
        {"role": "assistant", "text": "{{ turn.output }} ({{ loop.index }}/{{ loop.length }}"
         "{{ ', last' if loop.last }})", "for": "turn in turns"},
        {"role": "user", "text": "{{ question }}"}]}


def test_a_for_group_repeats_per_item_in_order(tmp_path: Path) -> None:
    r = build(tmp_path, CONVERSATION)
    turns = [{"prompt": [{"role": "user", "content": "a?"}], "output": "A"},
             {"prompt": [{"role": "user", "content": "b?"}], "output": "B"}]
    got = r.get("p", {"turns": json.dumps(turns), "question": "c?"})
    assert served(got) == [("user", "Be brief."), ("user", "a?"), ("assistant", "A (1/2)"),
                           ("user", "b?"), ("assistant", "B (2/2, last)"), ("user", "c?")]
    assert served(r.get("p", {"question": "only"})) == [("user", "Be brief."), ("user", "only")]
    result, sources = r.render("p", {"turns": json.dumps(turns), "question": "c?"})
    assert len(sources) == len(result["messages"])  # serve pairs each with its source
    spec = r.bundle["prompts"][0]["messages"][1]
    assert (spec["loopItem"], spec["loopOver"]) == ("turn", "turns")


def test_a_for_group_is_bounded_and_checked(tmp_path: Path) -> None:
    r = build(tmp_path, CONVERSATION)
    with pytest.raises(ArgumentError) as exc:
        r.get("p", {"question": "q", "turns": json.dumps([{}] * (MAX_HISTORY + 1))})
    assert exc.value.argument == "turns" and f"holds {MAX_HISTORY + 1} items" in str(exc.value)
    with pytest.raises(ArgumentError, match="expected array"):
        r.get("p", {"question": "q", "turns": '{"a": 1}'})


@pytest.mark.parametrize(("change", "words"), [
    ({"arguments": [{"name": "turns"}, {"name": "question"}]},
     "must name an argument of type array"),
    ({"arguments": [{"name": "turns", "type": "array"}, {"name": "turn"}, {"name": "question"}]},
     "would hide the argument"),
    ({"messages": [{"role": "user", "text": "x", "for": "loop in turns"}]}, "would hide `loop`"),
    ({"messages": [{"role": "user", "text": "x", "for": "turns"}]}, "for"),
    ({"messages": [{"history": "turns", "for": "t in turns"}]}, "takes no `for`"),
    ({"messages": [{"role": "user", "text": "x", "continues": True}]}, "continues"),
    ({"messages": [{"role": "user", "text": "x"},
                   {"role": "assistant", "text": "y", "continues": True}]}, "same role"),
])
def test_bad_loops_and_parts_are_load_errors(tmp_path: Path, change: dict[str, Any],
                                            words: str) -> None:
    with pytest.raises(PackageError, match=words):
        build(tmp_path, {**CONVERSATION, **change})


MEDIA = {
    "arguments": [{"name": "videoUrl", "required": True}],
    "messages": [
        {"role": "user", "text": "Summarise this video:"},
        {"role": "user", "continues": True,
         "resource_link": {"uri": "{{ videoUrl }}", "name": "media", "mimeType": "video/mp4"}},
        {"role": "user", "continues": True, "text": "in {{ 3 }} lines."}]}


def test_parts_are_served_one_content_block_per_message(tmp_path: Path) -> None:
    r = build(tmp_path, MEDIA)
    got = r.get("p", {"videoUrl": "https://e.com/v.mp4"})
    assert served(got) == [("user", "Summarise this video:"), ("user", "<resource_link "
                           "https://e.com/v.mp4>"), ("user", "in 3 lines.")]
    assert [m.get("continues") for m in r.bundle["prompts"][0]["messages"]] == [
        None, True, True]


def test_diff_classifies_loop_and_part_changes(tmp_path: Path) -> None:
    a = build(tmp_path / "a", CONVERSATION).bundle
    moved = [dict(m) for m in CONVERSATION["messages"]]
    moved[2]["for"] = "answer in turns"
    moved[2]["text"] = "{{ answer.output }}"
    b = build(tmp_path / "b", {**CONVERSATION, "messages": moved}).bundle
    assert Kind.template_changed in {c.kind for c in diff_bundles(a, b)}
    c = build(tmp_path / "c", MEDIA).bundle
    joined = [dict(m) for m in MEDIA["messages"]]
    del joined[2]["continues"]
    d = build(tmp_path / "d", {**MEDIA, "messages": joined}).bundle
    assert Kind.template_changed in {ch.kind for ch in diff_bundles(c, d)}


def test_schemas_describe_for_and_continues(tmp_path: Path) -> None:
    import jsonschema

    from promptops.commands.schema import schema_for

    prompt, bundle = schema_for("prompt"), schema_for("bundle")
    props = prompt["$defs"]["Message"]["properties"]
    assert "ITEM in ARGUMENT" in props["for"]["description"]
    assert "one content block" in props["continues"]["description"]
    jsonschema.validate(CONVERSATION, prompt)
    jsonschema.validate(MEDIA, prompt)
    jsonschema.validate(build(tmp_path, CONVERSATION).bundle, bundle)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**CONVERSATION, "messages": [
            {"role": "user", "text": "x", "for": "no loop here"}]}, prompt)


def test_lint_knows_the_loop_item_and_its_argument(tmp_path: Path) -> None:
    from helpers.repo import run_cli

    build(tmp_path, {"description": "d", **CONVERSATION})
    run = run_cli("lint", str(tmp_path), "--format", "json")
    codes = {f["code"] for f in json.loads(run.stdout)["findings"]}
    assert not codes & {"PO201", "PO202"}, run.stdout


def test_a_package_reads_back_as_loops_and_parts(tmp_path: Path) -> None:
    """What the exporters see: the `for:` group is one IR Loop, the parts one Message."""
    from promptops.interop import ir
    from promptops.interop.package import from_bundle

    [conv] = from_bundle(build(tmp_path / "c", CONVERSATION).bundle)
    loop = conv.messages[1]
    assert isinstance(loop, ir.Loop) and (loop.item, loop.argument) == ("turn", "turns")
    assert [m.role for m in loop.messages] == ["user", "assistant"]
    assert len(conv.messages) == 3 and not conv.losses
    [media] = from_bundle(build(tmp_path / "m", MEDIA).bundle)
    [message] = media.messages
    assert isinstance(message, ir.Message)
    assert [type(p).__name__ for p in message.parts] == ["Text", "Media", "Text"]
    assert message.parts[1] == ir.Media("{{ videoUrl }}", "video/mp4")
