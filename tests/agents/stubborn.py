"""A custom agent that ignores SIGTERM and leaves a helper process in its group, then hangs.

Baton must still stop it: the whole process group, SIGKILL after the grace period.
usage: stubborn.py PIDFILE — writes "<agent pid> <helper pid>" to PIDFILE.
"""

import os
import signal
import subprocess
import sys
import time

sys.stdin.read()
signal.signal(signal.SIGTERM, signal.SIG_IGN)
helper = subprocess.Popen([sys.executable, "-c",
                           "import signal, time\n"
                           "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                           "time.sleep(600)\n"])
with open(sys.argv[1], "w") as fh:
    fh.write(f"{os.getpid()} {helper.pid}\n")
print("ignoring SIGTERM now", flush=True)
while True:
    time.sleep(0.5)
