"""The stateless request's cheaper steps say exactly what the slower ones said.

The per-request work of ``serve --http`` was cut (docs/benchmarks.md, HTTP section) by
replacing general code with cheaper equivalents; each equivalence is checked here
against the code it replaced, on generated and on edge-case inputs:

* request bodies read by orjson (``codec.OrjsonCodec.parse``) against ``jsonrpc.parse``:
  the same values of the same types (exact integers past 64 bits included), and the
  same -32700 for every body the bounded parser refuses;
* replies written by orjson (``codec.OrjsonCodec.encode``) against ``wire.encode``:
  the same bytes for anything without floats, the same JSON values with them, and
  ``wire.encode``'s own output for everything orjson refuses;
* the ``Mcp-Name`` character rule (visible ASCII and space) against the explicit
  code-point comparison it replaced, on every ASCII code point and beyond;
* the metrics' plain counters against prometheus-client's labelled ``Counter`` and
  ``Histogram``: the same exposition for the same observations;
* the cached cache-control headers against the formula they cache;
* the endpoint's remembered header decodings (``base.HeaderReader``) against
  ``base.headers``: the same dict for generated header lists, across its forgetting;
* the stateless request's one-pass checks (``stateless.usual_checks``) against
  ``check_headers`` and the core's ``envelope``: whatever the first lets through, both
  let through with the same capabilities and revision.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from promptops.serve import jsonrpc, wire
from promptops.serve.codec import OrjsonCodec
from promptops.serve.metrics import BUCKETS, Metrics
from promptops.serve.transports.http import base, stateless
from promptops.serve.transports.http.streams import sse_frame
from promptops.serve.wire import LongInt

ORJSON = OrjsonCodec()


def _parse(body: bytes) -> object:
    return jsonrpc.parse(body, ORJSON.parse)  # as the HTTP endpoint reads a body


_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text()
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=30)
_floats = st.floats(allow_nan=False, allow_infinity=False)
_json_floats = st.recursive(_scalars | _floats, lambda inner: st.lists(inner, max_size=4)
                            | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                            max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_encode_writes_the_bytes_wire_writes(value: Any) -> None:
    assert ORJSON.encode(value) == wire.encode(value)


@settings(max_examples=300, deadline=None)
@given(_json_floats)
def test_encode_with_floats_writes_the_same_values(value: Any) -> None:
    ours = ORJSON.encode(value)
    assert json.loads(ours) == json.loads(wire.encode(value))
    assert ours.decode("utf-8")  # always UTF-8 text


def test_encode_falls_back_to_wire_for_what_orjson_refuses() -> None:
    deep: list[Any] = []
    cur = deep
    for _ in range(300):
        cur.append([])
        cur = cur[0]
    for value in ({"id": LongInt("1" * 5000)}, {"id": 2**64}, {"id": -(2**63) - 1},
                  {"text": "lone \ud800 surrogate"}, {1: "int key"}, deep,
                  {"jsonrpc": "2.0", "id": LongInt("9" * 4400), "result": {"x": "\udc00"}}):
        assert ORJSON.encode(value) == wire.encode(value), repr(value)[:60]


def test_encode_of_a_real_reply_matches() -> None:
    text = "é\u2028\x7f\x1f\x00\n"
    reply = {"jsonrpc": "2.0", "id": 7, "result": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "_meta": {"promptops/digest": "sha256:00", "io.modelcontextprotocol/serverInfo": {
            "name": "promptops", "version": "0"}}, "resultType": "complete"}}
    assert ORJSON.encode(reply) == wire.encode(reply)
    assert sse_frame(ORJSON.encode, reply) == \
        b"event: message\ndata: " + wire.encode(reply) + b"\n\n"


def _typed(value: Any) -> Any:
    """``value`` with every scalar tagged by its type (1 and 1.0 and True differ)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, LongInt):
        return ("LongInt", value.digits)
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _reading(body: bytes, parse: Any) -> Any:
    try:
        return ("ok", _typed(parse(body)))
    except jsonrpc.RpcError as exc:
        return ("error", exc.code, exc.message)


_big = st.integers(-(10**30), 10**30) | st.integers(2**63 - 3, 2**64 + 3) | st.integers(
    -(2**63) - 3, -(2**63) + 3)
