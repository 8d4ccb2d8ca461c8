"""Key → paint seen from outside: an app in a real pty, its output read by a terminal emulator.

`bench_tui.py --only pty` uses this. The app under test is the real `baton` command attached to
a real run (eight tasks, each a scripted agent streaming output through Baton's own shims and
reporting progress with `baton report progress`); the baseline is a bare Textual app (an
OptionList of eight one-line rows, j/k bound) in the same terminal size, under the same load,
in the same round. A key is written to the pty's master side and the clock stops when the
bytes that make the terminal show the moved cursor have been read from it — nothing inside
the app is timed or patched. The bytes are read in a thread of their own and stamped as they
arrive, and fed to the emulator (pyte) by another: the paint's time is the arrival of the
bytes after which the screen shows the cursor, however long the emulator (pure Python, slow
on a big frame) then takes to take them in — a backlog in the emulator delays no stamp.
While a terminal is open this process switches threads every 0.5 ms, so a stamp waits at
most that for the emulator's.

    python benchmarks/pty_paint.py agent RATE     # the scripted agent (a custom player)
    python benchmarks/pty_paint.py bare           # the bare app
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve()
COLS, ROWS = 120, 40


def title(i: int) -> str:
    return f"Task number {i}"


# ------------------------------------------------------------------------- the scripted agent
def agent(rate: int) -> None:
    """A coding agent that never finishes: `rate` lines/s of output, and a progress report
    (`baton report progress`, a process of its own as an agent's shell tool runs it) every 2 s."""
    sys.stdin.read()
    task = os.environ.get("BATON_TASK", "?")
    start, sent, step = time.monotonic(), 0, 0
    out = sys.stdout
    while True:
        now = time.monotonic()
        due = int((now - start) * rate)
        if due > sent:
            out.write("".join(f"[task {task}] line {i}: editing src/part{task}.py and running "
                              f"the tests again\n" for i in range(sent, due)))
            out.flush()
            sent = due
        if now - start >= 2 * step:
            subprocess.Popen(["baton", "report", "progress", f"step {step} of task {task}"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            step += 1
        time.sleep(0.02)


# ------------------------------------------------------------------------- the bare app
def bare() -> None:
    from textual.app import App
    from textual.widgets import OptionList

    class Bare(App):
        BINDINGS = [("j", "move(1)"), ("k", "move(-1)"), ("ctrl+q", "quit")]

        def compose(self):
            yield OptionList(*[f"#{i} {title(i)}" for i in range(1, 9)])

        def action_move(self, step: int) -> None:
            rows = self.query_one(OptionList)
            rows.highlighted = (rows.highlighted or 0) + step

    Bare().run()


# ------------------------------------------------------------------------- the terminal
class Terminal:
    """A child in a COLS×ROWS pty; its output is stamped on arrival (`_read`), then fed to
    pyte (`_feed`)."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]):
        import fcntl
        import pty
        import struct
        import termios

        import pyte

        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.child = subprocess.Popen(argv, cwd=cwd, stdin=slave, stdout=slave, stderr=slave,
                                      env={**env, "TERM": "xterm-256color",
                                           "COLORTERM": "truecolor"},
                                      start_new_session=True)
        os.close(slave)
        self.master = master
        self.lock = threading.Condition()
        self.watch: tuple[Callable[[pyte.Screen], bool], list[float]] | None = None
        self.bytes = 0
        self.missed = 0  # presses whose paint the emulator never showed
        self.arrived: queue.SimpleQueue[tuple[bytes, float]] = queue.SimpleQueue()
        # The reader's stamp never waits long for the feeder (put back at `close`).
        self._switch = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch, 0.0005))
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._feed, daemon=True).start()

    def _read(self) -> None:
        """Each chunk of output, stamped as it is read (and nothing else: the emulator is
        `_feed`'s)."""
        while True:
            try:
                data = os.read(self.master, 1 << 16)
            except OSError:
                data = b""
            self.arrived.put((data, time.monotonic()))
            if not data:
                return

    def _feed(self) -> None:
        """The chunks into the emulator, in order; a watched paint gets its chunk's stamp."""
        while True:
            data, at = self.arrived.get()
            with self.lock:
                if not data:
                    self.watch = None
                    self.lock.notify_all()
                    return
                self.bytes += len(data)
                self.stream.feed(data)
                if self.watch is not None and self.watch[0](self.screen):
                    self.watch[1].append(at)
                    self.watch = None
                    self.lock.notify_all()

    def press(self, key: bytes, shows: Callable, timeout: float = 5.0) -> float | None:
        """ms from writing `key` to reading the output after which `shows(screen)` holds."""
        stamp: list[float] = []
        with self.lock:
            self.watch = (shows, stamp)
            t0 = time.monotonic()
            os.write(self.master, key)
            self.lock.wait_for(lambda: self.watch is None, timeout)
            self.watch = None
        return (stamp[0] - t0) * 1000 if stamp else None

    def wait_until(self, shows: Callable, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if shows(self.screen):
                    return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        try:
            os.write(self.master, b"\x11")  # ctrl+q
            self.child.wait(15)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.child.pid, signal.SIGKILL)
            self.child.wait()
        try:
            os.close(self.master)
        except OSError:
            pass
        sys.setswitchinterval(self._switch)


def baton_shows(i: int) -> Callable:
    """Baton's card for task `i` carries the cursor's gutter mark."""
    mark = re.compile(rf"▶ . #{i} {title(i)}\b")
    return lambda screen: any(mark.search(line) for line in screen.display)


def bare_shows(i: int) -> Callable:
    """The bare app's row `i` has the highlight: a background no other row has."""
    def shows(screen) -> bool:
        backgrounds = {}
        for y, line in enumerate(screen.display):
            found = re.search(r"#(\d) Task number", line)
            if found:
                backgrounds[int(found.group(1))] = screen.buffer[y][found.start()].bg
        if i not in backgrounds or len(backgrounds) < 8:
            return False
        return list(backgrounds.values()).count(backgrounds[i]) == 1
    return shows


def cpu_seconds(pid: int) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def presses(term: Terminal, shows: Callable[[int], Callable], seconds: float
            ) -> tuple[list[float], float]:
    """j/k up and down the eight rows for `seconds`: ms per press, and the app's CPU ms per
    press meanwhile (background work included; the load inflates it less than latency)."""
    if not term.wait_until(shows(1), 60):
        raise SystemExit("the app never showed its first row selected")
    time.sleep(0.5)
    at, step, out = 1, 1, []
    cpu = cpu_seconds(term.child.pid)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if at in (1, 8):
            step = 1 if at == 1 else -1
        at += step
        ms = term.press(b"j" if step > 0 else b"k", shows(at), timeout=3.0)
        if ms is None:  # the emulator lost the thread now and then (pyte): count it, go on
            term.missed += 1
            if term.missed > 3:
                with term.lock:
                    shown = "\n".join(line.rstrip() for line in term.screen.display)
                raise SystemExit(f"no paint showed row {at} within 5 s; the screen:\n{shown}")
            continue
        out.append(ms)
        time.sleep(0.03)
    return out, (cpu_seconds(term.child.pid) - cpu) * 1000 / max(1, len(out))


# ------------------------------------------------------------------------- the real run
def start_run(repo: Path, rate: int, env: dict[str, str]) -> None:
    """Eight independent tasks of the streaming agent, approved and running."""
    player = [sys.executable, str(HERE), "agent", str(rate)]
    (repo / "baton.toml").write_text(
        f"[players.custom.stream]\ncommand = {json.dumps(player)}\n"
        f"research_command = {json.dumps(player)}\n\n[limits]\nmax_parallel = 8\n")
    tasks = [{"id": i, "title": title(i), "prompt": f"Do part {i}.", "player": "stream",
              "mode": "research", "skills": ["tdd"], "scope": [f"src/part{i}.py"]}
             for i in range(1, 9)]
    plan = repo.parent / "plan.json"
    plan.write_text(json.dumps({"version": 1, "goal": "Benchmark the TUI", "tasks": tasks}))
    for args in (["plan", "--from", str(plan)], ["trust"], ["run", "--approve", "--detach"]):
        done = subprocess.run(["baton", *args], cwd=repo, env=env, capture_output=True,
                              text=True)
        if done.returncode:
            raise SystemExit(f"baton {' '.join(args)}: {done.stderr or done.stdout}")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = json.loads(subprocess.run(["baton", "status", "--json"], cwd=repo, env=env,
                                           check=True, capture_output=True).stdout)
        if sum(t["state"] == "running" for t in status["tasks"]) == 8:
            return
        time.sleep(0.3)
    raise SystemExit("the eight tasks never all ran")


def stop_run(repo: Path, env: dict[str, str]) -> None:
    status = json.loads(subprocess.run(["baton", "status", "--json"], cwd=repo, env=env,
                                       capture_output=True).stdout or "{}")
    pid = status.get("conductor")
    pid = pid.get("pid") if isinstance(pid, dict) else pid
    if pid:
        os.kill(int(pid), signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)


def p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


def measure(repo: Path, seconds: float, rounds: int, rate: int) -> dict:
    """Both apps, `rounds` times each in turn, in a real run of eight streaming agents."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    start_run(repo, rate, env)
    apps: dict[str, tuple[list[str], Callable[[int], Callable]]] = {
        "bare": ([sys.executable, str(HERE), "bare"], bare_shows),
        "baton": (["baton"], baton_shows)}
    p95s: dict[str, list[float]] = {kind: [] for kind in apps}
    p50s: dict[str, list[float]] = {kind: [] for kind in apps}
    count = dict.fromkeys(apps, 0)
    written = dict.fromkeys(apps, 0)
    missed = dict.fromkeys(apps, 0)
    cpu: dict[str, list[float]] = {kind: [] for kind in apps}
    try:
        for _ in range(rounds):
            for kind, (argv, shows) in apps.items():
                term = Terminal(argv, repo, env)
                try:
                    ms, busy = presses(term, shows, seconds)
                finally:
                    term.close()
                p95s[kind].append(p95(ms))
                p50s[kind].append(statistics.median(ms))
                count[kind] += len(ms)
                written[kind] += term.bytes
                missed[kind] += term.missed
                cpu[kind].append(busy)
    finally:
        stop_run(repo, env)
    baton, base = statistics.median(p95s["baton"]), statistics.median(p95s["bare"])
    return {"agents": 8, "rate": rate, "rounds": rounds,
            "baton_p50_ms": statistics.median(p50s["baton"]), "baton_p95_ms": baton,
            "bare_p50_ms": statistics.median(p50s["bare"]), "bare_p95_ms": base,
            "ratio_p95": round(baton / base, 2),
            "ratio_p50": round(statistics.median(p50s["baton"])
                               / statistics.median(p50s["bare"]), 2),
            **{f"{kind}_p95_each": [round(v, 1) for v in p95s[kind]] for kind in apps},
            **{f"{kind}_cpu_ms_per_press": round(statistics.median(cpu[kind]), 1)
               for kind in apps},
            "presses": count, "missed": missed, "bytes_written": written, "load": os.getloadavg()[0]}


if __name__ == "__main__":
    if sys.argv[1] == "agent":
        agent(int(sys.argv[2]))
    elif sys.argv[1] == "bare":
        bare()
