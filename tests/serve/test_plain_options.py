"""A plain stdio command line is read without argparse, to the very same options.

``ServeOptions.parse`` reads ``[PATH ...] [--bundle FILE ...]`` itself (argparse's import
and the options' declaration were a tenth of a `serve` cold start) and hands every other
line to argparse. Each line below is read both ways and must give the same options (or
the plain reader must decline it, so argparse's own answer, errors included, stands).
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from promptops.serve.options import ServeOptions, _plain, parser

TOKENS = ["pkg", "other", "--bundle", "b.json", "-x", "--bundle=b.json", "", "-", "--",
          "--worktree", "--dev", "--bund", "a b", "-1", "--ref", "HEAD"]


def _argparse(argv: list[str]) -> str | None:
    """repr of what argparse makes of ``argv`` as ServeOptions, or None if it refuses."""
    try:
        found = vars(parser().parse_args(argv))
    except SystemExit:
        return None
    return repr(ServeOptions(**{k: tuple(v) if isinstance(v, list) else v
                                for k, v in found.items()}))


def lines() -> list[list[str]]:
    out = [list(c) for n in range(4) for c in itertools.product(TOKENS, repeat=n)]
    return [*out, ["a", "b", "--bundle", "x", "--bundle", "y"], ["--bundle", "x", "c"],
            ["a", "--bundle", "x", "b"], ["--bundle", "x", "--bundle"]]


def test_every_line_the_plain_reader_takes_reads_as_argparse_reads_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    taken = 0
    for argv in lines():
        plain = _plain(argv)
        if plain is None:
            continue
        taken += 1
        assert repr(ServeOptions.parse(argv)) == _argparse(argv), argv
    capsys.readouterr()  # argparse's complaints about the lines it refuses
    assert taken > 100  # the plain reader does take the usual lines


def test_the_usual_lines_take_the_plain_reader() -> None:
    for argv in ([], ["pkg"], ["a", "b"], ["--bundle", "x.json"],
                 ["--bundle", "x.json", "--bundle", "y.json"]):
        assert _plain(argv) is not None, argv
    for argv in (["--ref", "HEAD"], ["--bundle"], ["--bundle=x"], ["pkg", "--worktree"],
                 ["--bundle", "x", "pkg"], ["-"]):
        assert _plain(argv) is None, argv


def test_a_stdio_start_does_not_import_argparse_or_dataclasses(tmp_path: object) -> None:
    code = ("import sys\nfrom promptops.serve.options import ServeOptions\n"
            "from promptops.serve import catalog\nfrom promptops.pipeline import bundle_check\n"
            "ServeOptions.parse(['--bundle', 'x'])\n"
            "print(sorted({'argparse', 'dataclasses', 'base64', 'math'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
