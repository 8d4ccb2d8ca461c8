"""A custom agent that records how its shim started it, then reports done: its signal
dispositions (an ignored SIGTERM would make it unstoppable), its session and group, its
working directory and its shim's parent. With `--kill-spawner` it first SIGKILLs the
process its shim was forked from (the conductor's spawner), when that is not the conductor.

usage: shim_inspector.py OUT_DIR [--kill-spawner] — writes OUT_DIR/<task>.json.
"""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path


def status_field(pid: int, name: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return ""


def cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")


sys.stdin.read()
shim = os.getppid()
above = int(status_field(shim, "PPid"))
record = {"pid": os.getpid(), "ignored": int(status_field(os.getpid(), "SigIgn"), 16), "sid": os.getsid(0),
          "pgid": os.getpgid(0), "shim": shim, "shim_sid": os.getsid(shim), "cwd": os.getcwd(),
          "above": above, "above_cmd": cmdline(above) if above > 1 else ""}
if "--kill-spawner" in sys.argv and "baton_tui.runners.spawner" in record["above_cmd"]:
    os.kill(above, signal.SIGKILL)
    record["killed"] = above
Path(sys.argv[1], os.environ["BATON_TASK"] + ".json").write_text(json.dumps(record))
Path(f"inspected-{os.environ['BATON_TASK']}.txt").write_text("seen\n")
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "inspected"]).returncode)
