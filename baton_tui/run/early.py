"""A conductor started ahead of its run (stdlib only: the front end starts it first thing,
before its own imports, so the two start up side by side)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from baton_tui.paths import own_module


class Early:
    """A conductor process started ahead of its run, before the caller has even opened the
    repository, held before it reads anything until `spawn_conductor` cues it with the
    repository's root: its interpreter and imports (about 0.25 s) overlap the caller's own
    start-up and checks. A caller that stops first (a refusal, a bad plan, a conductor
    already running) drops it, having done nothing; so does end-of-file (the caller died)."""

    def __init__(self) -> None:
        # Its output goes to the conductor's log once cued (it opens it then): a refused
        # command leaves no trace.
        try:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                own_module("baton_tui", "conductor", "--on-cue"),
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
        except OSError:  # then `spawn_conductor` starts one the usual way, and says why not
            self.proc = None

    def cue(self, root: Path) -> subprocess.Popen[bytes] | None:
        """Let it run `root`; None when there is none to cue (or it already died)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        assert proc.stdin is not None  # started with stdin=PIPE
        try:
            proc.stdin.write(f"go {root}\n".encode("utf-8", "surrogateescape"))
            proc.stdin.close()
        except OSError:
            return None
        return proc

    def drop(self) -> None:
        """End it uncued: it has only imported code, so it is simply killed (at once)."""
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            if proc.stdin is not None:
                proc.stdin.close()

    def __enter__(self) -> "Early":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.drop()


# The one the CLI started first thing, before parsing its arguments (`start_first`), with the
# environment it was started in, until the command takes it (`taken`).
_first: Early | None = None
_first_env: dict[str, str] = {}


def start_first() -> None:
    """Start the conductor of a `baton run` or `baton resume` now, before the CLI has even
    parsed its arguments: the parser is 16 ms of a quiet start, twice that beside busy
    cores, and the conductor's own imports are the start's longest wait."""
    global _first, _first_env
    if _first is None:
        _first_env = dict(os.environ)
        _first = Early()


def taken() -> Early:
    """The conductor `start_first` started, for the command to cue; a new one when there is
    none, or when the command changed the environment since (a kept demo's sample runs on
    the demo's home and model: the conductor must inherit those)."""
    global _first
    early, _first = _first, None
    if early is not None and _first_env != dict(os.environ):
        early.drop()
        early = None
    return early if early is not None else Early()


def drop_untaken() -> None:
    """The command ended without taking it (a usage error, a refusal): it ends uncued."""
    global _first
    early, _first = _first, None
    if early is not None:
        early.drop()
