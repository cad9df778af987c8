"""Compare two bundles and classify every difference a client could notice.

The engine diffs *bundles*, not packages: a bundle is exactly what is served, and it
holds every template a prompt reaches. A one-word edit in a partial therefore shows as
"template text changed" on each prompt that includes it (directly or through other
partials), which is what a caller of those prompts sees; an edit to a file no prompt
reaches changes nothing served and so is no change. Moving a prompt's file without
changing it is no change either: clients know prompts by name, not by path.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from promptops.pipeline.bundle import canonical
from promptops.pipeline.bundle_types import Bundle, Message, PackageInfo, Prompt
from promptops.pipeline.templates import TemplateIndex
from promptops.versioning.arguments import diff_arguments
from promptops.versioning.changes import Change, Kind, ordered
from promptops.versioning.semver import Level


def content_digest(bundle: Bundle) -> str:
    """sha256 over what clients receive: no version, no provenance, no file paths.

    Two commits with the same content digest serve the same prompts, so `release`
    uses it to tell "content changed but the version did not".
    """
    pkg = {k: v for k, v in bundle["package"].items() if k != "version"}
    prompts = [{k: v for k, v in p.items() if k != "source"} for p in bundle["prompts"]]
    body = {
        "package": pkg,
        "prompts": prompts,
        "templates": bundle["templates"],
        "resources": bundle["resources"],
    }
    return "sha256:" + hashlib.sha256(canonical(body)).hexdigest()


# a prompt's name -> the templates it reaches at BASE and at HEAD, path -> source
Reached = dict[str, tuple[dict[str, str], dict[str, str]]]


def diff_bundles(old: Bundle, new: Bundle, *, index: TemplateIndex | None = None,
                 reached: Reached | None = None) -> list[Change]:
    """Every change from ``old`` to ``new``, classified, in stable order. With
    ``reached``, each prompt present at both ends under one name is kept there by that
    name with the templates it reaches at each end (:func:`reached_templates`), as this
    computed them: a review reads them again for each prompt's source diffs."""
    index = index if index is not None else TemplateIndex()
    changes = list(_package_changes(old["package"], new["package"]))
    a = {p["name"]: p for p in old["prompts"]}
    b = {p["name"]: p for p in new["prompts"]}
    removed = sorted(a.keys() - b.keys())
    added = sorted(b.keys() - a.keys())
    prints = {n: _fingerprint(new, b[n], index) for n in added}
    for name in removed:
        twin = next((n for n in added if prints[n] == _fingerprint(old, a[name], index)), None)
        if twin is not None:
            added.remove(twin)
            changes.append(
                Change(Kind.prompt_renamed, Level.major, f"renamed from {name!r} (same content)",
                       prompt=twin, old=name, new=twin)
            )
        else:
            changes.append(Change(Kind.prompt_removed, Level.major, "prompt removed", prompt=name))
    for name in added:
        changes.append(Change(Kind.prompt_added, Level.minor, "prompt added", prompt=name))
    for name in sorted(a.keys() & b.keys()):
        changes.extend(_prompt_changes(old, a[name], new, b[name], index, reached))
    if not changes and content_digest(old) != content_digest(new):
        changes.append(Change(Kind.other_changed, Level.patch, "served content changed"))
    return ordered(changes)


def _package_changes(a: PackageInfo, b: PackageInfo) -> Iterator[Change]:
    if a["name"] != b["name"]:
        yield Change(Kind.package_renamed, Level.major, f"package renamed {a['name']!r} -> "
                     f"{b['name']!r}", old=a["name"], new=b["name"])
    if a.get("description") != b.get("description"):
        yield Change(Kind.package_description_changed, Level.patch, "description changed",
                     old=a.get("description"), new=b.get("description"))
    if a.get("instructions") != b.get("instructions"):
        yield Change(Kind.instructions_changed, Level.patch, "server instructions changed",
                     old=a.get("instructions"), new=b.get("instructions"))
    if a.get("cacheScope") != b.get("cacheScope"):
        yield Change(Kind.serve_settings_changed, Level.patch, "serve.cacheScope changed",
                     old=a.get("cacheScope"), new=b.get("cacheScope"))
    if a.get("systemRole", "user") != b.get("systemRole", "user"):
        yield Change(Kind.serve_settings_changed, Level.patch, "serve.systemRole changed: "
                     "system messages are served in another role",
                     old=a.get("systemRole", "user"), new=b.get("systemRole", "user"))
    if a.get("tools") != b.get("tools"):
        old, new = a.get("tools"), b.get("tools")
        # tool callers lose their tools when the view goes away or changes shape
        level = Level.minor if old in (None, "off") and new not in (None, "off") else Level.major
        yield Change(Kind.serve_settings_changed, level, "serve.tools changed: the prompts "
                     "are offered as tools in another shape", old=old, new=new)
    if a.get("whitespace") != b.get("whitespace"):
        yield Change(Kind.whitespace_changed, Level.patch, "templates.whitespace changed",
                     old=a.get("whitespace"), new=b.get("whitespace"))


