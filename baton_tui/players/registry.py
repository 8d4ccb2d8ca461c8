"""Which players exist for this repository, and the catalog that plan validation asks."""

from __future__ import annotations

from dataclasses import dataclass

from baton_tui.core.words import Mode
from baton_tui.config import Config
from baton_tui.players.acp import AcpPlayer
from baton_tui.players.base import Player
from baton_tui.players.builtin import BUILTIN_CLASSES
from baton_tui.players.custom import CustomPlayer, ScriptPlayer


def build_players(config: Config) -> dict[str, Player]:
    """Built-in players (with their `[players.NAME]` settings), `script`, and custom players."""
    players: dict[str, Player] = {}
    for name, cls in BUILTIN_CLASSES.items():
        settings = config.players.settings.get(name)
        player = cls(settings.bin if settings else None, settings.env if settings else None,
                     settings.models if settings else None)
        if settings and settings.max_parallel:
            player.max_parallel = settings.max_parallel
        players[name] = player
    players["script"] = ScriptPlayer()
    for name, custom in config.players.custom.items():
        if custom.protocol == "acp":
            players[name] = AcpPlayer(name, custom.command, custom.env, custom.max_parallel,
                                      custom.models, custom.start_timeout)
            continue
        players[name] = CustomPlayer(name, custom.command, custom.research_command,
                                     custom.resume_command, custom.env, custom.max_parallel,
                                     custom.models, custom.interactive_command)
    return players


@dataclass
class Catalog:
    """Answers plan validation: which players exist, what models and efforts they take."""

    players: dict[str, Player]

    @classmethod
    def from_config(cls, config: Config) -> "Catalog":
        return cls(build_players(config))

    def names(self) -> list[str]:
        return list(self.players)

    def unknown(self, name: str) -> str:
        """The one line for a player this catalog lacks: the closest name first, when one
        is close (`clade-code`), then every name it knows."""
        import difflib  # lazy: only a refusal needs it

        close = difflib.get_close_matches(name, self.names(), n=1, cutoff=0.6)
        meant = f" — did you mean {close[0]}?" if close else ""
        return f"unknown player {name!r}{meant} (known: {', '.join(self.names())})"

    def defaults(self, player: str) -> tuple[str | None, str | None]:
        """The model and effort a task gets when it moves to `player`."""
        adapter = self.players[player]
        return adapter.default_model, adapter.default_effort

    def problems(self, task: "object") -> list[str]:
        """What is wrong with one task's player, model, effort and mode."""
        name = getattr(task, "player")
        adapter = self.players.get(name)
        if adapter is None:
            return [self.unknown(name)]
        found = []
        for problem in (adapter.model_problem(getattr(task, "model")),
                        adapter.effort_problem(getattr(task, "effort"))):
            if problem:
                found.append(problem)
        mode = getattr(task, "mode")
        if mode == Mode.RESEARCH and not adapter.research:
            found.append(f"player {name!r} cannot run research tasks"
                         + (" (no research_command)" if isinstance(adapter, CustomPlayer) else ""))
        if getattr(task, "checkpoint") and not adapter.checkpoints and mode != Mode.MANUAL:
            found.append(f"player {name!r} cannot stop at a checkpoint; give this task to another")
        if adapter.check_is_task and not getattr(task, "check"):
            found.append(f"player {name!r} needs a check command: it is the whole task")
        return found

    def runs_agent(self, name: str) -> bool:
        """Whether a task on player `name` runs an agent (unknown names: as if it did)."""
        adapter = self.players.get(name)
        return adapter is None or adapter.runs_agent

    def check_is_task(self, name: str) -> bool:
        """Whether the task's check is the whole task on player `name` (never run twice)."""
        adapter = self.players.get(name)
        return adapter is not None and adapter.check_is_task
