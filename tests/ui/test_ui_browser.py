"""`promptops ui` end to end in a real headless browser: Debian's chromium and chromedriver,
driven by Selenium with the driver's path given (Selenium Manager downloads nothing).

The UI runs as a real `python -m promptops ui` process. The tests click through the
catalog -> search -> prompt -> form -> render, hold the rendered JSON byte for byte
against `promptops render --format json`, compare two revisions, watch a working-tree
save update the open page, load a hostile prompt with a dialog listener armed, and run
axe-core (from npm) on every page. Screenshots land in docs/images/ for docs/ui.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.node import npm_package
from helpers.repo import REPO_ROOT, cli_env, run_cli
from selenium import webdriver
from selenium.common.exceptions import (
    NoAlertPresentException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait
from ui_helpers import make_package

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
AXE_CORE = ("axe-core", "4.14.1")  # installed by tests/setup.py (the README's test command)
SHOTS = REPO_ROOT / "docs" / "images"

# The README's test command installs both (tests/setup.py); a missing browser fails the
# run instead of hiding it.


class UiProcess:
    """`python -m promptops ui DIR --port 0 --no-browser` and the URL it printed."""

    def __init__(self, folder: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "promptops", "ui", str(folder), "--port", "0",
             "--no-browser", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.fullmatch(r"promptops ui: (http://127\.0\.0\.1:\d+/)\n", line)
        if not m:
            self.proc.kill()
            raise AssertionError(f"no URL printed: {line!r} {self.proc.stderr.read()!r}")
        self.url = m.group(1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _driver(tmp: Path) -> webdriver.Chrome:
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", f"--user-data-dir={tmp}", "--window-size=1200,900"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=opts)


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ui") / "pkg"
    make_package(root)
    return root


@pytest.fixture(scope="module")
def ui(pkg: Path) -> Iterator[UiProcess]:
    proc = UiProcess(pkg)
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    driver = _driver(tmp_path_factory.mktemp("chromium"))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def wait(driver: webdriver.Chrome, cond: Any, timeout: float = 10) -> object:
    """``cond`` until it holds. A condition that reads an element the page replaces while
    it reads (a live update after a save, a submit) is asked again, not failed: the node
    it found left the document, which says only that the page moved on (session 18: a
    worktree save's update, read mid-replacement, failed the test at load 22)."""

    def asked(d: webdriver.Chrome) -> object:
        try:
            return cond(d)
        except WebDriverException as e:
            if replaced(e):
                return False
            raise

    return WebDriverWait(driver, timeout).until(asked)


def submit(driver: webdriver.Chrome, button: str, then: str) -> Any:
    """Click the form button ``button`` and wait for the *new* page's element ``then``: the
    page before the submit may hold an element of that id too, and reading it while the
    browser replaces the page raises StaleElementReferenceException."""
    before = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.ID, button).click()
    wait(driver, lambda _: gone(before))
    return wait(driver, lambda d: d.find_elements(By.ID, then))[0]  # type: ignore[index]


def gone(element: Any) -> bool:
    """Whether ``element`` left the document. Selenium's ``staleness_of`` knows only
    StaleElementReferenceException; caught mid-replacement, chromedriver answers for the old
    page's node with an inspector error instead ("Node with given id does not belong to
    the document": the session-17 clone run's one failure), which is the same fact."""
    try:
        element.is_enabled()
    except WebDriverException as e:
        if replaced(e):
            return True
        raise
    return False


def replaced(error: WebDriverException) -> bool:
    """Whether ``error`` is chromedriver's answer for a node no longer in the document."""
    return isinstance(error, StaleElementReferenceException) or \
        "does not belong to the document" in str(error)


def no_dialog(driver: webdriver.Chrome) -> None:
    try:
        alert = driver.switch_to.alert
    except NoAlertPresentException:
        return
    text = alert.text
    alert.dismiss()
    raise AssertionError(f"a dialog opened: {text!r}")


