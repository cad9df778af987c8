"""Blank lines on stdin are skipped; a line that only starts with whitespace is a message.

The stdio loop decides "blank" from the line's first byte before it strips it (a
message starts with a bracket, so its strip is never made): every kind of ASCII
whitespace ``bytes.strip`` removes must still make a blank line, and whitespace before
a message, or a byte that is not ASCII whitespace, must still be answered. Over a real
``promptops serve`` process and pipe.
"""

from __future__ import annotations

from collections.abc import Callable

from serve_helpers import RawClient

Raw = Callable[..., RawClient]
PING = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}'


def test_blank_lines_of_every_whitespace_are_skipped(raw: Raw) -> None:
    c = raw("2025-06-18")
    c.initialize("2025-06-18")
    c.methods.update({"1": "ping", "2": "ping", "3": "ping"})
    c.write(b"\n \n\t\n\r\n\x0b\n\x0c\n \t\r\x0b\x0c \n")  # seven blank lines: no reply
    c.write(b"\t " + PING % 1 + b"\n")  # leading whitespace: still a message
    c.write(b"\x1c\n")  # not ASCII whitespace: a line that is not JSON
    c.write(PING % 2 + b" \t\n")
    assert c.recv()["id"] == 1
    assert c.recv()["error"]["code"] == -32700
    assert c.recv()["id"] == 2
    assert c.request("ping")["result"] == {}  # and nothing else came in between
