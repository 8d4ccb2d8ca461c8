"""`run_command`, the agent's shell: one child process at a time, in its own process group.

Apart from the file tools because it owns a live child: the loop's signal handler kills that
child's whole group (`Shell.kill`) before the loop exits, so a stopped attempt leaves nothing
running in the worktree.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from baton_tui.native_agent.specs import (
    COMMAND_TIMEOUT,
    COMMAND_TIMEOUT_MAX,
    ToolError,
    clip,
)


class Shell:
    """Runs commands in `root`, with a timeout; `kill` ends the running one, if any."""

    def __init__(self, root: Path):
        self.root = root
        self.child: subprocess.Popen | None = None

    def run(self, command: Any = None, timeout: Any = None) -> str:
        if isinstance(command, str) and command.strip():
            argv = ["sh", "-c", command]
        elif isinstance(command, list) and command and all(isinstance(a, str) for a in command):
            argv = list(command)
        else:
            raise ToolError("`command` is an argv list of strings or a command string")
        try:
            limit = min(max(int(timeout or COMMAND_TIMEOUT), 1), COMMAND_TIMEOUT_MAX)
        except (TypeError, ValueError):
            limit = COMMAND_TIMEOUT
        try:
            self.child = subprocess.Popen(argv, cwd=self.root, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          process_group=0)
        except OSError as exc:
            raise ToolError(f"cannot run {argv[0]}: {exc}") from None
        try:
            out, _err = self.child.communicate(timeout=limit)
            status = f"exit status {self.child.returncode}"
        except subprocess.TimeoutExpired:
            self.kill()
            out, _err = self.child.communicate()
            status = f"timed out after {limit}s (killed)"
        finally:
            child, self.child = self.child, None
        del child
        text = (out or b"").decode("utf-8", "replace")
        return f"{status}\n{clip(text)}".rstrip()

    def kill(self) -> None:
        child = self.child
        if child is not None and child.poll() is None:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
