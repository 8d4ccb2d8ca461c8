"""The little of MCP that Baton's stdio servers speak, on `jsonrpc.Server`.

`baton mcp` (the report tools) and the read-only tools lent to Goose (players/read_tools.py)
are started by agent CLIs that wait for them before their first model call, so both answer
initialize, ping, tools/list and tools/call — and, empty, the listings some clients ask for
regardless — with the standard library only. A tool is a dict as MCP lists it (name,
description, inputSchema, outputSchema) plus a function that takes its arguments and returns
text; the arguments are checked against the input schema as FastMCP (pydantic's lax mode)
checked them, so the schemas and results stayed as they were when these servers ran on it.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable

from baton_tui import __version__
from baton_tui.channel.jsonrpc import Server

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first

_INTEGER_TEXT = re.compile(r"[+-]?\d+(?:_\d+)*(?:\.0*)?", re.ASCII)


def string(title: str, **extra) -> dict:
    return {**extra, "title": title, "type": "string"}


def integer(title: str, **extra) -> dict:
    return {**extra, "title": title, "type": "integer"}


def result_schema(tool: str) -> dict:
    """The output schema of a tool that returns one string (FastMCP's `{tool}Output`)."""
    return {"properties": {"result": string("Result")}, "required": ["result"],
            "title": f"{tool}Output", "type": "object"}


def _as_integer(value) -> int:
    """`value` as an integer the way pydantic's lax mode takes one; ValueError otherwise."""
    if isinstance(value, int):          # bool included: True is 1
        return int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() \
            and abs(value) < 2 ** 63:
        return int(value)
    if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value.strip()):
        return int(value.strip().split(".")[0])
    raise ValueError


def arguments(tool: dict, given: dict) -> dict:
    """The arguments `tool` takes, checked against its input schema; ValueError says what's
    wrong. Arguments the schema does not name are dropped; absent ones take the function's
    defaults."""
    schema = tool["inputSchema"]
    missing = [name for name in schema.get("required", ()) if given.get(name) is None]
    if missing:
        raise ValueError(f"missing required argument(s): {', '.join(missing)}")
    checked: dict[str, object] = {}
    for name, spec in schema["properties"].items():
        if name not in given:
            continue
        value = given[name]
        kind = spec.get("type")
        if value is None and {"type": "null"} in spec.get("anyOf", ()):
            checked[name] = None
        elif (kind == "string" or {"type": "string"} in spec.get("anyOf", ())) \
                and isinstance(value, str):
            checked[name] = value
        elif kind == "integer":
            try:
                checked[name] = _as_integer(value)
            except ValueError:
                raise ValueError(f"argument {name!r} must be an integer, not "
                                 f"{type(value).__name__}") from None
        else:
            raise ValueError(f"argument {name!r} must be a string, not {type(value).__name__}")
    return checked


def text_result(text: str, *, error: bool) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def _names(tools: list[dict]) -> str:
    names = [t["name"] for t in tools]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def call_tool(tools: list[dict], functions: dict[str, Callable[..., str]], params: dict) -> dict:
    """A `tools/call` answered: the tool's text, or an error result (never a protocol error)."""
    name = params.get("name")
    tool = next((t for t in tools if t["name"] == name), None)
    if tool is None:
        return text_result(f"Unknown tool: {name}. This server has {_names(tools)}.", error=True)
    given = params.get("arguments")
    if given is None:
        given = {}
    if not isinstance(given, dict):
        return text_result(f"Invalid arguments for {name}: expected an object", error=True)
    try:
        kwargs = arguments(tool, given)
    except ValueError as exc:
        return text_result(f"Invalid arguments for {name}: {exc}", error=True)
    try:
        text = functions[tool["name"]](**kwargs)
    except Exception as exc:
        return text_result(f"Error executing tool {name}: {type(exc).__name__}: {exc}",
                           error=True)
    return {**text_result(text, error=False), "structuredContent": {"result": text}}


def initialize_for(name: str) -> Callable[[dict], dict]:
    def initialize(params: dict) -> dict:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {"protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": name, "version": __version__}}
    return initialize


def _empty(key: str):
    return lambda params: {key: []}


def tool_server(name: str, tools: list[dict],
                functions: dict[str, Callable[..., str]]) -> Server:
    """A server named `name` offering `tools`, each run by `functions[tool name]`."""
    return Server(
        methods={
            "initialize": initialize_for(name),
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": tools},
            "tools/call": lambda params: call_tool(tools, functions, params),
            # Not advertised, but answered empty for clients that ask regardless.
            "prompts/list": _empty("prompts"),
            "resources/list": _empty("resources"),
            "resources/templates/list": _empty("resourceTemplates"),
        },
        notifications={"notifications/initialized": lambda params: None})


def checked_server(name: str, tools: list[dict],
                   call: Callable[[str, dict], tuple[str, bool]]) -> Server:
    """A server named `name` offering `tools`; `call(tool name, checked arguments)` answers
    each call with (text, whether it is an error result) — for tools that refuse in words."""
    def bound(tool_name: str) -> Callable[..., str]:
        return lambda **kwargs: call(tool_name, kwargs)[0]

    functions = {tool["name"]: bound(tool["name"]) for tool in tools}

    def call_checked(params: dict) -> dict:
        name = params.get("name")
        tool = next((t for t in tools if t["name"] == name), None)
        given = params.get("arguments") or {}
        if tool is None or not isinstance(given, dict):
            return call_tool(tools, functions, params)   # its own error result
        try:
            kwargs = arguments(tool, given)
        except ValueError as exc:
            return text_result(f"Invalid arguments for {name}: {exc}", error=True)
        text, error = call(tool["name"], kwargs)
        result = text_result(text, error=error)
        return result if error else {**result, "structuredContent": {"result": text}}

    server = tool_server(name, tools, functions)
    server.methods["tools/call"] = call_checked
    return server


def serve(server: Server) -> None:
    """Serve on this process's stdin and stdout until stdin ends.

    The protocol owns the real stdout: keep a private copy of it and point fd 1 (and
    sys.stdout) at stderr, so nothing printed by Baton code or a child process can
    corrupt the stream."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    try:
        server.serve(sys.stdin.buffer, out)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        try:
            out.close()
        except OSError:
            pass
