"""A scripted `amp` replaying Amp's documented `--stream-json` events (the real Linux build is
not installable here). It does what its turns file says with real side effects — writes a file
(refused when the run's --settings-file disables edits), runs `baton report` as Amp's Bash tool
would, calls Baton's MCP report with the environment its settings file gives the server — and
prints the events Amp prints. `--version` answers like Amp. Each run's argv is appended to
$FAKE_AMP_LOG; the turns come from $FAKE_AMP_TURNS (one JSON list per run).

Turns: {"tool", "input"} · {"text"} (an assistant message; the last one is the result) ·
{"limit": "message"} (a failed result, exit 1) · {"sleep": seconds} (waits on "the model"; a
SIGTERM then ends the run with exit 0, as some CLIs do). It follows Amp 0.0.1790142911's
documented formats.
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

argv = sys.argv[1:]
if argv == ["--version"]:
    print("0.0.1790142911")
    sys.exit(0)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
with open(os.environ["FAKE_AMP_LOG"], "a") as log:
    log.write(json.dumps(argv) + "\n")
runs = json.load(open(os.environ["FAKE_AMP_TURNS"]))
done = sum(1 for _ in open(os.environ["FAKE_AMP_LOG"])) - 1
turns = runs[min(done, len(runs) - 1)]
settings = json.load(open(argv[argv.index("--settings-file") + 1]))
disabled = settings.get("amp.tools.disable", [])
mcp = settings.get("amp.mcpServers", {})
thread = argv[argv.index("continue") + 1] if "continue" in argv else f"T-{uuid.uuid4()}"


def emit(event):
    print(json.dumps({**event, "session_id": thread}), flush=True)


emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "tools": ["Bash", "edit_file"],
      "mcp_servers": [{"name": name, "status": "connected"} for name in mcp]})
final = "Done."
for turn in turns:
    if "text" in turn:
        final = turn["text"]
        emit({"type": "assistant", "message": {"content": [{"type": "text", "text": final}],
              "usage": {"input_tokens": 100, "output_tokens": 10}}})
        continue
    if "limit" in turn:
        emit({"type": "result", "subtype": "error_during_execution", "is_error": True,
              "error": turn["limit"], "num_turns": 1, "duration_ms": 5})
        sys.exit(1)
    if "sleep" in turn:
        time.sleep(turn["sleep"])
        continue
    name, args = turn["tool"], turn["input"]
    emit({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t", "name": name,
          "input": args}], "usage": {"input_tokens": 100, "output_tokens": 10}}})
    if name in disabled:
        result = f"tool {name} is disabled"
    elif name == "create_file":
        with open(args["path"], "w") as fh:
            fh.write(args["content"])
        result = "created"
    elif name == "mcp__baton__baton_report":   # what `baton mcp` would record for Amp
        env = {**os.environ, **mcp["baton"]["env"]}
        result = subprocess.run(["baton", "report", args["status"], "--summary", args["summary"]],
                                env=env, capture_output=True, text=True).stdout
    else:
        result = subprocess.run(args["cmd"], shell=True, capture_output=True, text=True).stdout
    emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t",
          "content": result}]}})
emit({"type": "result", "subtype": "success", "is_error": False, "result": final, "num_turns": 2,
      "duration_ms": 10})
