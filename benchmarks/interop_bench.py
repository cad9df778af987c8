"""How the interop text passes scale: time per input size, doubling the size each row.

    python benchmarks/interop_bench.py [--base N] [--rows K]

The standalone whitespace rewrite, the Jinja literal escaper, the Handlebars parser and the
Dotprompt exporter's guard pass all see whole prompt files, and an imported file is the
user's, of any size. Each must stay linear: the ratio column (time at 2n / time at n) should
stay near 2. Inputs are the worst shapes found: many tags on one line, many unclosed ``{{``,
many lines for position lookups, many standalone block tags.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from promptops.interop import handlebars as hb
from promptops.interop import jinja_build, whitespace
from promptops.interop.exporters import dotprompt

CASES: dict[str, tuple[Callable[[int], str], Callable[[str], object]]] = {
    "standalone: n tags on one line": (
        lambda n: "x {% if a %}y{% endif %} " * n + "\n", whitespace.standalone),
    "literal: n unclosed {{": (lambda n: "{{ a " * n, jinja_build.literal),
    "handlebars.parse: n lines": (lambda n: "{{a}}\n" * n, hb.parse),
    "dotprompt guards: n standalone blocks": (
        lambda n: "{{#if a}}\n{{/if}}\n" * (n // 8), dotprompt._guarded),
}


def _time(fn: Callable[[str], object], text: str) -> float:
    start = time.perf_counter()
    fn(text)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=2500)
    parser.add_argument("--rows", type=int, default=4)
    opts = parser.parse_args()
    for name, (make, fn) in CASES.items():
        print(name)
        previous = None
        for row in range(opts.rows):
            n = opts.base * 2 ** row
            text = make(n)
            took = min(_time(fn, text) for _ in range(3))
            ratio = f"{took / previous:5.2f}" if previous else "    -"
            print(f"  n={n:>7}  {len(text):>9} chars  {took * 1000:9.1f} ms  x{ratio}")
            previous = took


if __name__ == "__main__":
    main()
