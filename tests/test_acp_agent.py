"""`baton acp` driven by the ACP SDK's client side (`agent-client-protocol`), as an editor drives
it: a whole session — goal → the planner's question → answer → plan entries → approval asked
and given → tasks as tool calls → a guarded checkpoint asked with its evidence → the merge
asked → merged on the person's branch; a rejected approval, an edit in words, cancel mid-run
(paused), and session/load showing the plan again from the store."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.run_kit import load_plan, script_agent, task, write_config

PLANNER = Path(__file__).parent / "planners" / "scripted_planner.py"


class Editor:
    """The editor's side: records every update, answers permission requests in turn."""

    def __init__(self, answers: list[str]):
        self.answers = list(answers)
        self.updates: list[Any] = []
        self.asked: list[tuple[str, str]] = []   # (title, the body shown)
        self.on_update = None

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        if self.on_update is not None:
            await self.on_update(update)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **_: Any) -> Any:
        from acp.schema import AllowedOutcome, RequestPermissionResponse

        body = "".join(getattr(c.content, "text", "") for c in tool_call.content or ())
        self.asked.append((tool_call.title, body))
        kinds = {o.kind: o.option_id for o in options}
        assert set(kinds) == {"allow_once", "reject_once"}
        answer = self.answers.pop(0)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=kinds[answer]))

    def on_connect(self, conn: Any) -> None:
        pass

    # what the editor shows -----------------------------------------------------------------
    def text(self) -> str:
        return "".join(u.content.text for u in self.updates
                       if getattr(u, "session_update", "") == "agent_message_chunk")

    def calls(self) -> dict[str, list[Any]]:
        found: dict[str, list[Any]] = {}
        for u in self.updates:
            if getattr(u, "session_update", "") in ("tool_call", "tool_call_update"):
                found.setdefault(u.tool_call_id, []).append(u)
        return found

    def plans(self) -> list[list[tuple[str, str]]]:
        return [[(e.content, e.status) for e in u.entries] for u in self.updates
                if getattr(u, "session_update", "") == "plan"]


async def _with_baton(repo: Path, editor: Editor, steps):
    from acp import PROTOCOL_VERSION, spawn_agent_process

    async with spawn_agent_process(editor, sys.executable, "-m", "baton_tui", "acp",
                                   cwd=str(repo), env=dict(__import__("os").environ)) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_info.name == "baton" and init.agent_capabilities.load_session
        return await steps(conn)


def _prompt(text: str) -> list[Any]:
    from acp import text_block

    return [text_block(text)]


def _config(repo: Path, tmp: Path, baton, agent_script: dict) -> None:
    script = tmp / "planner-script.json"
    script.write_text(json.dumps([
        {"questions": [{"question": "Greet in English?", "recommendation": "yes, English"}]},
        {"version": 1, "goal": "greet", "tasks": [
            {"id": 1, "title": "Write hello", "prompt": "Create hello.txt.", "player": "agent"},
            {"id": 2, "title": "Drop old greeting", "prompt": "Remove old.txt.",
             "player": "agent", "depends_on": [1], "checkpoint": True}]},
    ]))
    planner = [sys.executable, str(PLANNER), str(script)]
    agent = script_agent(tmp, "agent", agent_script)
    write_config(repo, {"agent": agent, "mine": planner}, research={"mine": planner})
    text = (repo / "baton.toml").read_text()
    (repo / "baton.toml").write_text(f'planner = "mine"\n{text}')  # a top-level key: first
    trusted = baton("trust")
    assert trusted.returncode == 0, trusted.stderr


