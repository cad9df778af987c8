"""The HTML pages, written on the server: every value from a package or a request is escaped.

One rule keeps a hostile prompt inert: nothing reaches the page but through :func:`e`
(``html.escape`` with quotes), inside an element or a quoted attribute. No value is ever
put in a ``href``, ``src`` or event attribute but the app's own paths and, for images and
audio, a ``data:`` URL whose media type is on a short list and whose payload is checked to
be base64. The JavaScript (``static/ui.js``) builds its DOM with ``textContent`` only.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from html import escape
from urllib.parse import quote, urlencode

from promptops.pipeline.bundle_types import Argument, Prompt
from promptops.render.result import PromptResult
from promptops.ui.site import Row, Shelf, Site

_B64 = re.compile(r"[A-Za-z0-9+/=\s]*")
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"})
AUDIO_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm",
                         "audio/flac", "audio/mp4", "audio/aac"})
ARG_PREFIX = "a."
NAV_END = "</nav></header>"
# On a page served to a browser signed in to `serve --http --ui` (docs/ui.md): a plain
# form, no script; the server checks the POST's origin.
SIGN_OUT = ("<form id=\"sign-out\" class=\"sign-out\" method=\"post\" action=\"/logout\">"
            "<button type=\"submit\">Sign out</button></form>")


def e(value: object) -> str:
    """Text for HTML: element content or a double-quoted attribute value."""
    return escape(str(value), quote=True)


def prompt_url(package: str, name: str, query: Mapping[str, str] | None = None) -> str:
    path = f"/prompt/{quote(package, safe='')}/{quote(name, safe='')}"
    return f"{path}?{urlencode(query)}" if query else path


def compare_url(package: str, name: str) -> str:
    return f"/compare/{quote(package, safe='')}/{quote(name, safe='')}"


def layout(title: str, body: str, *, live: bool = False, generation: int = 0) -> str:
    """The page around ``body``: one stylesheet, one script, both from this app."""
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<meta name=\"color-scheme\" content=\"light dark\">"
        f"<title>{e(title)} · promptops</title>"
        "<link rel=\"stylesheet\" href=\"/static/ui.css\">"
        "<script src=\"/static/ui.js\" defer></script></head>"
        f"<body data-live=\"{'1' if live else '0'}\" data-generation=\"{generation}\">"
        "<a class=\"skip\" href=\"#main\">Skip to content</a>"
        "<header><nav aria-label=\"Site\"><a href=\"/\" class=\"brand\">promptops</a> "
        f"<span class=\"muted\">catalog and playground</span>{NAV_END}"
        f"<main id=\"main\" tabindex=\"-1\">{body}</main></body></html>"
    )


# -- catalog ------------------------------------------------------------------------------

def row_html(row: Row) -> str:
    tags = "".join(f"<li class=\"tag\">{e(t)}</li>" for t in row.tags)
    args = ", ".join(row.arguments) or "none"
    return (
        "<li class=\"prompt\">"
        f"<a class=\"name\" href=\"{e(prompt_url(row.package, row.name))}\">"
        f"{e(row.title or row.name)}</a> <code>{e(row.name)}</code>"
        f" <span class=\"muted\">{e(row.package)} {e(row.version)}</span>"
        f"<p>{e(row.description)}</p>"
        f"<p class=\"args\">Arguments: {e(args)}</p>"
        + (f"<ul class=\"tags\" aria-label=\"Tags\">{tags}</ul>" if tags else "")
        + "</li>"
    )


def catalog(site: Site, query: str, package: str | None, page: int, per_page: int,
            see: tuple[str, ...] | None = None) -> str:
    total, rows = site.search(query, package, limit=per_page, offset=page * per_page, see=see)
    view = site.view(see)
    shelves = sorted((k, s) for k, s in site.shelves.items() if view is None or k in view)
    options = ["<option value=\"\">All packages</option>"]
    for key, shelf in shelves:
        sel = " selected" if key == package else ""
        label = f"{key} {shelf.bundle['package']['version']}" if shelf.bundle else key
        options.append(f"<option value=\"{e(key)}\"{sel}>{e(label)}</option>")
    errors = "".join(
        f"<p class=\"error\" role=\"alert\">Package {e(key)} does not build: {e(s.error)}</p>"
        for key, s in shelves if s.error)
    items = "".join(row_html(r) for r in rows)
    more = ""
    if (page + 1) * per_page < total:
        q = {"q": query, "page": str(page + 1)}
        if package:
            q["package"] = package
        more = f"<p><a id=\"more\" href=\"/?{e(urlencode(q))}\">Next {per_page}</a></p>"
    packages = ", ".join(
        f"{k} {s.bundle['package']['version']}{_channel_note(site, k) if i < 20 else ''}"
        if s.bundle else k for i, (k, s) in enumerate(shelves))
    body = (
        f"<h1>Prompts</h1><p class=\"muted\">Packages: {e(packages)}"
        f"{' · working tree, live' if site.worktree else ' · HEAD'}</p>{errors}"
        "<form id=\"search\" role=\"search\" action=\"/\" method=\"get\">"
        "<label for=\"q\">Search</label> "
        f"<input id=\"q\" name=\"q\" type=\"search\" value=\"{e(query)}\" autocomplete=\"off\" "
        "placeholder=\"name, title, description, argument, tag\"> "
        f"<label for=\"package\">Package</label> <select id=\"package\" name=\"package\">"
        f"{''.join(options)}</select> <button type=\"submit\">Search</button></form>"
        f"<p id=\"count\" role=\"status\" aria-live=\"polite\">{total} "
        f"prompt{'s' if total != 1 else ''}</p>"
        f"<ul id=\"results\" class=\"prompts\">{items}</ul>{more}"
    )
    return layout("Prompts", body, live=site.live, generation=site.generation)


def _channel_note(site: Site, package: str) -> str:
    """`` (production: 1.3.0, staging: 1.4.0)``: the releases the package's channels hold."""
    chans = site.channels(package)
    if not chans:
        return ""
    return " (" + ", ".join(f"{c.name}: {c.version or c.release or '?'}" for c in chans) + ")"


