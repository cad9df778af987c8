"""What needs GitPython: commits, tags, merge bases, status, and making commits.

Everything that asks git about history comes through :class:`History`: the build's
commit lookup (:mod:`promptops.pipeline.source`), release tags (``version``, ``bump
auto``, ``release``), the review's two ends and the files they touch, and ``init``'s
first commit. GitPython costs ~100 ms to import, so this module is imported only where
history is needed, never on serve's cold path (serve reads refs with
:mod:`promptops.git.refs`).

GitPython and gitdb report a missing or corrupt object as whatever the layer that met it
raises; :func:`git_read` turns any of them into a :class:`~promptops.errors.GitError` in
git's own words, and every GitError raised here says what to do next.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from promptops.errors import GitError, PromptopsError
from promptops.git import Repo

if TYPE_CHECKING:
    import git

T = TypeVar("T")
DAMAGED = "the repository is damaged or a partial clone; `git fsck` lists what is wrong"
IDENTITY = {  # who commits when git knows nobody (init's first commit on a fresh machine)
    "GIT_AUTHOR_NAME": "promptops init",
    "GIT_AUTHOR_EMAIL": "promptops-init@localhost",
    "GIT_COMMITTER_NAME": "promptops init",
    "GIT_COMMITTER_EMAIL": "promptops-init@localhost",
}


def git_read(what: str, read: Callable[[], T]) -> T:
    """``read()``, with any failure of git or GitPython turned into a GitError (exit 2).

    A missing or corrupt object surfaces as whatever the layer that met it raises
    (GitCommandError, gitdb's BadObject, ValueError, ...); the user needs to hear what
    could not be read and git's own words for why, not a traceback.
    """
    try:
        return read()
    except GitError:
        raise
    except Exception as exc:
        if not from_git(exc):
            raise
        raise GitError(f"cannot read {what} from git: {git_words(exc)} ({DAMAGED})") from exc


def from_git(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by GitPython or gitdb (a repository that cannot be read)."""
    if any(type(exc).__module__.startswith(m) for m in ("git.", "gitdb")):
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
    return module == "git" or module.startswith(("git.", "gitdb"))


def git_words(exc: BaseException) -> str:
    """git's own first ``fatal:``/``error:`` line for a failure, else the exception's text."""
    stderr = getattr(exc, "stderr", None)
    text = stderr if isinstance(stderr, str) else str(exc)
    for line in text.splitlines():
        for tag in ("fatal:", "error:"):
            if tag in line:
                return line.split(tag, 1)[1].strip(" '")
    first = str(exc).strip().splitlines()
    return first[0] if first else type(exc).__name__


@dataclass(frozen=True)
class Tree:
    """A folder of one commit, as the build reads it."""

    commit: str  # the full commit id
    tree: str | None  # the folder's tree id; None when the commit has no such folder
    label: str  # "REV (abbreviated id)", for messages
    at_head: bool  # the commit is the checked-out HEAD


class History:
    """One repository's history, through GitPython (opened once per command)."""

    def __init__(self, repo: git.Repo) -> None:
        self.repo = repo
        # status and diff read beside the user's own git; they must not take index.lock
        # (see promptops.git.no_optional_locks). Required locks (add, commit) still hold.
        repo.git.update_environment(GIT_OPTIONAL_LOCKS="0")
        self.top = Path(repo.working_tree_dir or repo.git_dir).resolve()

    @classmethod
    def open(cls, start: Path, why: str) -> History:
        """The repository holding ``start`` (found by :meth:`Repo.locate`); GitError
        saying ``why`` git is needed when there is none."""
        import git  # deferred: GitPython costs ~100 ms to import

        top = Repo.locate(start, why).top
        try:
            return cls(git.Repo(top))
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise GitError(f"{top} holds a .git that git cannot open ({exc}); "
                           f"{DAMAGED}") from exc

    @property
    def git(self) -> git.Git:
        """The ``git`` command of this repository (for :mod:`promptops.git.objects`)."""
        return self.repo.git

    @property
    def git_dir(self) -> str:
        return str(self.repo.git_dir)

    # ---- commits -------------------------------------------------------------------
    def commit(self, rev: str) -> str:
        """The full id of the commit ``rev`` names; GitError when it names none."""
        import git

        try:
            return self.repo.commit(rev).hexsha
        except (git.BadName, ValueError, git.GitCommandError) as exc:
            channel = self.channel_commit(rev)
            if channel is None:
                raise GitError(f"unknown revision {rev!r}") from exc
            return channel

    def channel_commit(self, rev: str) -> str | None:
        """The released commit a channel points at, for ``CHANNEL`` or ``PACKAGE/CHANNEL``
        (docs/channels.md): only asked when git itself resolves ``rev`` to nothing, so a
        branch or tag of that name wins. GitError when several packages have the channel."""
        from promptops.git.channels import CHANNELS, NAME_RE

        package, _, channel = rev.rpartition("/")
        if not NAME_RE.match(channel):
            return None
        listed = self.repo.git.for_each_ref("--format=%(refname)", CHANNELS).splitlines()
        found = [ref for ref in listed if ref.startswith(CHANNELS) and (
            ref == f"{CHANNELS}{rev}" if package else ref.rpartition("/")[2] == channel)]
        if len(found) > 1:
            names = ", ".join(ref[len(CHANNELS):] for ref in found)
            raise GitError(f"several packages have a channel {rev!r} ({names}): name one as "
                           "PACKAGE/CHANNEL")
        if not found:
            return None
        return str(self.repo.git.rev_parse("--verify", f"{found[0]}^{{commit}}"))

    def is_revision(self, rev: str) -> bool:
        try:
            self.commit(rev)
        except GitError:
            return False
        return True

    def unresolved(self, rev: str) -> str:
        """Why ``rev`` names no commit, in git's own words when the repository is damaged."""
        import git

        try:
            self.repo.git.rev_parse("--verify", "--end-of-options", f"{rev}^{{commit}}")
        except git.GitCommandError as exc:
            fatal = [ln.split("fatal:", 1)[1].strip(" '") for ln in str(exc.stderr).splitlines()
                     if "fatal:" in ln and "Needed a single revision" not in ln]
            if fatal:
                return f"cannot read revision {rev!r} in {self.top}: {fatal[0]}"
        if rev == "HEAD" and not git_read(f"the commits of {self.top}",
                                          lambda: self.repo.git.rev_list("-n1", "--all")):
            return (f"the repository at {self.top} has no commits yet: commit the package "
                    "first (or build the working tree with --worktree)")
        return f"unknown revision {rev!r} in {self.top}"

    def no_commits_yet(self) -> bool:
        """Whether HEAD has no commit because there is none yet (not because git cannot read
        the one it names: that is a GitError, exit 2, instead of "no commits yet")."""
        if self.repo.head.is_valid():
            return False
        why = self.unresolved("HEAD")
        if why.startswith("cannot read"):
            raise GitError(f"{why} ({DAMAGED})")
        return True

    def head_commit(self) -> str:
        return self.repo.head.commit.hexsha

    def tree_at(self, rev: str, prefix: str) -> Tree:
        """The commit ``rev`` names and the tree of the folder ``prefix`` in it."""
        import git

        try:
            commit = self.repo.commit(rev)
        except (git.BadName, ValueError) as exc:
            channel = self.channel_commit(rev)
            if channel is None:
                raise GitError(self.unresolved(rev)) from exc
            commit = self.repo.commit(channel)
        label = f"{rev} ({commit.hexsha[:12]})"
        # GitPython reads the commit and tree objects lazily: a missing one fails here.
        tree = git_read(f"commit {label}", lambda: commit.tree)
        sub = tree if prefix == "." else git_read(f"the tree of {label}",
                                                  lambda: _subtree(tree, prefix))
        at_head = self.repo.head.is_valid() and commit == self.repo.head.commit
        return Tree(commit.hexsha, None if sub is None else sub.hexsha, label, at_head)

    def is_ancestor(self, ancestor: str, commit: str) -> bool:
        return bool(self.repo.is_ancestor(self.repo.commit(ancestor), self.repo.commit(commit)))

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of two commits; None when they have none."""
        bases = self.repo.merge_base(a, b)
        return bases[0].hexsha if bases else None

    # ---- files ---------------------------------------------------------------------
    def files(self, commit: str | None) -> list[str]:
        """Every file of ``commit``, or of the working tree (tracked and not ignored)."""
        if commit is None:
            out = self.repo.git.ls_files("--cached", "--others", "--exclude-standard", "-z")
        else:
            out = self.repo.git.ls_tree("-r", "--name-only", "-z", commit)
        return [p for p in out.split("\0") if p]

    def changed_files(self, base: str, head: str | None) -> list[str]:
        """Files that differ from ``base`` to ``head`` (None: the working tree, untracked
        files included)."""
        if head is None:
            out = self.repo.git.diff("--name-only", "--no-renames", "-z", base)
            out += "\0" + self.repo.git.ls_files("--others", "--exclude-standard", "-z")
        else:
            out = self.repo.git.diff("--name-only", "--no-renames", "-z", base, head)
        return sorted({p for p in out.split("\0") if p})

    def status(self, *paths: str) -> list[str]:
        """``git status --porcelain`` lines for ``paths`` (untracked files included)."""
        out: str = self.repo.git.status("--porcelain", "--untracked-files=all", "--", *paths)
        return out.splitlines()

    def is_dirty(self, prefix: str) -> bool:
        """Whether the folder ``prefix`` has uncommitted changes (untracked files count).

        ``git status``, not GitPython's ``is_dirty``: that runs ``git diff``, which
        refreshes the index (taking index.lock) even under ``GIT_OPTIONAL_LOCKS=0``.
        """
        return git_read(f"the status of {self.top / prefix}", lambda: bool(self.status(prefix)))

    # ---- tags ----------------------------------------------------------------------
    def tags(self) -> Iterator[tuple[str, str]]:
        """(name, commit id) of every tag."""
        for tag in self.repo.tags:
            yield tag.name, tag.commit.hexsha

    def has_tag(self, name: str) -> bool:
        return name in self.repo.tags

    def tag_commit(self, name: str) -> str:
        return str(self.repo.tags[name].commit.hexsha)

    def tag_message(self, name: str) -> str | None:
        """The message of an annotated tag; None for a lightweight one."""
        obj = self.repo.tags[name].tag
        return None if obj is None else str(obj.message)

    def create_tag(self, name: str, message: str) -> None:
        """An annotated tag at HEAD."""
        import git

        try:
            self.repo.create_tag(name, ref=self.repo.head.commit, message=message)
        except git.GitCommandError as exc:
            raise GitError(f"git could not create tag {name}: {exc.stderr.strip()}; if git "
                           "asks who you are, set `git config user.name` and `user.email`") \
                from exc

    # ---- commits made by promptops ---------------------------------------------------
    def has_identity(self) -> bool:
        """Whether git knows who commits (environment or configuration)."""
        if all(os.environ.get(k) for k in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL")):
            return True
        reader = self.repo.config_reader()
        return bool(reader.get_value("user", "name", "")) and bool(
            reader.get_value("user", "email", ""))

    def commit_paths(self, paths: list[str], message: str) -> None:
        """Commit exactly ``paths`` (other staged work stays staged); CommitRefused with
        git's words when git refuses (a hook, an identity it needs)."""
        import git

        try:
            self.repo.git.add("-f", "--", *paths)
            with self._identity():
                self.repo.git.commit("-q", "-m", message, "--", *paths)
        except git.GitCommandError as exc:
            detail = (exc.stderr or exc.stdout or "").strip().removeprefix("stderr: ").strip(" '")
            raise CommitRefused(detail) from exc

    @contextmanager
    def _identity(self) -> Iterator[None]:
        env = {} if self.has_identity() else IDENTITY
        with self.repo.git.custom_environment(**env):
            yield


class CommitRefused(PromptopsError):
    """git refused a commit; the message is git's own (the caller says what to do)."""


def init_and_commit(root: Path, paths: list[str], message: str) -> None:
    """Make ``root`` a repository whose first commit is ``paths`` (hooks skipped: there are
    none yet in a new repository, and a global one must not block the scaffold)."""
    import git

    history = History(git.Repo.init(root))
    history.repo.git.add("-f", "--", *paths)
    with history._identity():
        history.repo.git.commit("--no-verify", "-q", "-m", message)


def _subtree(tree: git.Tree, prefix: str) -> git.Tree | None:
    try:
        return tree / prefix
    except KeyError:  # no such folder in the commit (a missing object raises otherwise)
        return None
