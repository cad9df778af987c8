"""serve can apply build's gate (issue 15): a commit whose lint has errors is never published;
the last good set stays and the log says why. The gate is the entry point's
(promptops.__main__._LintGate); `promptops serve` passes it (tests/serve/test_follow_log.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from follow_helpers import Recorder, package, texts
from helpers.repo import commit_files, make_repo

from promptops.__main__ import _LintGate
from promptops.errors import PromptopsError
from promptops.serve.follow import Follower

UNDECLARED = "messages:\n  - role: user\n    text: \"Hi {{ nobody }}\"\n"  # PO201, an error


def test_a_commit_lint_refuses_is_not_served_and_the_last_good_set_stays(
        tmp_path: Path, recorder: Recorder) -> None:
    repo = make_repo(tmp_path / "pkg", package({"greet": "Hello"}))
    follower = Follower([tmp_path / "pkg"], ref=None, log=recorder.log, gate=_LintGate())
    try:
        assert texts(follower.initial()[0]) == {"greet": "Hello {{ topic }}"}
        follower.start(recorder.on_change)
        bad = commit_files(repo, {"prompts/greet.prompt.yaml": UNDECLARED}, "lint error")
        line = recorder.wait_log("lint fails")
        assert bad[:12] in line and "PO201" in line and "build` refuses it too" in line
        recorder.settle()
        assert recorder.changes == []
        good = commit_files(repo, package({"greet": "Fixed"}), "fix it")
        assert texts(recorder.wait_change(good)[0]) == {"greet": "Fixed {{ topic }}"}
    finally:
        follower.stop()


def test_serve_does_not_start_on_a_commit_build_refuses(tmp_path: Path,
                                                        recorder: Recorder) -> None:
    make_repo(tmp_path / "pkg", {**package({"greet": "Hello"}),
                                 "prompts/greet.prompt.yaml": UNDECLARED})
    follower = Follower([tmp_path / "pkg"], ref=None, log=recorder.log, gate=_LintGate())
    with pytest.raises(PromptopsError, match="lint fails"):
        follower.initial()
    # without the gate the same commit builds: the refusal is lint's, not the loader's
    assert Follower([tmp_path / "pkg"], ref=None, log=recorder.log).initial()

