"""The orjson codec hands a body with a run of 19 or more digits to ``wire.parse``.

orjson reads an integer past 64 bits as a float; ``wire`` (and the stdlib codec) keep it
exact, so ``OrjsonCodec.parse`` looks for such a run in its one-pass scan of the body
first. The look is written with ``bytes.find`` (``in`` raises and clears a TypeError
inside CPython on every body, issue 26), so its edges are held here: a run at the very
start, in the middle and at the very end of the body, 18 digits (orjson reads it) and 19 or
more (wire must), as an id, a nested value and the whole body.
"""

from __future__ import annotations

import pytest

from promptops.serve import wire
from promptops.serve.codec import OrjsonCodec, StdlibCodec


def _bodies() -> list[bytes]:
    out = []
    for digits in (18, 19, 20, 25):
        run = b"9" * digits
        out += [
            run,  # the whole body: the run starts at byte 0 and ends at the last
            b"-" + run,
            b'{"jsonrpc":"2.0","id":' + run + b',"method":"ping"}',
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":[1,' + run + b"]}}",
            b'[1,2,' + run + b"]",
            b'{"a":' + run + b"}",
            b'{"a":"' + run + b'"}',  # in a string: digits still, the same value either way
        ]
    return out


@pytest.mark.parametrize("body", _bodies())
def test_a_long_run_of_digits_reads_as_wire_reads_it(body: bytes) -> None:
    got = OrjsonCodec().parse(body)
    want = wire.parse(body)
    assert got == want
    assert repr(got) == repr(want)  # an exact int, never a float that compares close
    assert repr(StdlibCodec().parse(body)) == repr(want)


def test_a_number_past_64_bits_stays_an_exact_int() -> None:
    body = b"9" * 20  # > 2**64: orjson alone would give a float
    assert OrjsonCodec().parse(body) == 99999999999999999999
    assert type(OrjsonCodec().parse(body)) is int
    assert type(OrjsonCodec().parse(b"[1," + body + b"]")[1]) is int  # type: ignore[index]