def search_json(site: Site, query: str, package: str | None, limit: int,
                see: tuple[str, ...] | None = None) -> dict[str, object]:
    total, rows = site.search(query, package, limit=limit, see=see)
    return {"total": total, "items": [
        {"package": r.package, "name": r.name, "title": r.title, "description": r.description,
         "version": r.version, "arguments": list(r.arguments), "tags": list(r.tags),
         "url": prompt_url(r.package, r.name)} for r in rows]}


# -- prompt page --------------------------------------------------------------------------

def form_value(arg: Argument, value: object) -> str:
    """A value as the form (and the MCP wire) writes it: strings as they are, the rest JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def field_html(index: int, arg: Argument, value: str | None) -> str:
    name = arg["name"]
    fid = f"arg-{index}"
    kind = arg.get("type", "string")
    required = bool(arg.get("required"))
    req = " required aria-required=\"true\"" if required else ""
    note = ' <span class="req">(required)</span>' if required else ""
    label = (f"<label for=\"{fid}\">{e(arg.get('title') or name)}{note}"
             f" <code>{e(name)}</code> <span class=\"muted\">{e(kind)}</span></label>")
    help_id = f"{fid}-help"
    described = arg.get("description", "")
    extra = []
    if "pattern" in arg:
        extra.append(f"pattern: {arg['pattern']}")
    if "default" in arg:
        extra.append(f"default: {form_value(arg, arg['default'])}")
    helptext = " · ".join(x for x in (described, *extra) if x)
    aria = f" aria-describedby=\"{help_id}\"" if helptext else ""
    fname = e(ARG_PREFIX + name)
    cur = value if value is not None else ""
    if "enum" in arg:
        opts = [] if required else ["<option value=\"\">(not set)</option>"]
        for v in arg["enum"]:
            sel = " selected" if v == cur else ""
            opts.append(f"<option value=\"{e(v)}\"{sel}>{e(v)}</option>")
        control = f"<select id=\"{fid}\" name=\"{fname}\"{req}{aria}>{''.join(opts)}</select>"
    elif kind == "boolean":
        opts = [] if required else ["<option value=\"\">(not set)</option>"]
        for v in ("true", "false"):
            sel = " selected" if v == cur else ""
            opts.append(f"<option value=\"{v}\"{sel}>{v}</option>")
        control = f"<select id=\"{fid}\" name=\"{fname}\"{req}{aria}>{''.join(opts)}</select>"
    elif kind in ("number", "integer"):
        step = "1" if kind == "integer" else "any"
        control = (f"<input id=\"{fid}\" name=\"{fname}\" type=\"number\" step=\"{step}\" "
                   f"value=\"{e(cur)}\"{req}{aria}>")
    elif kind in ("array", "object"):
        control = (f"<textarea id=\"{fid}\" name=\"{fname}\" rows=\"4\" data-json=\"{kind}\" "
                   f"spellcheck=\"false\"{req}{aria}>{e(cur)}</textarea>")
    else:
        pattern = f" pattern=\"{e(arg['pattern'])}\"" if "pattern" in arg else ""
        maxlen = f" maxlength=\"{int(arg['maxLength'])}\"" if "maxLength" in arg else ""
        control = (f"<textarea id=\"{fid}\" name=\"{fname}\" rows=\"2\"{pattern}{maxlen}"
                   f"{req}{aria}>{e(cur)}</textarea>" if not pattern else
                   f"<input id=\"{fid}\" name=\"{fname}\" type=\"text\" value=\"{e(cur)}\""
                   f"{pattern}{maxlen}{req}{aria}>")
    help_html = f"<p id=\"{help_id}\" class=\"help\">{e(helptext)}</p>" if helptext else ""
    return f"<div class=\"field\">{label}{control}{help_html}</div>"


def _content_html(content: Mapping[str, object]) -> str:
    kind = content.get("type")
    if kind == "text":
        return f"<pre class=\"text\">{e(content.get('text', ''))}</pre>"
    if kind in ("image", "audio"):
        mime = str(content.get("mimeType", ""))
        data = str(content.get("data", ""))
        size = len(data) * 3 // 4
        label = f"{kind} {mime}, about {size} bytes"
        ok = bool(_B64.fullmatch(data))
        if kind == "image" and mime in IMAGE_TYPES and ok:
            return (f"<figure><img src=\"data:{mime};base64,{e(data)}\" alt=\"{e(label)}\">"
                    f"<figcaption>{e(label)}</figcaption></figure>")
        if kind == "audio" and mime in AUDIO_TYPES and ok:
            return (f"<figure><audio controls src=\"data:{mime};base64,{e(data)}\"></audio>"
                    f"<figcaption>{e(label)}</figcaption></figure>")
        return f"<p class=\"muted\">{e(label)} (not shown)</p>"
    if kind == "resource":
        res = content.get("resource")
        res = res if isinstance(res, Mapping) else {}
        head = (f"<p>Embedded resource <code>{e(res.get('uri', ''))}</code> "
                f"<span class=\"muted\">{e(res.get('mimeType', ''))}</span></p>")
        if "text" in res:
            return head + f"<pre class=\"text\">{e(res['text'])}</pre>"
        blob = str(res.get("blob", ""))
        return head + f"<p class=\"muted\">binary, about {len(blob) * 3 // 4} bytes</p>"
    if kind == "resource_link":
        rows = "".join(f"<dt>{e(k)}</dt><dd>{e(content[k])}</dd>" for k in
                       ("uri", "name", "title", "description", "mimeType", "size")
                       if k in content)
        return f"<p>Resource link (not followed)</p><dl class=\"link\">{rows}</dl>"
    return f"<pre class=\"text\">{e(json.dumps(content, ensure_ascii=False))}</pre>"


def messages_html(result: PromptResult) -> str:
    out = []
    if "description" in result:
        out.append(f"<p class=\"description\">{e(result['description'])}</p>")
    out.append("<ol class=\"messages\">")
    for i, msg in enumerate(result["messages"]):
        content: Mapping[str, object] = msg["content"]
        meta = content.get("_meta")
        authored = (meta.get("promptops/role") if isinstance(meta, Mapping) else None) \
            or msg["role"]
        role = (f"{e(authored)} <span class=\"muted\">(served as {e(msg['role'])})</span>"
                if authored != msg["role"] else e(msg["role"]))
        out.append(f"<li class=\"message role-{e(msg['role'])}\" data-index=\"{i}\">"
                   f"<p class=\"role\"><strong>{role}</strong> "
                   f"<span class=\"muted\">{e(content.get('type', ''))}</span></p>"
                   f"{_content_html(content)}</li>")
    out.append("</ol>")
    return "".join(out)


def cli_command(package_rel: str, name: str, args: Mapping[str, str]) -> str:
    parts = ["promptops", "render", name]
    for k, v in args.items():
        parts += ["-a", f"{k}={v}"]
    if package_rel:
        parts += ["--path", package_rel]
    parts += ["--format", "json"]
    return shlex.join(parts)


def result_json(result: PromptResult) -> str:
    """Exactly what `promptops render --format json` prints (without its newline)."""
    return json.dumps(result, indent=2, ensure_ascii=False)


def mcp_request(name: str, args: Mapping[str, str]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                       "params": {"name": name, "arguments": dict(args)}},
                      indent=2, ensure_ascii=False)


def _samples(shelf: Shelf, prompt: Prompt) -> str:
    samples = prompt.get("samples") or []
    if not samples:
        return ""
    links = []
    for s in samples:
        q = {"sample": s["name"], "render": "1"}
        links.append(f"<li><a href=\"{e(prompt_url(shelf.name, prompt['name'], q))}\">"
                     f"{e(s['name'])}</a></li>")
    return f"<nav aria-label=\"Samples\"><h2>Samples</h2><ul class=\"samples\">{''.join(links)}" \
           "</ul></nav>"


def _history(site: Site, shelf: Shelf, prompt: Prompt) -> str:
    """The package's releases, each a link to compare it with HEAD."""
    tags = [t for t in site.revisions(shelf.name) if t != "HEAD"]
    if not tags:
        return ""
    base = compare_url(shelf.name, prompt["name"])
    links = "".join(f"<li><a href=\"{e(base + '?' + urlencode({'base': t, 'head': 'HEAD'}))}\">"
                    f"{e(t)}</a></li>" for t in tags[:20])
    return (f"<nav aria-label=\"Releases\"><h2>Releases</h2><p class=\"muted\">Compare a "
            f"release with HEAD:</p><ul class=\"samples\">{links}</ul></nav>")


