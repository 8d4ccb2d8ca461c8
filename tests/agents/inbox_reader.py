"""An agent that works until the person tells it something: it polls `baton inbox` (as an
agent checks its inbox between steps), writes what it was told to told.txt, and reports."""

from __future__ import annotations

import subprocess
import time

deadline = time.monotonic() + 90
while time.monotonic() < deadline:
    said = subprocess.run(["baton", "inbox"], capture_output=True, text=True).stdout
    if said.startswith("Messages from the person"):
        with open("told.txt", "w") as fh:
            fh.write(said)
        subprocess.run(["baton", "report", "done", "--summary", "did what I was told"])
        raise SystemExit(0)
    time.sleep(0.2)
subprocess.run(["baton", "report", "failed", "--reason", "nobody told me anything"])
