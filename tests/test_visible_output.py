"""Agents' text that no person approved is shown with nothing hidden in it: a research task's
findings in a dependent's prompt file, and the handoff diff in `baton handoff review` and the
app's handoff view. A real run of the scripted agent in a real repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.run_kit import load_plan, script_agent, task, write_config

pytestmark = pytest.mark.slow

HIDDEN = "\u200b\U000e0041\U000e0042\ufeff"  # a zero-width space, two tags, a BOM
FINDINGS = f"use the cache{HIDDEN} layer"
CONTENT = "hello\u200bworld\U000e0049\n"


def _no_hidden(text: str) -> bool:
    return not any(c in text for c in HIDDEN + "\U000e0049")


def test_research_findings_reach_the_dependent_written_out_and_the_diff_is_shown_escaped(
        repo, baton, tmp_path):
    agent = script_agent(tmp_path, "bot", {
        "1": [{"report": "done", "summary": FINDINGS}],
        "2": [{"write": "note.txt", "content": CONTENT}, {"report": "done", "summary": "note"}]})
    write_config(repo, {"agent": agent}, research={"agent": agent})
    load_plan(baton, [task(1, "Research", mode="research"), task(2, "Build", deps=[1])])
    result = baton("run", "--approve", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr

    [prompt] = sorted(Path(os.environ["BATON_HOME"]).glob("runs/*/*/task-2/attempt-*/prompt.md"))
    text = prompt.read_text(encoding="utf-8")
    assert "use the cache<U+200B><U+E0041><U+E0042><U+FEFF> layer" in text, text
    assert _no_hidden(text) and "not reviewed by the person" in text

    review = baton("handoff", "review")
    assert review.returncode == 0, review.stderr
    assert "+hello<U+200B>world<U+E0049>" in review.stdout and _no_hidden(review.stdout)
    one = baton("handoff", "review", "--task", "2")
    assert "+hello<U+200B>world<U+E0049>" in one.stdout and _no_hidden(one.stdout)
    data = json.loads(baton("handoff", "review", "--json").stdout)
    assert "<U+200B>" in data["diff"] and _no_hidden(json.dumps(data, ensure_ascii=False))

    from baton_tui import api

    screen = api.handoff_review(api.open_workspace())
    patches = [f.diff for f in screen.files] + [f.diff for t in screen.tasks for f in t.files]
    assert patches and all(_no_hidden(p) for p in patches + [screen.diff])
    assert any("+hello<U+200B>world<U+E0049>" in p for p in patches)
