"""A template's layout as written stands for its layout after the standalone rewrite.

A review compiles every prompt text it renders (:mod:`promptops.review.skeleton`): in the
``standalone`` whitespace mode that is the rewrite of :func:`promptops.sandbox.whitespace.
standalone` (0.06 ms a ``wide`` text: its own tokenizer, lines, pieces), then
:func:`~promptops.pipeline.textshape.text_shape` of the rewritten text (0.03 ms), then the
layout's code filled in. Of 5,000 prompt texts of one layout, each was rewritten and
scanned although the rewrite does the same thing to each: the rule (a line holding only
block tags and blanks disappears) reads the tags, which the layout holds as written, and
whether the text around them on their lines is blank, not what the text says.

So :func:`layout` keys a source as written: :func:`literal_shape`'s key of the source
itself (:func:`text_shape`'s with the literals inside tags masked; it vouches that the
cut is Jinja's lexer's, with no whitespace modifier), every tag body's
brackets closed (so the rewrite's own tokenizer, :func:`promptops.sandbox.jinja_source.
tokenize`, ends each tag where the scan does: it reads a closer only outside brackets),
and for each text its :func:`_signature`: the
first and the last of its lines, as written when blank, else only "not blank", and
whether it has one line break or more. From the key alone, :func:`recipe` tells which
of those first and last lines the rewrite turns into a comment (a line is standalone
when its texts are blank and it holds a block tag or a comment and no ``{{ }}``: all of
it in the key); the texts of the rewritten source are then each text with those lines
cut off (the lines between the first and the last hold no tag: never rewritten), and
its key is the key's tags, the new comments (blank lines as written: in the key) and
the lines where its texts start (in the key). So two sources of one :func:`layout` key
are rewritten to one layout, whose texts :func:`rewritten` makes without rewriting.

A raw block (session 22) is the same for the rule: its tags are block tags and its text
is text (never scanned for tags, by the scan or by the rewrite's tokenizer, which end it
at the same end tag); the rewrite puts a standalone line's blanks inside the raw tag
next to them instead of into a comment (a comment would be raw text), and those blanks
are the text's first or last line, blank and so in its signature as written. Only a raw
tag with a ``-`` or ``+`` is declined (the scan reads its stripping; the rule's lines
would read the modifier). ``real``'s 276 raw texts (57 KB each) were rewritten whole.

:class:`~promptops.review.skeleton.ShapeCache` keeps a key only after the first source
of it was rewritten and scanned as before and gave the texts :func:`rewritten` gives,
in order; ``tests/review/test_standalone_layout.py`` checks random layouts of blank and
written lines against the rewrite itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from jinja2 import Environment
from jinja2.ext import Extension

from promptops.pipeline.textshape import Scan, kept_shape, texts
from promptops.sandbox.whitespace import StandaloneWhitespace

_BLANK = " \t"
_STRING = ("'", '"')

# per value of the layout: None for a template name; for a text, whether its first line
# and its last line are cut off (made comments by the rewrite)
Recipe = tuple[tuple[bool, bool] | None, ...]
Key = tuple[object, ...]
# the longest text whose signature layout's caller keeps: short texts between tags recur
# from prompt to prompt (`: `, a line break and an indent), long ones rarely
_SEEN = 120


def rewrites(env: Environment) -> bool:
    """Whether ``env``'s preprocessing is the standalone rewrite and nothing else (its
    other extensions, the nesting guard, leave the source as it is)."""
    kinds = [type(ext) for ext in env.iter_extensions()]
    return (kinds.count(StandaloneWhitespace) == 1
            and type(env).preprocess is Environment.preprocess
            and all(k is StandaloneWhitespace or k.preprocess is Extension.preprocess
                    for k in kinds))


def _closed(body: str) -> bool:
    """Whether every bracket a tag's body opens outside its strings is closed by its
    end, as :func:`promptops.sandbox.jinja_source._tag_end` counts them (any opener up,
    any closer down while something is open); text_shape's bodies close their strings."""
    depth = 0
    quote = ""
    for ch in body:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in _STRING:
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]" and depth:
            depth -= 1
    return depth == 0


def _signature(text: str) -> tuple[object, ...]:
    """What the rewrite reads of a text: its first line (line break included) and its
    last line as written when blank (None when not), and whether the two are one line
    (no line break) or two lines with nothing between (one line break)."""
    first = text.find("\n")
    if first < 0:
        return (text if not text.strip(_BLANK) else None,)
    last = text.rfind("\n")
    head, tail = text[:first + 1], text[last + 1:]
    return (head if not head[:-1].strip(_BLANK) else None,
            tail if not tail.strip(_BLANK) else None, first == last)


