"""`baton mcp`: the report channel as MCP tools over stdio (`baton_report`, `baton_checkpoint`).

Bound to one attempt by its environment (BATON_STATE, BATON_ATTEMPT, BATON_NONCE),
exactly like `baton report`. Agent CLIs start this server themselves, outside
their own sandbox, so a read-only research profile can still report.
"""

from __future__ import annotations

import asyncio

from baton_tui.errors import BatonError
from baton_tui.run import channel


def _report(status: str, summary: str) -> str:
    try:
        return channel.report(channel.caller_from_env(), status, summary)
    except BatonError as exc:
        return f"refused: {exc.message}"


def _checkpoint(what: str, evidence: str | None = None) -> str:
    try:
        code, message = channel.checkpoint(channel.caller_from_env(), what, evidence)
    except BatonError as exc:
        return f"refused: {exc.message}"
    verdict = {channel.GO: "GO", channel.STOP: "STOP", channel.UNDECIDED: "NOT DECIDED"}[code]
    return f"{verdict}: {message}"


def build_server():
    from mcp.server.fastmcp import FastMCP

    server = FastMCP("baton")

    @server.tool(name="baton_report", description=(
        "Report your task to Baton: status 'done' with a summary of what you did, 'failed' with "
        "the reason, 'progress' with a short note, or 'limited' when your usage limit stops "
        "you. Done/failed is the only way your task counts as finished; end your turn after "
        "it."))
    async def baton_report(status: str, summary: str) -> str:
        return await asyncio.to_thread(_report, status, summary)

    @server.tool(name="baton_checkpoint", description=(
        "Ask before an irreversible step (migration, deletion, dependency change). Gather a dry "
        "run first and pass its output as `evidence`. Answers GO (go ahead), STOP (do not take "
        "the step) or NOT DECIDED (end your turn now without the step; you will be resumed "
        "with the answer)."))
    async def baton_checkpoint(what: str, evidence: str | None = None) -> str:
        return await asyncio.to_thread(_checkpoint, what, evidence)

    return server


def serve() -> None:
    build_server().run("stdio")
