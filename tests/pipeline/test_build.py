"""Bundles: reproducible bytes, tamper detection, safe writes (issue 3, "Bundle")."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import git
import pytest
from helpers.repo import PYTHON, commit_files, make_repo, run_cli, run_cli_process

from promptops.errors import BundleError
from promptops.pipeline.bundle import load_bundle, parse_bundle

PKG = {
    "pkg/promptops.yaml": "name: acme\nversion: 1.2.0\ndescription: Acme prompts\n",
    "pkg/prompts/review.prompt.yaml": (
        "description: Review code\n"
        "arguments:\n  - name: code\n    required: true\n"
        "messages:\n"
        "  - role: user\n    template: templates/review.md.j2\n"
        "  - role: user\n    image: {file: resources/dot.png}\n"
    ),
    "pkg/templates/review.md.j2": '{% include "partials/head.j2" %}\nReview {{ code }}\n',
    "pkg/partials/head.j2": "You are careful.\n",
    "pkg/resources/dot.png": b"\x89PNG\r\n\x1a\n" + bytes(range(40)),
}


def build(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli("build", *args, cwd=cwd, **env)


def build_process(
    cwd: Path, *args: str, umask: int, **env: str
) -> subprocess.CompletedProcess[str]:
    """`promptops build` as a fresh process, whose locale, time zone and umask are ``env``."""
    old = os.umask(umask)  # inherited by the child
    try:
        return run_cli_process("build", *args, cwd=cwd, **env)
    finally:
        os.umask(old)


def test_two_clones_build_identical_bytes(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin", PKG)
    a = git.Repo.clone_from(origin.working_tree_dir, tmp_path / "one" / "clone-a")
    b = git.Repo.clone_from(origin.working_tree_dir, tmp_path / "elsewhere" / "deeper" / "b")
    # Different mtimes in the second clone: builds read git objects, not the files.
    for f in Path(b.working_tree_dir, "pkg").rglob("*"):
        os.utime(f, (1_000_000, 1_000_000))
    ra = build_process(Path(a.working_tree_dir), "pkg", "-o", "out", umask=0o077, LC_ALL="C")
    rb = build_process(Path(b.working_tree_dir), "pkg", "-o", "out", umask=0o022,
                       LC_ALL="C.UTF-8", TZ="Asia/Tokyo")
    assert ra.returncode == 0, ra.stderr
    assert rb.returncode == 0, rb.stderr
    fa = Path(a.working_tree_dir, "out", "acme-1.2.0.bundle.json")
    fb = Path(b.working_tree_dir, "out", "acme-1.2.0.bundle.json")
    assert fa.read_bytes() == fb.read_bytes()
    assert stat.S_IMODE(fa.stat().st_mode) == 0o444
    bundle = json.loads(fa.read_bytes())
    assert bundle["source"] == {
        "commit": origin.head.commit.hexsha,
        "tree": origin.head.commit.tree["pkg"].hexsha,
        "dirty": False,
        "path": "pkg",
    }
    text = fa.read_text()
    assert str(tmp_path) not in text and "Test Author" not in text


def test_one_character_changes_the_digest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PKG)
    root = Path(repo.working_tree_dir)
    assert build(root, "pkg", "-o", "a").returncode == 0
    commit_files(repo, {"pkg/partials/head.j2": "You are careful!\n"}, "edit")
    assert build(root, "pkg", "-o", "b").returncode == 0
    da = load_bundle(root / "a" / "acme-1.2.0.bundle.json")["digest"]
    db = load_bundle(root / "b" / "acme-1.2.0.bundle.json")["digest"]
    assert da != db


def test_build_reads_the_commit_not_a_dirty_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PKG)
    root = Path(repo.working_tree_dir)
    (root / "pkg/partials/head.j2").write_text("UNCOMMITTED\n")
    r = build(root, "pkg", "-o", "out")
    assert r.returncode == 0
    assert "uncommitted changes" in r.stderr
    bundle = load_bundle(root / "out" / "acme-1.2.0.bundle.json")
    assert bundle["templates"]["partials/head.j2"] == "You are careful.\n"
    assert bundle["source"]["dirty"] is False
    r = build(root, "pkg", "-o", "wt", "--worktree")
    assert r.returncode == 0, r.stderr
    wt = load_bundle(root / "wt" / "acme-1.2.0.bundle.json")
    assert wt["templates"]["partials/head.j2"] == "UNCOMMITTED\n"
    assert wt["source"]["dirty"] is True and wt["source"]["commit"] is None


def test_existing_different_bundle_is_not_overwritten(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PKG)
    root = Path(repo.working_tree_dir)
    assert build(root, "pkg", "-o", "out").returncode == 0
    same = build(root, "pkg", "-o", "out")
    assert same.returncode == 0 and "unchanged" in same.stderr
    commit_files(repo, {"pkg/partials/head.j2": "Changed.\n"}, "edit without bump")
    refused = build(root, "pkg", "-o", "out")
    assert refused.returncode == 2
    assert "exists with different content" in refused.stderr and "--force" in refused.stderr
    assert "Changed." not in (root / "out" / "acme-1.2.0.bundle.json").read_text()
    forced = build(root, "pkg", "-o", "out", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "Changed." in (root / "out" / "acme-1.2.0.bundle.json").read_text()
    assert not [p for p in (root / "out").iterdir() if p.name.endswith(".tmp")]


def _tampered(original: bytes, at: int) -> bytes:
    data = bytearray(original)
    data[at] = ord("Z") if data[at] != ord("Z") else ord("Y")
    return bytes(data)


@pytest.mark.parametrize("where", ["You are careful", '"version":"1.2.0"', '"role":"user"'])
def test_any_changed_byte_fails_verify(tmp_path: Path, where: str) -> None:
    repo = make_repo(tmp_path / "r", PKG)
    root = Path(repo.working_tree_dir)
    assert build(root, "pkg", "-o", "out").returncode == 0
    path = root / "out" / "acme-1.2.0.bundle.json"
    original = path.read_bytes()
    bad = tmp_path / "bad.bundle.json"
    bad.write_bytes(_tampered(original, original.index(where.encode()) + 3))
    with pytest.raises(BundleError, match="digest mismatch"):
        parse_bundle(bad.read_bytes(), str(bad))
    r = run_cli("verify", str(bad))
    assert r.returncode == 1
    assert "digest mismatch" in r.stderr and "Traceback" not in r.stderr
    ok = run_cli("verify", str(path))
    assert ok.returncode == 0 and "ok (sha256:" in ok.stdout


def test_verify_checks_the_schema_beyond_the_digest(tmp_path: Path) -> None:
    from promptops.pipeline.bundle import digest, serialise

    repo = make_repo(tmp_path / "r", PKG)
    root = Path(repo.working_tree_dir)
    assert build(root, "pkg", "-o", "out").returncode == 0
    bundle = load_bundle(root / "out" / "acme-1.2.0.bundle.json")
    bundle["prompts"][0]["messages"][0]["role"] = "developer"  # a consistent digest, wrong schema
    bundle["digest"] = digest(bundle)
    bad = tmp_path / "schema.bundle.json"
    bad.write_bytes(serialise(bundle))
    r = run_cli("verify", str(bad))
    assert r.returncode == 1
    assert "prompts.0.messages.0.role" in r.stderr


def test_inspect_summarises(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PKG)
    root = Path(repo.working_tree_dir)
    assert build(root, "pkg", "-o", "out").returncode == 0
    path = root / "out" / "acme-1.2.0.bundle.json"
    r = run_cli("inspect", str(path))
    assert r.returncode == 0
    sha = repo.head.commit.hexsha
    bundle = load_bundle(path)
    assert r.stdout.splitlines()[:5] == [
        "acme 1.2.0",
        f"digest:  {bundle['digest']}",
        f"source:  {sha} tree {repo.head.commit.tree['pkg'].hexsha} path pkg",
        "prompts: 1, templates: 2, resources: 1",
        "  review(code)",
    ]


def test_loading_a_bundle_imports_no_heavy_modules(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PKG)
    root = Path(repo.working_tree_dir)
    assert build(root, "pkg", "-o", "out").returncode == 0
    code = (
        "import sys; from pathlib import Path; from promptops.pipeline.bundle import load_bundle; "
        f"load_bundle(Path({str(root / 'out' / 'acme-1.2.0.bundle.json')!r})); "
        "heavy = ('pydantic', 'git', 'typer', 'ruamel', 'jinja2'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    r = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


def test_git_reads_every_byte_of_large_and_memoised_files(tmp_path: Path) -> None:
    """Blobs read one by one (over 1 MiB, or skipped by the read-ahead) keep their last
    newline: GitPython strips it from command output unless told not to."""
    from promptops.pipeline.build import Build
    from promptops.pipeline.source import GitSource

    big = ("x" * 99 + "\n") * 11_000  # 1.1 MB: past the batched read-ahead
    files = {
        **PKG,
        "pkg/prompts/doc.prompt.yaml": (
            "messages:\n  - role: user\n    resource: {uri: 'file:///big.txt', file: big.txt}\n"
        ),
        "pkg/big.txt": big,
    }
    repo = make_repo(tmp_path / "r", files)
    root = Path(repo.working_tree_dir or "")
    bundle = Build(root / "pkg", "HEAD").bundle
    assert bundle["resources"]["big.txt"]["text"] == big
    source = GitSource(root / "pkg", "HEAD")
    source.read_ahead([])  # nothing read ahead: every read below is a single-object read
    for path in ("promptops.yaml", "partials/head.j2", "big.txt"):
        assert source.read(path) == (root / "pkg" / path).read_bytes()


def test_the_bundle_encoded_once_is_the_bundle_serialised(tmp_path: Path) -> None:
    """``build`` writes ``Build.serialised`` (the digest's encoding reused): byte for byte
    what ``serialise`` makes of the bundle, with a digest that verifies."""
    from promptops.pipeline.build import Build
    from promptops.pipeline.bundle import digest, serialise

    repo = make_repo(tmp_path / "r", {**PKG, "pkg/prompts/unicode.prompt.yaml": (
        "description: 'naïve \\u2028 \"quoted\" \\x01 ✓'\n"
        "metadata: {n: 1.5e-7, big: 12345678901234567890}\n"
        "messages:\n  - role: user\n    text: 'Grüße {{ x }}'\n"
        "  - role: user\n    template: templates/wide.j2\n"),
        "pkg/templates/wide.j2": "😀 {{ x }}\n{% include \"templates/a.j2\" %}",
        "pkg/templates/a.j2": "ascii\n"})
    first = Build(Path(repo.working_tree_dir) / "pkg", "HEAD")
    data = first.serialised
    assert set(first.bundle["templates"]) >= {"templates/a.j2", "templates/wide.j2"}
    assert data == serialise(first.bundle)
    assert first.bundle["digest"] == digest(first.bundle)
    assert parse_bundle(data, "built") == first.bundle
    later = Build(Path(repo.working_tree_dir) / "pkg", "HEAD")
    assert later.bundle == first.bundle and later.serialised == data  # bundle asked first
