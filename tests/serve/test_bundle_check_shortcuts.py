"""The fast pass of the bundle check skips a rule only where the rule has nothing to say.

``bundle_check.valid`` does not call ``_message_rules`` for a plain inline text message
(``_plain_text``) nor ``_default_rules`` for a string default of a string argument
without a schema: at 10,000 prompts those calls were a tenth of the check, on every
start. Every combination below that the shortcut lets through must be one the rule
itself finds nothing wrong with, so the check refuses exactly what it refused before.
"""

from __future__ import annotations

import itertools

from promptops.pipeline import bundle_check
from promptops.pipeline.bundle_check import _default_rules, _message_rules, _plain_text

ABSENT = object()
TEMPLATES = {"t.j2": "x"}
RESOURCES = {"r.txt": {"mimeType": "text/plain", "text": "x"}}
MESSAGE_KEYS = {
    "type": [ABSENT, "text", "image", "history", "resource", "resource_link", "bogus", 1],
    "role": [ABSENT, "user", "assistant", "system", "bogus", 1, None],
    "text": [ABSENT, "hello"],
    "template": [ABSENT, "t.j2", "missing.j2"],
    "file": [ABSENT, "r.txt", "missing.txt"],
    "loopItem": [ABSENT, "x"],
    "loopOver": [ABSENT, "xs"],
}
ARGUMENT_KEYS = {
    "default": ["x", 1, None, True, ["x"]],
    "type": [ABSENT, "string", "number", "boolean", "integer"],
    "schema": [ABSENT, {"minLength": 1}, {"bogus": 1}],
}


def _combinations(keys: dict[str, list[object]]) -> list[dict[str, object]]:
    names = list(keys)
    return [{k: v for k, v in zip(names, values, strict=True) if v is not ABSENT}
            for values in itertools.product(*keys.values())]


def test_a_message_the_shortcut_passes_is_one_the_rules_pass() -> None:
    passed = 0
    for m in _combinations(MESSAGE_KEYS):
        if _plain_text(m):
            passed += 1
            assert _message_rules(m, TEMPLATES, RESOURCES) == ([], []), m
    assert passed > 0


def test_the_shortcut_takes_the_usual_message() -> None:
    assert _plain_text({"role": "user", "type": "text", "text": "hi {{ x }}"})
    assert not _plain_text({"role": "user", "type": "text", "text": "a", "template": "t.j2"})


def test_an_argument_whose_default_check_is_skipped_has_a_default_that_fits() -> None:
    skipped = 0
    for a in _combinations(ARGUMENT_KEYS):
        a = {"name": "x", **a}
        odd = type(a["default"]) is not str or "schema" in a or a.get("type", "string") != "string"
        if not odd:  # the condition valid() tests before calling _default_rules
            skipped += 1
            assert _default_rules(a) == [], a
    assert skipped > 0


def test_valid_still_refuses_a_text_message_with_a_template_too() -> None:
    bundle = {"format": "promptops-bundle/1", "digest": "sha256:" + "0" * 64,
              "package": {"name": "p", "version": "1.0.0"},
              "source": {"commit": None, "path": "."}, "templates": TEMPLATES,
              "resources": {}, "prompts": [{
                  "name": "a", "source": "prompts/a.prompt.yaml", "arguments": [],
                  "messages": [{"role": "user", "type": "text", "text": "x",
                                "template": "t.j2"}]}]}
    assert not bundle_check.valid(bundle)
    assert any("exactly one of 'text' and 'template'" in p
               for p in bundle_check.problems(bundle))
