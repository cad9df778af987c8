"""The issue-14 format fields end to end: load, bundle, render, serve's shape, diff.

Real packages in temp folders, built by the real pipeline and rendered by the renderer serve
uses. Each test states one rule of docs/format.md and can fail on its own.
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
from promptops.render.renderer import Renderer
from promptops.serve.revisions import content, prompt_descriptor
from promptops.versioning.changes import Kind
from promptops.versioning.engine import diff_bundles
from promptops.versioning.semver import Level

MANIFEST = {"name": "demo", "version": "1.0.0"}


def build(tmp: Path, prompt: dict[str, Any], manifest: dict[str, Any] | None = None,
          name: str = "p") -> Renderer:
    (tmp / "prompts").mkdir(parents=True, exist_ok=True)
    (tmp / "promptops.yaml").write_text(yaml.safe_dump({**MANIFEST, **(manifest or {})}))
    (tmp / "prompts" / f"{name}.prompt.yaml").write_text(yaml.safe_dump(prompt))
    bundle = Build(tmp).bundle
    assert bundle_check.problems(bundle) == []  # serve's load-time check agrees
    return Renderer(bundle)


def texts(result: Any) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]["text"]) for m in result["messages"]]


def test_system_is_served_as_the_package_says(tmp_path: Path) -> None:
    prompt = {"messages": [{"role": "system", "text": "Be brief."},
                           {"role": "user", "text": "Hi"}]}
    served = build(tmp_path / "a", prompt).get("p")
    assert texts(served) == [("user", "Be brief."), ("user", "Hi")]
    assert served["messages"][0]["content"]["_meta"] == {"promptops/role": "system"}
    assert "_meta" not in served["messages"][1]["content"]
    as_assistant = build(tmp_path / "b", prompt, {"serve": {"systemRole": "assistant"}})
    assert texts(as_assistant.get("p"))[0] == ("assistant", "Be brief.")
    old = {"type": "text", "text": "x", "_meta": {"promptops/role": "system"}}
    assert "_meta" not in content(old, {"role": "system", "type": "text"}, str, "2025-03-26")
    assert content(old, {"role": "system", "type": "text"}, str, "2025-06-18") == old


TYPED = {
    "arguments": [
        {"name": "customer", "type": "object", "required": True,
         "schema": {"properties": {"id": {"type": "integer"}}, "required": ["id"]}},
        {"name": "count", "type": "integer", "default": 2},
        {"name": "loud", "type": "boolean", "default": False},
        {"name": "reference-file", "description": "any MCP name"},
    ],
    "messages": [{"role": "user", "text": "{{ customer.id }} x{{ count + 1 }}{{ '!' if loud }}"
                  " [{{ args['reference-file'] }}]{{ args.count }}"}],
}


def test_typed_values_are_parsed_from_the_wire_and_checked(tmp_path: Path) -> None:
    r = build(tmp_path, TYPED)
    got = r.get("p", {"customer": '{"id": 7}', "loud": "true", "reference-file": "a.py"})
    assert texts(got) == [("user", "7 x3! [a.py]2")]
    bad = {"count": ("three", "expects an integer"), "loud": ("yes", "true or false"),
           "customer": ('{"name": 1}', "missing property 'id'")}
    for arg, (value, words) in bad.items():
        args = {"customer": '{"id": 1}', arg: value}
        with pytest.raises(ArgumentError) as exc:
            r.get("p", args)
        assert exc.value.argument == arg and words in str(exc.value)
    from promptops.pipeline import argtypes

    spec = {"name": "xs", "type": "array",
            "schema": {"items": {"type": "integer", "minimum": 0}, "maxItems": 2}}
    assert argtypes.check(spec, [1, 2]) is None
    assert argtypes.check(spec, [1, 2, 3]) == "more items than maxItems 2"
    assert argtypes.check(spec, [1, -1]) == "[1]: below the minimum 0"
    assert argtypes.check(spec, [True]) == "[0]: expected integer, got boolean"
    with pytest.raises(ArgumentError, match="expects an object as JSON"):
        r.get("p", {"customer": "{not json"})


def test_types_reach_clients_in_meta_and_completion_offers_booleans(tmp_path: Path) -> None:
    from promptops.serve.catalog import Catalog  # noqa: F401 - serve's own import path

    r = build(tmp_path, TYPED)
    spec = r.bundle["prompts"][0]
    listed = prompt_descriptor(spec, "2025-11-25")
    assert listed["_meta"]["promptops/arguments"]["count"] == {"type": "integer"}
    assert "_meta" not in prompt_descriptor(spec, "2025-03-26")


def test_bad_format_values_are_load_errors(tmp_path: Path) -> None:
    cases = [
        {"arguments": [{"name": "n", "type": "integer", "default": "x"}],
         "messages": [{"role": "user", "text": "{{ n }}"}]},
        {"arguments": [{"name": "n", "type": "array", "schema": {"uniqueItems": True}}],
         "messages": [{"role": "user", "text": "{{ n }}"}]},
        {"arguments": [{"name": "h"}], "messages": [{"history": "h"}]},  # not an array
        {"messages": [{"role": "user", "text": "x"}],
         "samples": [{"name": "s", "arguments": {"nope": 1}}]},
    ]
    for i, prompt in enumerate(cases):
        with pytest.raises(PackageError):
            build(tmp_path / str(i), prompt)


def test_history_is_spliced_in_bounded_and_checked(tmp_path: Path) -> None:
    r = build(tmp_path, {
        "arguments": [{"name": "history", "type": "array", "default": []},
                      {"name": "q", "required": True}],
        "messages": [{"role": "system", "text": "S"}, {"history": "history", "strip": True},
                     {"role": "user", "text": "{{ q }}"}]})
    turns = [{"role": "human", "content": " hi "}, {"role": "ai", "content": [{"text": "yo"}]},
             {"role": "system", "content": "late"}]
    got = r.get("p", {"q": "now", "history": json.dumps(turns)})
    assert texts(got) == [("user", "S"), ("user", "hi"), ("assistant", "yo"), ("user", "late"),
                          ("user", "now")]
    assert texts(r.get("p", {"q": "only"})) == [("user", "S"), ("user", "only")]
    result, sources = r.render("p", {"q": "x", "history": json.dumps(turns)})
    assert len(sources) == len(result["messages"])  # serve pairs each with its source
    with pytest.raises(ArgumentError, match="item 0 is not a message"):
        r.get("p", {"q": "x", "history": '[{"role": "robot", "content": "?"}]'})


def test_omit_if_blank_and_whitespace_modes(tmp_path: Path) -> None:
    src = "A\n{% if x %}\nB\n{% endif %}\nC{% if x %} D{% endif %}\n"
    prompt = {"arguments": [{"name": "x", "type": "boolean", "default": True}],
              "messages": [{"role": "user", "text": src},
                           {"role": "user", "text": "{{ ' ' if x }}", "omitIfBlank": True}]}
    standalone = build(tmp_path / "s", prompt)
    assert texts(standalone.get("p")) == [("user", "A\nB\nC D\n")]
    jinja = build(tmp_path / "j", prompt, {"templates": {"whitespace": "jinja"}})
    assert texts(jinja.get("p")) == [("user", "A\n\nB\n\nC D\n")]
    own = build(tmp_path / "o", {**prompt, "whitespace": "jinja"})
    assert texts(own.get("p")) == texts(jinja.get("p"))
    legacy = dict(standalone.bundle, package={k: v for k, v in standalone.bundle[
        "package"].items() if k != "whitespace"})  # a bundle built before the modes
    assert texts(Renderer(legacy).get("p")) == [("user", "A\nB\nC D")]  # trim_blocks


def test_carried_fields_travel_exactly_and_are_served_in_meta(tmp_path: Path) -> None:
    carried = {"model": {"id": "gpt-4o", "settings": {"temperature": 0.2}},
               "tools": [{"name": "search"}, {"name": "f", "definition": {"x": [1, None]}}],
               "output": {"format": "json", "schema": {"type": "object"}},
               "samples": [{"name": "s1", "arguments": {"q": "v"}}],
               "metadata": {"owner": "me", "nested": {"a": [True, 1.5]}}}
    r = build(tmp_path, {"arguments": [{"name": "q"}],
                         "messages": [{"role": "user", "text": "{{ q }}"}], **carried})
    spec = r.bundle["prompts"][0]
    assert {k: spec[k] for k in carried} == carried  # type: ignore[literal-required]
    meta = prompt_descriptor(spec, "2026-07-28")["_meta"]
    assert {k.removeprefix("promptops/"): v for k, v in meta.items()} == carried


def _diff(tmp: Path, a: dict[str, Any], b: dict[str, Any]) -> list[tuple[Kind, Level]]:
    old, new = build(tmp / "a", a).bundle, build(tmp / "b", b).bundle
    return [(c.kind, c.level) for c in diff_bundles(old, new)]


def test_diff_classifies_the_new_fields(tmp_path: Path) -> None:
    base = {"arguments": [{"name": "n", "type": "integer", "default": 1}],
            "messages": [{"role": "user", "text": "{{ n }}"}],
            "samples": [{"name": "s", "arguments": {"n": 2}}], "model": {"id": "a"}}
    assert (Kind.argument_type_changed, Level.major) in _diff(tmp_path / "1", base, {
        **base, "arguments": [{"name": "n", "type": "string", "default": "1"}],
        "samples": [{"name": "s", "arguments": {"n": "2"}}]})
    assert (Kind.argument_type_changed, Level.minor) in _diff(tmp_path / "2", base, {
        **base, "arguments": [{"name": "n", "type": "number", "default": 1}]})
    assert _diff(tmp_path / "3", base, {**base, "samples": []}) == [
        (Kind.sample_removed, Level.minor)]
    assert _diff(tmp_path / "4", base, {**base, "model": {"id": "b"}}) == [
        (Kind.model_changed, Level.patch)]
    assert (Kind.argument_schema_changed, Level.major) in _diff(tmp_path / "5", base, {
        **base, "arguments": [{"name": "n", "type": "integer", "default": 1,
                               "schema": {"maximum": 9}}]})
    assert _diff(tmp_path / "6", base, {**base, "whitespace": "jinja"}) == [
        (Kind.whitespace_changed, Level.patch)]


def test_json_schemas_hold_and_describe_the_new_fields(tmp_path: Path) -> None:
    import jsonschema

    from promptops.commands.schema import schema_for
    from promptops.scaffold import starter_dir

    prompt, manifest, bundle = (schema_for(k) for k in ("prompt", "manifest", "bundle"))
    defs = prompt["$defs"]
    for where, key in ((prompt, "model"), (prompt, "tools"), (prompt, "output"),
                       (prompt, "samples"), (prompt, "metadata"), (prompt, "whitespace"),
                       (defs["Argument"], "type"), (defs["Argument"], "schema"),
                       (defs["Message"], "history"), (defs["Message"], "omitIfBlank"),
                       (defs["Message"], "role")):
        assert where["properties"][key].get("description"), key  # shown on hover
    assert manifest["$defs"]["ServeConfig"]["properties"]["systemRole"]["description"]
    assert manifest["$defs"]["TemplatesConfig"]["properties"]["whitespace"]["description"]
    starter = starter_dir()
    for path in sorted((starter / "prompts").glob("*.prompt.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text()), prompt)
    jsonschema.validate(yaml.safe_load((starter / "promptops.yaml").read_text()), manifest)
    r = build(tmp_path, {**TYPED, "samples": [{"name": "s", "arguments": {"count": 3}}],
                         "model": {"id": "m"}})
    jsonschema.validate(r.bundle, bundle)
    bad = dict(r.bundle, prompts=[{**r.bundle["prompts"][0], "samples": [{"arguments": {}}]}])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, bundle)


def test_lint_follows_the_format(tmp_path: Path) -> None:
    """A faithfully ported prompt is clean: a system persona, typed and non-identifier
    arguments read through args[...], a history argument; a typo in args[...] is still found."""
    from helpers.repo import run_cli

    prompt = {
        "description": "d",
        "arguments": [{"name": "n", "description": "d", "type": "integer", "required": True},
                      {"name": "reference-file", "description": "d", "required": True},
                      {"name": "history", "description": "d", "type": "array", "default": []}],
        "messages": [{"role": "system", "text": "You are a reviewer. Use {{ n }} words."},
                     {"history": "history"},
                     {"role": "user", "text": "<f>{{ args['reference-file'] }}</f>"}]}
    for as_role in ("user", "assistant"):
        folder = tmp_path / as_role
        build(folder, prompt, {"serve": {"systemRole": as_role}})
        run = run_cli("lint", str(folder), "--format", "json")
        codes = {f["code"] for f in json.loads(run.stdout)["findings"]}
        assert codes <= {"PO108"}, run.stdout  # (yaml.safe_dump sorts keys: key order)
    typo = {**prompt, "messages": [*prompt["messages"][:2],
                                   {"role": "user", "text": "{{ args['reference-fil'] }}"}]}
    build(tmp_path / "typo", typo)
    run = run_cli("lint", str(tmp_path / "typo"), "--format", "json")
    assert "reference-fil" in run.stdout and "PO201" in run.stdout
