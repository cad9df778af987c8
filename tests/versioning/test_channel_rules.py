"""The promotion policy's plain rules, without a repository: durations, rules, the stack.

tests/versioning/test_channels.py drives `promote` and `rollback` on real repositories;
these pin the pieces they are made of, case by case, in milliseconds: how a ``soak`` is
read and shown, what rule a channel gets with and without a policy, and which moves a
rollback stack keeps.
"""

from __future__ import annotations

import pytest

from promptops.git.channels import Move
from promptops.pipeline.source import MemorySource
from promptops.pipeline.validate import validate
from promptops.versioning.channels import (
    ALL_GATES,
    PromotionRefused,
    Rule,
    duration,
    parse_duration,
    rules_of,
    stack,
)


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90), ("30m", 1800), ("2h", 7200), ("1d12h", 129600), ("1w", 604800),
    ("1w1d1h1m1s", 694861), (" 5m ", 300), ("0s", 0),
])
def test_parse_duration(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", " ", "5", "m", "5x", "1h30", "-1h", "1.5h", "h5"])
def test_parse_duration_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(("seconds", "shown"), [
    (0, "0s"), (59.9, "59s"), (60, "1m"), (3600, "1h"), (3661, "1h 1m"), (86400, "1d"),
    (90061, "1d 1h 1m"), (172800 + 120, "2d 2m"),
])
def test_duration(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


def test_without_a_policy_every_channel_runs_every_gate() -> None:
    assert rules_of(None, "anything") == Rule("anything", None, 0, ALL_GATES,
                                              "no channels policy")


def test_rules_of_a_policy() -> None:
    manifest = ("name: demo\nversion: 1.0.0\nchannels:\n"
                "  - {name: dev, gates: []}\n"
                "  - {name: staging, soak: 1h}\n"
                "  - {name: prod, after: dev, soak: 2d, gates: [test]}\n"
                "  - {name: hotfix, after: null}\n")
    found = validate(MemorySource({"promptops.yaml": manifest}))
    assert found.package is not None, found.problems
    policy = list(found.package.manifest.channels or [])
    where = "the channels policy of promptops.yaml"
    assert rules_of(policy, "dev") == Rule("dev", None, 0, (), where)
    assert rules_of(policy, "staging") == Rule("staging", "dev", 3600, ALL_GATES, where)
    assert rules_of(policy, "prod") == Rule("prod", "dev", 172800, ("test",), where)
    assert rules_of(policy, "hotfix") == Rule("hotfix", None, 0, ALL_GATES, where)
    with pytest.raises(PromotionRefused, match=r"'qa' is not in the channels policy .*"
                                               r"\(dev, staging, prod, hotfix\)"):
        rules_of(policy, "qa")


def _move(action: str, target: str, when: int) -> Move:
    return Move(id=f"{action}-{target}-{when}", action=action, package="demo", channel="prod",
                source=None, target=target, commit="c" * 40, digest="sha256:" + "0" * 64,
                tag_object="t" * 40, author="A <a@example.com>", when=when, why="")


def test_the_stack_pops_one_promotion_per_rollback() -> None:
    p1, p2, p3 = (_move("promote", f"demo@{v}", i) for i, v in enumerate(("1", "2", "3")))
    back1, back2 = _move("rollback", "demo@2", 10), _move("rollback", "demo@1", 11)
    newest_first = [back2, back1, p3, p2, p1]
    assert stack(newest_first) == [p1]
    assert stack(newest_first[1:]) == [p1, p2]
    assert stack([p3, p2, p1]) == [p1, p2, p3]
    assert stack([back1]) == []  # a rollback with nothing to undo undoes nothing
    assert stack([]) == []