def axe(driver: webdriver.Chrome) -> list[str]:
    """Serious or critical axe-core violations on the current page."""
    driver.execute_script((npm_package(*AXE_CORE) / "axe.min.js").read_text(encoding="utf-8"))
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document).then(r => done(r.violations.map(v => [v.impact, v.id, v.help,"
        " v.nodes.map(n => n.target.join(' ')).slice(0, 3)])));")
    return [f"{impact} {vid}: {help_} {nodes}" for impact, vid, help_, nodes in result
            if impact in ("serious", "critical")]


def shot(driver: webdriver.Chrome, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"ui-{name}.png"))


def test_catalog_search_prompt_form_render(ui: UiProcess, browser: webdriver.Chrome,
                                           pkg: Path) -> None:
    browser.get(ui.url)
    assert "7 prompts" in browser.find_element(By.ID, "count").text
    assert axe(browser) == []
    shot(browser, "catalog")
    box = browser.find_element(By.ID, "q")
    box.send_keys("conventional commit")
    wait(browser, lambda d: d.find_element(By.ID, "count").text == "1 prompt")
    links = browser.find_elements(By.CSS_SELECTOR, "#results a.name")
    assert [a.text for a in links] == ["Write a Commit Message"]
    links[0].send_keys(Keys.ENTER)  # keyboard, not a mouse click
    wait(browser, lambda d: d.find_elements(By.ID, "render-form"))
    assert axe(browser) == []
    browser.find_element(By.NAME, "a.changes").send_keys("Handle <b>empty</b> input & more")
    Select(browser.find_element(By.NAME, "a.type")).select_by_value("fix")
    Select(browser.find_element(By.NAME, "a.breaking")).select_by_value("true")
    browser.find_element(By.NAME, "a.recent-subjects").send_keys('["fix: a", "feat: b"]')
    browser.find_element(By.ID, "render").click()
    pre = wait(browser, lambda d: d.find_elements(By.ID, "mcp-json"))
    shown = browser.execute_script("return document.getElementById('mcp-json').textContent")
    cli = run_cli("render", "commit_message", "-a", "changes=Handle <b>empty</b> input & more",
                  "-a", "type=fix", "-a", "breaking=true",
                  "-a", 'recent-subjects=["fix: a", "feat: b"]', "--path", str(pkg),
                  "--format", "json")
    assert cli.returncode == 0, cli.stderr
    assert shown + "\n" == cli.stdout
    assert pre
    texts = [m.text for m in browser.find_elements(By.CSS_SELECTOR, ".message pre.text")]
    result = json.loads(cli.stdout)
    assert texts == [m["content"]["text"] for m in result["messages"]]
    roles = [r.text for r in browser.find_elements(By.CSS_SELECTOR, ".message .role strong")]
    assert roles[0] == "system (served as user)" and roles[1] == "user"
    cmd = browser.execute_script("return document.getElementById('cli').textContent")
    assert cmd.startswith("promptops render commit_message -a ")
    assert axe(browser) == []
    browser.execute_script("document.getElementById('result').scrollIntoView()")
    shot(browser, "prompt")


def test_browser_refuses_a_bad_value_and_the_server_too(ui: UiProcess,
                                                         browser: webdriver.Chrome) -> None:
    browser.get(ui.url + "prompt/starter-prompts/typed")
    browser.find_element(By.NAME, "a.count").send_keys("3")
    browser.find_element(By.NAME, "a.code").send_keys("bad")
    browser.find_element(By.NAME, "a.items").send_keys("{not json")
    browser.find_element(By.ID, "render").click()
    assert not browser.find_elements(By.ID, "result")  # the browser kept the form
    assert browser.execute_script(
        "return document.querySelector('[name=\"a.code\"]').validity.patternMismatch")
    assert browser.execute_script(
        "return document.querySelector('[name=\"a.items\"]').validity.customError")
    browser.get(ui.url + "prompt/starter-prompts/typed?render=1&a.count=3&a.code=bad")
    err = browser.find_element(By.ID, "render-error").text
    assert "does not match its pattern" in err
    browser.get(ui.url + "prompt/starter-prompts/typed")
    browser.find_element(By.LINK_TEXT, "basic").click()  # a sample, one click away
    assert "3 x ABC-1" in browser.find_element(By.CSS_SELECTOR, ".message pre.text").text


def test_compare_two_revisions(ui: UiProcess, browser: webdriver.Chrome) -> None:
    browser.get(ui.url + "prompt/starter-prompts/commit_message")
    browser.find_element(By.LINK_TEXT, "Compare versions").click()
    base = browser.find_element(By.ID, "base")
    base.clear()
    base.send_keys("HEAD~1")
    browser.find_element(By.NAME, "a.changes").send_keys("x")
    diff = submit(browser, "compare", "diff").text
    assert "-You write commit messages in the Conventional Commits style." in diff
    assert "+You write commit messages in the Conventional Commits style, in English." in diff
    sides = browser.find_elements(By.CSS_SELECTOR, ".side")
    assert len(sides) == 2 and "HEAD~1" in sides[0].text and "in English" in sides[1].text
    assert "Conventional Commits style, in English." in browser.find_element(
        By.ID, "source-diff").text
    assert axe(browser) == []
    browser.execute_script("document.getElementById('cmp-h').scrollIntoView()")
    shot(browser, "compare")


def test_dark_mode_reads_well_too(ui: UiProcess, browser: webdriver.Chrome) -> None:
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    try:
        browser.get(ui.url + "prompt/starter-prompts/typed?sample=basic&render=1")
        bg = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        assert bg == "rgb(13, 17, 23)"
        assert axe(browser) == []  # contrast included
        browser.get(ui.url)
        assert axe(browser) == []
        shot(browser, "catalog-dark")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_a_hostile_prompt_runs_nothing(ui: UiProcess, browser: webdriver.Chrome) -> None:
    for page in ("", "?q=hostile", "prompt/starter-prompts/hostile?render=1&a.payload="
                 "%3Cscript%3Ealert(9)%3C%2Fscript%3E%3Cimg%20src%3Dx%20onerror%3Dalert(8)%3E"):
        browser.get(ui.url + page)
        time.sleep(0.3)
        no_dialog(browser)
        assert browser.execute_script("return window.__pwned === undefined")
        assert not browser.find_elements(By.CSS_SELECTOR, "main script, main img[src='x'], "
                                                          "main svg, a[href^='javascript:']")
        fetched = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
            ".concat(performance.getEntriesByType('navigation').map(e => e.name))")
        assert fetched and all(u.startswith(ui.url) for u in fetched), fetched  # nothing else
    box = browser.find_element(By.ID, "render-form")
    assert box
    body = browser.find_element(By.ID, "result").text
    assert "<script>alert(9)</script>" in body and "<img src=x onerror=alert(8)>" in body
    logs = [e["message"] for e in browser.get_log("browser")]
    assert not [m for m in logs if "Content Security Policy" in m], logs
    browser.get(ui.url)
    browser.find_element(By.ID, "q").send_keys("hostile")
    wait(browser, lambda d: d.find_element(By.ID, "count").text == "1 prompt")
    no_dialog(browser)
    assert browser.find_element(By.CSS_SELECTOR, "#results a.name").text.startswith(
        "<script>alert('title')</script>")


def test_a_worktree_save_updates_the_open_page(tmp_path: Path, browser: webdriver.Chrome
                                               ) -> None:
    root = tmp_path / "live"
    make_package(root)
    proc = UiProcess(root, "--worktree")
    try:
        browser.get(proc.url + "prompt/starter-prompts/commit_message?render=1&a.changes=x")
        assert "in English" in browser.find_element(By.ID, "result").text
        path = root / "prompts" / "commit_message.prompt.yaml"
        path.write_text(path.read_text().replace("in English", "in plain English"))
        wait(browser, lambda d: "in plain English" in d.find_element(By.ID, "result").text,
             timeout=20)
    finally:
        proc.stop()


def test_a_new_commit_updates_the_open_page(tmp_path: Path, browser: webdriver.Chrome
                                            ) -> None:
    from helpers.repo import commit_files

    root = tmp_path / "head"
    repo = make_package(root)
    proc = UiProcess(root)  # HEAD mode
    try:
        browser.get(proc.url + "prompt/starter-prompts/commit_message?render=1&a.changes=x")
        assert "in English" in browser.find_element(By.ID, "result").text
        path = root / "prompts" / "commit_message.prompt.yaml"
        path.write_text(path.read_text().replace("in English", "in plain English"))
        time.sleep(3)  # a save alone changes nothing at HEAD
        assert "in plain English" not in browser.find_element(By.ID, "result").text
        commit_files(repo, {}, "plain English")
        wait(browser, lambda d: "in plain English" in d.find_element(By.ID, "result").text,
             timeout=30)
    finally:
        proc.stop()


def test_only_loopback_hosts_are_served(ui: UiProcess) -> None:
    import http.client

    port = int(ui.url.rsplit(":", 1)[1].strip("/"))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/", headers={"Host": f"rebound.example:{port}"})
    assert conn.getresponse().status == 403
    conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/", body=b"x")
    assert conn.getresponse().status == 405
    conn.close()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_http_ui_shows_each_team_only_its_prompts(pkg: Path, tmp_path: Path,
                                                        browser: webdriver.Chrome) -> None:
    """`serve --http --ui`: the same app at /, behind the same tokens; team A's browser
    (its bearer token sent on every request) never sees team B's prompt."""
    import hashlib
    import http.client

    tokens = tmp_path / "tokens.toml"
    digest = {t: hashlib.sha256(t.encode()).hexdigest() for t in ("token-a", "token-b")}
    tokens.write_text(
        f'[[tokens]]\nname = "team-a"\nsha256 = "{digest["token-a"]}"\n'
        'see = ["starter-prompts/commit_*"]\n\n'
        f'[[tokens]]\nname = "team-b"\nsha256 = "{digest["token-b"]}"\n'
        'see = ["starter-prompts/code_*"]\n')
    port = _free_port()
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "promptops", "serve", "--http",
                             f"127.0.0.1:{port}", str(pkg), "--tokens", str(tokens), "--ui",
                             "--shutdown-timeout", "2s"],
                            stdout=subprocess.DEVNULL, stderr=log, env=cli_env())
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "serve --http did not start"
            time.sleep(0.1)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/")
        assert conn.getresponse().status == 401  # no token, no page
        browser.execute_cdp_cmd("Network.enable", {})
        for token, mine, theirs in (("token-a", "commit_message", "code_review"),
                                    ("token-b", "code_review", "commit_message")):
            browser.execute_cdp_cmd("Network.setExtraHTTPHeaders",
                                    {"headers": {"Authorization": f"Bearer {token}"}})
            browser.get(base)
            names = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#results code")]
            assert names == [mine]
            browser.find_element(By.ID, "q").send_keys(theirs.split("_")[0])
            wait(browser, lambda d: d.find_element(By.ID, "count").text.endswith("prompt")
                 or d.find_element(By.ID, "count").text.startswith("0"))
            assert theirs not in browser.find_element(By.ID, "results").text
            browser.get(base + f"prompt/starter-prompts/{theirs}")
            assert "Not found" in browser.find_element(By.TAG_NAME, "h1").text
            browser.get(base + f"prompt/starter-prompts/{mine}")
            assert browser.find_elements(By.ID, "render-form")
    finally:
        browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
        browser.get("about:blank")  # no connection left open to drain
        proc.terminate()
        try:  # shutdown is serve's own tests' subject: here it only has to end
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_images_and_audio_play_under_the_csp(ui: UiProcess, browser: webdriver.Chrome) -> None:
    browser.get(ui.url + "prompt/starter-prompts/describe_diagram?render=1")
    img = browser.find_element(By.CSS_SELECTOR, ".message img")
    wait(browser, lambda d: d.execute_script("return arguments[0].complete", img))
    assert browser.execute_script("return arguments[0].naturalWidth", img) > 0
    audio = browser.find_element(By.CSS_SELECTOR, ".message audio")
    wait(browser, lambda d: d.execute_script("return arguments[0].readyState", audio) >= 1)
    logs = [e["message"] for e in browser.get_log("browser")]
    assert not [m for m in logs if "Content Security Policy" in m], logs
    assert axe(browser) == []


