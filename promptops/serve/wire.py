"""JSON-RPC messages as bytes: a bounded parse of one message and its exact encoding.

Any transport (the stdio loop today, HTTP later) gets a message as bytes and must turn
it into data without letting the bytes decide what it costs. Python's ``json`` is linear
in the input, but left alone it would recurse once per nesting level (a RecursionError
around 1,000, and C-stack use before that), build one object per value (a 16 MiB line
of ``[{},{},...]`` is millions of dicts, ~400 MB), accept ``NaN``/``Infinity`` (not
JSON) and refuse integers longer than Python's int-string limit (4,300 digits) that
are valid JSON. So before parsing, a pre-scan that is linear in the line and made of C
string operations only (``count``, ``replace``, ``split``, ``translate``) refuses
messages nested deeper than :data:`MAX_DEPTH` or holding more than :data:`MAX_VALUES`
values; the parse itself refuses the non-JSON constants and keeps over-long integers
as :class:`LongInt`, their digits, which :func:`encode` writes back verbatim (a request
id may be such an integer, and a client must get its own id back).

The common case stays cheap: a line with at most ``MAX_DEPTH`` brackets and few commas
is settled by three ``bytes.count`` calls, and the integer and constant hooks cost
nothing unless such a value occurs.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from typing import NoReturn

MAX_MESSAGE = 16 * 1024 * 1024  # bytes per message (for stdio: per line, newline excluded)
MAX_DEPTH = 100  # nested arrays/objects per message
MAX_VALUES = 100_000  # values per message, counted as arrays/objects plus the commas between
_CHUNK = 1 << 16  # the string scan works in slices of this size: bounded temporaries
_OPEN_CLOSE = bytes.maketrans(b"{}", b"[]")
_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},")
_STEP = bytes.maketrans(b"[]", b"\x01\xff")  # +1 / -1 as signed bytes
_TOKEN = os.urandom(16).hex()  # marks a LongInt in encode's second pass; unguessable


class MessageError(ValueError):
    """Bytes that are not one acceptable JSON value: the transport answers -32700."""


class LongInt:
    """A JSON integer with more digits than ``int()`` accepts, kept as its text.

    Valid JSON and a valid JSON-RPC id; it compares and hashes by its digits, is no
    ``int`` (so arithmetic and argument checks refuse it), and its repr stays short
    because error messages quote values.
    """

    __slots__ = ("digits",)

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LongInt) and other.digits == self.digits

    def __hash__(self) -> int:
        return hash((LongInt, self.digits))

    def __repr__(self) -> str:
        return f"<integer of {len(self.digits.lstrip('-'))} digits>"


def _not_json(name: str) -> NoReturn:
    raise MessageError(f"{name} is not JSON (JSON numbers are finite)")


def _integer(text: str) -> int | LongInt:
    try:
        return int(text)
    except ValueError:  # past the int-string limit: keep the digits
        return LongInt(text)


# Built once: json.loads with keyword arguments would build a decoder on every call.
_DECODE = json.JSONDecoder(parse_constant=_not_json).decode
_DECODE_LONG = json.JSONDecoder(parse_constant=_not_json, parse_int=_integer).decode
# The scanner _DECODE runs (JSONDecoder.raw_decode's): (value, end) of the value at an index.
_SCAN: Callable[[str, int], tuple[object, int]] = vars(
    json.JSONDecoder(parse_constant=_not_json))["scan_once"]


def parse(line: bytes) -> object:
    """The JSON value in ``line``; MessageError (a -32700 message) if it is not acceptable."""
    problem = structure_problem(line)
    if problem is not None:
        raise MessageError(problem)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise MessageError("the line is not valid UTF-8") from None
    if text[:1] == "{" and text[-1:] == "}":  # the usual message: no space around it
        try:  # what _DECODE does for it, minus its two whitespace matches and two calls
            value, end = _SCAN(text, 0)
        except (StopIteration, ValueError, RecursionError):
            pass  # _DECODE says (or settles) it, as for any other line
        else:
            if end == len(text):
                return value
    try:
        return _DECODE(text)
    except MessageError:
        raise
    except json.JSONDecodeError as exc:
        raise MessageError(str(exc)) from None
    except ValueError:  # an integer past the int-string limit: parse again, keeping it
        pass
    except RecursionError:  # unreachable after the pre-scan; kept as a last guard
        raise MessageError(f"nested deeper than {MAX_DEPTH}") from None
    try:
        return _DECODE_LONG(text)
    except MessageError:
        raise
    except (ValueError, RecursionError) as exc:
        raise MessageError(str(exc)) from None


def structure_problem(line: bytes) -> str | None:
    """Why ``line`` nests too deep or holds too many values, or None; linear, C-speed.

    Brackets and commas inside strings do not count: escapes are dropped first (a
    backslash pair, then an escaped quote), after which every quote delimits a string,
    so the text outside strings is every other piece of a split on quotes. The line is
    processed in slices so no temporary holds more than one slice's pieces.
    """
    opens = line.count(b"[") + line.count(b"{")
    if opens <= MAX_DEPTH and opens + line.count(b",") <= MAX_VALUES:
        return None  # an upper bound already within both limits: the usual case
    text = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside: list[bytes] = []
    in_string = False
    for start in range(0, len(text), _CHUNK):
        pieces = text[start : start + _CHUNK].split(b'"')
        outside.append(b"".join(pieces[1 if in_string else 0 :: 2]).translate(
            _OPEN_CLOSE, _STRUCTURE))
        if len(pieces) % 2 == 0:
            in_string = not in_string
    structure = b"".join(outside)
    brackets = structure.replace(b",", b"")
    values = len(structure) - len(brackets) + brackets.count(b"[")
    if values > MAX_VALUES:
        return (f"more than {MAX_VALUES:,} values in one message (counted as arrays, objects "
                "and the commas between items)")
    if brackets.count(b"[") > MAX_DEPTH:
        steps = memoryview(brackets.translate(_STEP)).cast("b")
        if max(itertools.accumulate(steps)) > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH}"
    return None


def _not_plain(value: object) -> NoReturn:
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _compact(*, ascii_only: bool) -> Callable[[object], str]:
    """A compact encoder, built once: ``JSONEncoder.encode`` builds its C encoder on every
    call (a microsecond of a reply). Without the circular-reference check, which
    messages (trees of fresh dicts and lists) never need: a cycle would still end in a
    RecursionError, never a crash."""
    escape = json.encoder.encode_basestring_ascii if ascii_only else json.encoder.encode_basestring
    plain = json.JSONEncoder(ensure_ascii=ascii_only, separators=(",", ":")).encode
    make = getattr(json.encoder, "c_make_encoder", None)
    try:  # the arguments JSONEncoder.iterencode passes it (a private interface)
        one_shot = make(None, _not_plain, escape, None, ":", ",", False, False, True)  # type: ignore[misc]
        if "".join(one_shot({"é": [1.5, None]}, 0)) != plain({"é": [1.5, None]}):
            return plain
    except TypeError:  # no C accelerator, or one that is called otherwise
        return plain
    return lambda message: "".join(one_shot(message, 0))


# Built once, like the decoders: json.dumps with keyword arguments builds an encoder per call.
_COMPACT = _compact(ascii_only=False)
_COMPACT_ASCII = _compact(ascii_only=True)


class Sealed(dict[str, object]):
    """A JSON object that many replies share and nobody changes, encoded once.

    It is a dict to every reader (and to ``json``), refuses every change, and keeps its
    compact encoding in :attr:`text`, which :func:`encode`'s reply path writes as is
    (the ``_meta`` of every ``prompts/get``: one per bundle). Its values are scalars;
    copy it (``dict(sealed)``, ``{**sealed}``) to add keys.
    """

    __slots__ = ("text",)

    def __init__(self, items: dict[str, object]) -> None:
        super().__init__(items)
        self.text = _COMPACT(self)

    def __reduce__(self) -> tuple[type[Sealed], tuple[dict[str, object]]]:
        return Sealed, (dict(self),)  # copy and pickle make a new one, never change this one

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a Sealed object is shared by replies and cannot be changed")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse


_ESCAPE = json.encoder.encode_basestring  # the function _COMPACT escapes strings with
_REPLY_KEYS = ("jsonrpc", "id", "result")
_MESSAGE_KEYS = ("role", "content")
_TEXT_KEYS = ("type", "text")


def _text_reply(message: object) -> str | None:
    """The encoding of a ``prompts/get`` reply of text messages, or None for any other.

    What ``_COMPACT`` writes for it, byte for byte, without walking the parts that are
    the same in every reply: the keys, and the ``_meta`` (a :class:`Sealed`), encoded
    once. Any other shape (another key, type or order anywhere) gives None, and the
    general encoder writes the message.
    """
    if type(message) is not dict or tuple(message) != _REPLY_KEYS \
            or message["jsonrpc"] != "2.0":
        return None
    id_, result = message["id"], message["result"]
    if type(id_) is int:
        ident = repr(id_)
    elif type(id_) is str:
        ident = _ESCAPE(id_)
    else:
        return None
    if type(result) is not dict:
        return None
    keys = tuple(result)
    if keys == ("messages", "_meta"):
        described = ""
    elif keys == ("messages", "description", "_meta") and type(result["description"]) is str:
        described = ',"description":' + _ESCAPE(result["description"])
    else:
        return None
    meta, messages = result["_meta"], result["messages"]
    if type(meta) is not Sealed or type(messages) is not list:
        return None
    texts = []
    for msg in messages:
        if type(msg) is not dict or tuple(msg) != _MESSAGE_KEYS:
            return None
        role, content = msg["role"], msg["content"]
        if type(role) is not str or type(content) is not dict \
                or tuple(content) != _TEXT_KEYS or content["type"] != "text" \
                or type(content["text"]) is not str:
            return None
        texts.append(f'{{"role":{_ESCAPE(role)},"content":{{"type":"text","text":'
                     f'{_ESCAPE(content["text"])}}}}}')
    return (f'{{"jsonrpc":"2.0","id":{ident},"result":{{"messages":[{",".join(texts)}]'
            f'{described},"_meta":{meta.text}}}}}')


def encode(message: object) -> bytes:
    """One message as compact UTF-8 JSON (no newline).

    A lone surrogate (valid in JSON as ``"\\ud800"``, so it can be echoed) cannot be
    encoded as UTF-8: such a message is written with ASCII escapes instead. A LongInt
    is written as its digits. A ``prompts/get`` reply of text messages takes a shorter
    path (:func:`_text_reply`) to the same bytes.
    """
    text = _text_reply(message)
    if text is None:
        try:
            text = _COMPACT(message)
        except TypeError:  # not plain data: a LongInt (anything else is a bug, and raises)
            text = _with_long_ints(message, ascii_only=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        try:
            return _COMPACT_ASCII(message).encode()
        except TypeError:
            return _with_long_ints(message, ascii_only=True).encode()


def _with_long_ints(message: object, *, ascii_only: bool) -> str:
    found: list[LongInt] = []

    def mark(value: object) -> str:
        if not isinstance(value, LongInt):
            raise TypeError(f"{type(value).__name__} is not JSON serialisable")
        found.append(value)
        return f"{_TOKEN}:{len(found) - 1}"

    text = json.dumps(message, ensure_ascii=ascii_only, separators=(",", ":"), default=mark)
    for i, value in enumerate(found):
        text = text.replace(f'"{_TOKEN}:{i}"', value.digits, 1)
    return text
