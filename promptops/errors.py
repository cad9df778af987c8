"""The error hierarchy.

Every error a user can cause derives from :class:`PromptopsError` and carries the exit
code the CLI uses for it, so one handler (``promptops.cli_errors``) can turn any of them
into a message and an exit status; anything else is a bug (exit 3).
"""

from __future__ import annotations

from dataclasses import dataclass


class PromptopsError(Exception):
    """An expected failure: the message says what went wrong and what to do next."""

    exit_code = 1


class UsageError(PromptopsError):
    """Bad command-line input or configuration (exit 2)."""

    exit_code = 2


class GitError(PromptopsError):
    """A revision or repository that cannot be read."""

    exit_code = 2


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


@dataclass(frozen=True, order=True)
class Problem:
    """One finding in a file, positioned 1-based so editors can jump to it."""

    path: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.message}"


class PackageError(PromptopsError):
    """A package that does not load or validate; carries every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class BundleError(PromptopsError):
    """A bundle file that is unreadable, tampered with or of an unknown format."""


class RenderError(PromptopsError):
    """A prompt request that cannot be answered.

    ``code`` is the JSON-RPC error code MCP asks for: -32602 for a bad request
    (unknown prompt, argument validation), -32603 for a template that fails.
    """

    def __init__(self, code: int, message: str, *, argument: str | None = None) -> None:
        self.code = code
        self.argument = argument
        super().__init__(message)


INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
