"""A custom agent that prints MEGABYTES of output as fast as it can, then its last words,
writes its work and reports done. Baton's log keeps the head and the tail only.
usage: flood.py MEGABYTES
"""

import subprocess
import sys

sys.stdin.read()
out = sys.stdout.buffer
out.write(b"FIRST LINE OF THE FLOOD\n")
line = b"flood " * 170 + b"\n"                     # about 1 KiB
for _ in range(int(sys.argv[1]) * 1024):
    out.write(line)
out.write(b"LAST WORDS OF THE FLOOD\n")
out.flush()
with open("flooded.txt", "w") as fh:
    fh.write("survived\n")
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "flooded"]).returncode)