def _prompt_changes(old: Bundle, a: Prompt, new: Bundle, b: Prompt, index: TemplateIndex,
                    reached: Reached | None = None) -> Iterator[Change]:
    name = b["name"]
    yield from diff_arguments(name, a["arguments"], b["arguments"])
    tpl, res = _message_differences(old, a, new, b, index, reached)
    if tpl:
        yield Change(Kind.template_changed, Level.patch,
                     f"template text changed ({'; '.join(tpl)})", prompt=name, new=tpl)
    if res:
        yield Change(Kind.resource_changed, Level.patch,
                     f"resource changed ({'; '.join(res)})", prompt=name, new=res)
    for key, kind in (("title", Kind.title_changed), ("description", Kind.description_changed),
                      ("resultDescription", Kind.description_changed),
                      ("icons", Kind.icons_changed), ("whitespace", Kind.whitespace_changed)):
        if a.get(key) != b.get(key):
            yield Change(kind, Level.patch, f"{key} changed", prompt=name,
                         old=a.get(key), new=b.get(key))
    yield from _carried_changes(name, a, b)


def _carried_changes(name: str, a: Prompt, b: Prompt) -> Iterator[Change]:
    """model, tools, output, samples and metadata: served in _meta, never acted on, so
    nothing a caller sends can start failing; a removed sample breaks `render --sample`
    and whatever reads the sample (minor), as do changed tools or output (what the prompt
    asks the model for: minor); the rest is patch."""
    sa = {s["name"]: s for s in a.get("samples", [])}
    sb = {s["name"]: s for s in b.get("samples", [])}
    for sample in sorted(sa.keys() - sb.keys()):
        yield Change(Kind.sample_removed, Level.minor, f"sample {sample!r} removed",
                     prompt=name, old=sa[sample])
    for sample in sorted(sb.keys() - sa.keys()):
        yield Change(Kind.sample_added, Level.patch, f"sample {sample!r} added", prompt=name,
                     new=sb[sample])
    for sample in sorted(sa.keys() & sb.keys()):
        if sa[sample] != sb[sample]:
            yield Change(Kind.sample_changed, Level.patch, f"sample {sample!r} changed",
                         prompt=name, old=sa[sample], new=sb[sample])
    for key, kind, level in (("model", Kind.model_changed, Level.patch),
                             ("tools", Kind.tools_changed, Level.minor),
                             ("output", Kind.output_changed, Level.minor),
                             ("metadata", Kind.metadata_changed, Level.patch)):
        if a.get(key) != b.get(key):
            yield Change(kind, level, f"{key} changed", prompt=name, old=a.get(key),
                         new=b.get(key))


def _message_differences(old: Bundle, a: Prompt, new: Bundle, b: Prompt, index: TemplateIndex,
                         reached: Reached | None = None) -> tuple[list[str], list[str]]:
    """What differs in a prompt's messages: (template details, resource details)."""
    tpl: list[str] = []
    res: list[str] = []
    ma, mb = a["messages"], b["messages"]
    if len(ma) != len(mb):
        tpl.append(f"{len(ma)} -> {len(mb)} messages")
    for i, (x, y) in enumerate(zip(ma, mb, strict=False)):
        vx, vy = _message_view(old, x), _message_view(new, y)
        if vx == vy:
            continue
        both_text = x["type"] == "text" and y["type"] == "text"
        (tpl if both_text or x["type"] != y["type"] else res).append(f"message {i + 1}")
    reach_a, reach_b = reached_templates(old, a, index), reached_templates(new, b, index)
    if reached is not None:
        reached[b["name"]] = (reach_a, reach_b)
    own = {m["template"] for m in ma + mb if "template" in m}
    for path in sorted(reach_a.keys() | reach_b.keys()):
        if reach_a.get(path) != reach_b.get(path) and path not in own:
            tpl.append(path)
    return tpl, res


def _message_view(bundle: Bundle, msg: Message) -> dict[str, object]:
    """A message with the files it names replaced by their content."""
    view: dict[str, object] = dict(msg)
    if "template" in msg:
        view["template"] = bundle["templates"].get(msg["template"])
    if "file" in msg:
        view["file"] = bundle["resources"].get(msg["file"])
    return view


def _fingerprint(bundle: Bundle, prompt: Prompt, index: TemplateIndex) -> str:
    """Everything a prompt serves except its name: equal fingerprints mean a rename."""
    body: dict[str, object] = {k: v for k, v in prompt.items() if k not in ("name", "source")}
    body["messages"] = [_message_view(bundle, m) for m in prompt["messages"]]
    body["partials"] = reached_templates(bundle, prompt, index)
    return canonical(body).decode()


def reached_templates(bundle: Bundle, prompt: Prompt,
                      index: TemplateIndex | None = None) -> dict[str, str]:
    """Every template file a prompt's messages reach, transitively, path -> source."""
    index = index if index is not None else TemplateIndex()
    templates = bundle["templates"]
    roots = [m["template"] for m in prompt["messages"]
             if "template" in m and m["template"] in templates]
    sources = [s for m in prompt["messages"] for s in (m.get("text"), m.get("uri"))
               if isinstance(s, str)]  # the templated fields
    names = {*roots, *index.reached(sources + [templates[r] for r in roots], templates)}
    return {n: templates[n] for n in sorted(names)}
