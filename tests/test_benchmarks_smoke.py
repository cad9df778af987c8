"""The benchmark scripts keep working end to end (on tiny packages; no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.repo import PYTHON, REPO_ROOT, posix_only

BENCH = REPO_ROOT / "benchmarks"
OTHER_SECTIONS = "# Benchmarks\n\nIntro.\n\n## Test\n\nkept as is\n\n## Lint\n\nalso kept\n"


def run_script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, str(BENCH / name), *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO_ROOT)


def test_build_bench_runs_and_writes_its_section(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    docs.write_text(OTHER_SECTIONS)
    proc = run_script("build_bench.py", "--sizes", "20", "--runs", "1", "--write-docs",
                      "--docs", str(docs))
    assert proc.returncode == 0, proc.stderr
    assert "| measurement | prompts | median |" in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and "| 20 |" in line]
    assert len(rows) >= 7, proc.stdout  # 4+ build rows (a CLI row per variant) + 3 load rows
    assert all(" ms |" in row for row in rows)
    text = docs.read_text()
    assert "## Test\n\nkept as is" in text and "## Lint\n\nalso kept" in text
    assert text.count("## Build") == 1 and "build_bench.py --sizes 20" in text
    # written again: the section is replaced, not appended (the script's own call, in
    # process: a second run of the script would spend 3-4 s CPU on the same call)
    sys.path.insert(0, str(BENCH))
    try:
        from bench_common import write_section
    finally:
        sys.path.remove(str(BENCH))
    write_section("Build", "Second run.", docs)
    again = docs.read_text()
    assert again.count("## Build") == 1 and "Second run." in again
    assert "build_bench.py --sizes 20" not in again and "## Lint\n\nalso kept" in again


@posix_only("benchmarks/bench_common.py waits on pipes with select(), which Windows "
            "offers only for sockets")
def test_serve_bench_measures_all_servers_and_head_latency(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    docs.write_text(OTHER_SECTIONS)
    out = tmp_path / "serve.json"
    # --settle 0: a waiting HEAD case checks out once serve was still for 300 ms, not also
    # 1.5 s after its start (3 s of the test's wall, a wait that measures nothing here)
    proc = run_script("serve_bench.py", "--sizes", "20", "--runs", "1", "--head-runs", "1",
                      "--n", "40", "--get-passes", "2", "--list-reps", "1", "--settle", "0",
                      "--json-out", str(out), "--write-docs", "--docs", str(docs))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    servers = result["sizes"][0]["servers"]
    assert [s["label"] for s in servers] == [
        "promptops --bundle", "promptops repo (cached)", "SDK low-level"]
    for srv in servers:
        assert srv["ok"], srv["errors"]
        summary = srv["summary"]
        assert summary["pages"] == 1 and summary["cold_ms"] > 0 and summary["pipe_rps"] > 0
        assert summary["rss_mb"] > 5
    assert set(result["head"]["cases"]) == {"cached", "never built", "never built, at once"}
    assert all(c["ok"] and c["median_ms"] > 0 for c in result["head"]["cases"].values())
    assert "| promptops --bundle |" in proc.stdout and "| SDK low-level |" in proc.stdout
    text = docs.read_text()
    assert "## Serve" in text and "### Targets (issue 4)" in text
    assert "## Test\n\nkept as is" in text and text.index("## Serve") > text.index("## Lint")


def test_a_server_with_wrong_answers_gets_no_numbers(tmp_path: Path) -> None:
    """The harness validates content: a bundle that renders differently fails the session."""
    sys.path.insert(0, str(BENCH))
    try:
        import bench_common
        import serve_bench
    finally:
        while str(BENCH) in sys.path:
            sys.path.remove(str(BENCH))
    from promptops.pipeline.build import Build
    from promptops.pipeline.bundle import serialise

    pkg = bench_common.make_package(5, tmp_path)
    good = tmp_path / "good.json"
    good.write_bytes(serialise(Build(pkg, "main").bundle))
    (pkg / "partials" / "rules.j2").write_text("A different house style.\n")
    bad = tmp_path / "bad.json"
    bad.write_bytes(serialise(Build(pkg, None).bundle))
    names = [f"task_{i:05d}" for i in range(5)]
    expected = serve_bench.expected_for(good, names)

    class Cfg:
        timeout, list_reps, max_gets, get_passes, n = 30.0, 1, 5, 1, 10

    argv = [*bench_common.promptops_cmd(), "serve", "--bundle"]
    ok = serve_bench.session([*argv, str(good)], Cfg, names, expected)
    assert ok["ok"], ok.get("error")
    wrong = serve_bench.session([*argv, str(bad)], Cfg, names, expected)
    assert not wrong["ok"] and "differ from the Renderer's" in wrong["error"]
    assert "cold_ms" in wrong and "get_p50" not in wrong


def test_diff_bench_runs_cold_and_warm() -> None:
    done = run_script("diff_bench.py", "--sizes", "30", "--runs", "1")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.strip().startswith("30")]
    assert [r[2] for r in rows] == ["cold", "warm"], done.stdout
    assert all("partial source diff, rendered diff" in " ".join(r) for r in rows)


@posix_only("benchmarks/bench_common.py waits on pipes with select(), which Windows "
            "cannot do")
def test_channels_bench_promotes_rolls_back_and_times_the_notification() -> None:
    done = run_script("channels_bench.py", "--prompts", "5", "--runs", "1")
    assert done.returncode == 0, done.stderr
    rows = {line.split(" | ")[0].lstrip("| ") for line in done.stdout.splitlines()
            if line.startswith("| ") and " | 5 | " in line}
    assert rows == {"promote (process)", "rollback (process)", "move -> list_changed"}, \
        done.stdout


@posix_only("benchmarks/bench_common.py waits on pipes with select(), which Windows "
            "offers only for sockets")
def test_webhook_latency_times_a_push_to_every_listener() -> None:
    done = run_script("webhook_latency.py", "--prompts", "10", "--runs", "1", "--listeners", "2")
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [r.split(" | ")[0].lstrip("| ") for r in rows[2:]] == [
        "its 202", "the first listener's list_changed", "the last of 2 listeners' list_changed",
        "prompts/get serving the new description"], done.stdout
    assert all(float(r.split(" | ")[1]) > 0 for r in rows[2:]), done.stdout


def test_worktree_early_save_counts_its_runs() -> None:
    done = run_script("worktree_early_save.py", "--runs", "1", "--burners", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "start: 1/1 served" in done.stdout and "initialize: 1/1 served" in done.stdout


def test_ui_bench_runs_and_writes_its_section(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    docs.write_text(OTHER_SECTIONS)
    proc = run_script("ui_bench.py", "--prompts", "20", "--queries", "10", "--runs", "1",
                      "--write-docs", "--docs", str(docs))
    assert proc.returncode == 0, proc.stderr
    assert "| search p95 | 20 |" in proc.stdout and " ms |" in proc.stdout
    text = docs.read_text()
    assert text.count("## UI") == 1 and "## Lint\n\nalso kept" in text


def test_usage_bench_runs_every_mode() -> None:
    proc = run_script("usage_bench.py", "--prompts", "5", "--n", "200", "--rounds", "1")
    assert proc.returncode == 0, proc.stderr
    modes = [line.split()[0] for line in proc.stdout.splitlines()]
    assert modes == ["off", "usage", "tracing"], proc.stdout


def test_mutation_maps_every_module_and_its_equivalents_are_real() -> None:
    """benchmarks/mutation.py: every module of versioning/ is mapped to test files that
    exist, and each reviewed equivalent names a mutant the script makes (a run itself takes
    minutes per module: docs/architecture.md)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mutation", BENCH / "mutation.py")
    assert spec is not None and spec.loader is not None
    mutation = importlib.util.module_from_spec(spec)
    sys.modules["mutation"] = mutation  # its dataclasses look their module up
    try:
        spec.loader.exec_module(mutation)
    finally:
        del sys.modules["mutation"]
    versioning = {f"promptops/versioning/{p.name}"
                  for p in (REPO_ROOT / "promptops" / "versioning").glob("*.py")}
    assert versioning | {"promptops/serve/methods.py", "promptops/pipeline/validate.py"} <= set(
        mutation.TESTS)
    for tests in mutation.TESTS.values():
        assert tests and all((REPO_ROOT / t).is_file() for t in tests), tests
    wanted: dict[str, set[tuple[str, str]]] = {}
    for module, line, what in mutation.EQUIVALENT:
        wanted.setdefault(module, set()).add((line, what))
    for module, pairs in wanted.items():  # only the named mutants are compiled (all: seconds)
        source = (REPO_ROOT / module).read_text(encoding="utf-8")
        made = {(mutation.line_of(source, m), m.what)
                for m in mutation.mutants(source, only=pairs)}
        assert made == pairs, (module, pairs - made)


