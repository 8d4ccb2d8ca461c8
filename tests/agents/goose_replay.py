"""A scripted `goose` replaying Goose's documented `goose run --output-format stream-json`
events (Goose is not installable here). Like Goose it names its extensions after their command
(`baton mcp` is "baton", a `baton-read` script is "baton-read"), starts each `--with-extension`
as a real stdio MCP server with its own environment and calls its tools over MCP, offers the
`developer` tools (write, shell) only with `--with-builtin developer`, refuses to run headless
unless GOOSE_MODE=auto, and keeps named sessions ($FAKE_GOOSE_SESSIONS) that `--resume --name`
continues. Without `--no-profile` it loads the person's profile: every extension their
config.yaml (`goose configure`'s) enables, whose tool `<name>__hello` answers. `--version`
answers like Goose. Each run's argv goes to $FAKE_GOOSE_LOG; its turns come from
$FAKE_GOOSE_TURNS (one JSON list per run). It follows Goose 1.21.1's documented formats.

Turns: {"text"} · {"tool": name, "args": {…}} (`write`, `shell`, or `<extension>__<tool>`) ·
{"error": message} (an `error` event, exit 1) · {"sleep": seconds} (a SIGTERM then exits 0).
"""

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from contextlib import AsyncExitStack

argv = sys.argv[1:]
if argv == ["--version"]:
    print("1.21.1")
    sys.exit(0)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
with open(os.environ["FAKE_GOOSE_LOG"], "a") as log:
    log.write(json.dumps(argv) + "\n")
runs = json.load(open(os.environ["FAKE_GOOSE_TURNS"]))
done = sum(1 for _ in open(os.environ["FAKE_GOOSE_LOG"])) - 1
turns = runs[min(done, len(runs) - 1)]


def values(flag):
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


def emit(event):
    print(json.dumps(event), flush=True)


def fail(message):
    emit({"type": "error", "error": message})
    sys.exit(1)


if os.environ.get("GOOSE_MODE") != "auto":
    print("Error: Tool approval required in non-interactive mode", file=sys.stderr)
    sys.exit(1)
name = values("--name")[0]
store_path = os.environ["FAKE_GOOSE_SESSIONS"]
sessions = json.load(open(store_path)) if os.path.exists(store_path) else {}
if "--resume" in argv and name not in sessions:
    print(f"Error: No session found with name '{name}'", file=sys.stderr)
    sys.exit(1)
sessions.setdefault(name, {"runs": 0, "cwd": os.getcwd()})
sessions[name]["runs"] += 1
json.dump(sessions, open(store_path, "w"))
instructions = open(values("-i")[0]).read()
developer = "developer" in ",".join(values("--with-builtin")).split(",")
def profile_extensions():
    """The extensions the person's config.yaml enables (`extensions:` → NAME → enabled: true)."""
    home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.environ["HOME"], ".config")
    try:
        lines = open(os.path.join(home, "goose", "config.yaml")).read().splitlines()
    except OSError:
        return set()
    found, section, current = set(), False, None
    for line in lines:
        if not line.startswith(" "):
            section = line.rstrip() == "extensions:"
        elif section and line.startswith("  ") and not line.startswith("   "):
            current = line.strip().rstrip(":")
        elif section and current and line.strip() == "enabled: true":
            found.add(current)
    return found


profile = set() if "--no-profile" in argv else profile_extensions()
extensions = {}
for command in values("--with-extension"):
    words = shlex.split(command)
    while words and "=" in words[0]:
        words.pop(0)
    extensions[os.path.basename(words[0])] = words


def message(role, content, n):
    emit({"type": "message", "message": {"id": f"msg-{n}", "role": role, "created": 0,
                                         "content": content}})


async def call_extension(stack, servers, ext, tool, args):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    if ext not in servers:
        words = extensions[ext]
        params = StdioServerParameters(command=words[0], args=words[1:], env=dict(os.environ))
        read, write = await stack.enter_async_context(stdio_client(params))
        servers[ext] = await stack.enter_async_context(ClientSession(read, write))
        await servers[ext].initialize()
    result = await servers[ext].call_tool(tool, args)
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def main():
    async with AsyncExitStack() as stack:
        servers = {}
        message("user", [{"type": "text", "text": instructions}], 0)
        for n, turn in enumerate(turns, 1):
            if "error" in turn:
                fail(turn["error"])
            if "sleep" in turn:
                time.sleep(turn["sleep"])
                continue
            if "text" in turn:
                message("assistant", [{"type": "text", "text": turn["text"]}], n)
                continue
            tool, args = turn["tool"], turn.get("args", {})
            message("assistant", [{"type": "toolRequest", "id": f"t{n}", "toolCall": {
                "status": "success", "value": {"name": tool, "arguments": args}}}], n)
            ext, _, short = tool.rpartition("__")
            if ext in extensions:
                status, text = "success", await call_extension(stack, servers, ext, short, args)
            elif ext in profile and short == "hello":
                status, text = "success", f"{ext} from the person's profile"
            elif developer and tool == "write":
                with open(args["path"], "w") as fh:
                    fh.write(args["content"])
                status, text = "success", f"wrote {args['path']}"
            elif developer and tool == "shell":
                out = subprocess.run(args["command"], shell=True, capture_output=True, text=True)
                status, text = "success", out.stdout + out.stderr
            else:
                status, text = "error", f"Tool {tool} not found"
            result = ({"status": "success", "value": [{"type": "text", "text": text}]}
                      if status == "success" else {"status": "error", "error": text})
            message("user", [{"type": "toolResponse", "id": f"t{n}", "toolResult": result}], n)
    emit({"type": "complete", "total_tokens": 1500, "input_tokens": 1400, "output_tokens": 100,
          "cost_usd": 0.0042})


asyncio.run(main())
