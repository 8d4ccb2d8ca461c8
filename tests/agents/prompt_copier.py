"""A custom player that keeps a copy of the prompt it was given (to check what Baton told it),
finishes the task with one file, and reports done."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

shutil.copyfile(os.environ["BATON_PROMPT_FILE"], sys.argv[1])
Path("finished.txt").write_text("finished by the new player\n")
subprocess.run(["baton", "report", "done", "--summary", "finished from the handoff"], check=True)
