"""Process identity, trees and CPU time, on real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from baton_tui import procs

pytestmark = pytest.mark.skipif(not hasattr(os, "setsid"), reason="POSIX process groups")

# A child in a group of its own that starts a grandchild in a session of its own (setsid),
# prints the grandchild's pid and waits. Both end by themselves after a minute at most.
ESCAPER = textwrap.dedent("""
    import subprocess, sys, time
    grandchild = subprocess.Popen([sys.executable, "-c", {grandchild!r}],
                                  start_new_session={setsid})
    print(grandchild.pid, flush=True)
    time.sleep(60)
""")
SLEEPER = "import time; time.sleep(60)"
BUSY = "import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"
BUSY_CPU = "import time\nwhile time.process_time() < {seconds}:\n    pass\n"


def wait_until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def started():
    """Start processes in a new group; kill whatever the test left running (by pid)."""
    pids: list[int] = []
    popens: list[subprocess.Popen] = []

    def start(code: str, **kwargs) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                                process_group=0, **kwargs)
        popens.append(proc)
        pids.append(proc.pid)
        return proc

    start.pids = pids
    yield start
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for proc in popens:
        proc.wait(timeout=10)
        proc.stdout.close()


def test_start_token_tells_a_process_from_a_reused_pid(started):
    proc = started(SLEEPER)
    token = procs.start_token(proc.pid)
    assert token is not None
    assert procs.alive(proc.pid, token)
    assert procs.alive(proc.pid)
    assert not procs.alive(proc.pid, token + 1)  # another process under the same pid
    proc.kill()
    proc.wait(timeout=10)
    assert not procs.alive(proc.pid, token)
    assert procs.start_token(proc.pid) is None
    assert not procs.alive(None) and not procs.alive(0)


def test_kill_tree_reaches_a_grandchild_that_left_the_group(started):
    child = started(ESCAPER.format(grandchild=SLEEPER, setsid=True))
    grandchild = int(child.stdout.readline())
    started.pids.append(grandchild)
    assert procs.alive(grandchild)
    assert os.getpgid(grandchild) != child.pid  # setsid took it out of the child's group

    assert procs.kill_tree(child.pid, signal.SIGKILL)
    child.wait(timeout=10)
    assert wait_until(lambda: not procs.alive(grandchild)), "the setsid grandchild survived"
    assert not procs.group_alive(child.pid)
    assert not procs.kill_tree(child.pid, signal.SIGKILL)  # nothing left to signal


def test_the_group_signal_alone_misses_the_escaped_grandchild(started):
    child = started(ESCAPER.format(grandchild=SLEEPER, setsid=True))
    grandchild = int(child.stdout.readline())
    started.pids.append(grandchild)
    assert procs.signal_group(child.pid, signal.SIGKILL)
    child.wait(timeout=10)
    time.sleep(0.2)
    assert procs.alive(grandchild)  # why kill_tree exists
    os.kill(grandchild, signal.SIGKILL)


def test_kill_tree_signals_a_pid_that_leads_no_group(started):
    child = started(ESCAPER.format(grandchild=SLEEPER, setsid=False))
    grandchild = int(child.stdout.readline())
    started.pids.append(grandchild)
    assert os.getpgid(grandchild) == child.pid  # a member of its parent's group
    assert procs.kill_tree(grandchild, signal.SIGKILL)
    assert wait_until(lambda: not procs.alive(grandchild))
    assert child.poll() is None  # its parent was not touched


def test_tree_cpu_time_counts_a_busy_descendant_outside_the_group(started):
    child = started(ESCAPER.format(grandchild=BUSY.format(seconds=30), setsid=True))
    grandchild = int(child.stdout.readline())
    started.pids.append(grandchild)
    assert procs.tree_cpu_time(child.pid) < 5.0
    # The child sleeps: only the busy grandchild, in a session of its own, adds up.
    assert wait_until(lambda: procs.tree_cpu_time(child.pid) > 0.3), \
        procs.tree_cpu_time(child.pid)
    before = procs.tree_cpu_time(child.pid)
    assert wait_until(lambda: procs.tree_cpu_time(child.pid) > before + 0.1)


def test_tree_cpu_time_keeps_the_time_of_reaped_children(started):
    code = (f"import subprocess, sys, time\n"
            f"subprocess.run([sys.executable, '-c', {BUSY_CPU.format(seconds=0.5)!r}])\n"
            f"print('reaped', flush=True)\n"
            f"time.sleep(60)\n")
    child = started(code)
    assert child.stdout.readline().strip() == "reaped"
    assert procs.tree_cpu_time(child.pid) >= 0.4


def test_tree_cpu_time_of_a_gone_process_is_zero(started):
    proc = started("pass")
    proc.wait(timeout=10)
    assert procs.tree_cpu_time(proc.pid) == 0.0
    assert procs.tree_cpu_time(None) == 0.0


def test_waiting_for_a_process_returns_as_soon_as_it_exits():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    began = time.monotonic()
    procs.wait_exit(child.pid, 30)
    assert child.wait(timeout=5) == 0
    assert time.monotonic() - began < 10  # woken by the exit, not by the 30 s timeout
    began = time.monotonic()
    procs.wait_exit(child.pid, 30)  # gone already: no wait at all
    assert time.monotonic() - began < 10


def test_waiting_works_with_a_descriptor_past_select_s_limit():
    """A process holding over a thousand files open gets pidfds numbered past 1023, which
    `select` refuses; the wait must still return at the exit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip("this machine allows too few open files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
        began = time.monotonic()
        procs.wait_exit(child.pid, 30)
        assert child.wait(timeout=5) == 0
        assert time.monotonic() - began < 10
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
