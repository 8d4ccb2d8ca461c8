"""A scripted `claude` replaying Claude Code's documented subscriber-limit messages.

The subscriber usage limit ("You've hit your session limit · resets …") cannot be produced with
an API key, so the real-player suite puts this program first on PATH as `claude` (through a
small wrapper). The first run hits the limit, resetting at FAKE_CLAUDE_RESETS_AT (epoch
seconds); a resumed run (`--resume ID`) writes limit.txt and reports done. Every argv is
appended as a JSON line to FAKE_CLAUDE_LOG.
"""

import json
import os
import subprocess
import sys
import time

argv = sys.argv[1:]
with open(os.environ["FAKE_CLAUDE_LOG"], "a") as fh:
    fh.write(json.dumps(argv) + "\n")
if argv == ["--version"]:
    print("2.1.197 (Claude Code)")
    sys.exit(0)


def emit(obj):
    print(json.dumps(obj), flush=True)


resume = argv[argv.index("--resume") + 1] if "--resume" in argv else None
sid = resume or argv[argv.index("--session-id") + 1]
emit({"type": "system", "subtype": "init", "session_id": sid, "model": "claude-opus-4-8",
      "tools": ["Bash", "Write"], "cwd": os.getcwd()})
if resume is None:
    reset = int(os.environ.get("FAKE_CLAUDE_RESETS_AT") or time.time() + 3)
    shown = time.strftime("%-I:%M%p", time.gmtime(reset)).lower()
    message = f"You've hit your session limit \u00b7 resets {shown} (UTC)"
    emit({"type": "rate_limit_event", "rate_limit_info": {"status": "rejected",
          "resetsAt": reset, "rateLimitType": "five_hour"}, "session_id": sid})
    emit({"type": "assistant", "message": {"id": "msg_1", "model": "<synthetic>", "role":
          "assistant", "content": [{"type": "text", "text": message}]}, "session_id": sid})
    emit({"type": "result", "subtype": "success", "is_error": True, "api_error_status": 429,
          "result": message, "session_id": sid, "total_cost_usd": 0, "num_turns": 1,
          "usage": {"input_tokens": 0, "output_tokens": 0}})
    sys.exit(1)
with open("limit.txt", "w") as fh:
    fh.write("after the reset\n")
done = subprocess.run(["baton", "report", "done", "--summary", "finished after the reset"],
                      capture_output=True, text=True)
emit({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result",
      "tool_use_id": "t1", "content": done.stdout + done.stderr}]}, "session_id": sid})
emit({"type": "result", "subtype": "success", "is_error": False, "result": "Done.",
      "session_id": sid, "total_cost_usd": 0.01, "num_turns": 2,
      "usage": {"input_tokens": 100, "output_tokens": 20}})
