"""The usual reply written on uvicorn's cycle is what uvicorn's two sends write.

:class:`promptops.serve.cycle.Replier` writes a reply's status, headers and whole body on
uvicorn's ``RequestResponseCycle`` from header lines it remembers, or writes nothing and
leaves the two ASGI messages to uvicorn's ``send``. The judge is that ``send``: each case
(status, headers, body, the cycle's state, then more messages) runs once through
``await send(start); await send(body)`` and once through ``Replier.now`` (then the
messages it left), with fake transports, twice on one memo (learnt, then remembered);
the transports' writes and closes, the cycles' state, the ``on_response`` calls and every
exception (type and text) must be the same. The cases are the usual replies of both eras
and what must not take the short path: bad names and values, side-effect headers, odd
status, lengths and bodies, HEAD, a closed or unkept connection, a paused transport, a
transport that asks to pause after the head, a started response, another ``send``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from promptops.serve import cycle as cycle_mod
from promptops.serve.cycle import (
    HEAD,
    MAX_HEADS,
    NOTHING,
    WHOLE,
    Replier,
    length,
    line,
    prefix,
)


def test_only_the_checked_uvicorn_versions_are_written_on() -> None:
    """uvicorn before 0.53 writes ``connection: close`` from the request; one after the
    checked range may change its cycle: both keep their own send."""
    assert [cycle_mod.usable(v) for v in ("0.30.6", "0.52.4", "0.53.0", "0.54.0", "0.55.0",
                                          "0.55.1", "0.56.0", "1.0.0")] == [
        False, False, True, True, True, True, False, False]


usual_cycle = pytest.mark.skipif(not cycle_mod.USABLE,
                                 reason="this uvicorn keeps its own send (cycle.CHECKED)")

DATE = (b"date", b"Thu, 03 Dec 2026 18:56:38 GMT")
CT, NS = (b"content-type", b"application/json"), (b"cache-control", b"no-store")
BODY = b"0123456789"


class FakeTransport:
    """Records what is written and closed; ``pause_at``: after that many writes the
    transport asks to pause (as uvloop's does past its high-water mark), and is
    writable again on the loop's next turn."""

    def __init__(self, pause_at: int = 0) -> None:
        self.out: list[tuple[str, bytes]] = []
        self.closing = False
        self.pause_at = pause_at
        self.flow: FlowControl | None = None

    def write(self, data: bytes) -> None:
        self.out.append(("write", bytes(data)))
        if self.pause_at and len(self.out) == self.pause_at and self.flow is not None:
            self.flow.pause_writing()
            asyncio.get_running_loop().call_soon(self.flow.resume_writing)

    def close(self) -> None:
        self.out.append(("close", b""))
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing


STATE = ("response_started", "response_complete", "chunked_encoding", "keep_alive",
         "expected_content_length", "waiting_for_100_continue", "disconnected")


def _cycle(*, method: str = "POST", keep_alive: bool = True, disconnected: bool = False,
           paused: bool = False, defaults: list[tuple[bytes, bytes]] | None = None,
           access_log: bool = False, started: bool = False, pause_at: int = 0
           ) -> tuple[RequestResponseCycle, FakeTransport, list[int]]:
    transport = FakeTransport(pause_at)
    flow = transport.flow = FlowControl(transport)  # type: ignore[arg-type]
    if paused:  # paused, but writable again at once: uvicorn's drain returns
        flow.write_paused = True
    done: list[int] = []
    made = RequestResponseCycle(
        scope={"method": method, "headers": []},  # type: ignore[typeddict-item]
        transport=transport, flow=flow,  # type: ignore[arg-type]
        logger=logging.getLogger("test.reply"),
        access_logger=logging.getLogger("test.reply.access"), access_log=access_log,
        default_headers=[DATE] if defaults is None else defaults,
        message_event=asyncio.Event(), expect_100_continue=True, keep_alive=keep_alive,
        on_response=lambda: done.append(1))
    made.disconnected = disconnected
    made.response_started = started
    return made, transport, done


async def _sends(send: object, messages: list[object], seen: list[object]) -> None:
    for message in messages:
        try:
            await send(message)  # type: ignore[operator]
            seen.append("ok")
        except Exception as exc:  # the same error, or the test fails
            seen.append((type(exc).__name__, str(exc)))


async def _run(replier: Replier | None, status: object, headers: object, body: object,
               after: list[object], how: dict[str, object]) -> list[object]:
    made, transport, done = _cycle(**how)  # type: ignore[arg-type]
    start: dict[str, object] = {"type": "http.response.start", "status": status,
                                "headers": [*headers, length(body)]}  # type: ignore[misc]
    whole: dict[str, object] = {"type": "http.response.body", "body": body}
    seen: list[object] = []  # "ok" or the error, per message sent
    sent = 0
    if replier is not None:
        sent = replier.now(made.send, status, headers, body)  # type: ignore[arg-type]
    await _sends(made.send, [start, whole][sent:], seen)
    await _sends(made.send, after, seen)
    return [[x for x in seen if x != "ok"], tuple(getattr(made, name) for name in STATE),
            made.message_event.is_set(), transport.out, len(done), sent]


def _judge(status: object, headers: object, body: object = BODY,
           after: list[object] | None = None, *, taken: int | None = None,
           **how: object) -> None:
    """The same writes, state and errors either way; ``taken``: what ``now`` must have
    written (the short path is really used where it should be)."""
    replier = Replier()
    for _ in range(2):  # learnt, then remembered
        want = asyncio.run(_run(None, status, headers, body, after or [], how))
        got = asyncio.run(_run(replier, status, headers, body, after or [], how))
        assert got[:-1] == want[:-1], (status, headers, body, how)
        assert taken is None or got[-1] == taken


def _length(n: int) -> tuple[bytes, bytes]:
    return (b"content-length", b"%d" % n)


# the headers before the content-length the callers add (cycle.length)
USUAL = [
    [CT, NS],  # the session era's get
    [CT, NS, (b"mcp-session-id", b"abc.DEF-123_x")],  # initialize
    [CT, (b"cache-control", b"public, max-age=60")],  # a stateless list
    [CT, (b"cache-control", b"private, max-age=0"), (b"vary", b"Authorization")],
    [], [(b"Content-Type", b"application/json")], [(b"x-ok", b"tab\tok")],
    [(b"x-ok", b"caf\xc3\xa9")], [CT, CT],
]
OTHER: list[object] = [
    [_length(10)], [_length(0)], [(b"Content-Length", b"10")], [(b"content-length", b"x")],
    [CT, (b"transfer-encoding", b"chunked")], [(b"Transfer-Encoding", b"gzip")],
    [CT, (b"connection", b"close")], [CT, (b"Connection", b"keep-alive, Close")],
    [CT, (b"connection", b"keep-alive")],
    [(b"bad name", b"x")], [(b"x\x00", b"x")], [(b"x:y", b"x")], [(b"", b"x")],
    [(b"x-ok", b"a\nb")], [(b"x-ok", b"\x7f")], [(b"x-ok", b"a\rb")],
    [[b"x-list", b"pair"]], [(b"x-three", b"a", b"b")], [(b"x-one",)],
    [(bytearray(b"x-ba"), b"v")], [(b"x-ba", bytearray(b"v"))], [("x-str", "v")],
    [(b"x-none", None)], [None], ["nonsense"], (CT, NS),
]
STATUSES: list[object] = [200, 202, 204, 304, 404, 500, 99, 600, 999, "200", 200.0, True, None]
BODIES: list[object] = [BODY, b"", b"0123456789x", bytearray(BODY), memoryview(BODY),
                        "0123456789"]
AFTER: list[list[object]] = [
    [], [{"type": "http.response.body", "body": b""}],
    [{"type": "http.response.body", "body": b"more"}],
    [{"type": "http.response.start", "status": 200, "headers": []}], [{"type": "other"}],
]


@usual_cycle
@pytest.mark.parametrize("headers", USUAL, ids=range(len(USUAL)))
def test_the_usual_reply_is_written_as_uvicorn_writes_it(headers: object) -> None:
    for after in AFTER:
        _judge(200, headers, BODY, after, taken=WHOLE)
        _judge(404, headers, BODY, after, taken=WHOLE)
        _judge(200, headers, BODY, after, taken=WHOLE, keep_alive=False)
        _judge(200, headers, BODY, after, taken=HEAD, pause_at=1)


@usual_cycle
@pytest.mark.parametrize("headers", OTHER, ids=range(len(OTHER)))
def test_anything_else_is_left_to_uvicorns_send(headers: object) -> None:
    for status, body in itertools.product(STATUSES, BODIES):
        _judge(status, headers, body)
    for status in STATUSES:
        _judge(status, [CT])


@usual_cycle
@pytest.mark.parametrize("how", [
    {"method": "HEAD"}, {"disconnected": True}, {"paused": True}, {"access_log": True},
    {"started": True}, {"defaults": [DATE, (b"bad name", b"x")]},
    {"defaults": [DATE, _length(10)]},
], ids=["head", "disconnected", "paused", "access-log", "started", "bad-default",
        "default-length"])
def test_a_cycle_not_in_the_usual_state_is_left_to_uvicorn(how: dict[str, object]) -> None:
    for body, after in itertools.product(BODIES, AFTER):
        _judge(200, [CT, NS], body, after, taken=NOTHING, **how)


@usual_cycle
def test_default_headers_of_other_shapes() -> None:
    for defaults in ([], [DATE, (b"server", b"uvicorn")], [DATE, (b"x-a", b"1"), (b"x-a", b"1")]):
        _judge(200, [CT], taken=WHOLE, defaults=defaults)


@usual_cycle
def test_another_send_is_left_alone() -> None:
    """Not uvicorn's bound send (another server, a wrapper, a subclass): nothing written."""

    class Mine(RequestResponseCycle):
        pass

    made, transport, _ = _cycle()
    replier = Replier()

    async def wrapped(message: object) -> None:
        await made.send(message)  # type: ignore[arg-type]

    assert replier.now(wrapped, 200, [CT], BODY) == NOTHING
    made.__class__ = Mine
    assert replier.now(made.send, 200, [CT], BODY) == NOTHING
    assert transport.out == [] and not made.response_started


@usual_cycle
def test_only_passing_pairs_make_a_head_and_the_memo_is_bounded() -> None:
    for refused in ((b"bad name", b"v"), (b"x", b"a\nb"), _length(10), (b"x",),
                    (b"Transfer-Encoding", b"chunked"), (b"connection", b"close"), [b"a", b"b"]):
        assert line(refused) is None
        assert prefix(200, (CT, refused)) is None
    assert line((b"X-Mixed", b"v")) == b"x-mixed: v\r\n"
    assert prefix(200, (DATE, CT)) == (b"HTTP/1.1 200 OK\r\ndate: " + DATE[1] + b"\r\n"
                                       b"content-type: application/json\r\n")
    replier = Replier()
    for i in range(3 * MAX_HEADS):  # each initialize's session id: another head
        made, transport, _ = _cycle()
        sid = (b"mcp-session-id", b"%d" % i)
        assert replier.now(made.send, 200, [CT, NS, sid], BODY) == WHOLE
        assert len(replier.heads) <= MAX_HEADS
        assert b"\r\nmcp-session-id: %d\r\n" % i in transport.out[0][1]
    for second in range(3):  # uvicorn's date changes every second: so does the head
        date = (b"date", b"Thu, 03 Dec 2026 18:56:3%d GMT" % second)
        made, transport, _ = _cycle(defaults=[date])
        assert replier.now(made.send, 200, [CT, NS], BODY) == WHOLE
        assert transport.out[0][1].startswith(b"HTTP/1.1 200 OK\r\ndate: " + date[1])


@usual_cycle
def test_the_judge_sees_a_wrong_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a head with one letter wrong does."""
    original = cycle_mod.prefix

    def wrong(status: object, pairs: tuple[object, ...]) -> bytes | None:
        made = original(status, pairs)
        return None if made is None else made.replace(b"content-type", b"content-typ")

    monkeypatch.setattr(cycle_mod, "prefix", wrong)
    with pytest.raises(AssertionError):
        _judge(200, [CT])
