"""What an attempt's `spec` column holds: how it was started, by which runner, and what its
runner and conductor noted about it since. One JSON object; every key optional (an attempt
is recorded empty first, and keys arrive as the attempt goes), so readers use `.get`.

Its own module, apart from `rows`: `typing` stays off the status and report paths."""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class AttemptSpec(TypedDict, total=False):
    """The keys of `attempts.spec`, written by the runners and the conductor."""

    # how it was started (every runner)
    argv: list[str]                 # the agent's command line ([] for a remote attempt)
    cwd: str                        # the worktree (or folder) it works in
    env_names: list[str]            # names of the variables it was given, never the values
    stdin_prompt: bool              # the prompt goes to the agent on stdin
    prompt_path: str                # the file holding the prompt (or what stdin reads)
    base: str | None                # the commit its branch was cut from
    branch: str | None              # its task branch (None: research or folder mode)
    mode: str                       # the task's mode word (`Mode`)
    resumed: bool                   # continues a saved session, not a fresh start
    resume_message: str | None      # what the resumed session is told first
    readonly: dict[str, list[str]] | None  # what the agent sees read-only (`readonly.layout`)
    secret_prints: dict[str, Any] | None   # its secrets' salted fingerprints (`redact`)
    runner: str                     # the runner it ran on (absent: this machine)
    # noted while it runs or when it ends
    silenced: float                 # seconds silent when the stall limit stopped it
    leftover: list[dict[str, Any]]  # processes it left that could not be ended (pid, command)
    log_cut: int                    # bytes cut from the front of its output log
    lost: str                       # why a remote attempt's outcome never came home
    # a remote (cluster) attempt
    remote: bool                    # ran on a cluster node, not here
    job: str                        # the job's name on the cluster and the exchange
    refs: dict[str, str]            # the job's refs on the exchange, by role
    pushed: str                     # the commit pushed to the exchange as its start
    seal: str                       # the secret its record is sealed with
    payload: dict[str, Any]         # what was submitted, to submit again after a crash
    submitted: float                # when the submission was recorded
    node: str | None                # the worker it ran on
    node_attempt: int | None        # its attempt's id in the node's own store
    replayed: bool                  # its record was applied here (never twice)


# The same keys, for `Store.note_attempt`, which sets one by name (a test keeps the two equal).
SpecKey = Literal[
    "argv", "cwd", "env_names", "stdin_prompt", "prompt_path", "base", "branch", "mode",
    "resumed", "resume_message", "readonly", "secret_prints", "runner", "silenced", "leftover",
    "log_cut", "lost", "remote", "job", "refs", "pushed", "seal", "payload", "submitted",
    "node", "node_attempt", "replayed",
]