def test_channels_compare_and_test_results(tmp_path: Path, browser: webdriver.Chrome) -> None:
    """The prompt page lists the channels with their releases; one click compares
    production with staging; Health shows the prompt's test outcomes and a failure's message."""
    import git

    root = tmp_path / "pkg"
    repo = make_package(root)
    repo.create_tag("starter-prompts@0.2.0", message="release 0.2.0")
    for channel, tag in (("production", "starter-prompts@0.1.0"),
                         ("staging", "starter-prompts@0.2.0")):
        repo.git.update_ref(f"refs/promptops/channels/starter-prompts/{channel}",
                            repo.git.rev_parse(f"refs/tags/{tag}"))
    proc = UiProcess(root)
    try:
        browser.get(proc.url + "prompt/starter-prompts/commit_message")
        channels = browser.find_element(By.ID, "channels").text
        assert "production: starter-prompts@0.1.0" in channels
        assert "staging: starter-prompts@0.2.0" in channels
        browser.find_element(By.LINK_TEXT, "compare production with staging").click()
        assert browser.find_element(By.ID, "base").get_attribute("value") \
            == "starter-prompts/production"
        browser.find_element(By.NAME, "a.changes").send_keys("x")
        diff = submit(browser, "compare", "diff").text
        assert "+You write commit messages in the Conventional Commits style, in English." \
            in diff
        assert axe(browser) == []
        browser.get(proc.url + "prompt/starter-prompts/commit_message")
        browser.find_element(By.ID, "run-lint").click()
        summary = wait(browser, lambda d: d.find_elements(By.ID, "tests-summary"))
        assert "cases passed" in summary[0].text  # type: ignore[index]
        failed = browser.find_elements(By.CSS_SELECTOR, "#tests li.case.failed")
        assert len(failed) == 1 and "exact messages of a small prompt" in failed[0].text
        assert axe(browser) == []
        browser.execute_script("document.getElementById('health-h').scrollIntoView()")
        shot(browser, "health")
        assert git.Repo(root).git.status("--porcelain", "--ignored") == ""  # nothing written
    finally:
        proc.stop()


