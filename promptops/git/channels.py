"""Release channels as git refs: where a channel points, and the log of its moves.

A channel (``production``, ``staging``) of a package is two refs (docs/channels.md):

* ``refs/promptops/channels/<package>/<channel>`` points at the annotated release tag
  object ``<package>@<version>`` (so the ref alone names the release and, in the tag's
  message, its recorded bundle digest; ``<ref>^{commit}`` is the released commit);
* ``refs/promptops/channel-log/<package>/<channel>`` is a chain of commits, one per move,
  each the child of the one before. A log commit has the empty tree; its author is who
  moved the channel and when, its message says why and ends with ``Promptops-*`` trailers
  (action, from, to, commit, digest). Being commits on a ref, the log is pushed, fetched
  and cloned like any history, and a reviewer reads it with ``git log``.

Both refs move together in one transaction: ``git update-ref --stdin`` with the old
values for a local move, ``git push --atomic --force-with-lease`` for a remote one. When
two people move a channel at once, both build on the same old log tip; the second
transaction finds the tip moved and changes nothing (:class:`ChannelMoved`).

This module knows git only: what a release or a policy is lives in
:mod:`promptops.versioning.channels`.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from promptops.errors import GitError, PromptopsError
from promptops.git import Repo, executable

CHANNELS = "refs/promptops/channels/"
LOG = "refs/promptops/channel-log/"
# Every channel and log ref: what `git fetch REMOTE 'refs/promptops/*:refs/promptops/*'` brings.
REFSPEC = "+refs/promptops/channels/*:refs/promptops/channels/*"
LOG_REFSPEC = "+refs/promptops/channel-log/*:refs/promptops/channel-log/*"
NAME_RE = re.compile(r"^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$")
TRAILER = "Promptops-"
MAX_WHY_CHARS = 4000
GIT_TIMEOUT_S = 120.0
_ZERO = "0" * 40


class ChannelMoved(PromptopsError):
    """The channel moved between reading it and moving it: nothing was changed."""


@dataclass(frozen=True)
class Move:
    """One entry of a channel's log (the commit ``id`` on the log ref)."""

    id: str
    action: str  # "promote" or "rollback"
    package: str
    channel: str
    source: str | None  # the release tag the channel left, None for its first move
    target: str  # the release tag the channel now names
    commit: str  # the released commit
    digest: str  # the bundle digest the release records
    tag_object: str  # the release tag's object id (what the channel ref then held)
    author: str  # "Name <email>": who moved it
    when: int  # seconds since the epoch (the author date)
    why: str

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "action": self.action, "package": self.package,
                "channel": self.channel, "from": self.source, "to": self.target,
                "commit": self.commit, "digest": self.digest, "object": self.tag_object,
                "author": self.author,
                "when": self.when, "why": self.why}


@dataclass(frozen=True)
class State:
    """Where a channel is: its pointer (a tag object id) and its log tip, either None."""

    package: str
    channel: str
    pointer: str | None
    log: str | None


def channel_ref(package: str, channel: str) -> str:
    return f"{CHANNELS}{package}/{channel}"


def log_ref(package: str, channel: str) -> str:
    return f"{LOG}{package}/{channel}"


def check_name(channel: str) -> str:
    """``channel`` when it is a valid channel name; a GitError saying what is allowed."""
    if not NAME_RE.match(channel) or ".." in channel:
        raise GitError(f"{channel!r} is not a channel name: lower-case letters, digits, '.', "
                       "'_' and '-', starting and ending with a letter or digit (e.g. "
                       "production, staging, canary)")
    return channel