def _channels(site: Site, shelf: Shelf, prompt: Prompt) -> str:
    """The package's release channels, each with the release it holds and a link to
    compare it with HEAD, and a link per pair of channels (``production`` against
    ``staging``): the compare page resolves a channel as `promptops diff` does."""
    chans = site.channels(shelf.name)
    if not chans:
        return ""
    base = compare_url(shelf.name, prompt["name"])

    def link(a: str, b: str) -> str:
        return e(base + "?" + urlencode({"base": a, "head": b}))

    items = "".join(
        f"<li><strong>{e(c.name)}</strong>: "
        f"{e(c.release or 'no release tag (the channel ref names no tag)')} "
        f"<a href=\"{link(c.revision, 'HEAD')}\">compare {e(c.name)} with HEAD</a></li>"
        for c in chans)
    pairs = [(a, b) for i, a in enumerate(chans[:6]) for b in chans[i + 1:6]]
    pair_links = "".join(
        f"<li><a href=\"{link(a.revision, b.revision)}\">compare {e(a.name)} with "
        f"{e(b.name)}</a></li>" for a, b in pairs)
    more = (f"<ul class=\"samples\" id=\"channel-pairs\">{pair_links}</ul>"
            if pair_links else "")
    return (f"<nav aria-label=\"Channels\"><h2>Channels</h2><ul id=\"channels\">{items}</ul>"
            f"{more}</nav>")


