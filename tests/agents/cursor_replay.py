"""A scripted `cursor-agent` replaying Cursor's documented `-p --output-format stream-json`
events (the CLI is not installable here). Like the real CLI in print mode it writes files and
runs commands only with `--force`, and `--mode ask` refuses both; it works in `--workspace`.
`--version` and `models` answer like Cursor. Each run's argv goes to $FAKE_CURSOR_LOG (one JSON
list a line); its turns come from $FAKE_CURSOR_TURNS (one JSON list per run).

Turns: {"text"} an assistant message (all of them form the final `result`) · {"shell": cmd} ·
{"write": {"path", "content"}} · {"read": path} · {"limit": message} (to stderr, exit 1, no
result, as Cursor fails) · {"sleep": seconds} (a SIGTERM then exits 0) · {"exit": code} (the
run still ends with a success result, then exits with `code`). It follows Cursor Agent
2026.06.30-1a2b3c4's documented formats.
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
    print("2026.06.30-1a2b3c4")
    sys.exit(0)
if argv[:1] == ["models"]:
    print("Available models\n\nauto - Auto  (current)\nsonnet-4.5 - Claude 4.5 Sonnet\n"
          "gpt-5 - GPT-5\ncomposer-2 - Composer 2\n\nTip: use --model <id> to switch.")
    sys.exit(0)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
with open(os.environ["FAKE_CURSOR_LOG"], "a") as log:
    log.write(json.dumps(argv) + "\n")
runs = json.load(open(os.environ["FAKE_CURSOR_TURNS"]))
done = sum(1 for _ in open(os.environ["FAKE_CURSOR_LOG"])) - 1
turns = runs[min(done, len(runs) - 1)]
os.chdir(argv[argv.index("--workspace") + 1])
prompt = argv[argv.index("--") + 1] if "--" in argv else sys.stdin.read()
session = argv[argv.index("--resume") + 1] if "--resume" in argv else str(uuid.uuid4())
ask = "--mode" in argv and argv[argv.index("--mode") + 1] == "ask"
may_act = "--force" in argv and not ask
model = argv[argv.index("--model") + 1] if "--model" in argv else "auto"


def emit(event):
    print(json.dumps({**event, "session_id": session}), flush=True)


def tool(call_id, kind, args, run):
    emit({"type": "tool_call", "subtype": "started", "call_id": call_id,
          "tool_call": {kind: {"args": args}}})
    result = run() if may_act or kind == "readToolCall" else {
        "rejected": {"reason": "not allowed in print mode without --force" if not ask
                     else "ask mode is read-only"}}
    emit({"type": "tool_call", "subtype": "completed", "call_id": call_id,
          "tool_call": {kind: {"args": args, "result": result}}})


def shell(command):
    done = subprocess.run(command, shell=True, capture_output=True, text=True)
    return {"success": {"command": command, "stdout": done.stdout, "exitCode": done.returncode}}


def write(path, content):
    with open(path, "w") as fh:
        fh.write(content)
    return {"success": {"path": path, "linesCreated": content.count("\n")}}


emit({"type": "system", "subtype": "init", "apiKeySource": "env", "cwd": os.getcwd(),
      "model": model, "permissionMode": "default"})
emit({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]}})
said, code = [], 0
for n, turn in enumerate(turns):
    if "limit" in turn:
        print(turn["limit"], file=sys.stderr, flush=True)
        sys.exit(1)
    if "sleep" in turn:
        time.sleep(turn["sleep"])
    elif "text" in turn:
        said.append(turn["text"])
        emit({"type": "assistant", "message": {"role": "assistant",
              "content": [{"type": "text", "text": turn["text"]}]}})
    elif "shell" in turn:
        tool(f"c{n}", "shellToolCall", {"command": turn["shell"]}, lambda: shell(turn["shell"]))
    elif "write" in turn:
        w = turn["write"]
        tool(f"c{n}", "writeToolCall", {"path": w["path"], "fileText": w["content"]},
             lambda: write(w["path"], w["content"]))
    elif "read" in turn:
        tool(f"c{n}", "readToolCall", {"path": turn["read"]},
             lambda: {"success": {"content": open(turn["read"]).read()}})
    elif "exit" in turn:
        code = turn["exit"]
emit({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1200,
      "duration_api_ms": 1200, "result": "\n\n".join(said), "request_id": "r1",
      "usage": {"inputTokens": 1000, "outputTokens": 50}})
sys.exit(code)
