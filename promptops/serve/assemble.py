"""The one wiring of what `promptops serve` serves, for both transports.

:func:`assemble` turns :class:`~promptops.serve.options.ServeOptions` into a
:class:`Served`: the bundles (fixed files, the working tree, or commits followed at HEAD,
``--ref`` or a channel), the front the transport talks to (stdio: one
:class:`~promptops.serve.server.Server`; HTTP: one per visibility,
:class:`~promptops.serve.views.Views`), the follower that keeps them current, and the
:class:`Reporter` between them. The reporter is why this module exists: the follower's
news (a commit that does not build, the recovery, refs that cannot be read, a remote that
cannot be fetched) goes to stderr *and* to the clients that may hear it, on stdio and
HTTP alike, and a build failure reaches whoever counts failures as a typed
:class:`~promptops.serve.follow.BuildFailed`, never as words matched in a log line. Two
wirings of this had drifted apart (HTTP sessions missed news stdio clients got).

The caller says how a set of bundles becomes its front (``make``), so the stdio path
never imports the views, auth or metrics of the team server.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from promptops.serve.log import log

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Protocol

    from promptops.pipeline.bundle_types import Bundle
    from promptops.serve.background import BuildFailed, Gate, News
    from promptops.serve.follow import Follower
    from promptops.serve.methods import Settings
    from promptops.serve.options import ServeOptions
    from promptops.serve.watch import Worktree

    class Front(Protocol):
        """What a transport serves from: it takes new bundles and tells its clients news
        (only for the type checker: a Protocol class costs the cold start)."""

        def swap(self, bundles: Sequence[Bundle]) -> bool: ...

        def log(self, level: str, message: str) -> None: ...


if TYPE_CHECKING:
    F = TypeVar("F", bound="Front")
else:  # a string bound is a ForwardRef, compiled at once: the first compile() of a process
    F = TypeVar("F")  # sets up the parser and every AST type, ~10 M instructions (~3% of
    # the floor's whole start) on serve's cold path, for a bound only the type checker reads


class Reporter:
    """The follower's log: every line to stderr; its news also to the clients (``clients``:
    each front's ``log``) and each build failure to ``failures`` (the HTTP metrics)."""

    def __init__(self) -> None:
        self.clients: list[Callable[[str, str], None]] = []
        self.failures: list[Callable[[BuildFailed], None]] = []

    def log(self, message: str) -> None:
        log(message)

    def notify(self, news: News) -> None:
        """``news`` (already on stderr) to the clients, and counted when it is a failure."""
        for tell in self.clients:
            tell(news.level, news.message)
        if self.failures:
            from promptops.serve.background import BuildFailed  # a loaded module by now

            if isinstance(news, BuildFailed):
                for count in self.failures:
                    count(news)


class Served(Generic[F]):
    """What one transport serves (one channel of it, on HTTP): the front, the follower
    keeping it current (None for fixed bundles) and the reporter between them."""

    def __init__(self, front: F, follower: Follower | Worktree | None, reporter: Reporter,
                 channel: str | None = None) -> None:
        self.front, self.follower, self.reporter, self.channel = (front, follower, reporter,
                                                                  channel)

    def start(self, on_change: Callable[[list[Bundle]], object]) -> None:
        """Follow from now on, handing each new good set to ``on_change`` (a fixed
        ``--ref`` or bundle never changes: nothing starts)."""
        if self.follower is not None:
            self.follower.start(on_change)

    def stop(self) -> None:
        if self.follower is not None:
            self.follower.stop()


def settings(options: ServeOptions) -> Settings:
    """How requests are answered (shared by every front of one process: one signing key)."""
    from promptops.serve.methods import Settings
    from promptops.serve.signing import Signer

    return Settings(page_size=options.page_size, ttl_ms=options.ttl_ms, tools=options.tools,
                    signer=Signer.configured(options.key_file))


def assemble(options: ServeOptions, gate: Gate | None,
             make: Callable[[list[Bundle]], F], *, channel: str | None = None,
             folders: list[Path] | None = None) -> Served[F]:
    """Load or build what ``options`` serve, make the front with ``make`` and wire the
    follower's news to its clients. ``gate`` refuses commits (the entry point passes
    lint's, as `build` applies); ``channel`` is the one channel this front follows;
    ``folders`` are the package folders when they are not ``options``' (a ``--repo``
    clone's). Raises :class:`~promptops.errors.PromptopsError` when the start set
    cannot be served."""
    reporter = Reporter()
    if options.bundle:
        from promptops.pipeline.bundle import load_bundle

        return Served(make([load_bundle(path) for path in options.bundle]), None, reporter)
    dirs = folders or options.folders
    if options.http is None:
        _require_packages(dirs)
    follower: Follower | Worktree
    if options.worktree:
        from promptops.serve.watch import Worktree

        follower = Worktree(dirs, log=reporter.log, notify=reporter.notify)
    else:
        from promptops.serve.follow import Follower

        follower = Follower(dirs, ref=options.ref, log=reporter.log, gate=gate,
                            notify=reporter.notify, channel=channel)
    front = make(follower.initial())
    reporter.clients.append(front.log)  # news from now on (the start logs to stderr only)
    if options.http is not None and isinstance(follower, Follower):
        follower.warm_up()  # a team server's first new commit takes the fast path too
    return Served(front, follower, reporter, channel)


def _require_packages(paths: list[Path]) -> None:
    """A folder without promptops.yaml is a usage error naming the packages below it."""
    from promptops.errors import UsageError

    for path in paths:
        if not (path / "promptops.yaml").is_file():
            from promptops.fsutil import not_a_package_hint

            raise UsageError(f"{path} is not a package folder (no promptops.yaml)"
                             f"{not_a_package_hint(path)}; pass the package folder")
