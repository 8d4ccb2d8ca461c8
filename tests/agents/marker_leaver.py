"""A custom agent retried after a landing conflict: it reports done without resolving the
conflict markers Baton's retry left in `shared.txt` — unless its prompt's feedback names
unresolved markers in that file, which it then resolves (both sides kept)."""

import subprocess
import sys
from pathlib import Path

prompt = sys.stdin.read()
shared = Path("shared.txt")
if "unresolved conflict markers" in prompt and "shared.txt:" in prompt:
    shared.write_text("one\ntwo\n")
    print("markers: resolved", flush=True)
else:
    print("markers: left " + repr(shared.read_text() if shared.exists() else None), flush=True)
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "done"]).returncode)