def health_section(shelf: Shelf, prompt: Prompt, query: Mapping[str, str], *,
                   run: bool) -> str:
    """Lint's findings and the test results for the prompt, on request (a link: linting
    a big package takes a while, so no page waits for it unasked)."""
    head = "<section aria-labelledby=\"health-h\" id=\"health\"><h2 id=\"health-h\">Health</h2>"
    if not run:
        q = {**query, "health": "1"}
        return (f"{head}<p><a id=\"run-lint\" href=\"{e(prompt_url(shelf.name, prompt['name'], q))}"
                "#health\">Show lint findings and test results</a> (lints the package once, as "
                "<code>promptops lint</code> does, and runs this prompt's tests as "
                "<code>promptops test</code> does, writing nothing)</p></section>")
    found = shelf.findings(prompt)
    if isinstance(found, str):
        lint = f"<p class=\"muted\" id=\"lint\">{e(found)}</p>"
    elif not found:
        lint = "<p id=\"lint\">No lint findings for this prompt.</p>"
    else:
        items = "".join(
            f"<li><strong>{e(f.level)}</strong> <code>{e(f.code)}</code> {e(f.name)}: "
            f"{e(f.message)} <span class=\"muted\">{e(f.path)}:{f.line}:{f.col}</span></li>"
            for f in found)
        lint = f"<ul id=\"lint\">{items}</ul>"
    return f"{head}<h3>Lint</h3>{lint}<h3>Tests</h3>{tests_html(shelf, prompt)}</section>"


