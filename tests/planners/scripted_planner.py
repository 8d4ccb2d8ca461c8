"""A scripted planner program (a custom player): answers each planner turn from a JSON script.

Usage: scripted_planner.py SCRIPT.json — the script is a list of outputs; turn N prints the N-th
(a JSON object, or {"raw": "text"} for non-JSON output, or {"write": "path"} to try a write
first). The turn counter lives beside the script, so resumed turns go on where they left off.
Each turn leaves beside the script its prompt (`prompt-N.txt`) and what it read of the
checkout's AGENTS.md, CLAUDE.md and GEMINI.md (`seen-N.json`).
"""

import json
import sys
from pathlib import Path

script_path = Path(sys.argv[1])
counter = script_path.with_suffix(".turn")
turn = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(turn + 1))
prompt = sys.stdin.read()
(script_path.parent / f"prompt-{turn}.txt").write_text(prompt)
seen = {name: Path(name).read_text() for name in ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
        if Path(name).is_file()}  # the instruction files as this CLI would load them
(script_path.parent / f"seen-{turn}.json").write_text(json.dumps(seen))
outputs = json.loads(script_path.read_text())
out = outputs[min(turn, len(outputs) - 1)]
print("reading README.md", flush=True)
if "write" in out:
    Path(out["write"]).parent.mkdir(parents=True, exist_ok=True)
    Path(out["write"]).write_text("planner was here\n")
    out = out["then"]
print(out["raw"] if "raw" in out else json.dumps(out), flush=True)
