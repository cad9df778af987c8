"""`promptops usage URL`: the team server's usage report, as a table a person reads.

Reads ``GET /usage`` of a ``promptops serve --http`` (the URL of the server, of its MCP
endpoint, or of ``/usage`` itself) and prints, per prompt and version, the gets and
completions since the server started, their outcomes and clients, then the prompts
nobody fetched. No PromQL needed; ``--format json`` prints the report as served.
The bearer token, when the server wants one, comes from an environment variable (never
the command line, where ``ps`` shows it). Bounded: 10 s, 8 MB.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from promptops.commands.choices import Format
from promptops.console import Console
from promptops.errors import PromptopsError, UsageError

LIMIT = 8 * 1024 * 1024
TIMEOUT_S = 10.0


def report_url(url: str) -> str:
    """``url`` (a server, its MCP endpoint, or /usage) as the report's URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"{url!r}: expected the server's http(s) URL, e.g. "
                         "http://127.0.0.1:8080/mcp")
    return urlunsplit((parts.scheme, parts.netloc, "/usage", "", ""))


def fetch(url: str, token: str | None) -> Mapping[str, object]:
    req = urllib.request.Request(report_url(url), headers={"accept": "application/json"})
    if token:
        req.add_header("authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:  # report_url: http(s) only
            body = resp.read(LIMIT + 1)
    except urllib.error.HTTPError as exc:
        raise PromptopsError(f"{req.full_url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise PromptopsError(f"{req.full_url}: {getattr(exc, 'reason', exc)}") from None
    if len(body) > LIMIT:
        raise PromptopsError(f"{req.full_url}: the report is over {LIMIT} bytes")
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise PromptopsError(f"{req.full_url}: not a usage report: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("prompts"), list):
        raise PromptopsError(f"{req.full_url}: not a usage report")
    return data


def table(report: Mapping[str, Any]) -> list[str]:
    prompts = report["prompts"]
    # the TOOL CALLS and CHANNELS columns only when a server has them (serve --tools,
    # --channel): a plain server's table stays as it was
    tools = any(r.get("tool_calls") for r in prompts)
    channels = any(r.get("channels") for r in prompts)
    rows = [("PACKAGE", "PROMPT", "VERSION", "GETS", *(("TOOL CALLS",) if tools else ()),
             "COMPLETIONS", "OUTCOMES", *(("CHANNELS",) if channels else ()), "CLIENTS")]
    for r in prompts:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(r.get("outcomes", {}).items()))
        clients = ", ".join(f"{k} {v}" for k, v in sorted(r.get("clients", {}).items(),
                                                          key=lambda kv: -kv[1]))
        served = ", ".join(f"{k} {v}" for k, v in sorted(r.get("channels", {}).items()))
        rows.append((str(r["package"]), str(r["prompt"]), str(r["version"]), str(r["gets"]),
                     *((str(r.get("tool_calls", 0)),) if tools else ()),
                     str(r["completions"]), outcomes, *((served or "-",) if channels else ()),
                     clients or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = [f"usage since {report.get('since', '?')} (now {report.get('now', '?')})", ""]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1]
              for row in rows]
    never = report.get("never_fetched") or []
    lines += ["", f"never fetched since the server started ({len(never)}):"]
    lines += [f"  {n['package']}/{n['prompt']} {n['version']}" for n in never] or ["  (none)"]
    return lines


def run(*, url: str, token_env: str | None, fmt: Format, console: Console) -> int:
    token = None
    if token_env:
        token = os.environ.get(token_env)
        if not token:
            raise UsageError(f"--token-env {token_env}: the variable is not set or empty")
    report = fetch(url, token)
    if fmt is Format.json:
        console.echo(json.dumps(report, indent=2))
    else:
        for line in table(report):
            console.echo(line)
    return 0
