"""`baton mcp` driven by a real MCP client over stdio, bound to one attempt by its environment."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from baton_tui.plan.current import approve, store_new_plan
from baton_tui.plan.model import parse_document
from baton_tui.trust import trust_file
from baton_tui.workspace import Workspace


def _attempt(repo, autonomy="guarded"):
    (repo / "baton.toml").write_text('[players.custom.a]\ncommand = ["true"]\n')
    ws = Workspace(repo)
    store_new_plan(ws, parse_document({"version": 1, "goal": "g", "autonomy": autonomy,
                                       "tasks": [{"id": 1, "title": "t", "player": "a"}]}))
    trust_file(ws)  # the custom player comes from this repository's baton.toml
    row, _ = approve(ws)
    attempt_id = ws.store.new_attempt(row.id, 1, "nonce-1", "a", {}, "")
    ws.store.append(row.id, 1, "task.started", {"attempt": attempt_id})
    env = {**os.environ, "BATON_STATE": str(ws.paths.store_path), "BATON_TASK": "1",
           "BATON_ATTEMPT": str(attempt_id), "BATON_NONCE": "nonce-1"}
    return ws, row, attempt_id, env


async def _call(env: dict, tool: str, args: dict) -> tuple[list[str], str]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "baton_tui", "mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool(tool, args)
            return tools, "".join(getattr(c, "text", "") for c in result.content)


def test_report_done_over_mcp_is_recorded(repo):
    ws, row, attempt_id, env = _attempt(repo)
    tools, text = asyncio.run(_call(env, "baton_report", {"status": "done", "summary": "did it"}))
    assert set(tools) == {"baton_report", "baton_checkpoint"}
    assert "recorded task 1 as done" in text
    attempt = ws.store.attempt(attempt_id)
    assert attempt.report["status"] == "done" and attempt.report["summary"] == "did it"
    kinds = [e.kind for e in ws.store.events(row.id, task_id=1)]
    assert "task.reported" in kinds


def test_foreign_nonce_is_refused_and_logged(repo):
    ws, row, attempt_id, env = _attempt(repo)
    env["BATON_NONCE"] = "forged"
    _, text = asyncio.run(_call(env, "baton_report", {"status": "done", "summary": "x"}))
    assert text.startswith("refused")
    assert ws.store.attempt(attempt_id).report is None
    assert any(e.kind == "task.report_refused" for e in ws.store.events(row.id))


def test_checkpoint_over_mcp_in_autopilot_goes_ahead_and_is_recorded(repo):
    ws, row, _, env = _attempt(repo, autonomy="autopilot")
    _, text = asyncio.run(_call(env, "baton_checkpoint", {"what": "drop the old table"}))
    assert text.startswith("GO")
    events = ws.store.events(row.id, task_id=1)
    answered = [e for e in events if e.kind == "task.checkpoint_answered"]
    assert answered and answered[0].data["by"] == "autopilot"
    assert json.dumps(answered[0].data)
