"""Invariant 4 over real pipes: each line costs O(its length) and at most one bounded reply.

Every reply is judged against the official schema of the negotiated revision (RawClient).
The hang bounds below are not timings: each line takes milliseconds; before the fix the
first one took hours (the nesting pre-scan was quadratic), which the bound turns into a
failure instead of a stuck run.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from serve_helpers import RawClient, envelope

Raw = Callable[..., RawClient]
HANG_S = 60  # far above the milliseconds each line takes here


def test_unterminated_escaped_quotes_cost_linear_time(raw: Raw) -> None:
    c = raw("2025-11-25")
    c.initialize("2025-11-25")
    for body in (b'\\"' * 512 * 1024, b'[\\"' * 300_000, b"\\" * 1_000_000 + b'"'):
        c.write(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + body + b"\n")
        err = c.recv(timeout=HANG_S)["error"]
        assert err["code"] == -32700 and "id" not in c.seen[-1]
    assert c.request("ping")["result"] == {}  # and the connection goes on
    rc, stderr = c.close()
    assert rc == 0 and "Traceback" not in stderr


def test_brackets_inside_strings_do_not_count_and_real_nesting_does(raw: Raw) -> None:
    c = raw("2025-11-25")
    c.initialize("2025-11-25")
    inside = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping",
                         "params": {"s": "[{" * 200_000, "t": '\\"[' * 1000}})
    c.write(inside.encode() + b"\n")
    assert c.recv(timeout=HANG_S)["result"] == {}
    deep = b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"a":' + b"[" * 99 + b"]" * 99 + b"}}"
    c.write(deep + b"\n")  # 101 levels, spelled out
    err = c.recv(timeout=HANG_S)["error"]
    assert err["code"] == -32700 and "nested deeper than 100" in err["message"]
    rc, _ = c.close()
    assert rc == 0


def test_too_many_values_is_one_parse_error(raw: Raw) -> None:
    c = raw("2025-11-25")
    c.initialize("2025-11-25")
    # 16 MiB of empty objects would be millions of dicts (~400 MB) once parsed
    many = b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":[' + b"{}," * 5_000_000 + \
        b"{}]}}"
    c.write(many + b"\n")
    err = c.recv(timeout=HANG_S)["error"]
    assert err["code"] == -32700 and "more than 100,000 values" in err["message"]
    ok = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping",
                     "params": {"x": [0] * 99_000, "s": "," * 500_000}})
    c.write(ok.encode() + b"\n")  # under the bound, and commas in strings do not count
    assert c.recv(timeout=HANG_S)["result"] == {}
    assert len(c.seen) == 3  # one reply per line


def test_nan_and_infinity_are_not_json(raw: Raw) -> None:
    c = raw("2025-11-25")
    c.initialize("2025-11-25")
    for const in (b"NaN", b"Infinity", b"-Infinity"):
        c.write(b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":' + const + b"}}\n")
        err = c.recv()["error"]
        assert err["code"] == -32700 and "not JSON" in err["message"], const


def test_integers_past_the_int_string_limit_are_json(raw: Raw) -> None:
    c = raw("2025-11-25")
    c.initialize("2025-11-25")
    big = "9" * 5000
    c.write(f'{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"n":{big}}}}}\n'.encode())
    assert c.recv()["result"] == {}  # was -32700 "Exceeds the limit (4300 digits)"
    c.write(f'{{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{{"name":"media",'
            f'"arguments":{{"topic":{big}}}}}}}\n'.encode())
    err = c.recv()["error"]
    assert err["code"] == -32602 and "must be a string" in err["message"]
    assert len(json.dumps(err)) < 2000  # the value is not echoed


def test_a_long_integer_id_is_echoed_digit_for_digit(kit_bundle: object) -> None:
    import subprocess

    from serve_helpers import serve_cmd

    rid = "-" + "12345678901234567890" * 300  # 6,000 digits: valid JSON, a valid JSON-RPC id
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}]
    data = "".join(json.dumps(m) + "\n" for m in lines)
    data += f'{{"jsonrpc":"2.0","id":{rid},"method":"ping"}}\n'
    data += f'{{"jsonrpc":"1.0","id":{rid},"method":"ping"}}\n'
    run = subprocess.run(serve_cmd("--bundle", str(kit_bundle)), input=data.encode(),
                         capture_output=True, timeout=60)
    out = run.stdout.splitlines()
    assert run.returncode == 0 and len(out) == 3, run.stderr
    assert out[1] == f'{{"jsonrpc":"2.0","id":{rid},"result":{{}}}}'.encode()
    assert out[2].startswith(b'{"jsonrpc":"2.0","error":{"code":-32600')
    assert out[2].endswith(f'"id":{rid}}}'.encode())


def test_error_replies_stay_small_whatever_the_request_quotes(raw: Raw) -> None:
    c = raw("2026-07-28")
    huge = "n" * 5_000_000
    for params in ({"name": huge}, {"name": "code_review", "arguments": {huge: "x"}}):
        err = c.request("prompts/get", {**envelope(), **params}, timeout=HANG_S)["error"]
        assert err["code"] == -32602 and len(json.dumps(err)) < 2500, str(err)[:3000]
    err = c.request("resources/read", {**envelope(), "uri": huge}, timeout=HANG_S)["error"]
    assert err["code"] == -32602 and len(json.dumps(err)) < 2500
    assert c.request(huge, envelope(), timeout=HANG_S)["error"]["code"] == -32601
    assert len(json.dumps(c.seen[-1])) < 2500
