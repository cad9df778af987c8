"""The speed corpora (issue 26) are complete, licensed, split by their written rule, on record.

Figures measured on it (docs/benchmarks.md) mean something only if every file is listed
with where it came from, may be redistributed, and sits in the part the hash rule names: a
file moved by hand from held-out to tuning, or a part edited after the split, must fail
here. The rule itself is README.md; the collector that applied it is tools/collect_speed.py.
The second corpus (../speed2, session 10), the third (../speed3, session 11) and the fourth
(../speed4, session 13: the same rule's points, the same collector pointed there) and the fifth
(../speed5, session 17: other template styles, an MCP family and a byte stop added) are held to
the very same checks: every test here runs for each corpus of ``collect_speed.ORDER``.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from collect_speed import ORDER, excluded_repositories, part_of
from test_corpus import ALLOWED_LICENCES  # the one list of licences the corpora may use

FIRST = Path(__file__).resolve().parent
LICENSES = FIRST.parent / "licenses"
# each corpus: its rule excluded what the corpora collected before it named, and may not
# count the lists of those collected after it. collect_speed.ORDER is the one list of the
# speed corpora (speed4, session 13, joined by adding it there, not by a copy of a check).
CORPORA = {root.name: (root, root) for root in ORDER}

FIELDS = ("repository", "path", "commit", "licence", "family", "part", "role", "sha256")


@pytest.fixture(params=sorted(CORPORA))
def corpus(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _root(corpus: str) -> Path:
    return CORPORA[corpus][0]


def _manifest(corpus: str) -> list[dict[str, Any]]:
    files: list[dict[str, Any]] = yaml.safe_load(
        (_root(corpus) / "manifest.yaml").read_text(encoding="utf-8"))["files"]
    return files


def _on_disk(corpus: str, entry: dict[str, Any]) -> Path:
    return _root(corpus) / entry["part"] / entry["repository"].replace("/", "+") / entry["path"]


def test_every_file_is_listed_with_its_origin_and_licence(corpus: str) -> None:
    files = _manifest(corpus)
    root = _root(corpus)
    listed = set()
    for entry in files:
        for field in FIELDS:
            assert entry.get(field) not in (None, ""), f"{entry.get('path')}: {field} missing"
        assert len(entry["commit"]) == 40 and int(entry["commit"], 16) >= 0, entry["path"]
        assert entry["licence"] in ALLOWED_LICENCES, entry["repository"]
        owner_repo = entry["repository"].replace("/", "+")
        assert (LICENSES / f"{owner_repo}.txt").is_file(), entry["repository"]
        path = _on_disk(corpus, entry)
        assert path.is_file(), path
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], path
        key = path.relative_to(root)
        assert key not in listed, f"{key} listed twice"
        listed.add(key)
    on_disk = {p.relative_to(root) for part in ("tuning", "heldout")
               for p in (root / part).rglob("*") if p.is_file()}
    assert on_disk == listed, f"unlisted: {sorted(map(str, on_disk - listed))}, " \
                              f"missing: {sorted(map(str, listed - on_disk))}"


def test_every_speed_corpus_on_disk_is_checked() -> None:
    """A speed corpus added beside the others but not to collect_speed.ORDER would escape
    every check here (and the exclusion order): each speed*/ folder must be in ORDER."""
    on_disk = {p.name for p in FIRST.parent.glob("speed*") if p.is_dir()}
    assert on_disk == set(CORPORA), (on_disk, sorted(CORPORA))


def test_the_split_is_the_written_rule(corpus: str) -> None:
    """A prompt's part is the parity of sha256('<owner>/<repo>/<path>')'s first byte; what a
    prompt reads goes with it, into the part of every prompt that uses it."""
    files = _manifest(corpus)
    prompts = [e for e in files if e["role"] == "prompt"]
    assert {e["part"] for e in prompts} == {"tuning", "heldout"}
    for entry in prompts:
        digest = hashlib.sha256(f"{entry['repository']}/{entry['path']}".encode()).digest()
        want = "tuning" if digest[0] % 2 == 0 else "heldout"
        assert entry["part"] == want == part_of(entry["repository"], entry["path"]), entry
    by_key = {(e["repository"], e["path"], e["part"]) for e in prompts}
    for entry in files:
        if entry["role"] == "include":
            assert entry["used_by"], entry["path"]
            for user in entry["used_by"]:
                assert (entry["repository"], user, entry["part"]) in by_key, (entry, user)


def test_the_corpus_is_as_big_as_the_issue_asks(corpus: str) -> None:
    prompts = [e for e in _manifest(corpus) if e["role"] == "prompt"]
    assert 60 <= len(prompts) <= 150, len(prompts)
    assert len({e["repository"] for e in prompts}) >= 20
    per_repo: dict[str, int] = {}
    for entry in prompts:
        per_repo[entry["repository"]] = per_repo.get(entry["repository"], 0) + 1
    assert max(per_repo.values()) <= 6, per_repo  # the rule's cap per repository


def test_no_repository_of_an_earlier_corpus_is_used(corpus: str) -> None:
    used = {e["repository"].lower() for e in _manifest(corpus)}
    assert not used & excluded_repositories(own=CORPORA[corpus][1])


def test_every_candidate_has_an_outcome_and_every_taken_one_is_in_the_manifest(corpus: str) -> None:
    candidates = yaml.safe_load((_root(corpus) / "candidates.yaml").read_text(encoding="utf-8"))
    taken = {c["repository"] for c in candidates["candidates"]
             if str(c.get("outcome", "")).startswith("taken")}
    assert all(c.get("outcome") for c in candidates["candidates"])
    assert taken == {e["repository"] for e in _manifest(corpus)}


def test_the_import_record_names_every_prompt_file(corpus: str) -> None:
    """import.yaml (tools/import_report.py) has an outcome, and a reason where the import
    did not take the file whole, for every prompt file of each part."""
    record = yaml.safe_load((_root(corpus) / "import.yaml").read_text(encoding="utf-8"))
    for part in ("tuning", "heldout"):
        want = {f"{e['repository'].replace('/', '+')}/{e['path']}" for e in _manifest(corpus)
                if e["part"] == part and e["role"] == "prompt"}
        rows = record[part]["files"]
        assert {r["file"] for r in rows} == want, part
        for row in rows:
            assert row["outcome"] in ("exact", "lossy", "refused", "skipped"), row
            assert row["outcome"] == "exact" or row.get("why"), row


def test_the_fifth_corpus_keeps_what_its_rule_adds() -> None:
    """speed5's rule (../speed5/README.md) adds an MCP prompt-server family and a stop at
    1.5 MB of files taken: an MCP file must come from a repository named with ``mcp`` and sit
    under a ``prompts`` folder (tools/collect_speed5.py decides both), and the files taken
    before the last repository must hold less than the stop (the one that crosses it is taken
    whole). A file added by hand outside the rule fails here."""
    fifth = FIRST.parent / "speed5"
    sys.path.insert(0, str(fifth / "tools"))
    import collect_speed5

    files = _manifest("speed5")
    mcp = [e for e in files if e["family"] == "mcp" and e["role"] == "prompt"]
    assert mcp, "the MCP family gave no file"
    for entry in mcp:
        assert collect_speed5.precheck("mcp", entry["repository"]) is None, entry
        assert collect_speed5.family_files("mcp", [entry["path"]], None) == [entry["path"]], entry
    last = files[-1]["repository"]
    before_last = sum(_on_disk("speed5", e).stat().st_size for e in files
                      if e["repository"] != last)
    assert before_last < collect_speed5.MAX_BYTES, before_last


def test_the_sixth_corpus_keeps_what_its_rule_adds() -> None:
    """speed6's rule (../speed6/README.md) adds a ``folder`` family (files under a ``prompts``
    folder, never a Claude command or a VS Code prompt file), a ``chat`` family (what the
    import reads as a chat array), amendment 1's fallback (``folder-fallback``) and amendment
    2's ``folder-more`` with at most 2 prompt files a repository; tools/collect_speed6.py
    decides each. A file added by hand outside the rule, or a third file of a ``folder-more``
    repository, fails here."""
    sixth = FIRST.parent / "speed6"
    sys.path.insert(0, str(sixth / "tools"))
    import collect_speed6

    files = _manifest("speed6")
    prompts = [e for e in files if e["role"] == "prompt"]
    families = {e["family"] for e in prompts}
    assert {"folder", "chat", "folder-fallback", "folder-more"} <= families, families
    per_repo: dict[tuple[str, str], int] = {}
    for entry in prompts:
        key = (entry["family"], entry["repository"])
        per_repo[key] = per_repo.get(key, 0) + 1
        assert per_repo[key] <= collect_speed6.per_repo(entry["family"]), entry
        data = _on_disk("speed6", entry).read_bytes()
        assert collect_speed6.family_files(entry["family"], [entry["path"]],
                                           lambda _p, d=data: d) == [entry["path"]], entry
    last = files[-1]["repository"]
    before_last = sum(_on_disk("speed6", e).stat().st_size for e in files
                      if e["repository"] != last)
    assert before_last < collect_speed6.MAX_BYTES, before_last
