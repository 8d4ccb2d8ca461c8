"""A custom agent that reports usage Baton must refuse (a negative count, NaN, infinity),
prints what each refusal told it, then writes its work and reports done with good numbers."""

import subprocess
import sys
from pathlib import Path

sys.stdin.read()
for option, value in (("--tokens", "-5"), ("--tokens=-5", None), ("--cost", "nan"),
                      ("--cost", "inf"), ("--cost", "-1")):
    argv = ["baton", "report", "progress", "counting", option, *([value] if value else [])]
    result = subprocess.run(argv, capture_output=True, text=True)
    print(f"refused report exit status: {result.returncode}; said: {result.stderr.strip()}",
          flush=True)
Path("usage.txt").write_text("counted\n")
done = ["baton", "report", "done", "--summary", "counted", "--tokens", "7", "--cost", "0.5"]
sys.exit(subprocess.run(done).returncode)