def test_a_browser_signs_in_with_a_token_on_the_team_server(tmp_path: Path,
                                                            browser: webdriver.Chrome) -> None:
    """`serve --http --ui` with tokens, no header set by anyone: the browser gets the sign-in
    form, posts team A's token once, and from then on sees team A's prompts (its cookie,
    which no script can read); signing out ends it."""
    from ui_helpers import Serve

    srv = Serve(tmp_path)
    try:
        browser.delete_all_cookies()
        browser.get(srv.base + "/")
        browser.find_element(By.ID, "token").send_keys("token-b-wrong")
        browser.find_element(By.ID, "sign-in").click()
        wait(browser, lambda d: d.find_elements(By.ID, "login-error"))  # the posted page
        assert "not accepted" in browser.find_element(By.ID, "login-error").text
        assert axe(browser) == []
        browser.find_element(By.ID, "token").send_keys("token-a")
        browser.find_element(By.ID, "sign-in").click()
        wait(browser, lambda d: d.find_elements(By.ID, "results"))
        names = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#results code")]
        assert names == ["commit_message"]
        assert browser.execute_script("return document.cookie") == ""  # HttpOnly
        cookie = browser.get_cookie("promptops_ui")
        assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        browser.get(srv.base + "/prompt/starter-prompts/code_review")
        assert "Not found" in browser.find_element(By.TAG_NAME, "h1").text
        browser.get(srv.base + "/prompt/starter-prompts/commit_message")
        assert browser.find_elements(By.ID, "render-form")
        assert axe(browser) == []
        browser.find_element(By.CSS_SELECTOR, "#sign-out button").click()
        wait(browser, lambda d: d.find_elements(By.ID, "login"))
        browser.get(srv.base + "/")
        assert browser.find_elements(By.ID, "login")  # the form again: the session is gone
    finally:
        browser.get("about:blank")
        browser.delete_all_cookies()
        srv.stop()
