"""The UI's routes in process: the catalog, search, the form, rendering, compare, and the
security rules (escaping, CSP, Host check, read-only). The browser tests drive the same
app through Chromium; these say precisely what the server answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlencode

import git
import pytest
from helpers.repo import run_cli
from ui_helpers import make_package

from promptops.pipeline.bundle_types import Message
from promptops.render.result import PromptResult
from promptops.sandbox.limits import Budget, Limits
from promptops.ui.app import CSP, UiApp, loopback_hosts
from promptops.ui.pages import e
from promptops.ui.site import Site


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    make_package(tmp_path / "pkg")
    return tmp_path / "pkg"


@pytest.fixture
def app(pkg: Path) -> UiApp:
    return UiApp(Site(pkg), hosts=loopback_hosts(8765))


def get(app: UiApp, path: str, *, host: str = "127.0.0.1:8765",
        method: str = "GET") -> tuple[int, dict[str, str], str]:
    raw, _, query = path.partition("?")
    scope = {"type": "http", "method": method, "path": raw, "raw_path": raw.encode(),
             "query_string": query.encode(), "headers": [(b"host", host.encode())]}
    r = app.respond(scope)
    return r.status, {"content-type": r.ctype.decode()}, r.body.decode()


def test_catalog_lists_every_prompt_with_its_facts(app: UiApp) -> None:
    status, headers, body = get(app, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    for name in ("code_review", "commit_message", "describe_diagram", "hostile", "typed"):
        assert f"<code>{name}</code>" in body
    assert "Request Code Review" in body and "starter-prompts 0.1.0" in body
    assert "Arguments: code, language, focus" in body


def test_search_is_server_side_and_needs_every_word(app: UiApp) -> None:
    status, _, body = get(app, "/api/search?q=commit+conventional")
    data = json.loads(body)
    assert status == 200 and data["total"] == 1
    assert data["items"][0]["name"] == "commit_message"
    assert json.loads(get(app, "/api/search?q=nothing-like-this")[2])["total"] == 0
    _, _, page = get(app, "/?q=diagram")
    assert "<code>describe_diagram</code>" in page and "<code>code_review</code>" not in page


def test_form_has_typed_fields(app: UiApp) -> None:
    _, _, body = get(app, "/prompt/starter-prompts/typed")
    assert re.search(r'<input id="arg-0" name="a.count" type="number" step="1"[^>]* required', body)
    assert 'type="number" step="any"' in body
    assert re.search(r'<select id="arg-2" name="a.loud"', body)
    assert 'data-json="array"' in body and 'data-json="object"' in body
    assert 'pattern="[A-Z]{3}-[0-9]+"' in body
    _, _, enum = get(app, "/prompt/starter-prompts/commit_message")
    assert '<option value="docs">docs</option>' in enum


def _mcp_json(body: str) -> str:
    import html

    m = re.search(r'<pre id="mcp-json">(.*?)</pre>', body, re.S)
    assert m, body[-2000:]
    return html.unescape(m.group(1))


def test_render_matches_the_cli_byte_for_byte(app: UiApp, pkg: Path) -> None:
    args = {"a.changes": "Fix <b>the</b> & parser", "a.type": "fix", "a.breaking": "true"}
    status, _, body = get(app, "/prompt/starter-prompts/commit_message?render=1&"
                          + urlencode(args))
    assert status == 200
    cli = run_cli("render", "commit_message", "-a", "changes=Fix <b>the</b> & parser",
                  "-a", "type=fix", "-a", "breaking=true", "--path", str(pkg),
                  "--ref", "HEAD", "--format", "json")
    assert cli.returncode == 0, cli.stderr
    assert _mcp_json(body) + "\n" == cli.stdout
    assert "system <span class=\"muted\">(served as user)</span>" in body


def test_a_sample_fills_the_form_and_renders(app: UiApp, pkg: Path) -> None:
    status, _, body = get(app, "/prompt/starter-prompts/typed?sample=basic&render=1")
    assert status == 200
    cli = run_cli("render", "typed", "--sample", "basic", "--path", str(pkg), "--format", "json")
    assert _mcp_json(body) + "\n" == cli.stdout
    assert 'value="3"' in body and '[&quot;a&quot;, &quot;b&quot;]' in body


def test_the_server_checks_again_what_the_browser_checks(app: UiApp) -> None:
    status, _, body = get(app, "/prompt/starter-prompts/typed?render=1&a.count=3&a.code=bad")
    assert status == 400 and "does not match its pattern" in body
    status, _, body = get(app, "/prompt/starter-prompts/typed?render=1&a.code=ABC-1")
    assert status == 400 and "missing required argument &#x27;count&#x27;" in body
    status, _, body = get(app, "/prompt/starter-prompts/typed?render=1&a.count=3&a.code=ABC-1"
                          "&a.items=%7Bnot-json")
    assert status == 400 and "items" in body


def test_hostile_text_is_escaped_everywhere(app: UiApp) -> None:
    pages = [get(app, "/")[2], get(app, "/?q=hostile")[2],
             get(app, "/prompt/starter-prompts/hostile?render=1&a.payload=%3Cscript%3Ealert(5)"
                 "%3C%2Fscript%3E")[2]]
    for body in pages:
        assert "<script>alert" not in body and "<img src=x" not in body
        assert "<svg" not in body and 'href="javascript:' not in body and "<b>tag" not in body
    assert "&lt;script&gt;alert(5)&lt;/script&gt;" in pages[2]
    search = get(app, "/api/search?q=hostile")[2]
    assert json.loads(search)["items"][0]["title"].startswith("<script>")  # JSON, drawn as text


def test_headers_and_host_check_and_read_only(app: UiApp) -> None:
    scope = {"type": "http", "method": "GET", "path": "/", "query_string": b"",
             "headers": [(b"host", b"127.0.0.1:8765")]}
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request"}

    async def send(msg: dict[str, object]) -> None:
        sent.append(msg)

    import asyncio

    asyncio.run(app(scope, receive, send))
    headers = dict(sent[0]["headers"])  # type: ignore[arg-type]
    assert headers[b"content-security-policy"] == CSP.encode()
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
    assert headers[b"x-content-type-options"] == b"nosniff"
    assert get(app, "/", host="evil.example:8765")[0] == 403  # DNS rebinding
    assert get(app, "/", host="localhost:8765")[0] == 200
    assert get(app, "/", method="POST")[0] == 405
    assert get(app, "/static/ui.js")[0] == 200
    assert get(app, "/static/../pyproject.toml")[0] == 404


def test_compare_two_revisions(app: UiApp) -> None:
    status, _, body = get(app, "/compare/starter-prompts/commit_message?base=HEAD~1&head=HEAD&"
                          "a.changes=x")
    assert status == 200, body
    assert "-You write commit messages in the Conventional Commits style." in body
    assert "+You write commit messages in the Conventional Commits style, in English." in body
    assert ('<span class="del">-    text: You write commit messages in the Conventional '
            'Commits style.\n</span>') in body  # the source diff of the prompt file
    _, _, release = get(app, "/compare/starter-prompts/commit_message?a.changes=x&head=HEAD"
                        "&base=starter-prompts%400.1.0")
    assert "+You write commit messages in the Conventional Commits style, in English." in release
    _, _, page = get(app, "/prompt/starter-prompts/commit_message")
    assert ('href="/compare/starter-prompts/commit_message?base=starter-prompts%400.1.0&amp;'
            'head=HEAD">starter-prompts@0.1.0</a>') in page
    status, _, body = get(app, "/compare/starter-prompts/commit_message?base=--output=x&head=HEAD")
    assert status == 400 and "not a git revision" in body
    status, _, body = get(app, "/compare/starter-prompts/commit_message?base=nope&head=HEAD")
    assert status == 400 and "unknown revision" in body


def _renders(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Budget | None, Limits]]:
    """Every render the app asks for from now on: (prompt, the budget it hands in, the
    renderer's own limits)."""
    from promptops.render.renderer import Renderer

    seen: list[tuple[str, Budget | None, Limits]] = []
    run = Renderer.run

    def counted(self: Renderer, name: str, arguments: object, budget: Budget | None,
                sources: list[Message] | None) -> PromptResult:
        seen.append((name, budget, self.limits))
        return run(self, name, arguments, budget, sources)

    monkeypatch.setattr(Renderer, "run", counted)
    return seen


def test_compare_renders_each_side_once(app: UiApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """The side's messages and the lines diffed come from one render, not two."""
    seen = _renders(monkeypatch)
    status, _, body = get(app, "/compare/starter-prompts/commit_message?base=HEAD~1&head=HEAD&"
                          "a.changes=x")
    assert status == 200 and "+You write commit messages in the Conventional Commits style, " \
        "in English." in body
    assert [name for name, _, _ in seen] == ["commit_message", "commit_message"]
    seen.clear()  # a side that fails: its error is both its panel and its diffed line
    status, _, body = get(app, "/compare/starter-prompts/commit_message?base=HEAD~1&head=HEAD")
    assert status == 200 and body.count("missing required argument") == 2, body
    assert len(seen) == 2


def test_ui_renders_under_a_served_requests_bounds(app: UiApp,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The UI serves renders as serve's prompts/get does: under ``Limits.served``, the
    package's bounds with the wall backstop, so no render holds a request thread unbounded."""
    seen = _renders(monkeypatch)
    assert get(app, "/prompt/starter-prompts/commit_message?render=1&a.changes=x")[0] == 200
    assert get(app, "/compare/starter-prompts/commit_message?base=HEAD~1&head=HEAD&"
               "a.changes=x")[0] == 200
    assert {name for name, _, _ in seen} == {"commit_message"}
    for _, budget, limits in seen:
        assert budget is not None and budget.limits is limits.served
        assert budget.wall - budget.deadline <= limits.backstop_s  # a finite wall bound


def _channel(repo: git.Repo, channel: str, tag: str) -> None:
    """Point ``channel`` at the release tag object, as `promptops promote` leaves the ref."""
    obj = repo.git.rev_parse(f"refs/tags/{tag}")
    repo.git.update_ref(f"refs/promptops/channels/starter-prompts/{channel}", obj)


def test_channels_show_their_release_and_compare_like_promptops_diff(pkg: Path) -> None:
    repo = git.Repo(pkg)
    repo.create_tag("starter-prompts@0.2.0", message="release 0.2.0")  # at HEAD
    _channel(repo, "production", "starter-prompts@0.1.0")
    _channel(repo, "staging", "starter-prompts@0.2.0")
    app = UiApp(Site(pkg), hosts=loopback_hosts(8765))
    _, _, catalog = get(app, "/")
    assert "starter-prompts 0.1.0 (production: 0.1.0, staging: 0.2.0)" in catalog
    _, _, page = get(app, "/prompt/starter-prompts/commit_message")
    assert "<strong>production</strong>: starter-prompts@0.1.0" in page
    assert "<strong>staging</strong>: starter-prompts@0.2.0" in page
    pair = ('href="/compare/starter-prompts/commit_message?base=starter-prompts%2Fproduction'
            '&amp;head=starter-prompts%2Fstaging">compare production with staging</a>')
    assert pair in page
    for base, head in (("starter-prompts/production", "starter-prompts/staging"),
                       ("production", "staging")):  # the bare names `promptops diff` takes
        status, _, body = get(app, "/compare/starter-prompts/commit_message?"
                              + urlencode({"base": base, "head": head, "a.changes": "x"}))
        assert status == 200, body
        assert "-You write commit messages in the Conventional Commits style." in body
        assert "+You write commit messages in the Conventional Commits style, in English." \
            in body
        assert "<option value=\"starter-prompts/staging\">" in body  # offered in the list
    # the CLI agrees: both name the same commits
    out = run_cli("diff", "production", "staging", cwd=pkg)
    assert "commit_message" in out.stdout, out.stdout + out.stderr
    status, _, body = get(app, "/compare/starter-prompts/commit_message?base=starter-prompts"
                          "%2Fcanary&head=HEAD")
    assert status == 400 and "unknown revision" in body


def test_unknown_pages_are_404(app: UiApp) -> None:
    assert get(app, "/prompt/starter-prompts/nope")[0] == 404
    assert get(app, "/prompt/nope/nope")[0] == 404
    assert get(app, "/nowhere")[0] == 404


def test_search_pages_through_every_match(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import genpkg

    site = Site(genpkg.generate(250, tmp_path / "big"), worktree=True)
    total, first = site.search("task", limit=100)
    _, last = site.search("task", limit=100, offset=200)
    assert total == 250 and len(first) == 100 and len(last) == 50
    assert first[0].name == "task_00000" and last[-1].name == "task_00249"
    assert site.search("task 12", limit=100)[0] == len(
        [i for i in range(250) if "12" in f"task_{i:05d} task {i} number {i}"])
    app = UiApp(site, hosts=None)
    _, _, body = get(app, "/?q=task")
    assert body.count('<li class="prompt">') == 100 and 'href="/?q=task&amp;page=1"' in body



def test_a_team_sees_only_its_prompts(app: UiApp) -> None:
    """What serve --http --ui hands the app after authenticating a caller: serve's own
    visibility patterns, applied by serve's own rule (views.visible)."""
    def as_team(path: str, see: tuple[str, ...]) -> tuple[int, str]:
        raw, _, query = path.partition("?")
        r = app.respond({"type": "http", "method": "GET", "path": raw, "raw_path": raw.encode(),
                         "query_string": query.encode(), "promptops.see": see,
                         "headers": [(b"host", b"127.0.0.1:8765")]})
        return r.status, r.body.decode()

    team_a = ("starter-prompts/commit_*",)
    status, body = as_team("/", team_a)
    assert status == 200 and "1 prompt<" in body and "<code>commit_message</code>" in body
    assert "code_review" not in body
    assert json.loads(as_team("/api/search?q=review", team_a)[1])["total"] == 0
    hidden, never = (as_team(f"/prompt/starter-prompts/{n}", team_a)
                     for n in ("code_review", "nope"))
    assert hidden[0] == never[0] == 404
    assert hidden[1].replace("code_review", "nope") == never[1]  # the same page, name aside
    assert as_team("/prompt/starter-prompts/commit_message", team_a)[0] == 200
    assert as_team("/compare/starter-prompts/code_review?base=HEAD~1&head=HEAD", team_a)[0] \
        == 404
    status, body = as_team("/", ("other-package",))
    assert "0 prompts" in body and "starter-prompts" not in body
    assert "7 prompts" in as_team("/", ("*",))[1]


def test_a_site_over_bundles_built_elsewhere(pkg: Path) -> None:
    """What a server that mounts the UI does: hand it its bundles, swap them on reload."""
    from promptops.pipeline.build import Build

    site = Site(None, bundles=[Build(pkg, "HEAD").bundle])
    app = UiApp(site)
    assert "7 prompts" in get(app, "/")[2]
    status, _, body = get(app, "/prompt/starter-prompts/typed?sample=basic&render=1")
    assert status == 200 and "3 x ABC-1" in body
    status, _, body = get(app, "/compare/starter-prompts/typed?base=HEAD~1&head=HEAD")
    assert status == 400 and "served from a bundle" in body
    generation = site.generation
    site.swap([Build(pkg, "HEAD~1").bundle])
    assert site.generation == generation + 1
    site.reload()  # no folders: keeps what was swapped in
    assert "7 prompts" in get(app, "/")[2]


def test_images_and_audio_show_inline_and_nothing_else_does(app: UiApp) -> None:
    status, _, body = get(app, "/prompt/starter-prompts/describe_diagram?render=1")
    assert status == 200
    assert re.search(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="image image/png',
                     body)
    assert re.search(r'<audio controls src="data:audio/wav;base64,[A-Za-z0-9+/=]+">', body)
    from promptops.ui.pages import messages_html

    hostile = messages_html({"messages": [
        {"role": "user", "content": {"type": "image", "mimeType": "image/svg+xml",
                                     "data": "PHN2Zz4="}},
        {"role": "user", "content": {"type": "image", "mimeType": "image/png",
                                     "data": '" onerror="alert(1)'}},
        {"role": "user", "content": {"type": "resource_link", "uri": "javascript:alert(1)",
                                     "name": "x"}}]})
    assert "<img" not in hostile and "href" not in hostile and "(not shown)" in hostile
    assert "<dd>javascript:alert(1)</dd>" in hostile


def test_health_shows_what_promptops_lint_finds_for_the_prompt(app: UiApp, pkg: Path) -> None:
    _, _, page = get(app, "/prompt/starter-prompts/hostile")
    assert 'id="run-lint"' in page and 'id="lint"' not in page  # nothing linted unasked
    _, _, body = get(app, "/prompt/starter-prompts/typed?health=1")  # before the CLI lints
    cli = run_cli("lint", str(pkg), "--format", "json", "--no-cache")
    found = json.loads(cli.stdout)
    findings = found["findings"] if isinstance(found, dict) else found
    mine = sorted({f["code"] for f in findings if f["path"] == "prompts/typed.prompt.yaml"})
    assert mine, cli.stdout  # the typed prompt does trip lint (PO207)
    _, _, body = get(app, "/prompt/starter-prompts/typed?health=1")
    shown = sorted(set(re.findall(r"<code>(PO\d+)</code>", body)))
    assert shown == mine
    import git

    assert git.Repo(pkg).git.status("--porcelain", "--ignored") == ""  # the UI wrote nothing
    _, _, clean = get(app, "/prompt/starter-prompts/hostile?health=1")
    assert "No lint findings for this prompt." in clean


def test_health_shows_promptops_test_outcomes_for_the_prompt(app: UiApp, pkg: Path) -> None:
    cli = run_cli("test", "--ref", "HEAD", "--format", "json", cwd=pkg)
    want = [(c["name"], c["status"], [f["message"] for f in c["failures"]])
            for c in json.loads(cli.stdout)["cases"] if c["prompt"] == "commit_message"]
    # HEAD rewords the system message the exact-messages case pins: one case fails
    assert [w[1] for w in want].count("failed") == 1 and len(want) >= 2, want
    _, _, page = get(app, "/prompt/starter-prompts/commit_message")
    assert 'id="tests"' not in page  # nothing run unasked
    _, _, body = get(app, "/prompt/starter-prompts/commit_message?health=1")
    shown = re.findall(r'<li class="case (\w+)"><strong>\w+</strong> ([^<]*) ', body)
    assert shown == [(status, e(name)) for name, status, _ in want]
    for _name, _status, messages in want:
        for message in messages:
            assert e(message) in body
    passed = sum(1 for w in want if w[1] == "passed")
    assert f"{passed} of {len(want)} cases passed" in body


def test_health_tests_write_no_snapshot(pkg: Path) -> None:
    snaps = pkg / "tests" / "__snapshots__" / "code_review"
    gone = sorted(snaps.iterdir())[0]
    gone.unlink()  # `promptops test` on the working tree would write it back
    app = UiApp(Site(pkg, worktree=True), hosts=loopback_hosts(8765))
    status, _, body = get(app, "/prompt/starter-prompts/code_review?health=1")
    assert status == 200
    assert "its snapshot is not written yet" in body
    assert not gone.exists()


def test_bad_input_to_the_command_is_a_clear_error(tmp_path: Path, pkg: Path) -> None:
    from promptops.ui.server import bind

    held = bind(0)
    try:
        result = run_cli("ui", str(pkg), "--port", str(held.getsockname()[1]), "--no-browser")
    finally:
        held.close()
    assert result.returncode == 2 and "cannot listen on 127.0.0.1:" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli("ui", str(empty), "--no-browser")
    assert result.returncode == 2 and "promptops.yaml" in result.stderr
    result = run_cli("ui", str(tmp_path / "missing"), "--no-browser")
    assert result.returncode == 2 and "not a folder" in result.stderr


def test_too_many_fields_is_a_400_not_a_crash(app: UiApp) -> None:
    status, _, body = get(app, "/?" + "&".join(f"f{i}=1" for i in range(1001)))
    assert status == 400 and "too many fields" in body


def test_head_mode_picks_up_a_new_commit(pkg: Path) -> None:
    import git
    from helpers.repo import commit_files

    from promptops.ui.server import head_follower

    site = Site(pkg)
    app = UiApp(site, refresh=head_follower(site, lambda _: None, every_s=0, background=False))
    assert not site.head_moved()
    assert "Typed arguments" in get(app, "/")[2]
    commit_files(git.Repo(pkg), {"prompts/typed.prompt.yaml": (
        pkg / "prompts" / "typed.prompt.yaml").read_text().replace(
            "Typed arguments", "Typed fields")}, "retitle")
    assert site.head_moved()
    body = get(app, "/")[2]
    assert "Typed fields" in body and "Typed arguments" not in body
    assert not site.head_moved()


def test_a_package_broken_at_head_is_not_rebuilt_until_head_moves(tmp_path: Path) -> None:
    from helpers.repo import make_repo

    repo = make_repo(tmp_path / "p", {"promptops.yaml": "name: [broken\n"})
    site = Site(tmp_path / "p")
    assert next(iter(site.shelves.values())).error
    assert not site.head_moved()  # nothing to rebuild every two seconds
    from helpers.repo import commit_files

    commit_files(repo, {"promptops.yaml": "name: fixed\nversion: 1.0.0\n"}, "fix")
    assert site.head_moved()
    site.reload()
    assert "fixed" in site.shelves
