"""`serve --bundle` refuses at load every bundle `promptops verify` refuses, and serving a
bundle that loads never fails on its shape (a KeyError used to surface as -32603).

Thousands of mutations of a real bundle (each field dropped, given a wrong type, an
extra key...) with the digest recomputed, judged three ways: the fast and the detailed
pass of promptops.pipeline.bundle_check agree; whatever the full pydantic schema of `verify`
refuses, loading refuses; and whatever loads is served (every prompt rendered, every
resource read, in the oldest and the newest revision) with schema-valid replies only.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from serve_helpers import check_message, envelope, serve_cmd

from promptops.errors import BundleError
from promptops.pipeline import bundle_check
from promptops.pipeline.bundle import digest, parse_bundle, serialise
from promptops.pipeline.bundle_schema import BundleFile
from promptops.render.codecache import CodeCache
from promptops.render.renderer import Renderer
from promptops.serve import catalog
from promptops.serve.connection import Connection as Server

ODD: list[Any] = [None, True, 0, -1, 2.5, "", "x", "a-b", [], ["x"], [1], {}, {"k": 1}]


def _paths(node: Any, trail: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*trail, key)
            yield from _paths(value, (*trail, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield (*trail, i)
            yield from _paths(value, (*trail, i))


def _at(bundle: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    node = bundle
    for step in path[:-1]:
        node = node[step]
    return node, path[-1]


def mutations(bundle: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in _paths(bundle):
        if path[0] == "digest":
            continue
        for kind in ["drop", "extra", *range(len(ODD))]:
            b = copy.deepcopy(bundle)
            parent, key = _at(b, path)
            if kind == "drop":
                del parent[key]
            elif kind == "extra":
                if not isinstance(parent[key], dict):
                    continue
                parent[key]["surplus"] = "x"
            else:
                parent[key] = copy.deepcopy(ODD[int(kind)])
            b["digest"] = digest(b)
            yield f"{kind} {'.'.join(map(str, path))}", b


def _schema_ok(b: Any) -> bool:
    try:
        BundleFile.model_validate(b)
    except ValidationError:
        return False
    return True


_VALID: set[tuple[str, str, str]] = set()


def _check(reply: dict[str, Any], rev: str, method: str) -> None:
    """``check_message``, once per distinct reply: most mutations leave most replies byte for
    byte as another mutation's were (the prompts they do not touch), and validating the
    same JSON against the same schema again can only give the same answer. The schema
    check was over half of this module's CPU."""
    key = (rev, method, json.dumps(reply, sort_keys=True))
    if key not in _VALID:
        check_message(reply, rev, method)
        _VALID.add(key)


def _serve_all(b: dict[str, Any]) -> None:
    """Every request a client can make of this bundle: none may raise, all schema-valid."""
    for rev in ("2024-11-05", "2026-07-28"):
        server = Server([b], send=lambda m: None, page_size=2)
        meta = envelope({"elicitation": {}}) if rev == "2026-07-28" else {}
        calls: list[tuple[str, dict[str, Any]]] = [("prompts/list", {}), ("resources/list", {})]
        if rev != "2026-07-28":
            calls.insert(0, ("initialize", {"protocolVersion": rev, "capabilities": {}}))
        for p in b["prompts"]:
            args = {a["name"]: (a.get("enum") or a.get("examples") or ["ab"])[0]
                    for a in p["arguments"]}
            calls += [("prompts/get", {"name": p["name"], "arguments": args}),
                      ("prompts/get", {"name": p["name"]})]
            calls += [("completion/complete", {"ref": {"type": "ref/prompt", "name": p["name"]},
                                               "argument": {"name": a["name"], "value": ""}})
                      for a in p["arguments"]]
        calls += [("resources/read", {"uri": f"promptops://{b['package']['name']}/{path}"})
                  for path in b["resources"]]
        for i, (method, params) in enumerate(calls):
            replies = server.handle({"jsonrpc": "2.0", "id": i, "method": method,
                                     "params": {**meta, **params}})
            for reply in replies:
                _check(reply, rev, method)
                if "error" in reply:  # a template may fail; the bundle's shape may not
                    assert reply["error"]["code"] in (-32602, -32603), reply
                    assert "KeyError" not in reply["error"]["message"], reply


CARRIED = {  # the carried fields, as the build writes them, so the mutations reach them too
    "model": {"id": "gpt-x", "settings": {"temperature": 0.2}},
    "tools": [{"name": "search", "description": "Search", "definition": {"type": "object"}}],
    "output": {"format": "json", "schema": {"type": "object"}},
    "samples": [{"name": "small", "arguments": {"code": "x"}}],
    "metadata": {"owner": "team"},
    "whitespace": "standalone",
}


def _base(kit_bundle: Path) -> dict[str, Any]:
    base: dict[str, Any] = json.loads(kit_bundle.read_bytes())
    base["prompts"] = [p for p in base["prompts"] if not p["name"].startswith("p")]  # fillers
    base["prompts"][1].update(copy.deepcopy(CARRIED))  # code_review
    base["digest"] = digest(base)
    return base