_wild = st.recursive(_scalars | _floats | _big | st.text(alphabet=st.characters(
    min_codepoint=0, max_codepoint=0x10FFFF)), lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(_wild, st.booleans(), st.sampled_from([None, 1]))
def test_parse_reads_what_jsonrpc_parse_reads(value: Any, ascii_only: bool,
                                              indent: int | None) -> None:
    body = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode("utf-8",
                                                                             "surrogatepass")
    assert _reading(body, _parse) == _reading(body, jsonrpc.parse)


def test_parse_refuses_what_jsonrpc_parse_refuses() -> None:
    bodies = [b"", b"NaN", b"[Infinity]", b"-Infinity", b"[1,]", b'{"a":1,}', b"\xef\xbb\xbf{}",
              b'"\x1f"', b'{"a":"\xed\xa0\x80"}', b"\xff", b"[" * 101 + b"]" * 101,
              b"[" + b"0," * 100_001 + b"0]", b'{"id": 1e400}', b'"\\ud800"', b"1" * 5000,
              b'{"id": 18446744073709551616}', b'{"id": -9223372036854775809}', b"01",
              b'{"a" 1}', b"{'a': 1}", b'"abc', b"tru", b"1 2", b"[1] x", b'{"a":1}{"b":2}']
    for body in bodies:
        assert _reading(body, _parse) == _reading(body, jsonrpc.parse), body[:40]


def test_parse_reads_the_edges_of_its_one_pass_scan() -> None:
    """The body's one scan stands in for ``wire.structure_problem``'s first test only
    where that test would pass: brackets inside strings, exactly the depth bound, a body
    longer than the value bound, digit runs of 18 and 19 (in numbers and in strings) read
    as the bounded parser reads them, and past the bounds refused as it refuses."""
    deep = b"[" * wire.MAX_DEPTH + b"1" + b"]" * wire.MAX_DEPTH
    long_text = b'{"a":"' + b"x" * (wire.MAX_VALUES + 10) + b'"}'
    many = b"[" + b"0," * (wire.MAX_VALUES // 2) + b"0]"
    bodies = [deep, b'{"a":' + deep + b"}",
              b'{"a":"' + b"[" * 150 + b'{{{"}', b'{"a":"' + b"[" * 150 + b'\\"}',
              long_text, b"[" + long_text + b"," + deep[:-1] + b"]]", many,
              b'{"id": 123456789012345678}', b'{"id": 1234567890123456789}',
              b'{"id": 12345678901234567890}', b'{"x": "1234567890123456789"}',
              b'{"x": 1.234567890123456789}', b'{"x": -9223372036854775808}',
              b"[" * (wire.MAX_DEPTH + 1) + b"]" * (wire.MAX_DEPTH + 1),
              b'{"a":' + b"{" * wire.MAX_DEPTH + b"}" * wire.MAX_DEPTH + b"}"]
    for body in bodies:
        assert _reading(body, _parse) == _reading(body, jsonrpc.parse), body[:40]
    assert _reading(deep, _parse)[0] == "ok" and _reading(long_text, _parse)[0] == "ok"
    assert _reading(bodies[-1], _parse)[0] == "error"  # one past the depth bound
    assert _reading(b"[" * (wire.MAX_DEPTH + 1) + b"]" * (wire.MAX_DEPTH + 1),
                    _parse)[0] == "error"


_ABSENT = object()
_VERSIONS = [None, "2026-07-28", "2025-11-25", "2099-01-01", ""]
_NAMES: list[object] = ["greet", "gr eet", "\u00e9t\u00e9", "=?base64?Z3JlZXQ=?=", "a\x7fb",
                        "", "=?base64?", 5, None, _ABSENT]


def _put(into: dict[str, Any], key: str, value: object) -> None:
    if value is not _ABSENT:
        into[key] = value


def _both_checks(msg: dict[str, Any], params: dict[str, Any], headers: dict[str, str],
                 version: str | None) -> tuple[object, ...]:
    """What check_headers and then the core's envelope say, as the exchange ran them."""
    try:
        stateless.check_headers(msg, params, headers, version)
        return ("ok", stateless.envelope(params))
    except base.HttpError as exc:
        return ("refused", exc.status, exc.body)
    except jsonrpc.RpcError as exc:
        return ("envelope", exc.code, exc.message, exc.data)


# each field's values, the usual request's first; every request with at most two fields
# not the usual one is tried (a few thousand), so both outcomes are met many times
_FIELDS: dict[str, list[object]] = {
    "version": _VERSIONS[1:2] + [v for v in _VERSIONS if v != "2026-07-28"],
    "body_version": ["2026-07-28", None, "2025-11-25", "2099-01-01", 5, _ABSENT],
    "caps": [{}, {"elicitation": {}}, [], None, _ABSENT],
    "method": ["prompts/get", "resources/read", "tools/call", "prompts/list", "ping"],
    "header_method": ["same", "prompts/list", "Prompts/get", None],
    "name": _NAMES,
    "header_name": ["same", *_NAMES],
    "meta_shape": ["dict", "none", "list"],
}


def _request(version: Any, body_version: object, caps: object, method: Any,
             header_method: object, name: object, header_name: object, meta_shape: object
             ) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    meta: dict[str, Any] = {}
    _put(meta, "io.modelcontextprotocol/protocolVersion", body_version)
    _put(meta, "io.modelcontextprotocol/clientCapabilities", caps)
    params: dict[str, Any] = {"_meta": meta if meta_shape == "dict" else
                              None if meta_shape == "none" else [meta]}
    _put(params, stateless.NAMED_PARAM.get(method, "name"), name)
    headers = {"content-type": "application/json"}
    if version is not None:
        headers["mcp-protocol-version"] = version
    if isinstance(header_method, str):
        headers["mcp-method"] = method if header_method == "same" else header_method
    hname = name if header_name == "same" else header_name
    if isinstance(hname, str):
        headers["mcp-name"] = hname
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, params, headers


def test_usual_checks_pass_only_what_both_checks_pass() -> None:
    keys = list(_FIELDS)
    usual = [_FIELDS[k][0] for k in keys]
    outcomes = {"fast": 0, "both": 0}
    for i, j in itertools.combinations_with_replacement(range(len(keys)), 2):
        for a, b in itertools.product(_FIELDS[keys[i]], _FIELDS[keys[j]]):
            values = list(usual)
            values[i], values[j] = a, b if i != j else a
            msg, params, headers = _request(*values)
            fast = stateless.usual_checks(msg["method"], params, headers, values[0])
            if fast is None:
                outcomes["both"] += 1
                continue
            outcomes["fast"] += 1
            assert _both_checks(msg, params, headers, values[0]) == ("ok", fast), values
    assert outcomes["fast"] > 100 and outcomes["both"] > 1000, outcomes


def test_usual_checks_take_the_load_generators_request() -> None:
    params = {"name": "greet", "arguments": {"topic": "t"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http_bench", "version": "0.1"}}}
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "prompts/get",
               "mcp-name": "greet"}
    msg = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": params}
    usual = stateless.usual_checks("prompts/get", params, headers, "2026-07-28")
    assert usual == ({}, "2026-07-28")
    assert _both_checks(msg, params, headers, "2026-07-28") == ("ok", usual)
    # a list needs no name; a wrong or encoded name goes to both checks
    assert stateless.usual_checks("prompts/list", {"_meta": params["_meta"]}, {
        **headers, "mcp-method": "prompts/list"}, "2026-07-28") == ({}, "2026-07-28")
    for other in ("greet2", "=?base64?Z3JlZXQ=?="):
        assert stateless.usual_checks("prompts/get", params, {**headers, "mcp-name": other},
                                      "2026-07-28") is None


def _old_decode_name_chars(value: str) -> bool:
    """The rule as it was written before: no code point below 0x20 or above 0x7E."""
    return not any(ord(c) < 0x20 or ord(c) > 0x7E for c in value)


def test_mcp_name_character_rule_is_unchanged() -> None:
    points = [*range(0, 0x300), 0x2028, 0x200B, 0xFEFF, 0x1F600, 0xD800]
    for cp in points:
        for value in (chr(cp), f"ab{chr(cp)}cd"):
            want = value if _old_decode_name_chars(value) else None
            assert stateless.decode_name(value) == want, hex(cp)
    assert stateless.decode_name("") == ""
    assert stateless.decode_name("=?base64?Y29kZV9yZXZpZXc=?=") == "code_review"
    assert stateless.decode_name("=?base64?not base64?=") is None
    assert stateless.decode_name("=?base64?/w==?=") is None  # not UTF-8


def _samples(text: str) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
    out = []
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name.endswith("_created"):
                continue
            out.append((s.name, tuple(sorted(s.labels.items())), round(s.value, 9)))
    return sorted(out)


def test_metrics_expose_what_prometheus_client_would() -> None:
    ours = Metrics()
    ref = CollectorRegistry()
    requests = Counter("promptops_http_requests", "MCP requests answered",
                       ["method", "status"], registry=ref)
    latency = Histogram("promptops_http_request_seconds",
                        "time to answer one MCP request (streams: until opened)",
                        ["method"], buckets=BUCKETS, registry=ref)
    rnd = random.Random(18)
    edges = [*BUCKETS, 0.0, 1e-9, 99.0, *(math.nextafter(b, 0) for b in BUCKETS),
             *(math.nextafter(b, 1e9) for b in BUCKETS)]
    for _ in range(2000):
        method = rnd.choice(["prompts/get", "prompts/list", "initialize", "http+sse"])
        status = rnd.choice([200, 202, 400, 401, 404, 500])
        seconds = rnd.choice(edges) if rnd.random() < 0.5 else rnd.expovariate(200)
        ours.observe(method, status, seconds)
        requests.labels(method, str(status)).inc()
        latency.labels(method).observe(seconds)
    mine = [s for s in _samples(ours.render().decode())
            if s[0].startswith("promptops_http_request")]
    assert mine and mine == _samples(generate_latest(ref).decode())
    assert b"# TYPE promptops_http_request_seconds histogram" in ours.render()


def test_cache_headers_are_the_formula_they_cache() -> None:
    memo: stateless.CacheHeaders = {}
    for ttl in (0, 999, 1000, 60_000, 123_456):
        for scope in ("public", "private", None):
            for authenticated in (False, True):
                result: dict[str, Any] = {"ttlMs": ttl}
                if scope:
                    result["cacheScope"] = scope
                private = authenticated or scope == "private"
                word = "private" if private else "public"
                want = [base.JSON_CT,
                        (b"cache-control", f"{word}, max-age={ttl // 1000}".encode())]
                if authenticated:
                    want.append((b"vary", b"Authorization"))
                for _ in range(2):  # computed, then cached
                    got = stateless.cache_headers({"result": result},
                                                   authenticated=authenticated, memo=memo)
                    assert got == want
    assert len(memo) == 12  # 4 ages (0, 1, 60, 123 s) x public, private, private + vary
    assert stateless.cache_headers({"result": {"messages": []}}, authenticated=True,
                                    memo=memo) == [base.JSON_CT, base.NO_STORE]
    assert stateless.cache_headers({"error": {}}, authenticated=False, memo=memo) == [
        base.JSON_CT, base.NO_STORE]


_HEADER_BYTES = st.binary(max_size=40) | st.sampled_from(
    [b"host", b"Content-Type", b"ACCEPT", b"mcp-name", b"x-\xe9t\xe9", b" 127.0.0.1:8080 ",
     b"application/json", b"\t2026-07-28 ", b"", b"a" * 129, b"b" * 128])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(_HEADER_BYTES, _HEADER_BYTES), max_size=12),
                min_size=1, max_size=6))
def test_header_reader_reads_what_headers_reads(requests: list[list[tuple[bytes, bytes]]]
                                                ) -> None:
    reader = base.HeaderReader(bound=8)  # small: the forgetting is exercised too
    for hdrs in requests * 2:  # and the second pass reads from what was remembered
        scope = {"headers": hdrs}
        assert reader(scope) == base.headers(scope)
        assert list(reader(scope)) == list(base.headers(scope))  # the same order
    assert len(reader._names) <= 8 and len(reader._values) <= 8 and len(reader._pairs) <= 8
    assert all(len(v) <= base.HeaderReader.LONGEST for v in reader._values)


def test_header_reader_takes_what_headers_takes() -> None:
    reader = base.HeaderReader()
    for scope in ({}, {"headers": []}, {"headers": [(bytearray(b"Host"), bytearray(b" x "))]},
                  {"headers": [(b"a", b"1"), (b"A", b"2")]},  # the last of a repeated name
                  {"headers": [(b"a", b"1"), (bytearray(b"B"), b"2")]},  # bytes, then not
                  {"headers": [[b"a", b"1"], [b"C", b" 3"]]}):  # pairs as lists
        for _ in range(2):  # learnt, then remembered
            assert reader(scope) == base.headers(scope)
