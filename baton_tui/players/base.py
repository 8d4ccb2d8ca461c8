"""The player adapter contract: what Baton needs to know about one coding agent.

A player turns an attempt (task, mode, prompt file, worktree, environment) into an
argv list that the attempt shim runs in its own process group, and reads the
agent's raw output back into facts (session id, tokens, cost, final text,
usage-limit stop). Adapters never edit the person's own agent configuration:
per-attempt settings go into files under the attempt's own directory.

Implementing a player:
  * `detect()` — installed? signed in? which version? (only ready players are offered)
  * `models`, `default_model`, `efforts` — the catalog (`models = None`: any name accepted);
    `model_problem` refuses a name, `model_unchecked` says why one could not be judged
  * `launch(ctx)` — argv + extra env for build or research; research may run commands (tests,
    linters) where the CLI can but offers no editing tool (its worktree is thrown away), and
    the planner (`ctx.planning`, in the person's checkout) gets neither; both still let the
    report through (shell `baton report` or the MCP tools)
  * `resume(ctx)` — argv to continue a saved session (`ctx.session_id`), or None
  * `decoder()` — a fresh `Decoder` of its output format (decoding.py): the one place that
    reads the agent's output. Everything else is a fold of its events, done here:
    `progress(line)` (one short human line, or None), `halt(line)` (a reason to stop the
    agent now: a retry loop of its own), `outcome(text)` (what the whole log says: session
    id, tokens, cost, limits, errors) and `step_reader()` (readable steps).

Capabilities are flags, never name checks: `runs_agent` (False: no agent, the task's check
runs instead), `check_is_task`, `parses_output`, `research`, `research_shell`, `checkpoints`,
`reports_by_shell`, `reports_in_output`, `retries_limits_itself`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton_tui.players.decoding import Decoder, GenericDecoder, Retrying
from baton_tui.players.limits import printed_at, reading_output
from baton_tui.players.outcome import Outcome, outcome_of, progress_line
from baton_tui.players.steps import StepReader

__all__ = ["AttemptContext", "Detection", "Launch", "Outcome", "Player", "printed_at",
           "reading_output"]


@dataclass
class Detection:
    """Whether a player can be offered, and why not."""

    name: str
    ready: bool
    reason: str = ""
    version: str | None = None
    path: str | None = None
    fix: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "ready": self.ready, "reason": self.reason,
                "version": self.version, "path": self.path, "fix": self.fix}


@dataclass
class AttemptContext:
    """Everything a player needs to build one attempt's command line."""

    task_id: int
    mode: str                    # build | research
    prompt_path: Path            # 0600, outside the worktree
    prompt: str
    worktree: Path
    attempt_dir: Path            # per-attempt files (MCP config, settings) live here
    env: dict[str, str]          # BATON_* and PATH additions, already composed
    model: str | None = None
    effort: str | None = None
    session_id: str | None = None
    resume_message: str | None = None
    bin: str | None = None
    # The planner: research in the person's own checkout, so no shell at all (a research
    # task's throwaway worktree may run commands; its writes are discarded).
    planning: bool = False