def usage_section(rows: Sequence[tuple[str, int, int, Mapping[str, int]]],
                  since: float) -> str:
    """``serve --http --ui``: this prompt's request counts on this server, per version."""
    import time

    started = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(since))
    head = (f"<section aria-labelledby=\"usage-h\" id=\"usage\"><h2 id=\"usage-h\">Requests"
            f"</h2><p class=\"muted\">On this server since {e(started)}.</p>")
    if not rows:
        return f"{head}<p id=\"requests\">No requests for this prompt yet.</p></section>"
    body = "".join(
        f"<tr><th scope=\"row\">{e(version)}</th><td>{gets}</td><td>{completions}</td>"
        f"<td>{e(', '.join(f'{k}: {v}' for k, v in sorted(outcomes.items())))}</td></tr>"
        for version, gets, completions, outcomes in rows)
    return (f"{head}<table id=\"requests\"><thead><tr><th scope=\"col\">Version</th>"
            "<th scope=\"col\">prompts/get</th><th scope=\"col\">completion/complete</th>"
            f"<th scope=\"col\">Outcomes</th></tr></thead><tbody>{body}</tbody></table>"
            "</section>")


def tests_html(shelf: Shelf, prompt: Prompt) -> str:
    """Each of the prompt's test cases with its outcome and, for a failure, the runner's
    messages and diff (as `promptops test` prints them)."""
    ran = shelf.tests(prompt)
    if isinstance(ran, str):
        return f"<p class=\"muted\" id=\"tests\">{e(ran)}</p>"
    passed = sum(1 for _, o in ran if o.status == "passed")
    items = []
    for case, outcome in ran:
        note = ""
        if outcome.snapshot_state == "new":
            note = (" <span class=\"muted\">(its snapshot is not written yet: "
                    "<code>promptops test</code> writes it)</span>")
        if case.skip:
            note += f" <span class=\"muted\">skipped: {e(case.skip)}</span>"
        fails = "".join(
            f"<li>{e(f.message)}"
            + (f"<pre class=\"diff\">{e(f.diff)}</pre>" if f.diff else "") + "</li>"
            for f in outcome.failures)
        items.append(
            f"<li class=\"case {e(outcome.status)}\"><strong>{e(outcome.status)}</strong> "
            f"{e(case.name)} <span class=\"muted\">{e(case.where)}</span>{note}"
            + (f"<ul>{fails}</ul>" if fails else "") + "</li>")
    summary = (f"<p id=\"tests-summary\">{passed} of {len(ran)} "
               f"case{'s' if len(ran) != 1 else ''} passed</p>")
    return f"{summary}<ul id=\"tests\">{''.join(items)}</ul>"


