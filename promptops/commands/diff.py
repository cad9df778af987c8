"""`promptops diff`: what a change between two revisions does to the served prompts.

The exit code is 0 whatever the report says unless ``--fail-on`` asks otherwise, so a
CI step can always post the review and let a separate gate decide; ``--fail-on
breaking`` turns any major change into exit 1, ``--fail-on any`` any change at all.
"""

from __future__ import annotations

from pathlib import Path

from promptops.commands.choices import DiffFormat, FailOn
from promptops.console import Console
from promptops.errors import UsageError
from promptops.review import build_report, to_markdown, to_text
from promptops.review.refs import is_revision, open_repo


def split_positionals(head: str | None, path: Path | None) -> tuple[str | None, Path | None]:
    """``diff BASE X``: X is PATH when it names an existing folder and no revision."""
    if head is not None and path is None:
        repo = open_repo(Path.cwd())
        if Path(head).is_dir() and not is_revision(repo, head):
            return None, Path(head)
    return head, path


def run(*, base: str, head: str | None, path: Path | None, fmt: DiffFormat,
        output: Path | None, fail_on: FailOn | None, console: Console) -> int:
    head, path = split_positionals(head, path)
    if path is not None and not path.exists():
        raise UsageError(f"{path} does not exist; pass a package folder")
    report = build_report(Path.cwd(), base, head, path)
    if fmt == "json":
        text = report.model_dump_json(indent=2) + "\n"
    elif fmt == "markdown":
        text = to_markdown(report)
    else:
        text = to_text(report, console)
    if output is None:
        console.echo(text.rstrip("\n"))
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror}") from exc
        console.info(f"review written to {output}")
    if fail_on is FailOn.breaking and report.breaking:
        console.info("breaking changes found (--fail-on breaking)")
        return 1
    if fail_on is FailOn.any and report.changed:
        console.info("changes found (--fail-on any)")
        return 1
    return 0
