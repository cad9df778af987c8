"""Multi-round-trip requests (MRTR, 2026-07-28): ask the user for missing prompt arguments.

Instead of failing a prompts/get that lacks required arguments, a server may answer
``input_required`` with an ``elicitation/create`` form; the client retries the same
request with the user's answers in ``inputResponses`` and our ``requestState``. The
state carries the prompt name and the arguments the client sent in the first round.
It is sealed with the server's key (:mod:`promptops.serve.signing`), so a state is
accepted only as this server issued it: a client cannot swap in other arguments or
another prompt, and a forged state is refused before any of it is parsed. Every value
is still validated again when the prompt is rendered.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from promptops.serve.jsonrpc import Json
from promptops.serve.signing import Signer

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Argument, Prompt

INPUT_KEY = "arguments"
STATE = b"promptops/requestState/v1"


class StateError(Exception):
    """A requestState or inputResponses this server cannot use (-32602)."""


def can_elicit(capabilities: Json) -> bool:
    """Form elicitation: `elicitation: {}` (form implied) or `elicitation: {form: {}}`."""
    el = capabilities.get("elicitation")
    return isinstance(el, dict) and (not el or "form" in el)


def encode_state(signer: Signer, prompt: str, arguments: Json) -> str:
    raw = json.dumps({"prompt": prompt, "arguments": arguments}, separators=(",", ":"),
                     ensure_ascii=True)  # ASCII: a lone surrogate in a value must survive
    return signer.seal(STATE, raw.encode())


def decode_state(signer: Signer, state: object, prompt: str) -> Json:
    if not isinstance(state, str):
        raise StateError("requestState must be the string this server returned")
    raw = signer.open(STATE, state)
    if raw is None:
        raise StateError("invalid requestState: not issued by this server (or by an earlier "
                         "run of it: send the request again without requestState)")
    data = json.loads(raw)  # authenticated: exactly what encode_state wrote
    if data["prompt"] != prompt:
        raise StateError(f"requestState belongs to prompt {data['prompt']!r}, not {prompt!r}")
    return dict(data["arguments"])


def answers(responses: object) -> Json:
    """The user's values from ``inputResponses``; a declined form is an error."""
    if not isinstance(responses, dict):
        raise StateError("inputResponses must be an object")
    reply = responses.get(INPUT_KEY)
    if reply is None:
        return {}
    if not isinstance(reply, dict) or reply.get("action") not in ("accept", "decline", "cancel"):
        raise StateError(f"inputResponses.{INPUT_KEY} must be an elicitation result")
    if reply["action"] != "accept":
        raise StateError(f"the user chose to {reply['action']} the missing arguments")
    content = reply.get("content") or {}
    if not isinstance(content, dict):
        raise StateError(f"inputResponses.{INPUT_KEY}.content must be an object")
    return {k: (str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
            for k, v in content.items()}


def _field(spec: Argument) -> Json:
    """The form field for one argument: an enum becomes a single-select."""
    out: Json = {"type": "string"}
    if "title" in spec:
        out["title"] = spec["title"]
    notes = [spec["description"]] if "description" in spec else []
    if "enum" in spec:
        out["enum"] = list(spec["enum"])
    else:
        if "pattern" in spec:  # StringSchema has no pattern: say it in words
            notes.append(f"Must match the regular expression {spec['pattern']}")
        if "maxLength" in spec:
            out["maxLength"] = spec["maxLength"]
    if notes:
        out["description"] = ". ".join(n.rstrip(".") for n in notes) + "."
    return out


def input_required(signer: Signer, prompt: Prompt, missing: list[str],
                   given: Json) -> Json:
    specs = {a["name"]: a for a in prompt["arguments"]}
    form = {
        "mode": "form",
        "message": f"Prompt {prompt['name']!r} needs: " + ", ".join(missing),
        "requestedSchema": {
            "type": "object",
            "properties": {name: _field(specs[name]) for name in missing},
            "required": missing,
        },
    }
    return {
        "resultType": "input_required",
        "inputRequests": {INPUT_KEY: {"method": "elicitation/create", "params": form}},
        "requestState": encode_state(signer, prompt["name"], given),
    }