@dataclass
class Launch:
    """An argv list plus the environment it adds; the prompt goes on stdin when asked
    (`stdin_file` instead of the prompt file: a resumed session's own short message;
    `session_id` when Baton names the session itself, so a CLI that never prints its id can
    still be resumed)."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    stdin_prompt: bool = False
    stdin_file: Path | None = None
    session_id: str | None = None   # known before the agent runs (a session Baton names)


class Player:
    """Base adapter. Subclasses fill in the class attributes and override the methods."""

    name: str = ""
    binary: str | None = None
    models: tuple[str, ...] | None = None     # None: any model name is accepted
    default_model: str | None = None
    efforts: tuple[str, ...] = ("low", "medium", "high")
    default_effort: str | None = None
    research: bool = True
    checkpoints: bool = True
    max_parallel: int | None = None
    reports_by_shell: bool = True   # False: the agent has Baton's report tools, not a shell
    research_shell: bool = True     # False: research runs without a usable shell (MCP report)
    interactive_resume: tuple[str, ...] = ()  # argv before the session id, e.g. ("--resume",)
    reports_in_output: bool = False  # True: a `BATON: done …` line of its reply is its report
    research_reports_in_output: bool = False  # the same, in research only (no shell, no MCP)
    runs_agent: bool = True         # False: no agent runs; the task's approved check does
    check_is_task: bool = False     # True: the check is the whole task (never run twice)
    retries_limits_itself: bool = False  # it retries a limit on its own: `halt` may stop it
    # Set when the adapter was never run against the real CLI, only against replays of the
    # formats this version of it documents (`baton doctor` says so).
    replayed_version: str | None = None

    def __init__(self, bin_path: str | None = None, env: dict[str, str] | None = None,
                 extra_models: list[str] | None = None):
        self.bin = bin_path
        self.env = dict(env or {})
        self.extra_models = list(extra_models or [])

    # catalog ---------------------------------------------------------------
    def catalog(self) -> tuple[str, ...] | None:
        if self.models is None:
            return None
        return tuple(dict.fromkeys([*self.models, *self.extra_models]))

    def model_problem(self, model: str | None) -> str | None:
        catalog = self.catalog()
        if model is None or catalog is None or model in catalog:
            return None
        return f"player {self.name!r} cannot start model {model!r} (its models: {', '.join(catalog)})"

    def model_unchecked(self, model: str | None) -> str | None:
        """Why `model` is let through without being judged (the player's catalog cannot be
        known here: a provider of the person's own, say), or None when it was judged."""
        return None

    def effort_problem(self, effort: str | None) -> str | None:
        if effort is None or effort in self.efforts:
            return None
        if not self.efforts:
            return f"player {self.name!r} has no effort levels"
        return f"player {self.name!r} has no effort {effort!r} (it has: {', '.join(self.efforts)})"

    # detection ---------------------------------------------------------------
    def executable(self) -> str | None:
        return shutil.which(self.bin or self.binary or "") if (self.bin or self.binary) else None

    def detect(self) -> Detection:
        path = self.executable()
        if path is None:
            return Detection(self.name, False, f"{self.bin or self.binary} not found on PATH",
                             fix=f"install {self.name} or set [players.{self.name}] bin")
        return Detection(self.name, True, "", path=path)

    # running -----------------------------------------------------------------
    def launch(self, ctx: AttemptContext) -> Launch:
        raise NotImplementedError(f"Baton cannot start {self.name} yet")

    def resume(self, ctx: AttemptContext) -> Launch | None:
        return None

    def interactive(self, session_id: str | None) -> list[str] | None:
        """argv of the CLI's own interactive session resumed (for `baton take`), or None when
        it has none (the person gets a shell in the worktree instead)."""
        exe = self.executable()
        flag = self.interactive_resume
        return [exe, *flag, session_id] if exe and flag and session_id else None

    # output: one decoder per stream, everything else folded from its events --------------
    def decoder(self) -> Decoder:
        """A fresh decoder of this player's output (one per stream: decoders keep state)."""
        return GenericDecoder()

    @property
    def parses_output(self) -> bool:
        """Whether this adapter reads steps out of its output; for a program that does not
        (a custom player), every output line counts as one step for the supervisor."""
        return type(self).decoder is not Player.decoder

    def progress(self, line: str) -> str | None:
        """One short human line from one output line, or None."""
        return progress_line(self.decoder().feed(line)) if self.parses_output else None

    def halt(self, line: str) -> str | None:
        """Why the conductor should stop the agent on this output line (it would retry a
        rate limit on its own for minutes, say), or None. `outcome` then reads the log."""
        if not self.retries_limits_itself:
            return None
        retrying = [e for e in self.decoder().feed(line) if isinstance(e, Retrying)]
        return f"rate limited: {retrying[0].reason}" if retrying else None

    def concern(self, line: str) -> str | None:
        """What this output line says the person should look at, as the task's one flag of
        its kind per attempt (an ACP agent kept in its worktree), or None."""
        return None

    def outcome(self, text: str) -> Outcome:
        """What the whole log says: session id, tokens, cost, final text, limits, errors."""
        return outcome_of(self.decoder().read(text)) if self.parses_output else Outcome()

    def step_reader(self) -> StepReader:
        """A reader of one of its output streams as readable steps."""
        return StepReader(self.decoder())
