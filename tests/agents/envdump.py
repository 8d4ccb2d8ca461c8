"""A custom agent that records the environment Baton gave it, then reports done.

usage: envdump.py OUT.json — writes {"env": {...}, "stdin": "..."} to OUT.json.
"""

import json
import os
import subprocess
import sys

out = sys.argv[1]
prompt = sys.stdin.read()
with open(out, "w") as fh:
    json.dump({"env": dict(os.environ), "stdin": prompt, "cwd": os.getcwd()}, fh)
with open("envdump.txt", "w") as fh:
    fh.write("seen\n")
code = subprocess.run(["baton", "report", "done", "--summary", "env recorded"]).returncode
sys.exit(code)
