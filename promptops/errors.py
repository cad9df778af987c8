"""The error hierarchy and the exit codes.

Every error a user can cause derives from :class:`PromptopsError` and carries the
:class:`ExitCode` the CLI uses for it, so one handler (``promptops.error_handler``) can
turn any of them into a message and an exit status; anything else is a bug (exit 3).
Nothing here knows a protocol: a render failure says whose fault it is
(:class:`ArgumentError`, :class:`TemplateError`), and each front end (serve's JSON-RPC
replies, the CLI's messages) words it its own way.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptops.problem import Problem as Problem


class ExitCode(IntEnum):
    """What a command's exit status means (docs/cli.md), pre-commit's and httpie's shape."""

    OK = 0
    FAILED = 1  # an expected failure: findings, failing tests, a refused release
    USAGE = 2  # bad command-line input, configuration or repository
    BUG = 3  # an internal error: please report it
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


class PromptopsError(Exception):
    """An expected failure: the message says what went wrong and what to do next."""

    exit_code = ExitCode.FAILED


class UsageError(PromptopsError):
    """Bad command-line input or configuration (exit 2)."""

    exit_code = ExitCode.USAGE


class GitError(PromptopsError):
    """A revision or repository that cannot be read; the message says what to do next."""

    exit_code = ExitCode.USAGE


class PackageAbsent(GitError):
    """The package folder is not in the revision asked for (the message says which).

    A reader that treats an absent package as news rather than a failure (a review of a
    package added or removed between two commits) catches this type, never the words."""


class WriteError(PromptopsError, OSError):
    """A file that cannot be written: no space left, a read-only file system, no
    permission. The environment's fault, not a bug, so exit 1 with the path and the
    reason; also an OSError, so callers that tolerate a failed write (caches) still do.
    """

    def __init__(self, path: object, reason: str, errno: int = 0) -> None:
        OSError.__init__(self, errno, reason, str(path))
        self.path, self.reason = str(path), reason

    def __str__(self) -> str:
        return f"cannot write {self.path}: {self.reason}"


class UnsafeWrite(WriteError):
    """A write refused because it would go through a symlink inside the package.

    ``link`` is the package-relative path of the symlink (the file or a folder on the way).
    """

    def __init__(self, path: object, link: str, errno: int = 0) -> None:
        super().__init__(path, f"{link} is a symlink; promptops never writes through a "
                         "symlink inside the package (it could point anywhere)", errno)
        self.link = link


class PackageError(PromptopsError):
    """A package that does not load or validate; carries every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class BundleError(PromptopsError):
    """A bundle file that is unreadable, tampered with or of an unknown format."""


class RenderError(PromptopsError):
    """A prompt request that cannot be answered: the common base of the two below."""

    def __init__(self, message: str, *, argument: str | None = None) -> None:
        self.argument = argument
        super().__init__(message)


class ArgumentError(RenderError):
    """The request is wrong: an unknown prompt, or an argument its rules refuse.

    ``argument`` names the argument at fault, when one is.
    """


class TemplateError(RenderError):
    """The package is wrong: a template failed, or the request ran over its bounds."""


def closest(word: str, names: list[str]) -> str | None:
    """The name of ``names`` closest to ``word`` (difflib's ratio, cut-off 0.6), or None.

    Only names whose length allows a ratio of 0.6 are handed to difflib: it indexes
    ``word`` first, which for a 5 MB argument name from a client took 1.4 s of CPU; a
    length the ratio rules out is ruled out before that (the same answers, bounded cost).
    """
    import difflib

    size = len(word)
    fits = [n for n in names if n != word and 2 * min(size, len(n)) >= 0.6 * (size + len(n))]
    close = difflib.get_close_matches(word, fits, n=1) if fits else []
    return close[0] if close else None


def did_you_mean(word: str, choices: object) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices`` to ``word``, else ``""``.

    One home for the hint, so a misspelt prompt name, argument, template or file reads
    the same from every command (difflib's ratio, cut-off 0.6, as git's own suggestions).
    """
    names = [str(c) for c in choices] if isinstance(choices, (list, tuple, set, frozenset,
                                                              dict)) else []
    close = closest(word, names)
    return f"; did you mean {close!r}?" if close else ""


def __getattr__(name: str) -> object:
    """``Problem`` lives in :mod:`promptops.problem` and is imported on first use: it is a
    dataclass, and importing :mod:`dataclasses` (with inspect, ast, dis and tokenize) cost
    every `serve` start a twentieth of its instructions, which never reports a Problem."""
    if name == "Problem":
        from promptops.problem import Problem

        globals()["Problem"] = Problem
        return Problem
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
