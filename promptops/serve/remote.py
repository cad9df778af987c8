"""Following a remote repository: a cached clone, fetched on an interval and on a webhook.

``--repo URL[@BRANCH]`` clones the branch once into the user cache (``--no-checkout``: no
working tree, only git objects and refs, which is all a build reads), then keeps its local
branch equal to the remote's: every ``--poll`` interval (doubling up to 10 minutes while
fetches fail) or at once when a verified webhook arrives, ``git fetch`` and ``git
update-ref``; a fetch that fails is logged and told to the clients as a ``warning`` (what
they are served may be stale). Nothing else is new: the clone is an ordinary repository
whose HEAD moves, so the same :class:`~promptops.serve.follow.Follower` that follows a
local HEAD sees the ref change and builds the new commit through the build cache and the
gate; a commit that does not build is logged and skipped, the last good set stays, and a
commit that builds is swapped in and announced to every listen stream and session.

Credentials for private repositories come from git itself (the environment, e.g.
``GIT_ASKPASS``, or a credential helper), or from ``https://user:password@host/...``: such
a URL's credentials never reach the disk. The clone's ``origin`` is the URL without them,
and each git command gets them as an ``Authorization: Basic`` header scoped to that URL
through its environment (``GIT_CONFIG_COUNT``: ``http.<url>.extraHeader``), which git
neither stores nor prints; a cached clone from an earlier version that still names them is
cleaned on start. The cache folders are 0700. The credentials are masked in everything we
log, git's own messages included.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit, urlunsplit

from promptops.errors import GitError

if TYPE_CHECKING:
    from promptops.serve.background import Notify

MAX_BACKOFF_S = 600.0
GIT_TIMEOUT_S = 300.0
_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")


def redact(text: str) -> str:
    """``text`` with any URL credentials masked."""
    return _CREDENTIALS.sub("***@", text)


def split_spec(spec: str) -> tuple[str, str | None]:
    """``URL[@BRANCH]``: the branch is after the last ``@`` that follows the path."""
    head, sep, tail = spec.rpartition("@")
    if sep and tail and "/" not in tail and ":" not in tail and (
            "://" not in spec or head.count("/") >= 3):
        return head, tail
    return spec, None


def split_credentials(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without its ``user:password@``, and the environment that gives git those
    credentials for that URL only (empty when it has none, or is not http(s))."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, {}
    if parts.scheme not in ("http", "https") or "@" not in parts.netloc:
        return url, {}
    userinfo, _, host = parts.netloc.rpartition("@")
    clean = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    user, _, password = userinfo.partition(":")
    basic = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
    return clean, {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"http.{clean}.extraHeader",
                   "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}"}


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "promptops" / "remotes"


class Remote:
    """One followed remote branch, cloned under the cache, fetched in a thread."""

    def __init__(self, spec: str, *, poll_s: float, log: Callable[[str], None],
                 root: Path | None = None, channels: bool = False,
                 notify: Notify | None = None) -> None:
        url, self.branch = split_spec(spec)
        self.url, self._auth_env = split_credentials(url)
        # serve --channel: every fetch brings the channel refs too (docs/channels.md)
        self.channels = channels
        self.poll_s = max(0.05, poll_s)
        self._log = log
        self._notify = notify  # a failed fetch is news for the clients too (stale prompts)
        self.root = root or cache_root()
        key = hashlib.sha256(f"{self.url}@{self.branch}".encode()).hexdigest()[:16]
        self.directory = self.root / key
        # where an earlier version kept this clone (keyed with the credentials in the URL)
        legacy = hashlib.sha256(f"{url}@{self.branch}".encode()).hexdigest()[:16]
        self._legacy = self.root / legacy if legacy != key else None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _git(self, *args: str, cwd: Path | None = None) -> str:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **self._auth_env}
        try:
            done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True,
                                  text=True, timeout=GIT_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(redact(f"git {args[0]}: {exc}")) from None
        if done.returncode != 0:
            raise GitError(redact(f"git {args[0]} {self.url}: {done.stderr.strip()}"))
        return done.stdout

    def clone(self) -> None:
        """Clone (or reuse the cached clone), then fetch once so we start current."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)  # clones of private repositories: the user's only
        if self._legacy is not None and self._legacy.exists():
            shutil.rmtree(self._legacy, ignore_errors=True)  # its .git/config names them
        if not (self.directory / ".git").is_dir():
            tmp = self.directory.with_name(self.directory.name + f".tmp{os.getpid()}")
            branch = ["--branch", self.branch] if self.branch else []
            self._git("clone", "--quiet", "--no-checkout", "--single-branch", *branch,
                      "--", self.url, str(tmp))
            os.chmod(tmp, 0o700)
            os.replace(tmp, self.directory)  # whole or not at all
        else:
            os.chmod(self.directory, 0o700)
            if self._git("config", "--get", "remote.origin.url",
                         cwd=self.directory).strip() != self.url:
                self._git("config", "remote.origin.url", self.url, cwd=self.directory)
        if self.branch is None:
            head = self._git("symbolic-ref", "--short", "HEAD", cwd=self.directory).strip()
            self.branch = head
        self.fetch()
        self._log(redact(f"following {self.url}@{self.branch} (clone in {self.directory})"))

    def fetch(self) -> None:
        """Bring the local branch to the remote's (under a lock: replicas may share a cache)."""
        import fcntl  # POSIX; the team server runs on Linux and macOS

        with (self.directory / ".git" / "promptops-fetch.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._fetch()

    def _fetch(self) -> None:
        b = self.branch
        assert b is not None, "clone() names the branch"
        extra = ["+refs/promptops/channels/*:refs/promptops/channels/*"] if self.channels else []
        self._git("fetch", "--quiet", "origin", f"+refs/heads/{b}:refs/remotes/origin/{b}",
                  *extra, cwd=self.directory)
        new = self._git("rev-parse", f"refs/remotes/origin/{b}", cwd=self.directory).strip()
        old = self._git("rev-parse", "--verify", "-q", f"refs/heads/{b}^{{commit}}",
                        cwd=self.directory).strip() if self._has_branch(b) else ""
        if new != old:
            self._git("update-ref", f"refs/heads/{b}", new, cwd=self.directory)
            self._git("symbolic-ref", "HEAD", f"refs/heads/{b}", cwd=self.directory)

    def _has_branch(self, b: str) -> bool:
        try:
            self._git("rev-parse", "--verify", "-q", f"refs/heads/{b}", cwd=self.directory)
        except GitError:
            return False
        return True

    def wake(self) -> None:
        """Fetch now (a webhook said the remote moved)."""
        self._wake.set()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="promptops-fetch",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._thread = None

    def _run(self) -> None:
        import signal

        if hasattr(signal, "pthread_sigmask"):  # signals are the main thread's
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        delay = self.poll_s
        while not self._stop.is_set():
            self._wake.wait(delay)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.fetch()
                delay = self.poll_s
            except GitError as exc:
                delay = min(MAX_BACKOFF_S, delay * 2)
                message = f"fetch failed, next try in {delay:g} s: {exc}"
                self._log(message)
                if self._notify is not None:
                    from promptops.serve.background import News

                    self._notify(News("warning", message))


def verify_webhook(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """A GitHub (X-Hub-Signature-256 HMAC over the raw body) or GitLab (X-Gitlab-Token)
    delivery signed with ``secret``; anything else is refused."""
    signature = headers.get("x-hub-signature-256")
    if signature is not None:
        want = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(signature.encode(), want.encode())
    token = headers.get("x-gitlab-token")
    if token is not None:
        return hmac.compare_digest(token.encode(), secret.encode())
    return False
