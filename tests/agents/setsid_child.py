"""A custom agent that starts a child in a session of its own (setsid), which ignores SIGTERM
and keeps appending to a file, then reports done and exits.

Baton must end the attempt's whole tree: the child must not outlive the task.
usage: setsid_child.py PIDFILE TICKS
"""

import subprocess
import sys

sys.stdin.read()
child = subprocess.Popen(
    [sys.executable, "-c",
     "import signal, sys, time\n"
     "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
     "while True:\n"
     "    open(sys.argv[1], 'a').write('tick\\n')\n"
     "    time.sleep(0.05)\n", sys.argv[2]],
    start_new_session=True, stdin=subprocess.DEVNULL)
with open(sys.argv[1], "w") as fh:
    fh.write(f"{child.pid}\n")
with open("work.txt", "w") as fh:
    fh.write("done\n")
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "left a child"]).returncode)
