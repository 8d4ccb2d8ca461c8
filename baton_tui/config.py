"""Configuration: the repo's `baton.toml`, the personal config (wins), documented env (wins).

Each file is validated on its own first, so an error names the file that holds it.
Commands that come from the repo's file run only once the person trusts it
(see `baton_tui.trust`); the personal config is trusted as it is.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
import time as _time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from baton_tui import redact
from baton_tui.config_files import env_overrides, file_hash, merge, read_sources
from baton_tui.core.errors import BatonError
from baton_tui.core.words import BUILTIN_PLAYERS, DEFAULT_AUTONOMY, Autonomy
from baton_tui.pydantic_plugins import skip_discovery
from baton_tui.runners_config import RunnersConfig, project_runner_keys
from baton_tui.validation import error_lines

skip_discovery()  # before the models below (see pydantic_plugins)
RESERVED_PLAYER_KEYS = ("default", "research", "custom")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_DURATION = 3650 * 86400.0  # ten years: beyond that a limit is really "off"


def parse_duration(value: Any) -> float:
    """Seconds from a number or a string such as `90`, `30m`, `6h`."""
    if isinstance(value, bool):
        raise ValueError("must be a number of seconds or a duration such as '30m'")
    if isinstance(value, (int, float)):
        seconds = float(value) if abs(value) < 1e300 else float("inf")
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise ValueError("must be a number of seconds or a duration such as '30m' or '6h'")
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if not math.isfinite(seconds):  # `nan` compares false with everything: it would switch
        raise ValueError("must be a finite duration")  # a limit off without a word
    if seconds < 0:
        raise ValueError("must not be negative")
    if seconds > MAX_DURATION:
        raise ValueError("must be at most ten years (3650d)")
    return seconds


# The level as a plain string (the file's own word); the words are the enum's (a type
# checker sees the string it is).
if TYPE_CHECKING:
    AutonomyWord = str
else:
    AutonomyWord = Literal[tuple(a.value for a in Autonomy)]


class _Strict(BaseModel):
    # strict: TOML has real types, so `max_parallel = true` or `"4"` is a mistake to name.
    model_config = ConfigDict(extra="forbid", strict=True)


class PlayerSettings(_Strict):
    """`[players.<built-in name>]`: point a built-in player elsewhere or extend it."""

    bin: str | None = None
    """Another binary for this player (a command: only from a trusted baton.toml)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables added for this player's attempts."""
    max_parallel: int | None = Field(default=None, ge=1)
    """At most this many of its tasks at once."""
    models: list[str] = Field(default_factory=list)
    """Extra model names, added to the player's own catalog."""


class CustomPlayer(_Strict):
    """`[players.custom.<name>]`: any agent program that follows Baton's report rules."""

    command: list[str] = Field(min_length=1)
    """argv for build mode; the prompt arrives on stdin and in BATON_PROMPT_FILE."""
    research_command: list[str] | None = None
    """argv for read-only research; without it the player takes no research tasks."""
    env: dict[str, str] = Field(default_factory=dict)
    max_parallel: int | None = Field(default=None, ge=1)
    resume_command: list[str] | None = None
    """Optional argv to continue a paused attempt (BATON_RESUME=1 is set either way)."""
    interactive_command: list[str] | None = None
    """Optional argv of the agent's own interactive session, opened by `baton take` in the
    task's worktree (without it: a shell there)."""
    models: list[str] | None = None
    """The model names it can start; without it, any name (or none) is accepted."""
    protocol: Literal["stdin", "acp"] = "stdin"
    """`"stdin"`: the program reads the prompt on stdin. `"acp"`: `command` starts an Agent
    Client Protocol agent, Baton being its client (the prompt goes over the protocol;
    `research_command`, `resume_command` and `interactive_command` are not used)."""
    start_timeout: float = Field(default=120.0, gt=0)
    """ACP: seconds the agent has to answer `initialize` before it is stopped."""


