"""The Handlebars syntax tree the reader (:mod:`promptops.interop.handlebars`) builds and
the translator (:mod:`promptops.interop.hbs_to_jinja`) walks.

Its own module so the two sides share the node types without the translator importing the
parser's machinery; ``handlebars`` re-exports every name, so ``hb.Block`` reads as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass
class Expr:
    """A Handlebars expression: a path, a data path (@index), a literal, or a sub-expression.

    For a path, ``parts`` are the segments after ``depth`` leading ``../`` (``this`` and
    ``.`` give no part) and ``this_`` tells an explicit ``this``/``.``; a literal's ``value``
    is its Python value; a sub-expression has ``call`` = (helper, params, hash).
    """

    kind: Literal["path", "data", "string", "number", "boolean", "null", "undefined", "sexpr"]
    parts: tuple[str, ...] = ()
    depth: int = 0
    this_: bool = False
    value: object = None
    call: Call | None = None
    original: str = ""


@dataclass
class Call:
    helper: Expr
    params: list[Expr]
    hash: dict[str, Expr]


@dataclass
class Content:
    """Literal text. ``value`` is what Handlebars outputs after its whitespace pass.

    ``standalone_before``/``standalone_after`` are the text the standalone rule removed at the
    start/end of this node (``~`` removals are simply gone from ``value``).
    """

    original: str
    line: int
    value: str = ""
    standalone_before: str = ""
    standalone_after: str = ""
    right_stripped: bool = False
    left_stripped: bool = False

    def __post_init__(self) -> None:
        self.value = self.original


@dataclass
class Strip:
    open: bool = False
    close: bool = False


@dataclass
class Mustache:
    call: Call
    escaped: bool
    strip: Strip
    line: int
    col: int


@dataclass
class Comment:
    strip: Strip
    line: int
    col: int
    standalone: bool = False


@dataclass
class Partial:
    name: Expr
    context: Expr | None
    hash: dict[str, Expr]
    strip: Strip
    line: int
    col: int
    standalone: bool = False
    indent: str = ""


@dataclass
class Program:
    body: list[Node] = field(default_factory=list)
    chained: bool = False


@dataclass
class Block:
    call: Call
    block_params: list[str]
    program: Program | None
    inverse: Program | None
    open_strip: Strip
    close_strip: Strip
    inverse_strip: Strip
    line: int
    col: int
    open_standalone: bool = False
    close_standalone: bool = False
    else_standalone: bool = False
    offset: int = -1  # where the opening, {{else}} and closing tags start in the source
    else_offset: int = -1
    close_offset: int = -1


Node = Content | Mustache | Comment | Partial | Block


class HandlebarsError(ValueError):
    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(message)
        self.message, self.line, self.col = message, line, col
