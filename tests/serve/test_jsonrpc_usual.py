"""``jsonrpc.usual`` is ``jsonrpc.read``'s request case under a stricter test.

The HTTP endpoint reads a body's message with :func:`~promptops.serve.jsonrpc.usual` and
hands its method, id and params to ``Server.answer``; anything it leaves (None) goes to
:func:`~promptops.serve.jsonrpc.read` as before. So for every message: ``usual`` gives
exactly the ``Request`` that ``read`` makes, or None; and it gives None for nothing but
the few forms it leaves to ``read`` on purpose (named below).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from promptops.serve.jsonrpc import Request, read, usual
from promptops.serve.wire import LongInt

VALUES: list[Any] = [None, True, False, 0, 1, -7, 2**70, 1.5, "", "x", "2.0", "1.0", [],
                     [1], {}, {"a": 1}, LongInt("123456789012345678901234567890")]
ABSENT = object()


def _message(jsonrpc: Any, method: Any, rid: Any, params: Any) -> dict[str, Any]:
    msg = {"jsonrpc": jsonrpc, "method": method, "id": rid, "params": params}
    return {k: v for k, v in msg.items() if v is not ABSENT}


def _agrees(msg: object) -> bool:
    """``usual``'s answer is ``read``'s request, or None; True when it is not None."""
    found = usual(msg)
    if found is None:
        return False
    item = read(msg)
    assert isinstance(item, Request), (msg, item)
    assert (item.method, item.id, item.params) == found, msg
    assert item.params is found[2]  # the same object: nothing copied
    return True


FIELD = st.sampled_from([ABSENT, *VALUES, "prompts/get", {"name": "p"}])


@settings(max_examples=400, deadline=None)
@given(FIELD, FIELD, FIELD, FIELD)
def test_usual_is_reads_request_or_nothing(jsonrpc: Any, method: Any, rid: Any,
                                           params: Any) -> None:
    msg = _message(jsonrpc, method, rid, params)
    taken = _agrees(msg)
    usual_form = (jsonrpc == "2.0" and type(method) is str and type(rid) in (int, str)
                  and type(params) is dict)
    assert taken == usual_form, msg


def test_what_usual_leaves_to_read() -> None:
    # each of these read() answers (a request, an error or nothing); usual() leaves it
    left = [
        _message("2.0", "ping", 1, ABSENT),  # no params: read makes them {}
        _message("2.0", "ping", LongInt("12345678901234567890123"), {}),  # a long id
        _message("2.0", "ping", True, {}),  # a bool is no id
        _message("2.0", "ping", 1.0, {}),
        _message("2.0", "ping", ABSENT, {}),  # a notification
        _message("1.0", "ping", 1, {}),
        _message(ABSENT, "ping", 1, {}),
        _message("2.0", ABSENT, 1, {}),
        _message("2.0", "ping", 1, []),
        [_message("2.0", "ping", 1, {})],  # a batch
        "not an object",
    ]
    for msg in left:
        assert usual(msg) is None, msg
        read(msg)  # and read answers it without failing
    assert _agrees(_message("2.0", "prompts/get", "s-1", {"name": "p"}))
    assert _agrees({"params": {}, "id": 0, "method": "ping", "jsonrpc": "2.0", "x": 1})