def prompt_page(site: Site, shelf: Shelf, prompt: Prompt, values: Mapping[str, str],
                rendered: str, health: str = "") -> str:
    pkg = shelf.bundle["package"] if shelf.bundle else None
    fields = "".join(field_html(i, a, values.get(a["name"]))
                     for i, a in enumerate(prompt["arguments"])) \
        or "<p class=\"muted\">This prompt takes no arguments.</p>"
    head = (
        f"<p><a href=\"/\">All prompts</a> · <a href=\"{e(compare_url(shelf.name, prompt['name']))}"
        f"\">Compare versions</a></p>"
        f"<h1>{e(prompt.get('title') or prompt['name'])}</h1>"
        f"<p><code>{e(prompt['name'])}</code> <span class=\"muted\">{e(shelf.name)} "
        f"{e(pkg['version'] if pkg else '')} · {e(prompt['source'])}</span></p>"
        f"<p>{e(prompt.get('description', ''))}</p>"
    )
    form = (
        "<form id=\"render-form\" method=\"get\" "
        f"action=\"{e(prompt_url(shelf.name, prompt['name']))}\">"
        f"<h2>Arguments</h2>{fields}<input type=\"hidden\" name=\"render\" value=\"1\">"
        "<p><button type=\"submit\" id=\"render\">Render</button></p></form>"
    )
    body = (head + _samples(shelf, prompt) + _history(site, shelf, prompt)
            + _channels(site, shelf, prompt) + form + rendered
            + health)
    return layout(prompt.get("title") or prompt["name"], body, live=site.live,
                  generation=site.generation)


def result_section(shelf: Shelf, name: str, args: Mapping[str, str],
                   result: PromptResult) -> str:
    return (
        "<section aria-labelledby=\"result-h\" id=\"result\"><h2 id=\"result-h\">Result</h2>"
        f"{messages_html(result)}"
        "<p class=\"copies\"><button type=\"button\" data-copy=\"mcp-request\">Copy as MCP JSON"
        "</button> <button type=\"button\" data-copy=\"cli\">Copy CLI command</button> "
        "<button type=\"button\" data-copy=\"mcp-json\">Copy result JSON</button> "
        "<span id=\"copied\" role=\"status\" aria-live=\"polite\"></span></p>"
        "<details><summary>prompts/get request</summary>"
        f"<pre id=\"mcp-request\">{e(mcp_request(name, args))}</pre></details>"
        "<details><summary>CLI command</summary>"
        f"<pre id=\"cli\">{e(cli_command(shelf.rel, name, args))}</pre></details>"
        "<details open><summary>Result as JSON (what prompts/get returns)</summary>"
        f"<pre id=\"mcp-json\">{e(result_json(result))}</pre></details></section>"
    )


def error_section(message: str, code: int) -> str:
    return (f"<section id=\"result\" aria-labelledby=\"result-h\"><h2 id=\"result-h\">Result"
            f"</h2><p class=\"error\" role=\"alert\" id=\"render-error\">error {code}: "
            f"{e(message)}</p></section>")


def not_found(what: str) -> str:
    return layout("Not found", f"<h1>Not found</h1><p>{e(what)}</p><p><a href=\"/\">"
                               "All prompts</a></p>")