class PlayersConfig(_Strict):
    """`[players]`: defaults, per-player settings and custom players."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    default: str | None = None
    """Player for new build tasks."""
    research: str | None = None
    """Player for research tasks."""
    custom: dict[str, CustomPlayer] = Field(default_factory=dict)
    settings: dict[str, PlayerSettings] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _split_builtin_tables(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        settings = dict(data.pop("settings", {}) or {})
        for key in list(data):
            if key in RESERVED_PLAYER_KEYS:
                continue
            if key in BUILTIN_PLAYERS:
                settings[key] = data.pop(key)
            else:
                raise ValueError(
                    f"unknown player {key!r} (built-in: {', '.join(BUILTIN_PLAYERS)}; "
                    f"your own agents go under [players.custom.{key}])")
        data["settings"] = settings
        return data

    @field_validator("custom")
    @classmethod
    def _custom_names(cls, value: dict[str, CustomPlayer]) -> dict[str, CustomPlayer]:
        for name in value:
            if name in BUILTIN_PLAYERS or name in RESERVED_PLAYER_KEYS:
                raise ValueError(f"custom player {name!r} reuses a reserved or built-in name")
            if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name):
                raise ValueError(f"custom player name {name!r}: use lowercase letters, digits, -_.")
        return value


class LimitsConfig(_Strict):
    """`[limits]`: parallelism and how long Baton waits."""

    max_parallel: int = Field(default=4, ge=1, le=64)
    """Tasks running at once across all players."""
    max_wait: float = 3600.0
    """`baton run` waits through usage-limit resets up to this long, then exits 3."""
    stall: float = 900.0
    """An agent silent (no output, no report) this long is stopped and fails visibly."""
    checkpoint_wait: float = 20.0
    """How long `baton checkpoint` waits for the person before answering 3 (not decided yet)."""
    retries: int = Field(default=3, ge=0, le=10)
    """A 429 without a reset time is retried this many times with backoff, then fails."""
    pause_on_usage_limit: bool = True
    """A usage limit pauses the task in its saved session (false: it fails at once)."""
    probe: list[float] = Field(default_factory=lambda: [300.0, 900.0, 1800.0, 3600.0])
    """A limit with no reset time is probed by resuming after these waits, then hourly."""
    budget_tokens: int | None = Field(default=None, ge=0)
    """Per plan: no new task starts once its agents used this many tokens."""
    budget_cost: float | None = Field(default=None, ge=0)
    """Per plan, in USD: no new task starts once its agents cost this much."""
    budget_time: float | None = None
    """Per plan: no new task starts once the run's wall time passes this."""
    budget_hard: bool = False
    """At the budget, running tasks pause in their saved sessions (else they finish)."""
    fallback_after: float = 1800.0
    """A usage limit resetting later than this moves a task to its next `fallback` player."""

    @field_validator("max_wait", "stall", "checkpoint_wait", "budget_time", "fallback_after",
                     mode="before")
    @classmethod
    def _duration(cls, value: Any) -> float | None:
        return None if value is None else parse_duration(value)

    @field_validator("stall")
    @classmethod
    def _stall_on(cls, value: float) -> float:
        if value <= 0:  # 0 would switch the stall limit off without a word
            raise ValueError("must be more than 0 (a silent agent is stopped after this long)")
        return value

    @field_validator("probe", mode="before")
    @classmethod
    def _probe(cls, value: Any) -> list[float]:
        if not isinstance(value, list) or not value:
            raise ValueError("must be a non-empty list of waits such as ['5m', '15m', '1h']")
        return [parse_duration(v) for v in value]

    @field_validator("budget_cost", mode="before")
    @classmethod
    def _cost(cls, value: Any) -> Any:
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


