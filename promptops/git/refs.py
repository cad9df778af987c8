"""Reading where HEAD points with the standard library only (was serve/gitrefs.py).

``promptops serve`` must answer ``initialize`` quickly and notice a checkout within
200 ms. Importing GitPython costs ~100 ms and spawning ``git`` every 50 ms would be
wasteful, so the few files that say which commit is checked out (``HEAD``, the loose
ref it names, ``packed-refs``) are read here directly. Only a question that needs
git objects (the tree id of a folder at a commit) spawns one ``git`` process, and only
when HEAD actually moved.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from promptops.errors import GitError
from promptops.git import Repo, executable

__all__ = ["Head", "Repo", "Watch", "busy", "channel_refs", "locate", "read_head", "ref_watched",
           "rev_parse", "show", "signature", "stat", "symbolic_ref", "tree_of",
           "trees_of", "watched"]

_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_BUSY = ("rebase-merge", "rebase-apply")  # a rebase moves a detached HEAD step by step
Stat = tuple[int, int, int] | None


class Head:
    """Where HEAD points. A plain class (see :class:`~promptops.git.Repo`): serve reads
    HEAD on its cold path, where a dataclass costs the import of :mod:`dataclasses`."""

    __slots__ = ("commit", "ref")

    commit: str | None  # None for a branch without commits yet
    ref: str | None  # "refs/heads/main", or None when detached

    def __init__(self, commit: str | None, ref: str | None) -> None:
        object.__setattr__(self, "commit", commit)
        object.__setattr__(self, "ref", ref)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a Head is frozen")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Head):
            return NotImplemented
        return (self.commit, self.ref) == (other.commit, other.ref)

    def __hash__(self) -> int:
        return hash((self.commit, self.ref))

    def __reduce__(self) -> tuple[type[Head], tuple[str | None, str | None]]:
        return (Head, (self.commit, self.ref))

    def __repr__(self) -> str:
        return f"Head(commit={self.commit!r}, ref={self.ref!r})"


def locate(package_dir: Path) -> tuple[Repo, str]:
    """The repository holding ``package_dir`` and the package's path inside it ("." at the top)."""
    repo = Repo.locate(package_dir, "`promptops serve` follows git (commit the package, or "
                       "serve a built bundle with --bundle)")
    return repo, repo.prefix


def _reftable(repo: Repo) -> bool:
    return (repo.common_dir / "reftable").is_dir()


def read_head(repo: Repo) -> Head:
    """The commit checked out, following symbolic refs through loose files and packed-refs."""
    if _reftable(repo):  # binary ref storage: let git read it (only when HEAD moved)
        return Head(commit=rev_parse(repo, "HEAD"), ref=symbolic_ref(repo))
    text = _read(repo.git_dir / "HEAD")
    ref: str | None = None
    for _ in range(5):  # HEAD -> refs/heads/x, and rarely one more symbolic hop
        if text is None or not text.startswith("ref:"):
            break
        ref = text[4:].strip()
        text = _lookup_ref(repo, ref)
    if text is not None and _SHA.match(text):
        return Head(commit=text, ref=ref)
    if text is None and ref is not None:
        return Head(commit=None, ref=ref)
    raise GitError(f"{repo.git_dir / 'HEAD'}: cannot resolve HEAD ({text!r})")


def _lookup_ref(repo: Repo, name: str) -> str | None:
    for base in (repo.git_dir, repo.common_dir):
        text = _read(base / name)
        if text:
            return text
    packed = _read(repo.common_dir / "packed-refs")
    for line in (packed or "").splitlines():
        if line[:1] in ("#", "^"):
            continue
        sha, _, refname = line.partition(" ")
        if not _SHA.match(sha) or not refname:  # git refuses such a file too
            raise GitError(f"{repo.common_dir / 'packed-refs'}: unexpected line {line[:60]!r}; "
                           "the file is corrupt and git cannot read the refs either")
        if refname == name:
            return sha
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except UnicodeDecodeError as exc:
        raise GitError(f"{path}: corrupt (not text); git cannot read it either") from exc


def busy(repo: Repo) -> bool:
    """A rebase is under way: its intermediate detached HEADs are not worth serving."""
    return any((repo.git_dir / name).exists() for name in _BUSY)


def watched(repo: Repo) -> list[Path]:
    """The files whose change may mean HEAD moved; rebase dirs so their removal counts too."""
    if _reftable(repo):
        paths = [repo.git_dir / "HEAD", repo.common_dir / "reftable" / "tables.list"]
    else:
        paths = [repo.git_dir / "HEAD", repo.common_dir / "packed-refs"]
        try:
            text = _read(repo.git_dir / "HEAD") or ""
        except GitError:  # a damaged HEAD: watch the file itself, the rebuild reports it
            text = ""
        if text.startswith("ref:"):
            name = text[4:].strip()
            paths.append(repo.git_dir / name)
            if repo.common_dir != repo.git_dir:  # a linked worktree's: the shared one too
                paths.append(repo.common_dir / name)
    return paths + [repo.git_dir / name for name in _BUSY]


