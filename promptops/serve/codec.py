"""How a transport turns a reply into bytes and a request's bytes into data: a :class:`Codec`.

Two implementations write the same bytes and read the same values, and one is chosen once
at start, as uvicorn's ``protocols/http/auto.py`` picks httptools or h11:

* :class:`StdlibCodec` is :mod:`promptops.serve.wire` (``json``'s C encoder built once,
  the text-reply and :class:`~promptops.serve.wire.Sealed` fast paths, the bounded
  parse). It has no dependency, so the stdio transport (``promptops serve``) uses it.
* :class:`OrjsonCodec` writes and reads through orjson where orjson's answer is the same,
  and hands everything else to ``wire``. A ``prompts/get`` reply costs ~5 µs in ``json``'s
  C encoder and ~0.4 µs in orjson; a request body 2.6 µs and 0.6 µs. The HTTP transport
  (``serve --http``, whose extra installs orjson) uses it through :func:`auto`.

Both are held equal by one oracle test parametrised over both
(tests/serve/test_reply_encoding.py, uvicorn's ``http_protocol_cls`` fixture shape) and by
the generated-input tests of tests/serve/transports/http/test_http_hot_path.py.
``parse`` raises :class:`~promptops.serve.wire.MessageError` for bytes that are not one
acceptable JSON value; :func:`promptops.serve.jsonrpc.parse` turns it into -32700.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from promptops.serve import wire


class Codec(Protocol):
    """Reply -> bytes, bytes -> message; the same bytes and values in every implementation."""

    name: str
    @property
    def dumps(self) -> Callable[[object], bytes]:
        """``encode`` without its Python frame where one can be skipped: the same bytes,
        or a TypeError for a message ``encode`` writes another way (then call encode)."""

    def encode(self, message: object) -> bytes:
        """``message`` as compact UTF-8 JSON (no newline)."""

    def parse(self, data: bytes) -> object:
        """The JSON value in ``data``, bounded; wire.MessageError when not acceptable."""


class StdlibCodec:
    """:mod:`promptops.serve.wire` as a codec: the standard library only."""

    name = "stdlib"
    # the functions themselves, not methods calling them: no call added per message
    encode = dumps = staticmethod(wire.encode)
    parse = staticmethod(wire.parse)


# One pass over a body for both cheap checks: a digit becomes "9" (a run of 19 is a number
# orjson would not read as wire does, past 64 bits), "[" and "{" become "[" (the opens that
# wire.structure_problem counts first), anything else a space.
_SCAN = bytes(0x39 if 0x30 <= b <= 0x39 else 0x5B if b in (0x5B, 0x7B) else 0x20
              for b in range(256))
_LONG_RUN = b"9" * 19


class OrjsonCodec:
    """orjson where it writes and reads what ``wire`` does, ``wire`` for the rest.

    Encoding: orjson writes the same compact UTF-8 JSON for the same data; what it cannot
    write the way ``wire`` does it refuses with a TypeError (a LongInt, an integer past 64
    bits, a lone surrogate, a non-string key, nesting past 254), and then ``wire.encode``
    writes it. The one difference is the spelling of some floats (``1e-7`` for ``1e-07``:
    the same number, shortest round trip both), which is why stdio keeps the stdlib codec.

    Parsing: ``wire``'s depth and value bounds are checked first, unchanged. orjson reads
    every JSON text as ``json`` does but two: an integer past 64 bits becomes a float
    (``wire`` keeps it exact), and some texts ``wire`` accepts it refuses (a lone surrogate
    escape, 1e400). So a body with any run of 19 or more digits, one over the bounds, and
    one orjson refuses are read by ``wire.parse`` itself: the same value or the same error.
    """

    name = "orjson"

    def __init__(self) -> None:
        import orjson  # ImportError without the http extra: auto() falls back

        self._dumps, self._loads, self._refused = orjson.dumps, orjson.loads, orjson.JSONDecodeError
        # orjson itself: a hot path calls it and, on its TypeError, encode (issue 26: the
        # frame of encode is ~1,000 instructions a reply)
        self.dumps = orjson.dumps

    def encode(self, message: object) -> bytes:
        try:
            return self._dumps(message)
        except TypeError:
            return wire.encode(message)

    def parse(self, data: bytes) -> object:
        scan = data.translate(_SCAN)
        # wire.structure_problem's first test from the scan (issue 26: three counts and a
        # call fewer per body): opens within the depth bound, and opens plus commas within
        # the value bound because the body has no more bytes than that; else its own test.
        # No long run: find, not ``in``, which on bytes first tries the operand as an
        # integer and so raises and clears a formatted TypeError on every body (net
        # ~1,100-1,300 instructions and ~160 instruction-cache misses a request, issue 26)
        if ((scan.count(b"[") <= wire.MAX_DEPTH and len(data) <= wire.MAX_VALUES)
                or wire.structure_problem(data) is None) and scan.find(_LONG_RUN) < 0:
            try:
                return self._loads(data)
            except self._refused:
                pass
        return wire.parse(data)


STDLIB = StdlibCodec()


def auto() -> Codec:
    """The fastest codec installed: orjson's when it is importable, else the stdlib's."""
    try:
        return OrjsonCodec()
    except ImportError:
        return STDLIB
