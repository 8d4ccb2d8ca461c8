"""A custom agent that reports done with a nonce that is not its own, then exits.

Baton must refuse the report (exit 2), so the task ends without a report and fails.
"""

import os
import subprocess
import sys

sys.stdin.read()
env = {**os.environ, "BATON_NONCE": "0" * 32}
code = subprocess.run(["baton", "report", "done", "--summary", "forged"], env=env).returncode
print(f"forged report exit status: {code}", flush=True)
sys.exit(0)
