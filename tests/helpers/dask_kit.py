"""A real Dask cluster for the cluster-runner tests: a scheduler and workers on 127.0.0.1,
inside a network namespace that holds only the loopback interface.

`loopback_only(nodeid)`: a test calls it first; outside the namespace it re-runs that very
test under `unshare -n` (after `ip link set lo up`) and asserts it passed there — so no
traffic of the test, its cluster or its agents can reach any address but 127.0.0.1.
`Cluster` starts `dask scheduler` and `dask worker`s (each with its own `--resources`) as
real processes, waits on the conditions it needs (the scheduler file, every worker known to
the scheduler), and ends them all.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

INSIDE = "BATON_TEST_NETNS"
BIN = Path(sys.executable).parent


def _cannot(why: str) -> None:
    """Skip, loudly — but in CI (which installs everything these tests need) fail."""
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


def loopback_only(nodeid: str, timeout: float = 900) -> bool:
    """True inside the namespace (run the test body); else run it there and return False."""
    if os.environ.get(INSIDE) == "1":
        return True
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        _cannot("needs unshare(1) and ip(8) to run the cluster in a loopback-only namespace")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        _cannot(f"cannot make a network namespace here: {probe.stderr.strip()}")
    root = Path(__file__).resolve().parents[2]
    inner = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
             "-o", "addopts=", "-s", nodeid]
    script = 'ip link set lo up && exec "$@"'
    result = subprocess.run(["unshare", "-n", "sh", "-c", script, "sh", *inner], cwd=root,
                            env={**os.environ, INSIDE: "1"}, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, (
        f"inside the loopback-only namespace:\n{result.stdout[-12000:]}\n{result.stderr[-4000:]}")
    return False


def only_loopback_here() -> None:
    """The namespace holds the loopback interface alone."""
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    names = [line.split(":")[1].strip().split("@")[0] for line in out.splitlines()]
    assert names == ["lo"], names


def _own_group_dying_with_us() -> None:
    """In the child: a process group of its own (killed whole), and SIGKILL when the test
    process goes (a timed-out test exits without its teardown: no cluster is left behind)."""
    os.setsid()
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


class Cluster:
    """A scheduler and named workers, each with its resources, on 127.0.0.1."""

    def __init__(self, folder: Path, workers: dict[str, str], env: dict[str, str] | None = None,
                 exposed: bool = False):
        self.folder = folder
        # Bound to the loopback alone, as the README shows (`--no-dashboard` alone still
        # serves HTTP on every interface); `exposed`: as a careless set-up is.
        self.http = ["--no-dashboard"] if exposed else ["--dashboard-address", "127.0.0.1:0"]
        self.env = {**os.environ, **(env or {})}  # the workers' own (the node's keys)
        folder.mkdir(parents=True, exist_ok=True)
        self.file = folder / "scheduler.json"
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}
        self._start("scheduler", [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1",
                                  "--port", "0", *self.http, "--scheduler-file",
                                  str(self.file)])
        wait(lambda: self.file.exists() and self.file.stat().st_size > 0, 120,
             "the scheduler's file", self)
        self.address = json.loads(self.file.read_text())["address"]
        for name, resources in workers.items():
            self.add_worker(name, resources)
        self.started = wait(lambda: (found := self._ask()) and len(found) == len(workers)
                            and found, 180, "every worker", self)

    def _start(self, name: str, argv: list[str]) -> None:
        log = self.folder / f"{name}.log"
        self.logs[name] = log
        with open(log, "ab") as out:
            self.procs[name] = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL, cwd=self.folder,
                                                env=self.env,
                                                preexec_fn=_own_group_dying_with_us)

    def add_worker(self, name: str, resources: str) -> None:
        self._start(name, [str(BIN / "dask"), "worker", "--scheduler-file", str(self.file),
                           "--host", "127.0.0.1", "--name", name, "--nthreads", "4",
                           "--no-nanny", *self.http, "--resources", resources])

    def workers(self) -> dict[str, dict]:
        """The scheduler's workers by name; a client that cannot connect (a loaded machine)
        is asked again, and fails the test with its error only after two minutes."""
        errors: list[str] = []
        asked = wait(lambda: (found := self._ask(errors)) is not None and [found], 120,
                     "a client of the scheduler", self, also=lambda: "\n".join(errors[-2:]))
        return asked[0]

    def _ask(self, errors: list[str] | None = None) -> dict[str, dict] | None:
        """The scheduler's workers by name (asked in a subprocess: a client of our own), or
        None when that client failed."""
        code = ("import json,sys\nfrom distributed import Client\n"
                f"c = Client({self.address!r}, timeout='20s')\n"
                "info = c.scheduler_info(n_workers=-1)\n"
                "print(json.dumps({w['name']: dict(w, address=a) for a, w in "
                "info['workers'].items()}, default=str))\nc.close()\n")
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=120)
        if result.returncode != 0:
            if errors is not None:
                errors.append(result.stderr[-2000:])
            return None
        return json.loads(result.stdout)

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)

    def close(self) -> None:
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
        for proc in self.procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)

    def tails(self) -> str:
        return "\n".join(f"--- {name}\n{log.read_text(errors='replace')[-3000:]}"
                         for name, log in self.logs.items() if log.exists())


def wait(predicate, timeout: float, what: str, cluster: Cluster | None = None, also=None):
    """Poll `predicate` until it returns something truthy (that); else fail, with the
    cluster's logs and `also()` (more to show) in the message."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}" + (f"\n{also()}" if also else "")
                         + (f"\n{cluster.tails()}" if cluster else ""))


@contextmanager
def loopback_cluster(folder: Path, workers: dict[str, str], **kwargs) -> Iterator[Cluster | None]:
    """A cluster's fixture body: inside the loopback-only namespace a scheduler and `workers`
    (closed after); outside None — the test re-runs itself inside (`loopback_only`)."""
    if os.environ.get(INSIDE) != "1":
        yield None
        return
    only_loopback_here()
    made = Cluster(folder, workers, **kwargs)
    try:
        yield made
    finally:
        made.close()
