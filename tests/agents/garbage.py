"""A custom agent that floods its output with binary bytes and huge lines, then works normally."""

import subprocess
import sys

sys.stdin.read()
out = sys.stdout.buffer
out.write(bytes(range(256)) * 64 + b"\n")          # every byte value, NULs included
out.write(b"\xff\xfe\xc3\x28 invalid utf-8 \xe2\x82\n")
out.write(b"x" * (3 * 1024 * 1024) + b"\n")          # one 3 MB line
out.write(b"\x1b[31mred\x1b[0m \r\r\r carriage returns\n")
out.flush()
with open("garbage-survivor.txt", "w") as fh:
    fh.write("still here\n")
report = ["baton", "report", "done", "--summary", "survived the garbage"]
sys.exit(subprocess.run(report).returncode)
