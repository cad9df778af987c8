"""A running `serve` that meets hostile package content on a reload logs it in one message
and keeps serving the last good set; the follower never dies and serves the next good
commit. (That the loader refuses such content with a positioned error is the loader's
business; this holds whatever the build raises.)"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import git
from serve_helpers import RawClient, commit, kit_files

REV = "2025-11-25"
HOSTILE = {
    "YAML nested 5,000 deep": "messages:\n  - role: user\n    text: hi\nx: "
                              + "[" * 5000 + "]" * 5000 + "\n",
    "a YAML integer of 5,000 digits": "messages:\n  - role: user\n    text: hi\nn: "
                                      + "7" * 5000 + "\n",
    "a template with 2,000 nested parentheses": "messages:\n  - role: user\n    text: \"{{ "
                                                + "(" * 2000 + "1" + ")" * 2000 + " }}\"\n",
}


class _Stderr:
    def __init__(self, client: RawClient) -> None:
        self.text = ""
        self._lock = threading.Lock()
        assert client.proc.stderr is not None
        stream = client.proc.stderr
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: object) -> None:
        for raw in stream:  # type: ignore[attr-defined]
            with self._lock:
                self.text += raw.decode(errors="replace")

    def wait_for(self, fragment: str, count: int, timeout: float = 30) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if self.text.count(fragment) >= count:
                    return self.text
            time.sleep(0.05)
        raise AssertionError(f"{fragment!r} not logged {count} times: {self.text[-3000:]}")


def test_hostile_content_on_reload_keeps_the_last_good_set(
        repo_factory: Callable[..., git.Repo]) -> None:
    repo = repo_factory(kit_files(extra_prompts=0))
    root = Path(repo.working_tree_dir or ".")
    c = RawClient([str(root)], REV)
    err = _Stderr(c)
    try:
        c.initialize(REV)
        good = [p["name"] for p in c.request("prompts/list")["result"]["prompts"]]
        for n, (label, text) in enumerate(HOSTILE.items(), start=1):
            commit(repo, {"prompts/hostile.prompt.yaml": text}, label)
            log = err.wait_for("still serving the last good bundles", n)
            names = [p["name"] for p in c.request("prompts/list")["result"]["prompts"]]
            assert names == good, label
            assert "does not build" in log and "Traceback" not in log, label
            got = c.request("prompts/get", {"name": "code_review",
                                            "arguments": {"code": "x", "language": "go"}})
            assert "result" in got, label
        repo.git.rm("-q", "prompts/hostile.prompt.yaml")
        commit(repo, {"prompts/fresh.prompt.yaml": "messages:\n  - role: user\n    text: ok\n"},
               "good again")
        note = c.recv(timeout=30)
        while note["method"] == "notifications/message":  # the recovery is announced too
            note = c.recv(timeout=30)
        assert note["method"] == "notifications/prompts/list_changed"
        names = [p["name"] for p in c.request("prompts/list")["result"]["prompts"]]
        assert names == sorted([*good, "fresh"])
    finally:
        rc, _ = c.close()
    assert rc == 0
    assert "Traceback" not in err.text and "internal error" not in err.text