class SupervisionConfig(_Strict):
    """`[supervision]`: what the supervisor flags (at every level; watch makes it prominent)."""

    loop_repeats: int = Field(default=5, ge=2, le=1000)
    """The same tool call or failing command this many times in a row is a loop."""
    idle_turns: int = Field(default=30, ge=2, le=10000)
    """This many agent steps without any change to the task's files is a loop too."""
    stall_flag: float = 0.5
    """Flag a stall after this fraction of `[limits] stall` without output, report or CPU."""

    @field_validator("stall_flag", mode="before")
    @classmethod
    def _fraction(cls, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
            raise ValueError("must be a fraction above 0 and at most 1, such as 0.5")
        return float(value)


class AutopilotConfig(_Strict):
    """`[autopilot]`: when an unattended run stops starting new work."""

    stop_after_failures: int | None = Field(default=None, ge=1)
    """After this many failed tasks, no new task starts (running ones finish); exit 1."""
    deadline: str | None = None
    """A clock time `HH:MM` or a duration from the run's start (`2h`); then exit 3."""

    @field_validator("deadline")
    @classmethod
    def _deadline(cls, value: str | None) -> str | None:
        if value is not None:
            deadline_at(value, 0.0)  # refuses what it cannot read
        return value


def deadline_at(value: str, start: float) -> float:
    """The epoch second a deadline means: the next `HH:MM` after `start`, or start + duration."""
    clock = re.fullmatch(r"\s*([01]?\d|2[0-3]):([0-5]\d)\s*", value)
    if clock:
        local = _time.localtime(start)
        day = _time.mktime((local.tm_year, local.tm_mon, local.tm_mday, int(clock.group(1)),
                            int(clock.group(2)), 0, 0, 0, -1))
        return day if day > start else day + 86400
    try:
        return start + parse_duration(value)
    except ValueError:
        raise ValueError("must be a clock time such as '18:30' or a duration such as '2h'") from None


class WorktreeConfig(_Strict):
    """`[worktree]`: how a task's worktree is prepared."""

    copy_: list[str] = Field(default_factory=list, alias="copy")
    """Ignored files copied into every new worktree (e.g. `.env`): paths inside the repo."""
    setup: str | None = None
    """Shell command run once in a new worktree (a command: trusted baton.toml only)."""
    protect_checkout: bool = True
    """Agents see your checkout read-only, where the OS allows it (Linux user namespaces)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @field_validator("copy_")
    @classmethod
    def _inside_repo(cls, value: list[str]) -> list[str]:
        # Refused when the file is read, not when a task starts: `copy` reads the person's
        # files, so one reaching outside the repository (`~/.ssh`) is never copied anywhere.
        for pattern in value:
            parts = pattern.replace("\\", "/").split("/")
            if not pattern.strip() or pattern.startswith(("/", "~", "\\")) or ".." in parts \
                    or (len(pattern) > 1 and pattern[1] == ":"):
                raise ValueError(f"copy path {pattern!r} must be a path inside the repository")
        return value


class ChecksConfig(_Strict):
    """`[checks]`: a run-level check on the integration branch after every task landed."""

    run: str | None = None


class HandoffConfig(_Strict):
    """`[handoff]`: publishing landed work as pull requests (`baton handoff pr`)."""

    forge: Literal["github", "gitlab"] | None = None
    """The forge whose CLI opens the pull requests (`gh`, `glab`); unset: the remote's host."""


class Config(_Strict):
    """Everything Baton reads from configuration."""

    planner: str = "claude-code"
    """Player that drafts plans (`claude-code`, `codex` or a native route)."""
    autonomy: AutonomyWord = DEFAULT_AUTONOMY.value
    """Supervision for new plans."""
    players: PlayersConfig = Field(default_factory=PlayersConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    worktree: WorktreeConfig = Field(default_factory=WorktreeConfig)
    checks: ChecksConfig = Field(default_factory=ChecksConfig)
    handoff: HandoffConfig = Field(default_factory=HandoffConfig)
    supervision: SupervisionConfig = Field(default_factory=SupervisionConfig)
    autopilot: AutopilotConfig = Field(default_factory=AutopilotConfig)
    runners: RunnersConfig = Field(default_factory=RunnersConfig)
    """`[runners]`: cluster runners by name, and the default runner of new tasks."""
    keys: dict[str, str] = Field(default_factory=dict)
    """TUI key remapping: binding id -> key(s), e.g. `approve = "ctrl+a"`."""


class LoadedConfig:
    """The merged config plus where its commands came from."""

    def __init__(self, config: Config, project_path: Path, project_raw: dict[str, Any],
                 personal_raw: dict[str, Any]):
        self.config = config
        self.project_path = project_path
        self.project_raw = project_raw
        self.personal_raw = personal_raw

    def project_commands(self) -> list[str]:
        """Dotted keys of commands that the repo's baton.toml (not the personal config) sets."""
        found: list[str] = []
        proj, pers = self.project_raw, self.personal_raw

        def sets(raw: dict[str, Any], *path: str) -> bool:
            node: Any = raw
            for key in path:
                if not isinstance(node, dict) or key not in node:
                    return False
                node = node[key]
            return True

        for name in (proj.get("players", {}) or {}).get("custom", {}) or {}:
            for key in ("command", "research_command", "resume_command", "interactive_command"):
                if sets(proj, "players", "custom", name, key) and not sets(
                        pers, "players", "custom", name, key):
                    found.append(f"players.custom.{name}.{key}")
        for name in proj.get("players", {}) or {}:
            if name in BUILTIN_PLAYERS and sets(proj, "players", name, "bin") and not sets(
                    pers, "players", name, "bin"):
                found.append(f"players.{name}.bin")
        if sets(proj, "worktree", "setup") and not sets(pers, "worktree", "setup"):
            found.append("worktree.setup")
        if sets(proj, "checks", "run") and not sets(pers, "checks", "run"):
            found.append("checks.run")
        found.extend(project_runner_keys(proj, pers))
        return found

    def project_hash(self) -> str | None:
        return file_hash(self.project_path)


def _remember_secrets(config: "Config") -> None:
    """The person's configured agent variables are secrets to this process's redaction."""
    tables: list[PlayerSettings | CustomPlayer] = [*config.players.settings.values(),
                                                   *config.players.custom.values()]
    redact.remember(value for table in tables for value in table.env.values())


def _validate(raw: dict[str, Any], label: str) -> Config:
    try:
        return Config.model_validate(raw)
    except ValidationError as exc:
        lines = error_lines(exc, raw, f"{label}: ")
        raise BatonError(lines[0], code=2, lines=lines) from None


def load_config(repo_root: Path) -> LoadedConfig:
    """Read, validate and merge the three sources; a broken one is a one-line BatonError."""
    project_path, project_raw, personal_path, personal_raw = read_sources(repo_root)
    _validate(project_raw, str(project_path.name))
    _validate(personal_raw, str(personal_path))
    merged = merge(merge(project_raw, personal_raw), env_overrides())
    config = _validate(merged, "configuration")
    _remember_secrets(config)
    return LoadedConfig(config, project_path, project_raw, personal_raw)
