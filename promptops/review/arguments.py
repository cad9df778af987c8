"""The arguments each end of a review renders one case with.

A case's arguments are written for one end (HEAD's test cases for HEAD, a test only BASE
had for BASE, the smoke case for HEAD). Sent unchanged to the other end of a breaking
change they are refused (``unknown argument 'channel'``, ``missing required argument``,
a value its enum no longer has), and the reviewer would compare an error with a prompt.
So each end gets the arguments it accepts, adapted only where the *difference between
the ends* is why it would refuse them:

- an argument this end does not declare but the other end does is left out;
- a value outside this end's ``enum`` that the other end accepts is left out when the
  argument is optional here (this end's default applies), else replaced by this end's
  smoke value;
- a required argument only this end has takes this end's smoke value.

Arguments neither end accepts are sent unchanged (a case that expects the error shows
it at both ends). Each adaptation is said in one line under the diff.
"""

from __future__ import annotations

from collections.abc import Mapping

from promptops.pipeline.bundle_types import Argument, Prompt
from promptops.testing.cases import smoke_case


def adapt(mine: Prompt | None, other: Prompt | None, arguments: Mapping[str, object]
          ) -> tuple[dict[str, object], list[str]]:
    """(the arguments ``mine`` renders, what was changed and why); unchanged when either
    prompt is missing."""
    args = dict(arguments)
    if mine is None or other is None or mine["arguments"] == other["arguments"]:
        # the same declarations at both ends (most prompts of a review: often the very
        # same list) leave every argument as it is: nothing below would change one
        return args, []
    here = {a["name"]: a for a in mine["arguments"]}
    there = {a["name"]: a for a in other["arguments"]}
    smoke: dict[str, object] | None = None
    notes: list[str] = []
    for name in list(args):
        arg = here.get(name)
        if arg is None:
            if name in there:
                del args[name]
                notes.append(f"without {name!r} (not declared at this end)")
            continue
        value = args[name]
        if _outside_enum(arg, value) and name in there and not _outside_enum(there[name], value):
            if not arg.get("required"):
                del args[name]
                notes.append(f"without {name!r} ({value!r} is not in its enum at this end)")
            else:
                smoke = smoke if smoke is not None else dict(smoke_case(mine).arguments)
                args[name] = smoke.get(name)
                notes.append(f"{name}={args[name]!r} ({value!r} is not in its enum at this end)")
    for name, arg in here.items():
        theirs = there.get(name)
        if arg.get("required") and name not in args and not (theirs and theirs.get("required")):
            smoke = smoke if smoke is not None else dict(smoke_case(mine).arguments)
            if name in smoke:
                args[name] = smoke[name]
                notes.append(f"{name}={smoke[name]!r} (required only at this end: its smoke value)")
    return args, notes


def _outside_enum(arg: Argument, value: object) -> bool:
    enum = arg.get("enum")
    return enum is not None and isinstance(value, str) and value not in enum
