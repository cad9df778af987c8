"""The compare page: one prompt rendered at two revisions, side by side, with both diffs.

Escaping follows :mod:`promptops.ui.pages`' one rule: every value passes through
:func:`~promptops.ui.pages.e`. Its own module because it is the one page built from two
bundles at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from promptops.pipeline.bundle_types import Prompt
from promptops.ui.pages import compare_url, e, field_html, layout, prompt_url
from promptops.ui.site import Shelf, Site


def _diff_html(diff: str, id_: str = "diff", same: str = "The two renders are identical."
               ) -> str:
    if not diff:
        return f"<p id=\"{id_}\" class=\"muted\">{e(same)}</p>"
    lines = []
    for line in diff.splitlines():
        cls = ("add" if line.startswith("+") and not line.startswith("+++") else
               "del" if line.startswith("-") and not line.startswith("---") else
               "hunk" if line.startswith("@@") else "")
        # a block per line, its newline inside: copied text keeps its lines, and a block's
        # last newline draws no empty line
        lines.append(f"<span class=\"{cls}\">{e(line)}\n</span>")
    return f"<pre id=\"{id_}\" class=\"diff\">{''.join(lines)}</pre>"


def compare_page(site: Site, shelf: Shelf, prompt: Prompt, values: Mapping[str, str],
                 refs: tuple[str, str], choices: Sequence[str], sides: Iterable[str],
                 diff: str | None, error: str | None, source_diff: str = "") -> str:
    datalist = "".join(f"<option value=\"{e(c)}\"></option>" for c in choices)
    fields = "".join(field_html(i, a, values.get(a["name"]))
                     for i, a in enumerate(prompt["arguments"]))
    columns = "".join(f"<div class=\"side\">{s}</div>" for s in sides)
    body = (
        f"<p><a href=\"/\">All prompts</a> · <a href=\"{e(prompt_url(shelf.name, prompt['name']))}"
        f"\">Back to the prompt</a></p>"
        f"<h1>Compare {e(prompt.get('title') or prompt['name'])}</h1>"
        "<form id=\"compare-form\" method=\"get\" "
        f"action=\"{e(compare_url(shelf.name, prompt['name']))}\">"
        "<datalist id=\"refs\">" + datalist + "</datalist>"
        "<div class=\"refs\"><div class=\"field\"><label for=\"base\">Base revision</label>"
        f"<input id=\"base\" name=\"base\" list=\"refs\" required value=\"{e(refs[0])}\"></div>"
        "<div class=\"field\"><label for=\"head\">Head revision</label>"
        f"<input id=\"head\" name=\"head\" list=\"refs\" required value=\"{e(refs[1])}\"></div>"
        f"</div><h2>Arguments</h2>{fields}"
        "<p><button type=\"submit\" id=\"compare\">Compare</button></p></form>"
    )
    if error:
        body += f"<p class=\"error\" role=\"alert\" id=\"compare-error\">{e(error)}</p>"
    if diff is not None:
        body += (f"<section aria-labelledby=\"cmp-h\"><h2 id=\"cmp-h\">Side by side</h2>"
                 f"<div class=\"sides\">{columns}</div><h2>Rendered diff</h2>"
                 f"{_diff_html(diff)}<h2>Source diff</h2>"
                 f"{_diff_html(source_diff, 'source-diff', 'The prompt file is the same.')}"
                 "</section>")
    return layout("Compare", body, live=site.live, generation=site.generation)


def side_html(label: str, inner: str) -> str:
    return f"<h3>{e(label)}</h3>{inner}"
