"""`baton mcp`: the report channel as MCP tools over stdio (`baton_report`, `baton_checkpoint`,
`baton_inbox`).

Bound to one attempt by its environment (BATON_SOCKET, BATON_ATTEMPT, BATON_NONCE),
exactly like `baton report`, and reaching the store the same way (`relay`). Agent CLIs start
this server themselves, outside their own sandbox, so a read-only research profile can still
report.

Every CLI waits for this server before its first model call, so it speaks the little of MCP
those clients use (initialize, ping, tools/list, tools/call) with the standard library only
(mcp_stdio.py): newline-delimited JSON-RPC 2.0 on stdin/stdout, one request at a time.
"""

from __future__ import annotations

from collections.abc import Callable

from baton_tui.core.errors import BatonError
from baton_tui.channel import agent_side, report as channel
from baton_tui.channel import mcp_stdio
from baton_tui.channel.jsonrpc import Server
from baton_tui.channel.mcp_stdio import result_schema, string as _string


def _report(status: str, summary: str) -> str:
    try:
        return agent_side.report_from_env(status, summary)
    except BatonError as exc:
        return f"refused: {exc.message}"


def _checkpoint(what: str, evidence: str | None = None) -> str:
    try:
        code, message = agent_side.checkpoint_from_env(what, evidence)
    except BatonError as exc:
        return f"refused: {exc.message}"
    verdict = {channel.GO: "GO", channel.STOP: "STOP", channel.UNDECIDED: "NOT DECIDED"}[code]
    return f"{verdict}: {message}"


def _inbox() -> str:
    try:
        return agent_side.inbox_from_env()
    except BatonError as exc:
        return f"refused: {exc.message}"


# The tools exactly as FastMCP listed them (input and output schemas included).
TOOLS = [
    {"name": "baton_report",
     "description": (
         "Report your task to Baton: status 'done' with a summary of what you did, 'failed' "
         "with the reason, 'progress' with a short note, or 'limited' when your usage limit "
         "stops you. Done/failed is the only way your task counts as finished; end your turn "
         "after it."),
     "inputSchema": {"properties": {"status": _string("Status"), "summary": _string("Summary")},
                     "required": ["status", "summary"], "title": "baton_reportArguments",
                     "type": "object"},
     "outputSchema": result_schema("baton_report")},
    {"name": "baton_checkpoint",
     "description": (
         "Ask before an irreversible step (migration, deletion, dependency change). Gather a "
         "dry run first and pass its output as `evidence`. Answers GO (go ahead), STOP (do not "
         "take the step) or NOT DECIDED (end your turn now without the step; you will be "
         "resumed with the answer)."),
     "inputSchema": {"properties": {
         "what": _string("What"),
         "evidence": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None,
                      "title": "Evidence"}},
         "required": ["what"], "title": "baton_checkpointArguments", "type": "object"},
     "outputSchema": result_schema("baton_checkpoint")},
    {"name": "baton_inbox",
     "description": (
         "Read the messages the person sent you while you work (`baton tell`). Check it "
         "between steps; each message is given once."),
     "inputSchema": {"properties": {}, "title": "baton_inboxArguments", "type": "object"},
     "outputSchema": result_schema("baton_inbox")},
]

_FUNCTIONS: dict[str, Callable[..., str]] = {"baton_report": _report, "baton_checkpoint": _checkpoint,
                                             "baton_inbox": _inbox}


def call_tool(params: dict) -> dict:
    return mcp_stdio.call_tool(TOOLS, _FUNCTIONS, params)


def build_server() -> Server:
    return mcp_stdio.tool_server("baton", TOOLS, _FUNCTIONS)


def serve() -> None:
    mcp_stdio.serve(build_server())