def test_load_refuses_what_verify_refuses_and_serves_what_loads(
        kit_bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every served mutation's renderers share one CodeCache: each new Server compiled the
    # same few template sources again (5,000 compiles for ~360 bundles, a third of this
    # test's CPU). Compiled code depends only on the whitespace mode, the name and the
    # source (promptops/render/codecache.py), so a mutated source still compiles on its
    # own, and a source that fails to compile raises each time; what is judged is the
    # bundle's shape at load and every reply, as before.
    monkeypatch.setattr(catalog, "Renderer", functools.partial(Renderer, code=CodeCache()))
    base = _base(kit_bundle)
    assert bundle_check.valid(base) and _schema_ok(base)
    tried = refused = 0
    for label, b in mutations(base):
        tried += 1
        fast = bundle_check.valid(b)
        check = bundle_check._Check(b)
        with contextlib.suppress(bundle_check._Found):
            check.run()
        assert fast == (not check.problems), (label, check.problems)
        if not fast:
            refused += 1
            with pytest.raises(BundleError):
                parse_bundle(serialise(b), label)
            continue
        assert _schema_ok(b), label  # loads => verify accepts: nothing verify refuses loads
        _serve_all(b)
    assert tried > 1000 and refused > tried // 2


BROKEN = {  # what the report found (a KeyError at serve time), and its relatives
    "an argument without a name": lambda b: b["prompts"][1]["arguments"][0].pop("name"),
    "no package version": lambda b: b["package"].pop("version"),
    "an image without its file": lambda b: b["prompts"][2]["messages"][0].pop("file"),
    "a template that is not in the bundle": lambda b: b["templates"].clear(),
    "a resource with neither text nor blob": lambda b: b["resources"]["notes/guide.md"].pop(
        "text"),
    "a null title": lambda b: b["prompts"][1].update(title=None),
    "a pattern that does not compile": lambda b: b["prompts"][1]["arguments"][2].update(
        pattern="(["),
    "two prompts of one name": lambda b: b["prompts"][0].update(name="code_review"),
    # verify refused these and loading did not, until the format was stated once (issue 25)
    "an integer argument with an enum": lambda b: b["prompts"][1]["arguments"][1].update(
        type="integer"),
    "a tool with a key the format lacks": lambda b: b["prompts"][1].update(
        tools=[{"name": "search", "surplus": 1}]),
}


@pytest.mark.parametrize("label", sorted(BROKEN))
def test_serve_bundle_and_verify_refuse_alike(kit_bundle: Path, tmp_path: Path,
                                              label: str) -> None:
    b = json.loads(kit_bundle.read_bytes())
    BROKEN[label](b)
    b["digest"] = digest(b)
    path = tmp_path / "broken.bundle.json"
    path.write_bytes(serialise(b))
    served = subprocess.run(serve_cmd("--bundle", str(path)), input=b"", capture_output=True,
                            timeout=30)
    assert served.returncode == 1 and b"invalid bundle" in served.stderr, served.stderr
    assert served.stdout == b"" and b"Traceback" not in served.stderr
    verified = subprocess.run([*serve_cmd()[:3], "verify", str(path)], capture_output=True,
                              timeout=60)
    assert verified.returncode == 1, verified


SEVERAL = {  # more than one problem at once: the order and the words of the first few
    "an argument named by a number": lambda b: b["prompts"][1]["arguments"][0].update(name=3),
    "an argument without a name": lambda b: b["prompts"][1]["arguments"][0].pop("name"),
    "an argument of every wrong kind": lambda b: b["prompts"][1]["arguments"][1].update(
        title=1, required="yes", enum="x", examples=[1], maxLength=0, pattern="(["),
    "an argument of an unknown type": lambda b: b["prompts"][1]["arguments"][1].update(
        type="text", required="yes"),
    "a package of wrong literals": lambda b: b["package"].update(
        cacheScope="x", systemRole="system", whitespace="x", tools="all", limits={"x": 1}),
    "a message of every wrong kind": lambda b: b["prompts"][1]["messages"][1].update(
        role="robot", strip=1, loopItem="i", size="1", annotations={"priority": 2,
                                                                    "audience": ["x"]}),
    "a history item with a role": lambda b: b["prompts"][1]["messages"][1].update(
        type="history", loopOver="x"),
    "an icon of wrong kinds": lambda b: b["prompts"][1]["icons"][0].update(
        src=1, sizes="x", theme="dim", mimeType=None),
    "a source of wrong kinds": lambda b: b["source"].update(commit=1, tree=False, dirty="no",
                                                            path=None),
    "carried fields of wrong kinds": lambda b: b["prompts"][1].update(
        model=[], tools={}, output="json", samples=[{"name": "s"}], metadata=None,
        resultDescription=True),
    "a resource with both bodies": lambda b: b["resources"]["notes/guide.md"].update(
        blob="AA==", mimeType=None),
    "an integer argument with an enum and a pattern": lambda b: b["prompts"][1]["arguments"][
        1].update(type="integer", default=3),
    "unknown keys everywhere": lambda b: [o.update(zz=1, aa=2) for o in (
        b, b["package"], b["source"], b["prompts"][1], b["prompts"][1]["arguments"][0])],
}
GOLDEN = Path(__file__).parent / "golden" / "bundle_problems.json"


def test_the_worded_problems_are_pinned(kit_bundle: Path) -> None:
    """``promptops verify`` and ``serve --bundle`` print these words: every mutation's first
    few problems, in order, stay byte for byte what they were."""
    base = _base(kit_bundle)
    found = {label: bundle_check.problems(b) for label, b in mutations(base)}
    for label, change in SEVERAL.items():
        b = copy.deepcopy(base)
        change(b)
        found[label] = bundle_check.problems(b)
    found = {label: words for label, words in found.items() if words}
    if os.environ.get("PROMPTOPS_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n")
    assert found == json.loads(GOLDEN.read_text()), (
        "the load check's words changed; inspect them and rerun with PROMPTOPS_UPDATE_GOLDEN=1")
