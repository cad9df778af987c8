"""What this installation is: its distribution name, version and project links.

The distribution name is not the import name. ``promptops`` on PyPI belongs to an
unrelated project, so ours is named ``promptops-mcp`` while the package and the command
stay ``promptops``; it is not published on PyPI, so what a user is told to install is the
repository at a release tag. Everything that tells a user what to install (the scaffolded
workflow, the printed pre-commit snippet) asks this module, so no file can drift back to
the bare name.

Links have one home, ``[project.urls]`` in pyproject.toml. They are read at run time
from the installed metadata, or from pyproject.toml itself when promptops runs from a
source checkout (an editable install's metadata is only as fresh as its last install),
so SARIF help links and scaffolded references follow a change there with no code edit.
Only lint's SARIF output and ``init`` import this: serve's cold path never pays for it.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from promptops import __version__

DISTRIBUTION = "promptops-mcp"


def install_spec() -> str:
    """The exact pip requirement of this promptops, from its repository at the release tag
    (``promptops-mcp @ git+https://github.com/<repository>@v<version>``): promptops is not
    published on a package registry, so a ``promptops-mcp==X.Y.Z`` pin cannot install.
    Without a known repository, the bare pin (for a registry mirror that has it)."""
    repo = github_repository()
    if repo is None:
        return f"{DISTRIBUTION}=={__version__}"
    return f"{DISTRIBUTION} @ git+https://github.com/{repo}@v{__version__}"


@functools.cache
def project_urls() -> dict[str, str]:
    """``[project.urls]`` of pyproject.toml: label -> URL (empty when none is known)."""
    checkout = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if checkout.is_file():
        import tomllib

        try:
            project = tomllib.loads(checkout.read_text(encoding="utf-8")).get("project", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            project = {}
        if project.get("name") == DISTRIBUTION:
            return {str(k): str(v) for k, v in project.get("urls", {}).items()}
    from importlib import metadata

    try:
        entries = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return {}
    urls: dict[str, str] = {}
    for entry in entries:
        label, sep, url = entry.partition(",")
        if sep:
            urls[label.strip()] = url.strip()
    return urls


def github_repository() -> str | None:
    """``owner/name`` of the project's GitHub repository (for ``uses:`` and ``repo:``)."""
    url = project_urls().get("Repository", "")
    match = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?/?", url)
    return match.group(1) if match else None


def docs_url(page: str, anchor: str = "") -> str | None:
    """The URL of ``docs/<page>`` (``#anchor`` appended), or None when no docs URL is set."""
    base = project_urls().get("Documentation")
    if not base:
        return None
    return f"{base.rstrip('/')}/{page}" + (f"#{anchor}" if anchor else "")
