"""A custom agent whose child answers SIGTERM by starting a new process in a session of its
own (setsid) — one that ignores SIGTERM and keeps appending to a file — and then exits. The
agent reports done and exits, leaving the child behind.

Baton must end the whole tree, the process born while it was being ended too.
usage: respawner.py PIDFILE TICKS
"""

import subprocess
import sys

sys.stdin.read()
TICKER = ("import signal, sys, time\n"
          "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
          "while True:\n"
          "    open(sys.argv[1], 'a').write('tick\\n')\n"
          "    time.sleep(0.05)\n")
CHILD = ("import os, signal, subprocess, sys, time\n"
         "def respawn(*_):\n"
         "    new = subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[3]],\n"
         "                           start_new_session=True, stdin=subprocess.DEVNULL)\n"
         "    open(sys.argv[2], 'w').write(f'{new.pid}\\n')\n"
         "    os._exit(0)\n"
         "signal.signal(signal.SIGTERM, respawn)\n"
         "while True:\n"
         "    time.sleep(0.05)\n")
subprocess.Popen([sys.executable, "-c", CHILD, TICKER, sys.argv[1], sys.argv[2]],
                 start_new_session=True, stdin=subprocess.DEVNULL)
with open("work.txt", "w") as fh:
    fh.write("done\n")
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "left a child"]).returncode)