class Channels:
    """The channel refs of one repository, read and moved with the ``git`` command."""

    def __init__(self, top: Path) -> None:
        self.top = top

    @classmethod
    def open(cls, start: Path) -> Channels:
        return cls(Repo.locate(start, "channels are git refs: run `git init` and commit "
                               "the package first").top)

    def git(self, *args: str, stdin: str | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        run_env = {k: v for k, v in os.environ.items()
                   if not k.startswith("GIT_") or k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_",
                                                                "GIT_SSH", "GIT_ASKPASS",
                                                                "GIT_TERMINAL_PROMPT"))}
        run_env.update(env or {})
        try:
            done = subprocess.run([executable(), "-C", str(self.top), *args], input=stdin,
                                  capture_output=True, text=True, env=run_env,
                                  timeout=GIT_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(f"git {args[0]}: {exc}") from None
        if check and done.returncode != 0:
            raise GitError(f"git {args[0]} failed: {done.stderr.strip()}")
        return done

    # ---- reading ---------------------------------------------------------------------
    def resolve(self, ref: str) -> str | None:
        out = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", ref, check=False)
        return out.stdout.strip() or None if out.returncode == 0 else None

    def state(self, package: str, channel: str) -> State:
        return State(package, channel, self.resolve(channel_ref(package, channel)),
                     self.resolve(log_ref(package, channel)))

    def all(self) -> list[State]:
        """Every channel of every package, sorted by package then channel."""
        out = self.git("for-each-ref", "--format=%(objectname) %(refname)", CHANNELS,
                       LOG).stdout
        found: dict[tuple[str, str], dict[str, str]] = {}
        for line in out.splitlines():
            sha, _, ref = line.partition(" ")
            kind = "pointer" if ref.startswith(CHANNELS) else "log"
            rest = ref[len(CHANNELS if kind == "pointer" else LOG):]
            package, sep, channel = rest.rpartition("/")
            if sep:
                found.setdefault((package, channel), {})[kind] = sha
        return [State(p, c, v.get("pointer"), v.get("log")) for (p, c), v in sorted(found.items())]

    def tag_name(self, obj: str) -> str | None:
        """The name an annotated tag object carries (``acme@1.4.0``), None for other objects."""
        out = self.git("cat-file", "-p", obj, check=False)
        if out.returncode != 0:
            return None
        for line in out.stdout.splitlines():
            if not line:
                break
            if line.startswith("tag "):
                return line[4:]
        return None

    def moves(self, tip: str | None, limit: int | None = None) -> list[Move]:
        """The log from ``tip`` back to its first move, newest first."""
        if tip is None:
            return []
        fmt = "%H%x00%an <%ae>%x00%at%x00%B%x1e"
        args = ["log", "--first-parent", f"--format={fmt}"]
        if limit is not None:
            args.append(f"-n{limit}")
        out = self.git(*args, tip, "--").stdout
        return [m for m in (_parse(rec) for rec in out.split("\x1e")) if m is not None]

    # ---- moving ----------------------------------------------------------------------
    def record(self, parent: str | None, subject: str, why: str,
               trailers: Sequence[tuple[str, str]]) -> str:
        """A new log commit (not on any ref yet) whose parent is ``parent``."""
        empty = self.git("hash-object", "-t", "tree", "-w", "--stdin", stdin="").stdout.strip()
        body = why.strip() or "(no reason given)"
        message = f"{subject}\n\n{body}\n\n" + "".join(f"{TRAILER}{k}: {v}\n" for k, v in trailers)
        args = ["commit-tree", empty, *(["-p", parent] if parent else []), "-F", "-"]
        done = self.git(*args, stdin=message, check=False)
        if done.returncode != 0:
            raise GitError("git cannot record the move: " + done.stderr.strip() + "; a move "
                           "records who made it: set `git config user.name` and `user.email`")
        return done.stdout.strip()

    def swap(self, updates: Iterable[tuple[str, str, str | None]]) -> None:
        """Move every ``(ref, new, old)`` at once if each ref is still at ``old`` (None: absent),
        else none of them (:class:`ChannelMoved`)."""
        lines = ["start"]
        lines += [f"update {ref} {new} {old or _ZERO}" for ref, new, old in updates]
        lines += ["prepare", "commit"]
        done = self.git("update-ref", "--stdin", stdin="\n".join(lines) + "\n", check=False)
        if done.returncode != 0:
            raise ChannelMoved(done.stderr.strip())

    def set(self, updates: Iterable[tuple[str, str]]) -> None:
        """Make each ref equal ``new`` (after a push won: the remote is the truth)."""
        lines = ["start", *(f"update {ref} {new}" for ref, new in updates), "prepare", "commit"]
        self.git("update-ref", "--stdin", stdin="\n".join(lines) + "\n")

    # ---- remotes ---------------------------------------------------------------------
    def remote_state(self, remote: str, package: str, channels: Sequence[str]) -> list[State]:
        """The channels' refs on ``remote`` (objects fetched, local refs untouched)."""
        refs = [r for c in channels for r in (channel_ref(package, c), log_ref(package, c))]
        listed = self.git("ls-remote", "--", remote, *refs).stdout
        values = {ref: sha for sha, _, ref in (ln.partition("\t") for ln in listed.splitlines())}
        wanted = [ref for ref in refs if ref in values]
        if wanted:  # bring their objects (into FETCH_HEAD only) so logs and tags can be read
            self.git("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", remote,
                     *wanted)
        return [State(package, c, values.get(channel_ref(package, c)),
                      values.get(log_ref(package, c))) for c in channels]

    def push(self, remote: str, updates: Sequence[tuple[str, str, str | None]]) -> None:
        """Push every ``(ref, new, old)`` in one atomic push that holds only if the remote
        still has ``old``; :class:`ChannelMoved` when it does not (nothing changed there)."""
        leases = [f"--force-with-lease={ref}:{old or ''}" for ref, _, old in updates]
        specs = [f"{new}:{ref}" for ref, new, _ in updates]
        done = self.git("push", "--atomic", "--porcelain", *leases, "--", remote,
                        *specs, check=False, env={"GIT_TERMINAL_PROMPT": "0"})
        if done.returncode == 0:
            return
        text = (done.stdout + "\n" + done.stderr).strip()
        if any(w in text for w in ("stale info", "rejected", "failed to update", "cannot lock",
                                   "atomic push failed", "but expected", "fetch first")):
            raise ChannelMoved(text)
        raise GitError(f"git push to {remote} failed: {text}")

    def push_all(self, remote: str) -> str:
        """Publish every local channel move made without ``--push``: one atomic push whose
        log refs must fast-forward, so a remote log that moved on meanwhile refuses all of
        it (:class:`ChannelMoved`) instead of losing the remote's moves."""
        done = self.git("push", "--atomic", "--porcelain", "--", remote,
                        "refs/promptops/channels/*:refs/promptops/channels/*",
                        "refs/promptops/channel-log/*:refs/promptops/channel-log/*",
                        check=False, env={"GIT_TERMINAL_PROMPT": "0"})
        text = (done.stdout + "\n" + done.stderr).strip()
        if done.returncode == 0:
            return text
        if "rejected" in text or "atomic push failed" in text:
            raise ChannelMoved(f"{remote} has channel moves this repository lacks; nothing was "
                               f"pushed. Fetch them (`promptops channels fetch {remote}` "
                               f"replaces the local channels with the remote's), promote "
                               f"again, and push.\n(git: {text})")
        raise GitError(f"git push to {remote} failed: {text}")

    def fetch_all(self, remote: str) -> None:
        """Every channel and its log from ``remote`` (the remote's refs replace ours)."""
        self.git("fetch", "--quiet", "--no-tags", "--", remote, REFSPEC, LOG_REFSPEC)


def _parse(record: str) -> Move | None:
    record = record.strip("\n")
    if not record:
        return None
    sha, author, when, message = record.split("\x00", 3)
    paragraphs = message.strip().split("\n\n")
    trailers: dict[str, str] = {}
    for line in paragraphs[-1].splitlines() if len(paragraphs) > 1 else []:
        key, sep, value = line.partition(": ")
        if sep and key.startswith(TRAILER):
            trailers[key[len(TRAILER):].lower()] = value.strip()
    if "to" not in trailers:
        return None  # not a move we wrote: skipped rather than misread
    why = "\n\n".join(paragraphs[1:-1]).strip()
    source = trailers.get("from")
    return Move(sha, trailers.get("action", "promote"), trailers.get("package", ""),
                trailers.get("channel", ""), None if source in (None, "none") else source,
                trailers["to"], trailers.get("commit", ""), trailers.get("digest", ""),
                trailers.get("object", ""), author, int(when), why)


def clean_why(text: str) -> str:
    """A reason as recorded: printable, at most MAX_WHY_CHARS, never a trailer of ours."""
    kept = "".join(ch for ch in text if ch == "\n" or ch == "\t" or ch.isprintable())
    lines = [ln for ln in kept.splitlines() if not ln.strip().startswith(TRAILER)]
    out = "\n".join(lines).strip()
    if len(out) > MAX_WHY_CHARS:
        raise GitError(f"the reason (-m) is {len(out)} characters; at most {MAX_WHY_CHARS}")
    return out
