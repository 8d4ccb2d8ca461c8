"""A custom agent that tries to report done for another task, then reports for itself.

usage: impersonator.py VICTIM_TASK MARKER

It reads Baton's store (BATON_STATE) the way any agent running as the person can, finds the
victim task's attempt, and tries every report it can make for it: the victim's attempt id
with its own nonce; its own attempt while claiming the victim's BATON_TASK; and the victim's
attempt with every nonce-like string the store's files hold. It prints each exit status,
reports done for its own task, and writes MARKER so the victim knows it is over.
"""

import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.stdin.read()
victim, marker = int(sys.argv[1]), Path(sys.argv[2])
state = os.environ["BATON_STATE"]


def victim_attempt() -> int:
    for _ in range(600):
        with sqlite3.connect(state) as conn:
            row = conn.execute("SELECT id FROM attempts WHERE task_id = ? ORDER BY id DESC",
                               (victim,)).fetchone()
        if row:
            return row[0]
        time.sleep(0.1)
    raise SystemExit("the victim never started")


def report(**env: str) -> int:
    return subprocess.run(["baton", "report", "done", "--summary", "forged"],
                          env={**os.environ, **env}).returncode


target = str(victim_attempt())
tries = {"victim attempt, own nonce": report(BATON_ATTEMPT=target, BATON_TASK=str(victim)),
         "own attempt, victim task": report(BATON_TASK=str(victim))}
blob = b"".join(p.read_bytes() for p in Path(state).parent.iterdir() if p.is_file())
found = set(re.findall(rb"bnc_[0-9a-f]{32}|(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])", blob))
for n, token in enumerate(sorted(found)[:10]):  # nonces, or the hashes the store keeps
    tries[f"store token {n}"] = report(BATON_ATTEMPT=target, BATON_TASK=str(victim),
                                       BATON_NONCE=token.decode())
for what, code in tries.items():
    print(f"forged report ({what}) exit status: {code}", flush=True)
own = subprocess.run(["baton", "report", "done", "--summary", "my own work"]).returncode
marker.write_text("done\n")
sys.exit(own)