def stat(path: str | os.PathLike[str]) -> Stat:
    """(mtime_ns, size, inode): git replaces refs by rename, so the inode changes too.
    None when there is no such file (most polls stat two or three: ``os.access`` says so
    without the exception ``os.stat`` raises, half a stat's cost)."""
    if not os.access(path, os.F_OK):
        return None
    try:
        st = os.stat(path)
    except OSError:  # gone since, or unreadable
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def signature(repo: Repo) -> tuple[Stat, ...]:
    return tuple(stat(p) for p in watched(repo))


class Watch:
    """:func:`signature` of one repository, polled (serve's follower, 20 times a second).

    Which files are watched depends on HEAD alone (the ref it names; a reftable
    repository's HEAD is a stub that a migration rewrites), so they are listed again only
    when HEAD's own stat changed, not on every poll: reading HEAD and joining eight paths
    were two thirds of a poll's CPU, spent in the serving process while it answers. The
    signature is the same tuple :func:`signature` gives (HEAD's stat first)."""

    __slots__ = ("_head", "_head_stat", "_rest", "repo")

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._head = os.fspath(repo.git_dir / "HEAD")  # watched()'s first path
        self._head_stat: Stat = None
        self._rest: tuple[str, ...] | None = None  # the other watched paths, as strings

    def signature(self) -> tuple[Stat, ...]:
        head = stat(self._head)
        if self._rest is None or head != self._head_stat:
            # HEAD changed (or is read for the first time): list what it now names. A
            # change between the stat and this read shows as another change next poll.
            self._rest = tuple(os.fspath(p) for p in watched(self.repo)[1:])
            self._head_stat = head
        return (head, *map(stat, self._rest))


def no_git_env() -> dict[str, str]:
    """The environment minus ``GIT_*``: a variable a hook or a parent git set (GIT_DIR,
    GIT_INDEX_FILE, GIT_WORK_TREE) would point our git calls at another repository."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def _git(repo: Repo, *args: str, stdin: str | None = None) -> str | None:
    import subprocess  # deferred: a start from the cache spawns nothing

    env = no_git_env()
    try:
        done = subprocess.run(
            [executable(), "-C", str(repo.top), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def rev_parse(repo: Repo, spec: str) -> str | None:
    """The object id ``spec`` names, or None when it names nothing."""
    return _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", spec)


def symbolic_ref(repo: Repo) -> str | None:
    return _git(repo, "symbolic-ref", "--quiet", "HEAD")


def tree_of(repo: Repo, commit: str, prefix: str) -> str | None:
    """The tree id of the package folder at ``commit``; None when it is not there."""
    return rev_parse(repo, _tree_spec(commit, prefix))


def trees_of(repo: Repo, commit: str, prefixes: list[str]) -> dict[str, str | None]:
    """:func:`tree_of` of each of ``prefixes``, in one ``git cat-file --batch-check``:
    serve following 100 packages of one repository asks for 100 trees at every commit,
    and 100 ``git`` processes took ~0.5 s between the commit and its listeners."""
    specs = [_tree_spec(commit, prefix) for prefix in prefixes]
    if len(specs) < 2 or any("\n" in s or "\r" in s for s in specs):  # one line a spec
        return {prefix: tree_of(repo, commit, prefix) for prefix in prefixes}
    out = _git(repo, "cat-file", "--batch-check=%(objectname) %(objecttype)",
               stdin="".join(s + "\n" for s in specs))
    lines = (out or "").split("\n")
    if len(lines) != len(specs):  # git failed: ask as one process a package did
        return {prefix: tree_of(repo, commit, prefix) for prefix in prefixes}
    found: dict[str, str | None] = {}
    for prefix, line in zip(prefixes, lines, strict=True):
        # "<id> <type>", or "<spec> missing" / "<spec> ambiguous" (what rev-parse refuses)
        oid, _, kind = line.rpartition(" ")
        found[prefix] = oid if _SHA.match(oid) and kind in _KINDS else None
    return found


_KINDS = frozenset({"tree", "blob", "commit", "tag"})


def _tree_spec(commit: str, prefix: str) -> str:
    return f"{commit}^{{tree}}" if prefix == "." else f"{commit}:{prefix}"


CHANNELS = "refs/promptops/channels/"  # the layout: promptops.git.channels (GitPython-free)


def channel_refs(repo: Repo, channel: str) -> list[str]:
    """The refs of ``CHANNEL`` (any package) or ``PACKAGE/CHANNEL`` in ``repo``."""
    listed = (_git(repo, "for-each-ref", "--format=%(refname)", CHANNELS) or "").splitlines()
    if "/" in channel:
        return [ref for ref in listed if ref == CHANNELS + channel]
    return [ref for ref in listed if ref.rpartition("/")[2] == channel]


def ref_watched(repo: Repo, ref: str) -> list[Path]:
    """The files whose change may mean ``ref`` moved (the loose ref, packed-refs, reftable)."""
    if _reftable(repo):
        return [repo.common_dir / "reftable" / "tables.list"]
    return [repo.common_dir / ref, repo.common_dir / "packed-refs"]


def show(repo: Repo, spec: str) -> str | None:
    """The text of the blob ``spec`` (``COMMIT:PATH``) names, None when it names none."""
    return _git(repo, "cat-file", "blob", spec)
