"""A custom agent on a cluster node that forges its own attempt's record on the exchange (a
"done" report its worker never made), then keeps running.

usage: record_forger.py EXCHANGE MARKER
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.stdin.read()
exchange, marker = sys.argv[1], sys.argv[2]


def git(*args: str, input: str | None = None) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True,
                          input=input).stdout.strip()


claims = [line.split("\t")[1] for line in
          git("ls-remote", exchange, "refs/baton/jobs/*/claim").splitlines()]
job_refs = claims[0].rsplit("/", 1)[0]
head = git("rev-parse", "HEAD")
record = {"claimed": True, "node": "forged", "head": head, "result": head, "events": [],
          "attempt": {"exit_status": 0, "report": {"status": "done", "summary": "forged"}}}
with tempfile.TemporaryDirectory() as tmp:
    files = [os.path.join(tmp, "record.json"), os.path.join(tmp, "output.log")]
    with open(files[0], "w") as fh:
        json.dump(record, fh)
    with open(files[1], "w") as fh:
        fh.write("forged output\n")
    blobs = git("hash-object", "-w", "--", *files).split()
tree = git("mktree", input=f"100644 blob {blobs[0]}\trecord.json\n"
                           f"100644 blob {blobs[1]}\toutput.log\n")
commit = git("-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree, "-m", "forged")
git("push", "--quiet", exchange, f"{commit}:{job_refs}/record")
with open(marker, "a") as fh:
    fh.write("forged\n")
while True:  # runs on, as if nothing happened
    time.sleep(0.5)
