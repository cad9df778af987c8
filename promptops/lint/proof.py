"""Fixes that are safe by proof: every rendered output byte-identical before and after.

A fix that "only touches whitespace" can still change what is served (a final newline added
to a partial included mid-sentence; trailing spaces the renderer outputs). So no fix is safe
by kind: ``lint --fix`` renders the package as it is and as it would be after the fix, for
every argument sample the package has (each test case and each prompt's smoke case), and
applies only the fixes under which every output - each ``prompts/get`` result and each prompt
as ``prompts/list`` shows it - is unchanged. ``--unsafe-fixes`` applies the others and shows
the rendered difference instead.

The argument samples come from the caller (``samples``): test files are the testing stage's
to read, and lint sits beside it, not above it.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from promptops.errors import PromptopsError
from promptops.pipeline.bundle import compile_bundle
from promptops.pipeline.bundle_types import Bundle
from promptops.pipeline.source import Origin, Source
from promptops.pipeline.validate import Package, load_package
from promptops.render.renderer import Renderer

# (prompt name, case name, arguments) of every sample to render
Samples = Callable[[Package, Bundle, Source], list[tuple[str, str, dict[str, str]]]]
Outputs = dict[str, str]


class Overlay:
    """A source with some files' text replaced: the package as a fix would leave it."""

    def __init__(self, inner: Source, changed: Mapping[str, str]) -> None:
        self.inner, self.changed = inner, changed
        self.origin: Origin = inner.origin
        self.label = inner.label

    def files(self) -> list[str]:
        return self.inner.files()

    def read(self, path: str) -> bytes:
        if path in self.changed:
            return self.changed[path].encode("utf-8")
        return self.inner.read(path)

    def blob_id(self, path: str) -> str | None:
        return None if path in self.changed else self.inner.blob_id(path)

    def read_ahead(self, paths: list[str]) -> None:
        self.inner.read_ahead([p for p in paths if p not in self.changed])


def outputs(source: Source, samples: Samples) -> Outputs:
    """What the package serves, as text keyed by prompt and case: a listing entry per prompt
    (templates left out: their text is not output) and a rendered result or error per case."""
    try:
        package = load_package(source)
    except PromptopsError as exc:
        return {"(package)": f"does not load: {exc}"}
    bundle = compile_bundle(package)
    renderer = Renderer(bundle)
    out: Outputs = {"(package)": json.dumps(bundle["package"], sort_keys=True)}
    for prompt in bundle["prompts"]:
        listing = {k: v for k, v in prompt.items() if k not in ("messages", "source")}
        out[f"{prompt['name']} (listing)"] = json.dumps(listing, sort_keys=True, indent=1)
    rendered: set[str] = set()
    for name, case, arguments in samples(package, bundle, source):
        try:
            result: Any = renderer.get(name, arguments)
            text = json.dumps(result, sort_keys=True, indent=1, ensure_ascii=False)
            rendered.add(name)
        except PromptopsError as exc:
            text = f"error: {exc}"
        out[f"{name} ({case})"] = text
    # A prompt no sample renders proves nothing by its outputs (they are the same error
    # before and after): its source text stands in, so any change to it is unproven.
    included = "".join(t for t in bundle["templates"].values() if "include" in t or
                       "import" in t)
    for prompt in bundle["prompts"]:
        if prompt["name"] not in rendered:
            own = [m.get("template") for m in prompt["messages"]]
            text = json.dumps(prompt["messages"], sort_keys=True) + "".join(
                bundle["templates"].get(t, "") for t in own if t) + "".join(
                t for name, t in bundle["templates"].items() if name in included)
            out[f"{prompt['name']} {UNRENDERED}"] = text
    return out


UNRENDERED = "(no sample renders)"


@dataclass(frozen=True)
class Refusal:
    path: str
    codes: tuple[str, ...]
    output: str  # the first output the fix would change

    def __str__(self) -> str:
        if self.output.endswith(UNRENDERED):
            why = (f"cannot be proven safe: no argument sample of prompt "
                   f"{self.output.removesuffix(UNRENDERED).strip()!r} renders (add a test case "
                   "that does)")
        else:
            why = f"would change the rendered output of {self.output}"
        return (f"not fixed: {', '.join(self.codes)} in {self.path} {why}; "
                "`promptops lint --fix --unsafe-fixes` applies it")


def changed_outputs(before: Outputs, after: Outputs) -> list[str]:
    return [k for k in sorted(before.keys() | after.keys()) if before.get(k) != after.get(k)]


def prove(
    source: Source,
    candidates: Mapping[str, Mapping[str, str]],
    samples: Samples,
) -> tuple[dict[str, str], list[Refusal]]:
    """(path -> proven text, refusals) from ``candidates``: path -> code -> text after that
    code's fix alone, applied in registry order when combined.

    The whole set is tried first (the usual case: nothing changes output, one more render).
    Otherwise each file is tried alone, and a file whose fixes change output is tried one fix
    at a time, so a safe fix is never held back by an unsafe one beside it.
    """
    base = outputs(source, samples)

    def same(changed: Mapping[str, str]) -> str | None:
        diff = changed_outputs(base, outputs(Overlay(source, changed), samples))
        return diff[0] if diff else None

    combined = {path: texts["*"] for path, texts in candidates.items()}
    if same(combined) is None:
        return combined, []
    proven: dict[str, str] = {}
    refused: list[Refusal] = []
    for path, texts in candidates.items():
        broke = same({path: texts["*"]})
        if broke is None:
            proven[path] = texts["*"]
            continue
        for code, text in texts.items():
            if code == "*":
                continue
            which = same({path: text})
            if which is None:
                proven.setdefault(path, text)  # the first safe one; the rest next run
            else:
                refused.append(Refusal(path, (code,), which))
    if proven and same(proven) is not None:  # fixes of two files that interact: keep none
        return {}, refused + [Refusal(p, ("*",), "several prompts") for p in proven]
    return proven, refused


def rendered_diff(source: Source, changed: Mapping[str, str], samples: Samples) -> str:
    """The unified diff of every output the changes alter (what --unsafe-fixes shows)."""
    before = outputs(source, samples)
    after = outputs(Overlay(source, changed), samples)
    parts: list[str] = []
    for key in changed_outputs(before, after):
        parts.extend(difflib.unified_diff(
            before.get(key, "").splitlines(keepends=True),
            after.get(key, "").splitlines(keepends=True),
            fromfile=f"rendered before: {key}", tofile=f"rendered after: {key}"))
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts)
