"""Issue 22's acceptance: a folder of 50 mixed files, 5 of them hostile or unsupported.

45 real prompt files from tests/corpus (their folders copied as they are, so samples,
partials and data files lie beside them as in their repositories) and 5 crafted ones: an
alias bomb, frontmatter nested 200 deep, a 5,000-digit integer, a binary file with a prompt's
name, and a sample the package format refuses (NaN). ``promptops import`` on the folder
writes the 45, the package builds and lints without a finding about its form (PO108), exit
1, and the summary names the 5.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.repo import run_cli

from promptops.pipeline.build import Build

CORPUS = Path(__file__).parents[1] / "corpus"
ENTRIES = {  # corpus folder -> entry ids (each holds one prompt file)
    "claude": ["fix-github-issue", "act", "generate-test-cases", "directory-deep-dive", "clean",
               "context-prime", "load-llms-txt", "update-branch-name", "create-pr",
               "git-workflow", "improve-agent", "onboard", "ws-accessibility-audit",
               "ws-ai-assistant"],
    "copilot": ["pr-from-spec", "review-and-refactor", "next-intl-add-language",
                "what-context-needed", "playwright-explore-website", "pytest-coverage",
                "context-map", "first-ask", "playwright-generate-test", "refactor-plan",
                "ac-add-educational-comments", "ac-arch-linux-triage", "ac-az-cost-optimize",
                "ac-breakdown-epic-arch"],
    "prompty": ["prompty-basic", "contoso-chat", "contoso-chat-product", "contoso-friendliness",
                "contoso-chat-1", "cw-editor", "cw-researcher-1"],
    "dotprompt": ["hello-system", "hello-history", "recipe", "recipe-robot", "story",
                  "multi-msg"],
    "promptfoo": ["multi-turn", "custom-provider-chat"],
    "langchain": ["simple-prompt-partial", "simple-chat-json"],
}
HOSTILE = {
    "hostile/bomb.prompty": "---\nname: Bomb\nmetadata:\n  a: &a [\"" + "x" * 100 + "\"]\n"
    + "".join(f"  {c}: &{c} [{','.join(['*' + p] * 9)}]\n"
              for p, c in zip("abcdef", "bcdefg", strict=True)) + "---\nuser:\nhi\n",
    "hostile/deep.prompt.md": "---\ndescription: " + "[" * 200 + "]" * 200 + "\n---\nhi\n",
    "hostile/bigint.prompt": "---\nconfig:\n  maxOutputTokens: " + "7" * 5000 + "\n---\nhi\n",
    "hostile/binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
    "hostile/nan.prompty": "---\nname: Nan\nsample:\n  x: .nan\n---\nuser:\nHello {{x}}\n",
}


def test_fifty_files_five_hostile(tmp_path: Path) -> None:
    src = tmp_path / "prompts-from-everywhere"
    for folder, ids in ENTRIES.items():
        for entry in ids:
            shutil.copytree(CORPUS / folder / entry, src / folder / entry)
    for rel, data in HOSTILE.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    out = tmp_path / "pkg"
    done = run_cli("import", str(src), "-o", str(out), "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    files = json.loads(done.stdout)
    assert len(files) == 50
    refused = sorted(Path(f["source"]).relative_to(src).as_posix()
                     for f in files if f["outcome"] == "refused")
    assert refused == sorted(HOSTILE), [f["refused"] for f in files if f["refused"]]
    written = [p for f in files if f["outcome"] != "refused" for p in f["prompts"]]
    assert len(written) == 45
    assert sorted(p.name for p in (out / "prompts").iterdir()) == \
        sorted(f"{p}.prompt.yaml" for p in written)
    assert len(Build(out).bundle["prompts"]) == 45
    lint = run_cli("lint", str(out), "--format", "json")
    assert lint.returncode == 0, lint.stdout
    assert "PO108" not in {f["code"] for f in json.loads(lint.stdout)["findings"]}
    text = run_cli("import", str(src), "-o", str(tmp_path / "again"))
    assert "45 of 50 files" in text.stdout and "5 refused" in text.stdout
    summary = text.stdout[text.stdout.index("Refused (nothing of them is written):"):]
    for rel in HOSTILE:
        assert str(src / rel) in summary