def layout(env: Environment, source: str, seen: dict[str, tuple[object, ...]] | None = None,
           scans: Mapping[str, Scan | None] | None = None
           ) -> tuple[Key, list[str], list[object]] | None:
    """``source``'s key as written (module docstring) and its layout's values (texts
    and template names, in order) and the string and integer literals inside its tags;
    None where the scan cannot vouch for the cut. The key stands for the rewrite only
    where :func:`closed` holds too.

    The literals are masked in the key (:func:`~promptops.pipeline.textshape.
    literal_shape`): the rewrite reads a tag's literal only to skip it whole (a string)
    or as a run of characters that are no bracket (a number), and a tag stays on the
    line where it starts, so sources that differ only in those values are rewritten
    alike and keep them, in order (5,000 prompts of ``{% set label = "case " ~ 7 %}``
    are one layout, not 5,000). A raw block's tags with a modifier make no layout (the
    module docstring). ``scans``: the
    build's scans of sources as written, where this one may take the scan
    (:func:`~promptops.pipeline.textshape.kept_shape`)."""
    fast = kept_shape(env, source, {} if scans is None else scans)
    if fast is None:
        return None
    key, values, literals = fast
    if "raw" in source and not all(_plain_raw(e) for e in key):
        return None
    if seen is None:
        seen = {}
    sigs: list[tuple[object, ...]] = []
    for _, text in texts(key, values):
        sig = seen.get(text) if len(text) <= _SEEN else None
        if sig is None:
            sig = _signature(text)
            if len(text) <= _SEEN:
                seen[text] = sig
        sigs.append(sig)
    return (key, tuple(sigs)), values, literals


def _plain_raw(entry: object) -> bool:
    """Whether a key's entry is no raw block's tag, or one without a modifier (the scan
    keeps the tag as written, with the blanks a ``-%}`` took after it)."""
    if type(entry) is not tuple or entry[0] not in ("raw", "endraw"):
        return True
    tag = entry[2]
    assert isinstance(tag, str)
    return tag[2] not in "-+" and "-%}" not in tag and "+%}" not in tag


def closed(key: Key) -> bool:
    """Whether every ``{{ }}`` and ``{% %}`` body of a :func:`layout` key closes the
    brackets it opens (the key holds the bodies as written, each literal masked: a
    string, which the rewrite skips whole, and a number hold no bracket it counts;
    checked once per key, when it is first kept)."""
    tags = key[0]
    assert isinstance(tags, tuple)
    return all(isinstance(e, int) or len(e) == 5 or e[0] == "#" or _closed(e[2])
               for e in tags)


def recipe(key: Key) -> Recipe:
    """For each value of a :func:`layout` key, which ends of its text the rewrite makes
    comments: the standalone rule of :mod:`promptops.sandbox.whitespace` on lines made of
    the key's tags and the texts' signatures. A line is [blank so far, block tags and
    comments on it, a ``{{ }}`` on it]; a tag written over several lines stays on the
    line where it starts (the rule's lines break only in text)."""
    tags, sigs = key
    assert isinstance(tags, tuple) and isinstance(sigs, tuple)
    line: list[int] = [1, 0, 0]
    ends: list[tuple[list[int], list[int]] | None] = []
    sig = iter(sigs)
    for entry in tags:
        if isinstance(entry, int):  # a text: its first line is on the current line
            s = next(sig)
            assert isinstance(s, tuple)
            if s[0] is None:
                line[0] = 0
            if len(s) == 1:  # no line break: all of it on the current line
                ends.append((line, line))
                continue
            last = [int(s[1] is not None), 0, 0]  # its last line starts a line
            ends.append((line, last))
            line = last  # (the lines between hold no tag: never standalone)
        elif len(entry) == 5:  # a block naming a template
            line[1] += 1
            ends.append(None)
        elif entry[0] == "{":
            line[2] = 1
        else:  # a block tag or a comment
            line[1] += 1
    return tuple(None if e is None else (_standalone(e[0]), _standalone(e[1])) for e in ends)


def _standalone(line: list[int]) -> bool:
    return bool(line[0] and line[1] and not line[2])


def rewritten(values: list[str], steps: Recipe) -> list[str]:
    """The values of the rewritten source's layout: each text without the ends the
    rewrite made comments (none left: no text), each template name as it is."""
    out: list[str] = []
    for value, step in zip(values, steps, strict=True):
        if step is None:
            out.append(value)
            continue
        head, tail = step
        if not head and not tail:
            out.append(value)
            continue
        first = value.find("\n")
        if first < 0:  # one line: cut whole, as both its ends are that line
            continue
        start = first + 1 if head else 0
        end = value.rfind("\n") + 1 if tail else len(value)
        if start < end:
            out.append(value[start:end])
    return out
