"""``wire.parse`` reads the usual message with the decoder's scanner directly.

A line that is one object with nothing around it skips ``JSONDecoder.decode``'s two
whitespace matches (two calls of a pipelined get's few dozen); every other line, and any
line the scanner refuses, takes the decoder as before. Each line below must give what
the decoder alone gives: the same value, or a MessageError with the same words.
"""

from __future__ import annotations

import json

import pytest

from promptops.serve import wire

LINES = [
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
    b' {"jsonrpc":"2.0","id":1,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping"} ',
    b'{"a":1}{"b":2}',
    b'{"a":1} x}',
    b'{"a":1,}',
    b'{"a":NaN}',
    b'{"a":Infinity}',
    b'{"a":-Infinity}',
    b'{"id":' + b"9" * 5000 + b"}",
    b'{"a":"\\ud800"}',
    b'{"a":"unterminated}',
    b'{"a":[1,2,{"b":null}],"c":true,"d":1.5e3}',
    b"{}",
    b"{",
    b"}",
    b"[1,2]",
    b'"text"',
    b"{" * 101 + b"}" * 101,
    b'{"a":"\\x"}',
    b'{"a":1}\n',
    "{\"é\":\"ü\"}".encode(),
    b'{"a":"\xff"}',
]


def _decoder_alone(line: bytes) -> object:
    """What wire.parse gave before the scanner path (the decoder for every line)."""
    problem = wire.structure_problem(line)
    if problem is not None:
        raise wire.MessageError(problem)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise wire.MessageError("the line is not valid UTF-8") from None
    try:
        return wire._DECODE(text)
    except wire.MessageError:
        raise
    except json.JSONDecodeError as exc:
        raise wire.MessageError(str(exc)) from None
    except ValueError:
        pass
    try:
        return wire._DECODE_LONG(text)
    except wire.MessageError:
        raise
    except (ValueError, RecursionError) as exc:
        raise wire.MessageError(str(exc)) from None


def _outcome(read: object, line: bytes) -> tuple[str, object]:
    try:
        return "value", read(line)  # type: ignore[operator]
    except wire.MessageError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("line", LINES)
def test_the_scanner_path_reads_every_line_as_the_decoder_does(line: bytes) -> None:
    assert _outcome(wire.parse, line) == _outcome(_decoder_alone, line)


def test_a_long_integer_id_is_kept() -> None:
    value = wire.parse(b'{"id":' + b"9" * 5000 + b"}")
    assert value == {"id": wire.LongInt("9" * 5000)}
