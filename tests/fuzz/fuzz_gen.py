"""Random and mutated JSON-RPC lines for the stdio fuzz driver.

Valid requests are built for the session's era, then (most of the time) broken in one
of the ways a confused or hostile client breaks them: wrong types in any field, keys
dropped or added, ids missing, duplicated or of the wrong type, notifications carrying
ids, lifecycle messages out of order, invalid UTF-8, truncated, blank, huge or deeply
nested lines, 10 MB argument values, batches. Every line stays a single line.
"""

from __future__ import annotations

import json
import random
from typing import Any

MODERN = "2026-07-28"
ENVELOPE_KEYS = ("io.modelcontextprotocol/protocolVersion",
                 "io.modelcontextprotocol/clientCapabilities")
ODD_VALUES: list[Any] = [None, True, False, 0, -1, 1.5, 10**30, "", "x", "\ud800", "é\u0000",
                         [], [1, "a"], {}, {"k": "v"}, {"name": 1}]
ODD_METHODS = ["tools/list", "PROMPTS/LIST", "prompts/get ", "", "notifications/initialized",
               "notifications/cancelled", "sampling/createMessage", "rpc.discover", "x" * 300]


class Generator:
    def __init__(self, rng: random.Random, mode: str, prompts: dict[str, Any]) -> None:
        self.rng, self.mode = rng, mode
        self.prompts = prompts  # name -> bundle prompt (for valid arguments)
        self.next_id = 0
        self.ids: list[Any] = [0]
        self.huge_left = 1  # 16 MiB lines are expensive: at most one per session
        # 10 MB argument values too: at 3% of lines they were 99.8% of the bytes sent (a
        # session of ~450 lines sent ~14, each refused the same way), so the time box spent
        # most of its CPU repeating one case; two per session (in that session's state)
        self.big_left = 2

    # ---- valid requests -------------------------------------------------------------
    def new_id(self) -> Any:
        r = self.rng.random()
        if r < 0.1:
            return self.rng.choice(self.ids)  # a duplicate id
        self.next_id += 1
        new: Any = self.next_id if r < 0.7 else f"r-{self.next_id}-{self.rng.random():.3f}"
        self.ids.append(new)
        return new

    def envelope(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.mode != "modern":
            return params
        meta = {ENVELOPE_KEYS[0]: MODERN, ENVELOPE_KEYS[1]: {},
                "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"}}
        return {**params, "_meta": meta}

    def arguments(self, prompt: dict[str, Any]) -> dict[str, Any]:
        rng, args = self.rng, {}
        for a in prompt["arguments"]:
            if not a.get("required") and rng.random() < 0.5:
                continue
            if "enum" in a:
                args[a["name"]] = rng.choice(a["enum"])
            else:
                alphabet = "abcxyz" if "pattern" in a else "ab {}%#\\\"'é\u2028\ud800<>\t{{ }}"
                args[a["name"]] = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        return args

    def valid(self) -> dict[str, Any]:
        rng = self.rng
        name = rng.choice(sorted(self.prompts))
        choices: list[tuple[str, dict[str, Any]]] = [
            ("prompts/get", {"name": name, "arguments": self.arguments(self.prompts[name])}),
            ("prompts/get", {"name": name, "arguments": self.arguments(self.prompts[name])}),
            ("prompts/list", {}),
            ("resources/list", {}),
            ("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                                     "argument": {"name": "tone", "value": rng.choice("wWdx")}}),
        ]
        if self.mode == "modern":
            choices.append(("server/discover", {}))
        else:
            choices += [("ping", {}), ("logging/setLevel", {"level": "debug"})]
            if self.mode != "undecided" and (rng.random() < 0.05 or self.next_id < 3):
                caps: dict[str, Any] = {}
                choices.append(("initialize", {"protocolVersion": self.mode, "capabilities": caps,
                                               "clientInfo": {"name": "fuzz", "version": "1"}}))
        method, params = rng.choice(choices)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.new_id(), "method": method}
        if params or rng.random() < 0.5 or self.mode == "modern":
            msg["params"] = self.envelope(params)
        return msg

    # ---- breaking them ----------------------------------------------------------------
    def mutate(self, msg: dict[str, Any]) -> Any:
        rng = self.rng
        kind = rng.randrange(7)
        if kind == 0:  # a wrong type somewhere
            path = self._paths(msg)
            target, key = rng.choice(path)
            target[key] = rng.choice(ODD_VALUES)
        elif kind == 1:  # a key dropped
            target, key = rng.choice(self._paths(msg))
            del target[key]
        elif kind == 2:  # an unknown method (or a notification's name with an id)
            msg["method"] = rng.choice(ODD_METHODS)
        elif kind == 3:  # the id dropped: a notification, which gets no reply
            msg.pop("id", None)
        elif kind == 4:  # a stray response
            msg = {"jsonrpc": "2.0", "id": msg.get("id"), rng.choice(["result", "error"]): {}}
        elif kind == 5:  # an extra unknown key
            msg[rng.choice(["extra", "_meta", "params2"])] = rng.choice(ODD_VALUES)
        else:  # lifecycle out of order: the other era's entry point
            other = "initialize" if self.mode == "modern" else "server/discover"
            msg["method"] = other
            if other == "initialize":
                msg["params"] = self.envelope({"protocolVersion": rng.choice(
                    ["2024-11-05", "2025-03-26", "1999-01-01", MODERN]), "capabilities": {}})
        return msg

    def _paths(self, msg: dict[str, Any]) -> list[tuple[Any, Any]]:
        out: list[tuple[Any, Any]] = []
        stack: list[Any] = [msg]
        while stack:
            node = stack.pop()
            for key, value in node.items():
                out.append((node, key))
                if isinstance(value, dict):
                    stack.append(value)
        return out

    # ---- lines ----------------------------------------------------------------------
    def line(self) -> bytes:
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            return self.dump(self.valid())
        if r < 0.75:
            return self.dump(self.mutate(self.valid()))
        if r < 0.80:  # a batch (answered as one only on 2025-03-26)
            items = [self.valid() if rng.random() < 0.6 else self.mutate(self.valid())
                     for _ in range(rng.randrange(0, 4))]
            return self.dump(items)
        if r < 0.85:  # invalid UTF-8 inside an otherwise valid message
            raw = self.dump(self.valid())
            cut = rng.randrange(1, len(raw))
            return raw[:cut] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + \
                raw[cut:]
        if r < 0.90:  # truncated
            raw = self.dump(self.valid())
            return raw[: rng.randrange(0, len(raw))]
        if r < 0.93:  # deeply nested, as a whole message or inside params
            d = rng.choice([rng.randint(90, 110), rng.randint(900, 1100), rng.randint(1, 50000)])
            if rng.random() < 0.5:
                return b"[" * d + b"]" * d
            msg = self.valid()
            msg.setdefault("params", {})["deep"] = "@"
            return self.dump(msg).replace(b'"@"', b"[" * d + b"]" * d)
        if r < 0.95:  # random bytes
            raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
            return raw.replace(b"\n", b" ")
        if r < 0.96:  # blank, or a CR left over from CRLF
            return rng.choice([b"", b"   ", b"\t", self.dump(self.valid()) + b"\r"])
        if r < 0.97 and self.huge_left:  # a line over the 16 MiB limit
            self.huge_left -= 1
            return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + \
                b"a" * (16 * 1024 * 1024) + b'"}}'
        if not self.big_left:  # this session had its 10 MB values: a valid line instead
            return self.dump(self.valid())
        self.big_left -= 1
        # a 10 MB argument value (over every maxLength), put in after the message is dumped
        # as the deep nesting is: the same bytes (no JSON escapes an "n", in either
        # ensure_ascii mode), without json.dumps walking 10 MB (most of the driver's CPU)
        msg = self.valid()
        msg["method"] = "prompts/get"
        msg["params"] = self.envelope({"name": "greet", "arguments": {"name": "@"}})
        return self.dump(msg).replace(b'"@"', b'"' + b"n" * 10_000_000 + b'"')

    def dump(self, obj: Any) -> bytes:
        text = json.dumps(obj, ensure_ascii=self.rng.random() < 0.5)
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: send it escaped, as JSON allows
            return json.dumps(obj).encode("ascii")
