"""`baton mcp`: the report channel as MCP tools over stdio (`baton_report`, `baton_checkpoint`).

Bound to one attempt by its environment (BATON_STATE, BATON_ATTEMPT, BATON_NONCE),
exactly like `baton report`. Agent CLIs start this server themselves, outside
their own sandbox, so a read-only research profile can still report.

Every CLI waits for this server before its first model call, so it speaks the little of MCP
those clients use (initialize, ping, tools/list, tools/call) with the standard library only:
newline-delimited JSON-RPC 2.0 on stdin/stdout, one request at a time.
"""

from __future__ import annotations

import os
import sys

from baton_tui import __version__
from baton_tui.errors import BatonError
from baton_tui.run import channel
from baton_tui.run.jsonrpc import Server

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first


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


def _string(title: str) -> dict:
    return {"title": title, "type": "string"}


def _output_schema(tool: str) -> dict:
    return {"properties": {"result": _string("Result")}, "required": ["result"],
            "title": f"{tool}Output", "type": "object"}


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
     "outputSchema": _output_schema("baton_report")},
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
     "outputSchema": _output_schema("baton_checkpoint")},
]

_FUNCTIONS = {"baton_report": _report, "baton_checkpoint": _checkpoint}


def _arguments(tool: dict, arguments: dict) -> dict:
    """The arguments `tool` takes, checked against its input schema; ValueError says what's wrong."""
    schema = tool["inputSchema"]
    missing = [name for name in schema["required"] if arguments.get(name) is None]
    if missing:
        raise ValueError(f"missing required argument(s): {', '.join(missing)}")
    checked = {}
    for name, spec in schema["properties"].items():
        if name not in arguments:
            continue
        value = arguments[name]
        if value is None and "anyOf" in spec:
            checked[name] = None
        elif isinstance(value, str):
            checked[name] = value
        else:
            raise ValueError(f"argument {name!r} must be a string, not {type(value).__name__}")
    return checked


def _text(text: str, *, error: bool) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def call_tool(params: dict) -> dict:
    name = params.get("name")
    tool = next((t for t in TOOLS if t["name"] == name), None)
    if tool is None:
        return _text(f"Unknown tool: {name}. This server has "
                     f"{' and '.join(t['name'] for t in TOOLS)}.", error=True)
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return _text(f"Invalid arguments for {name}: expected an object", error=True)
    try:
        kwargs = _arguments(tool, arguments)
    except ValueError as exc:
        return _text(f"Invalid arguments for {name}: {exc}", error=True)
    try:
        text = _FUNCTIONS[name](**kwargs)
    except Exception as exc:
        return _text(f"Error executing tool {name}: {type(exc).__name__}: {exc}", error=True)
    return {**_text(text, error=False), "structuredContent": {"result": text}}


def initialize(params: dict) -> dict:
    asked = params.get("protocolVersion")
    version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
    return {"protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "baton", "version": __version__}}


def list_tools(params: dict) -> dict:
    return {"tools": TOOLS}


def _empty(key: str):
    return lambda params: {key: []}


def build_server() -> Server:
    return Server(
        methods={
            "initialize": initialize,
            "ping": lambda params: {},
            "tools/list": list_tools,
            "tools/call": call_tool,
            # Not advertised, but answered empty for clients that ask regardless.
            "prompts/list": _empty("prompts"),
            "resources/list": _empty("resources"),
            "resources/templates/list": _empty("resourceTemplates"),
        },
        notifications={"notifications/initialized": lambda params: None})


def serve() -> None:
    # The protocol owns the real stdout: keep a private copy of it and point fd 1 (and
    # sys.stdout) at stderr, so nothing printed by Baton code or a child process can
    # corrupt the stream.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    try:
        build_server().serve(sys.stdin.buffer, out)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        try:
            out.close()
        except OSError:
            pass
