"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.

Bytes are read, not text, so a line of invalid UTF-8 becomes a -32700 reply instead of
killing the reader; one lock serialises stdout because reload notifications are sent
from the git follower's thread. A closed stdout (the client went away) ends the loop
quietly; stdin EOF and SIGTERM end it with exit status 0.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import traceback
from typing import IO, Any

from promptops.serve.rpc import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, Json, error

MAX_LINE = 16 * 1024 * 1024  # bytes per message, newline excluded
MAX_DEPTH = 100  # nested arrays/objects per message; Python's json would RecursionError ~1000
_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class _Stop(Exception):
    """Raised by the SIGTERM handler to leave a blocking read."""


class Output:
    """Thread-safe line writer that goes quiet once the reader has hung up."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.closed = False

    def send(self, message: Any) -> None:
        try:
            data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        except UnicodeEncodeError:  # a lone surrogate (sent as "\ud800"): echo it escaped
            data = json.dumps(message, separators=(",", ":")).encode()
        data += b"\n"
        with self._lock:
            if self.closed:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ConnectionResetError, ValueError, OSError):
                self.closed = True
                _silence(self._stream)


def _silence(stream: IO[bytes]) -> None:
    """Point the dead stdout at /dev/null so interpreter shutdown cannot complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def log(message: str) -> None:
    try:
        sys.stderr.write(f"promptops serve: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _read(stream: IO[bytes]) -> bytes | None:
    """One line without its newline; None at EOF; raises OverflowError past MAX_LINE."""
    line = stream.readline(MAX_LINE + 1)
    if not line:
        return None
    if len(line) > MAX_LINE and not line.endswith(b"\n"):
        while True:  # drop the rest of the oversized line, keep the stream in sync
            rest = stream.readline(1 << 20)
            if not rest or rest.endswith(b"\n"):
                break
        raise OverflowError
    return line.rstrip(b"\r\n")


def _too_deep(line: bytes) -> bool:
    """Bracket depth outside strings exceeds MAX_DEPTH; cheap unless brackets abound."""
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return False
    depth = 0
    for b in _STRINGS.sub(b"", line).translate(None, _NOT_BRACKETS):
        depth += 1 if b in (91, 123) else -1
        if depth > MAX_DEPTH:
            return True
    return False


def _parse(server: Any, line: bytes) -> tuple[Any, Json | None]:
    if _too_deep(line):
        return None, server.reject(PARSE_ERROR, f"parse error: nested deeper than {MAX_DEPTH}")
    try:
        return json.loads(line.decode("utf-8")), None
    except UnicodeDecodeError:
        return None, server.reject(PARSE_ERROR, "parse error: the line is not valid UTF-8")
    except ValueError as exc:
        return None, server.reject(PARSE_ERROR, f"parse error: {exc}")
    except RecursionError:
        return None, server.reject(PARSE_ERROR, f"parse error: nested deeper than {MAX_DEPTH}")


def serve(server: Any, out: Output, stdin: IO[bytes] | None = None) -> int:
    """Answer messages from stdin until EOF, SIGTERM or a closed stdout; returns 0."""
    stream = stdin if stdin is not None else sys.stdin.buffer

    def stop(signum: int, frame: Any) -> None:
        raise _Stop

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        while not out.closed:
            try:
                line = _read(stream)
            except OverflowError:
                out.send(server.reject(INVALID_REQUEST, f"message over {MAX_LINE} bytes"))
                continue
            if line is None:
                break
            if not line.strip():
                continue
            message, failure = _parse(server, line)
            if failure is not None:
                out.send(failure)
                continue
            try:
                replies = server.handle(message)
            except Exception:  # a bug must cost one request, never the server
                log("internal error:\n" + traceback.format_exc())
                mid = message.get("id") if isinstance(message, dict) else None
                replies = [error(mid if isinstance(mid, (str, int)) else None, INTERNAL_ERROR,
                                 "internal error")] if mid is not None else []
            for reply in replies:
                out.send(reply)
    except (_Stop, KeyboardInterrupt):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    for reply in server.close():
        out.send(reply)
    return 0
