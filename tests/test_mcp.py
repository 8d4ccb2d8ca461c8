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
    assert set(tools) == {"baton_report", "baton_checkpoint", "baton_inbox"}
    assert "recorded task 1 as done" in text
    attempt = ws.store.attempt(attempt_id)
    assert attempt.report["status"] == "done" and attempt.report["summary"] == "did it"
    kinds = [e.kind for e in ws.store.events(row.id, task_id=1)]
    assert "task.reported" in kinds


def test_the_inbox_tool_gives_the_persons_messages_once(repo):
    ws, row, attempt_id, env = _attempt(repo)
    ws.store.append(row.id, 1, "task.told", {"id": 1, "text": "use the v2 endpoint"})
    _, text = asyncio.run(_call(env, "baton_inbox", {}))
    assert text == ("Messages from the person (sent while you worked; take them into "
                    "account):\n- use the v2 endpoint")
    [read] = [e for e in ws.store.events(row.id, task_id=1) if e.kind == "task.told_read"]
    assert read.data == {"ids": [1], "attempt": attempt_id, "via": "inbox"}
    _, text = asyncio.run(_call(env, "baton_inbox", {}))
    assert text == "no new messages from the person; carry on"


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


# -- the wire itself: newline-delimited JSON-RPC 2.0 over real pipes ----------------------------
import subprocess  # noqa: E402


class _Pipe:
    """`python -m baton_tui mcp` as a child process, spoken to one JSON line at a time."""

    def __init__(self, env: dict):
        self.proc = subprocess.Popen([sys.executable, "-m", "baton_tui", "mcp"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)

    def send(self, line: str | dict) -> None:
        text = line if isinstance(line, str) else json.dumps(line)
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict:
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), self.proc.stderr.read().decode()
        return json.loads(line)

    def request(self, id_, method: str, params: dict | None = None) -> dict:
        message = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.receive()
        assert reply["jsonrpc"] == "2.0" and reply["id"] == id_
        return reply

    def close(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code


def _without_baton_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("BATON_")}


EXPECTED_TOOLS = {
    "baton_report": ({"status", "summary"}, ["status", "summary"]),
    "baton_checkpoint": ({"what", "evidence"}, ["what"]),
    "baton_inbox": (set(), []),
}


def test_mcp_wire_initialize_list_and_call_inside_an_attempt(repo):
    ws, row, attempt_id, env = _attempt(repo)
    pipe = _Pipe(env)
    try:
        init = pipe.request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                              "clientInfo": {"name": "test", "version": "1"}})
        assert init["result"]["protocolVersion"] == "2025-06-18"
        assert init["result"]["capabilities"]["tools"] == {"listChanged": False}
        assert init["result"]["serverInfo"]["name"] == "baton"
        pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # no reply
        assert pipe.request(2, "ping")["result"] == {}

        tools = {t["name"]: t for t in pipe.request("three", "tools/list")["result"]["tools"]}
        assert set(tools) == set(EXPECTED_TOOLS)
        for name, (properties, required) in EXPECTED_TOOLS.items():
            schema = tools[name]["inputSchema"]
            assert schema["type"] == "object" and set(schema["properties"]) == properties
            assert schema.get("required", []) == required
            assert all(p.get("type") == "string" for k, p in schema["properties"].items()
                       if k != "evidence")
            assert tools[name]["description"]
        assert {"type": "string"} in tools["baton_checkpoint"]["inputSchema"]["properties"][
            "evidence"]["anyOf"]

        result = pipe.request(4, "tools/call", {"name": "baton_report", "arguments": {
            "status": "done", "summary": "did it over the wire"}})["result"]
        assert result["isError"] is False
        assert result["content"][0]["type"] == "text"
        assert "recorded task 1 as done" in result["content"][0]["text"]
    finally:
        assert pipe.close() == 0
    attempt = ws.store.attempt(attempt_id)
    assert attempt.report["status"] == "done"
    assert attempt.report["summary"] == "did it over the wire"


def test_mcp_wire_errors_and_refusals():
    pipe = _Pipe(_without_baton_env())
    try:
        old = pipe.request(1, "initialize", {"protocolVersion": "2024-11-05"})
        assert old["result"]["protocolVersion"] == "2024-11-05"
        assert pipe.request(2, "initialize", {"protocolVersion": "2025-03-26"})[
            "result"]["protocolVersion"] == "2025-03-26"
        unknown_version = pipe.request(3, "initialize", {"protocolVersion": "1999-01-01"})
        assert unknown_version["result"]["protocolVersion"] != "1999-01-01"

        pipe.send("{this is not json")
        malformed = pipe.receive()
        assert malformed["id"] is None and malformed["error"]["code"] == -32700

        assert pipe.request(4, "no/such/method")["error"]["code"] == -32601
        pipe.send({"jsonrpc": "2.0", "method": "notifications/whatever"})  # ignored: no reply

        refused = pipe.request(5, "tools/call", {"name": "baton_report", "arguments": {
            "status": "done", "summary": "x"}})["result"]
        assert refused["isError"] is False  # a refusal is an answer, as with `baton report`
        assert refused["content"][0]["text"].startswith("refused")
        assert pipe.request(6, "tools/call", {"name": "baton_checkpoint", "arguments": {
            "what": "drop it", "evidence": None}})["result"]["content"][0]["text"].startswith(
            "refused")

        unknown = pipe.request(7, "tools/call", {"name": "baton_nope", "arguments": {}})["result"]
        assert unknown["isError"] is True and "baton_nope" in unknown["content"][0]["text"]
        missing = pipe.request(8, "tools/call", {"name": "baton_report",
                                                 "arguments": {"status": "done"}})["result"]
        assert missing["isError"] is True and "summary" in missing["content"][0]["text"]
        wrong_type = pipe.request(9, "tools/call", {"name": "baton_checkpoint",
                                                    "arguments": {"what": 3}})["result"]
        assert wrong_type["isError"] is True and "what" in wrong_type["content"][0]["text"]

        assert pipe.request(10, "ping")["result"] == {}  # still serving after all that
    finally:
        assert pipe.close() == 0


def test_mcp_server_does_not_import_the_mcp_sdk():
    script = ("import sys\nfrom baton_tui.channel import mcp_server\n"
              "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', "
              "'pydantic', 'anyio'))))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