def test_a_whole_session_from_goal_to_merged(repo, tmp_path, baton):
    _config(repo, tmp_path, baton, {
        "1": [{"print": "writing hello.txt"}, {"write": "hello.txt", "content": "hello\n"},
              {"report": "done", "summary": "wrote hello.txt"}],
        "2": [{"checkpoint": "delete old.txt", "evidence": "rm old.txt (dry run: 1 file)"},
              {"write": "bye.txt", "content": "bye\n"},
              {"report": "done", "summary": "dropped the old greeting"}]})
    editor = Editor(["allow_once", "allow_once", "allow_once"])

    async def session(conn):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        first = await conn.prompt(session_id=new.session_id, prompt=_prompt("greet people"))
        asked_first = editor.text()
        second = await conn.prompt(session_id=new.session_id, prompt=_prompt("yes, English"))
        return first, asked_first, second

    first, asked_first, second = asyncio.run(_with_baton(repo, editor, session))
    # the question ended the first turn, with its recommendation
    assert first.stop_reason == "end_turn"
    assert "Greet in English?" in asked_first and "Recommendation: yes, English" in asked_first
    # the planner's steps came as tool calls
    planner_steps = [c for key, c in editor.calls().items() if key.startswith("planner-")]
    assert planner_steps, editor.calls().keys()
    assert all(c[0].kind in ("read", "search", "execute") for c in planner_steps)
    # approval, then the checkpoint (with its evidence), then the merge were asked, in order
    titles = [t for t, _ in editor.asked]
    assert titles[0] == "Approve the plan (2 tasks) and run it?", titles
    assert "Write hello" in editor.asked[0][1] and "Drop old greeting" in editor.asked[0][1]
    assert titles[1] == "Task 2 asks: delete old.txt", titles
    assert "rm old.txt (dry run: 1 file)" in editor.asked[1][1]
    assert titles[2].startswith("Merge 2 landed task(s) onto main"), titles
    assert "+hello" in editor.asked[2][1]
    assert second.stop_reason == "end_turn"
    # tasks as tool calls that ended completed; the plan entries kept current
    calls = editor.calls()
    assert calls["task-1"][-1].status == "completed" and calls["task-2"][-1].status == "completed"
    plans = editor.plans()
    assert [s for _, s in plans[0]] == ["pending", "pending"]
    assert [s for _, s in plans[-1]] == ["completed", "completed"]
    assert "Merged task(s) 1, 2 onto main." in editor.text()
    # merged on the person's branch
    files = subprocess.run(["git", "ls-tree", "--name-only", "main"], cwd=repo,
                           capture_output=True, text=True).stdout.split()
    assert {"hello.txt", "bye.txt"} <= set(files)
    states = [t["state"] for t in baton.json("status", "--json")["tasks"]]
    assert states == ["merged", "merged"]


def test_rejected_then_edited_then_cancelled_mid_run_and_loaded_again(repo, tmp_path, baton):
    agent = script_agent(tmp_path, "agent", {"*": [{"print": "working"}, {"hang": True}]})
    write_config(repo, {"agent": agent, "other": agent})
    load_plan(baton, [task(1, "Long job")])
    editor = Editor(["reject_once", "allow_once"])

    async def session(conn):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = new.session_id
        rejected = await conn.prompt(session_id=sid, prompt=_prompt("run"))
        unapproved = baton.json("status", "--json")["plan"]["approved"]

        async def cancel_once_running(update):
            if getattr(update, "tool_call_id", "") == "task-1" and update.status == "in_progress":
                editor.on_update = None
                await conn.cancel(session_id=sid)

        editor.on_update = cancel_once_running
        edited = await conn.prompt(session_id=sid, prompt=_prompt("use other for task 1"))
        return rejected, unapproved, edited

    rejected, unapproved, edited = asyncio.run(_with_baton(repo, editor, session))
    assert rejected.stop_reason == "end_turn" and unapproved is False
    assert "The plan is not approved." in editor.text()
    assert "task 1: player = \"other\"" in editor.text()
    assert len(editor.asked) == 2            # asked again after the edit, approved
    assert edited.stop_reason == "cancelled"
    status = baton.json("status", "--json")
    assert status["tasks"][0]["player"] == "other"
    assert status["tasks"][0]["state"] == "paused", status["tasks"][0]

    loaded = Editor([])

    async def again(conn):
        return await conn.load_session(cwd=str(repo), session_id="baton-anything", mcp_servers=[])

    asyncio.run(_with_baton(repo, loaded, again))
    assert "#1 Long job: paused" in loaded.text()
    assert loaded.plans()[-1] == [("#1 Long job — other (paused)", "in_progress")]


def test_edits_in_words_and_the_plan_as_entries():
    """What a person types that edits a task, and how the plan's states read as ACP entries."""
    from baton_tui.acp import words

    assert words.edit_of("use codex for task 2") == (2, "player", "codex")
    assert words.edit_of("Please use claude-code for task #3.") == (3, "player", "claude-code")
    assert words.edit_of("/task-player 2 codex") == (2, "player", "codex")
    assert words.edit_of('/task-title 1 "Write a greeting"') == (1, "title", "Write a greeting")
    assert words.edit_of("/task-deps 3 1,2") == (3, "depends_on", "1,2")
    assert words.edit_of("/task-nonsense 1 x") is None
    assert words.edit_of("add a rate limiter to the API") is None
    status = {"tasks": [
        {"id": 1, "title": "A", "player": "codex", "state": "landed"},
        {"id": 2, "title": "B", "player": "codex", "state": "running"},
        {"id": 3, "title": "C", "player": "codex", "state": "failed"},
        {"id": 4, "title": "D", "player": "codex", "state": "queued"}]}
    assert [(e["content"], e["status"]) for e in words.entries(status)] == [
        ("#1 A — codex", "completed"), ("#2 B — codex (running)", "in_progress"),
        ("#3 C — codex (failed)", "pending"), ("#4 D — codex", "pending")]
    assert [words.step_kind(t) for t in ("read src/app.py", "grep TODO", "$ pytest -q")] == \
        ["read", "search", "execute"]
    assert words.step_paths("read src/app.py") == ["src/app.py"]
