"""Real git repositories holding promptops packages, and recorders for Follower callbacks."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

Bundle = dict[str, Any]


def manifest(name: str = "demo", version: str = "1.0.0") -> str:
    return f"name: {name}\nversion: {version}\ndescription: test package\n"


def prompt(text: str) -> str:
    return (
        "description: a prompt\n"
        "arguments:\n  - name: topic\n    required: true\n"
        f'messages:\n  - role: user\n    text: "{text} {{{{ topic }}}}"\n'
    )


def package(prompts: Mapping[str, str], *, name: str = "demo", at: str = "") -> dict[str, str]:
    """Files of a package (optionally below folder ``at``) with one prompt per name -> text."""
    files = {f"{at}promptops.yaml": manifest(name)}
    for prompt_name, text in prompts.items():
        files[f"{at}prompts/{prompt_name}.prompt.yaml"] = prompt(text)
    return files


BROKEN = "description: [unclosed\nmessages: {\n"


def texts(bundle: Bundle) -> dict[str, str]:
    """prompt name -> its first message text: what a test compares."""
    return {p["name"]: p["messages"][0]["text"] for p in bundle["prompts"]}


class Recorder:
    """Collects on_change and log calls from the follower thread; waits with a deadline."""

    def __init__(self) -> None:
        self.changes: list[list[Bundle]] = []
        self.logs: list[str] = []
        self._cond = threading.Condition()

    def on_change(self, bundles: list[Bundle]) -> None:
        with self._cond:
            self.changes.append(bundles)
            self._cond.notify_all()

    def log(self, line: str) -> None:
        with self._cond:
            self.logs.append(line)
            self._cond.notify_all()

    def wait_change(self, commit: str, timeout: float = 5.0) -> list[Bundle]:
        """The first recorded set whose first bundle is at ``commit``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for bundles in self.changes:
                    if bundles[0]["source"]["commit"] == commit:
                        return bundles
                left = deadline - time.monotonic()
                assert left > 0, f"no change to {commit[:12]}; got {self.commits()}"
                self._cond.wait(left)

    def wait_log(self, needle: str, timeout: float = 5.0) -> str:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self.logs:
                    if needle in line:
                        return line
                left = deadline - time.monotonic()
                assert left > 0, f"no log line with {needle!r}; got {self.logs}"
                self._cond.wait(left)

    def commits(self) -> list[str]:
        return [bundles[0]["source"]["commit"][:12] for bundles in self.changes]

    def settle(self, seconds: float = 0.5) -> None:
        """Give the follower time to (wrongly) react; callers then assert nothing happened."""
        time.sleep(seconds)
