"""Lint's CPU by phase and by rule, in one process: where a cold lint spends its time.

Issue 26 asked which rules render, re-parse or grow faster than the prompts. This runs what
``promptops lint --no-cache`` runs on a package folder, step by step, and prints the CPU
seconds (``time.process_time``: the machine is shared, wall time is noise) of each phase:
reading the files, validation (the build's work too: YAML, schema, every template parsed
once), each rule's ``check``, and the rest of the engine (suppressions, the dependency
record). Work the rules share (a template's facts, its node list, its tokens, an answer
kept once per distinct text) is computed by the first rule that asks and charged to it.
The cycle collector is paused, as in ``promptops lint``.

Usage: python benchmarks/lint_phases.py PACKAGE_DIR [--top N]
Run it with another checkout's code as ``PYTHONPATH=/work/main python ...`` to compare.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    import gc

    import promptops
    from promptops.lint.config import manifest_data, settings
    from promptops.lint.context import LintContext
    from promptops.lint.engine import lint_source
    from promptops.lint.registry import RULES
    from promptops.pipeline.source import CachingSource, open_source
    from promptops.pipeline.templates import TemplateIndex
    from promptops.pipeline.validate import validate

    # The CLI lints with the cycle collector paused (promptops/pipeline/collector.py); with
    # it running, its passes over the validated package's heap were charged to whichever
    # rule allocated next (the YAML marks of PO504 and PO508 most), which made them look
    # several times costlier than in a real run.
    gc.disable()
    clock = time.process_time
    t0 = clock()
    files = CachingSource(open_source(args.package.resolve(), None))
    files.prefetch()
    conf = settings(manifest_data(files), [], [])
    t1 = clock()
    validated = validate(files, index=TemplateIndex(keep_asts=True))
    t2 = clock()
    ctx = LintContext(files, conf, validated, None)
    per_rule: dict[str, float] = {}
    for rule in RULES:
        if rule.code not in conf.enabled:
            continue
        start = clock()
        with contextlib.suppress(RuntimeError):  # a rule needing a base bundle: none here
            list(rule.check(ctx))
        per_rule[f"{rule.code} {rule.name}"] = clock() - start
    t3 = clock()
    # the engine's whole run again on the validated package: what rules cost with the
    # engine's own bookkeeping, minus the rules above (the ctx caches are fresh there)
    lint_source(files, conf, validated=validated)
    t4 = clock()
    rules = t3 - t2
    print(f"{args.package.name}: {len(ctx.package.prompts) if ctx.package else 0} prompts; "
          f"promptops from {Path(promptops.__file__).parent.parent}")
    print(f"{'phase':<34} {'CPU s':>7}")
    print(f"{'read files, settings':<34} {t1 - t0:>7.2f}")
    print(f"{'validate (the build does it too)':<34} {t2 - t1:>7.2f}")
    print(f"{'rules (all, one context)':<34} {rules:>7.2f}")
    print(f"{'engine: rules + suppressions + deps':<34} {t4 - t3:>7.2f}")
    print(f"rules / validate: {rules / (t2 - t1):.2f}")
    print(f"{'rule':<34} {'CPU s':>7} {'share':>6}")
    for name, took in sorted(per_rule.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{name[:34]:<34} {took:>7.2f} {took / rules:>6.0%}")


if __name__ == "__main__":
    main()
