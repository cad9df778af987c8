"""Small helpers shared by commands: where the package is, and how to read arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.errors import PromptopsError, UsageError
from promptops.pipeline.source import find_package

if TYPE_CHECKING:
    from promptops.console import Console
    from promptops.pipeline.build import Build


def package_dir(path: Path | None) -> Path:
    """An explicit package folder, or the nearest one at or above the current folder."""
    if path is None:
        return find_package(Path.cwd())
    if not (path / "promptops.yaml").is_file():
        if path.is_dir():
            return find_package(path)
        raise UsageError(f"{path} is not a folder; pass a package folder")
    return path


def parse_arguments(pairs: list[str], args_file: Path | None) -> dict[str, object]:
    """Arguments from --args-file (JSON or YAML object) overlaid by -a name=value pairs."""
    out: dict[str, object] = {}
    if args_file is not None:
        try:
            text = args_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read {args_file}: {exc.strerror}") from exc
        if args_file.suffix == ".json":
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{args_file}:{exc.lineno}:{exc.colno}: {exc.msg}") from exc
        else:
            from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

            try:
                data = load_yaml(str(args_file), text.encode()).data
            except YamlProblem as exc:
                raise UsageError(str(exc.problem)) from exc
        if not isinstance(data, dict):
            raise UsageError(f"{args_file}: expected an object mapping argument names to values")
        out.update(data)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"-a expects name=value, got {pair!r}")
        out[name] = value
    return out


def refuse_contradictions(build: Build, console: Console) -> None:
    """Refuse, exit 1, a package whose declarations contradict each other (a default its
    enum or pattern refuses), with the lint lines `serve` refuses it with: `render` and
    `test` give the verdict the server will (docs/lint.md, "Gates that agree")."""
    from promptops.lint.runner import contradictions

    why = contradictions(build, console)
    if why is not None:
        raise PromptopsError(why)