@posix_only("benchmarks/bench_common.py waits on pipes with select(), which Windows "
            "offers only for sockets")
def test_growth_bench_measures_every_cost_for_both_layouts(tmp_path: Path) -> None:
    out = tmp_path / "growth.json"
    # lint and diff of the smaller size skipped (--skip): each is one promptops process like
    # the larger size's, and the skip itself is then checked. --settle 0.05: serve still for
    # 50 ms before each of the 15 commits, not 300 ms (4-6 s of the test's wall)
    proc = run_script("growth.py", "--sizes", "10,20", "--per-package", "10", "--gets", "5",
                      "--skip", "lint@10,diff@10", "--settle", "0.05", "--json-out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(out.read_text())["results"]
    assert [(r["n"], r["layout"], r["packages"]) for r in results] == [
        (10, "one", 1), (20, "one", 1), (20, "many", 2)]
    for r in results:
        assert r["pages"] == 1 and r["page_size"] == r["n"]
        for key in ("build_s", "build_peak_mb", "serve_bundle_ms", "serve_repo_uncached_ms",
                    "serve_repo_cached_ms", "serve_rss_mb", "list_first_ms", "list_all_ms",
                    "get_p50_ms", "get_p99_ms", "commit_to_list_changed_ms", "second_commit_ms",
                    *(("lint_s", "diff_s") if r["n"] == 20 else ())):
            assert r[key] > 0, (key, r)
    assert "lint_s" not in results[0] and "diff_s" not in results[0], results[0]
    assert "load average at start:" in proc.stdout and "| build time |" in proc.stdout
    assert "| get p50 20 / 10 within 10% |" in proc.stdout


def test_diff_shapes_runs_every_shape_and_marks_the_held_out_one(tmp_path: Path) -> None:
    """Every shape is generated and reviewed by ``diff main --format markdown`` (the script
    fails a shape whose review does not show the edited partial); ``diff main change`` runs
    on one shape, reusing its package (``--keep``): the two commands on all the shapes were
    twelve promptops processes, 21 s of the process run (session 11)."""
    done = run_script("diff_shapes.py", "--prompts", "12", "--commands", "markdown",
                      "--keep", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split(" | ") for line in done.stdout.splitlines() if " | 12 | " in line]
    assert [(r[0].lstrip("| "), r[2]) for r in rows] == [
        (shape, "`diff main --format markdown`") for shape in (
            "genpkg", "direct", "chain", "small (held out)", "wide", "macro (held out)",
            "multi (held out)", "dialog", "deep", "numbered", "compared (held out)",
            "counted (held out)", "real", "realheld (held out)", "realnew (held out)")], \
        done.stdout
    for shape in ("real", "realheld", "realnew"):  # real bodies, issue 26's shape added
        texts = [f.read_text(encoding="utf-8")
                 for f in sorted((tmp_path / shape / "prompts").glob("*.prompt.yaml"))]
        assert len(texts) == 12 and len(set(texts)) == 12, shape
        assert all("text: 'Copy " in t and '{% include "partials/shared.j2" %} About '
                   "{{ shared_subject }}." in t and "- name: shared_subject\n" in t
                   for t in texts), shape
    again = run_script("diff_shapes.py", "--prompts", "12", "--commands", "text", "--shapes",
                       "direct", "--keep", str(tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    rows = [line.split(" | ") for line in again.stdout.splitlines() if " | 12 | " in line]
    assert [(r[0].lstrip("| "), r[2]) for r in rows] == [("direct", "`diff main change`")], \
        again.stdout


def test_render_bounds_names_each_refusals_json_rpc_code() -> None:
    """render_bounds.py's child prints a refusal's JSON-RPC code (its own lookup of it broke
    unnoticed when errors lost their ``code`` attribute: session 22's idle run)."""
    sys.path.insert(0, str(BENCH))
    try:
        import render_bounds
    finally:
        sys.path.remove(str(BENCH))
    by_label = {label: (text, spec, args) for label, text, spec, args in render_bounds.CASES}
    refused = next(label for label in by_label if label.startswith("pattern"))
    assert render_bounds.run(refused, *by_label[refused])["outcome"].startswith("-32602 ")
    too_big = next(label for label in by_label if "(refused)" in label)
    assert render_bounds.run(too_big, *by_label[too_big])["outcome"].startswith("-32603 ")
