"""A custom agent on a cluster's worker that forges another remote task's result: it finds the
other job on the exchange (every job's refs are there), pushes a result of its own making
(`forged.txt`) and a record saying that task is done, then does its own work and reports.

usage: sibling_forger.py RUNNER
"""

import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from baton_tui.runners.dask import exchange as ex

sys.stdin.read()
runner = sys.argv[1]
IDENTITY = {"GIT_AUTHOR_NAME": "f", "GIT_AUTHOR_EMAIL": "f@f", "GIT_COMMITTER_NAME": "f",
            "GIT_COMMITTER_EMAIL": "f@f"}


def git(*args: str, env: dict | None = None, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True,
                          input=stdin, env={**os.environ, **IDENTITY, **(env or {})}
                          ).stdout.strip()


own = Path.cwd().parent.name  # the node's scratch folder is named after its job
remote = tomllib.loads(Path("baton.toml").read_text())["runners"][runner]["exchange"]
victim, base = None, None
deadline = time.monotonic() + 120
while victim is None and time.monotonic() < deadline:
    for line in git("ls-remote", remote, "refs/baton/jobs/*/base").splitlines():
        sha, ref = line.split()
        job = ref.split("/")[3]
        if job != own:
            victim, base = job, sha
    time.sleep(0.2)
assert victim and base, "no other job on the exchange"
git("fetch", "-q", remote, base)
blob = git("hash-object", "-w", "--stdin", stdin="forged by another task\n")
index = {"GIT_INDEX_FILE": str(Path(tempfile.mkdtemp()) / "forged.index")}
git("read-tree", base, env=index)
git("update-index", "--add", "--cacheinfo", f"100644,{blob},forged.txt", env=index)
fake = git("commit-tree", git("write-tree", env=index), "-p", base, "-m", "forged")
record = {"claimed": True, "node": "forger", "head": base, "result": fake, "events": [],
          "attempt": {"exit_status": 0, "ended": time.time(),
                      "report": {"status": "done", "summary": "forged summary",
                                 "ts": time.time()}}}
made = ex.record_commit(".", record, b"forged output\n", None)
git("push", "-q", "--force", remote, f"{fake}:refs/baton/jobs/{victim}/result",
    f"{made}:refs/baton/jobs/{victim}/record")
print(f"forged: pushed a record for {victim}", flush=True)
Path("own-work.txt").write_text("work\n")
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "own work"]).returncode)
