"""Property-based tests (hypothesis) of the pieces hostile input reaches first.

* the protocol core answers any sequence of JSON values exactly as the documented
  rules (tests/fuzz/fuzz_oracle.py) say, and never raises;
* argument values are data: whatever a caller sends is rendered verbatim, never run;
* no width, count or format spec makes one template operation allocate past the size
  budget (checked with the process's peak RSS, which would jump by gigabytes);
* bundles round-trip through serialise/parse with a stable digest; versions round-trip.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from fuzz_oracle import HANDSHAKE, LEVELS, MODERN, Oracle, judge
from fuzz_serve import build_bundle
from helpers.repo import peak_rss_mb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptops.pipeline.bundle import digest, parse_bundle, serialise
from promptops.render.renderer import Renderer
from promptops.sandbox.environment import environment, render_bounded
from promptops.sandbox.limits import DEFAULT_OUTPUT_CHARS as MAX_OUTPUT_CHARS
from promptops.sandbox.limits import BudgetExceeded
from promptops.serve import wire
from promptops.serve.connection import Connection as Server
from promptops.versioning.semver import Version

SETTINGS = settings(max_examples=250, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_bundle(tmp_path_factory.mktemp("fuzzkit"))[1]


# ---- the protocol core ------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8,
)
METHODS = ["initialize", "ping", "prompts/list", "prompts/get", "completion/complete",
           "resources/list", "resources/read", "resources/templates/list", "logging/setLevel",
           "server/discover", "tools/list", "notifications/initialized"]
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}


# Built once, not at every draw: a composite that builds its strategies inside spent most
# of this test's time constructing and validating the same strategy objects again (a
# strategy is a description; the same one draws the same values from the same choices).
PARAM_FIELDS = {
    "name": st.sampled_from(["greet", "code", "plain", "boom", "nope"]) | json_values,
    "arguments": st.dictionaries(st.sampled_from(["name", "tone", "lang", "code", "x"]),
                                 st.text(max_size=50) | json_values, max_size=3) | json_values,
    "protocolVersion": st.sampled_from([*HANDSHAKE, MODERN, "2000-01-01"]) | json_values,
    "capabilities": st.just({}) | json_values,
    "level": st.sampled_from(LEVELS) | json_values,
    "uri": st.text(max_size=20) | json_values,
    "_meta": st.just(ENVELOPE) | st.fixed_dictionaries(
        {}, optional={k: json_values | st.just(v) for k, v in ENVELOPE.items()}),
    "ref": st.just({"type": "ref/prompt", "name": "greet"}) | json_values,
    "argument": st.fixed_dictionaries({"name": st.sampled_from(["tone", "name", "zz"]),
                                       "value": st.text(max_size=3)}) | json_values,
}
PARAM_NAMES = st.lists(st.sampled_from(sorted(PARAM_FIELDS)), unique=True, max_size=4)


@st.composite
def params(draw: st.DrawFn) -> Any:
    chosen = draw(PARAM_NAMES)
    return {k: draw(PARAM_FIELDS[k]) for k in chosen}


MESSAGE_FIELDS = (("jsonrpc", st.just("2.0") | json_values),
                  ("id", st.integers(-5, 5) | st.text(max_size=3) | json_values),
                  ("method", st.sampled_from(METHODS) | json_values),
                  ("params", params() | json_values))
ZERO_TO_NINE, ZERO_TO_FIVE, ZERO_TO_FIFTEEN = st.integers(0, 9), st.integers(0, 5), \
    st.integers(0, 15)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    if draw(ZERO_TO_NINE) == 0:
        return draw(json_values)
    msg: dict[str, Any] = {}
    for key, strategy in MESSAGE_FIELDS:
        if draw(ZERO_TO_FIVE) > 0:
            msg[key] = draw(strategy)
    return [msg, draw(MESSAGES)] if draw(ZERO_TO_FIFTEEN) == 0 else msg


MESSAGES = messages()


@SETTINGS
@given(sequence=st.lists(MESSAGES, min_size=1, max_size=8))
def test_protocol_core_answers_as_documented(bundle: dict[str, Any], sequence: list[Any]) -> None:
    sent: list[Any] = []
    server, oracle = Server([bundle], send=sent.append), Oracle(bundle)
    for msg in sequence:
        data = json.dumps(msg).encode()  # may hold Infinity, which is not JSON: -32700
        expected = oracle.line(data)
        try:
            parsed = wire.parse(data)
        except wire.MessageError as exc:
            replies = [server.reject(-32700, f"parse error: {exc}")]
        else:
            replies = server.handle(parsed)
        assert len(replies) == len(expected), (msg, replies, expected)
        for exp, reply in zip(expected, replies, strict=True):
            assert judge(exp, reply) is None, (msg, reply, judge(exp, reply))
            json.dumps(reply)  # always serialisable
    assert sent == []  # nothing unsolicited


# ---- arguments are data -----------------------------------------------------------
@SETTINGS
@given(name=st.text(max_size=40), tone=st.sampled_from(["warm", "dry", "Wry"]))
def test_argument_values_are_rendered_verbatim(bundle: dict[str, Any], name: str,
                                               tone: str) -> None:
    result = Renderer(bundle).get("greet", {"name": name, "tone": tone})
    assert result["messages"][0]["content"]["text"] == f"Hello {name}, in a {tone} way."


# ---- the size budget --------------------------------------------------------------
SIZED = ["{{ s.ljust(n) }}", "{{ s.rjust(n) }}", "{{ s.center(n) }}", "{{ s.zfill(n) }}",
         "{{ t.expandtabs(n) }}", "{{ s|center(n) }}", "{{ u|indent(n) }}",
         "{{ '%' ~ n ~ 's' }}", "{{ ('%' ~ n ~ 's') % s }}", "{{ '%*d' % (n, 1) }}",
         "{{ ('{:>' ~ n ~ '}').format(s) }}", "{{ '{:{}}'.format(s, n) }}",
         "{{ '%.*f' % (n, 1.5) }}", "{{ ('%' ~ n ~ 's')|format(s) }}", "{{ s * n }}",
         "{{ (s * 1000).replace(s, s * (n % 100000)) }}", "{{ [s]|slice(n)|list|length }}",
         "{{ 7 ** (n % 5000) }}", "{{ s|wordwrap(n % 50 + 1)|length }}"]


@settings(max_examples=400, deadline=None)
@given(template=st.sampled_from(SIZED), n=st.integers(0, 10**6) | st.integers(0, 10**12))
def test_no_single_operation_allocates_past_the_budget(template: str, n: int) -> None:
    before = peak_rss_mb()
    ctx = {"s": "ab", "t": "\t\tx", "u": "a\nb\nc", "n": n}
    try:
        out = render_bounded(environment({}).from_string(template), ctx)
    except BudgetExceeded:
        pass
    except (ZeroDivisionError, ValueError, OverflowError):  # ordinary template errors
        pass
    else:
        assert len(out) <= MAX_OUTPUT_CHARS
    grown_mb = peak_rss_mb() - before
    assert grown_mb < 200, f"{template} with n={n} grew the peak RSS by {grown_mb:.0f} MB"


# ---- round trips --------------------------------------------------------------------
@SETTINGS
@given(text=st.text(string.printable + "é\u2028", max_size=200))
def test_bundles_round_trip_with_a_stable_digest(tmp_path: Path, text: str) -> None:
    from promptops.pipeline.build import Build

    root = tmp_path / "pkg"
    (root / "prompts").mkdir(parents=True, exist_ok=True)
    (root / "promptops.yaml").write_text("name: rt\nversion: 0.0.1\n")
    (root / "prompts" / "p.prompt.yaml").write_text(
        "messages:\n  - role: user\n    text: " + json.dumps(text.replace("{", "(")) + "\n")
    bundle = Build(root).bundle
    again = parse_bundle(serialise(bundle), "round trip")
    assert again == bundle and digest(again) == bundle["digest"]


@SETTINGS
@given(core=st.tuples(*[st.integers(0, 10**6)] * 3),
       pre=st.lists(st.from_regex(r"\A(0|[1-9][0-9]{0,4}|[a-zA-Z-][0-9a-zA-Z-]{0,6})\Z"),
                    max_size=3),
       build=st.lists(st.from_regex(r"\A[0-9a-zA-Z-]{1,6}\Z"), max_size=2))
def test_versions_round_trip(core: tuple[int, int, int], pre: list[str],
                             build: list[str]) -> None:
    v = Version(*core, tuple(pre), tuple(build))
    assert Version.parse(str(v)) == v
