"""Players a person brings: any program from `[players.custom.NAME]`, and `script`."""

from __future__ import annotations

from baton_tui.core.words import Mode
from baton_tui.players.base import AttemptContext, Detection, Launch, Player


class CustomPlayer(Player):
    """A program that reads the prompt on stdin (and BATON_PROMPT_FILE) and reports itself.

    Its catalog is the `models` list of its config when there is one; without it any model
    name (or none) is accepted. Baton passes the task's model, effort and mode as
    BATON_MODEL, BATON_EFFORT and BATON_MODE.
    """

    models = None
    efforts = ("low", "medium", "high")

    def __init__(self, name: str, command: list[str], research_command: list[str] | None,
                 resume_command: list[str] | None = None, env: dict[str, str] | None = None,
                 max_parallel: int | None = None, models: list[str] | None = None,
                 interactive_command: list[str] | None = None):
        super().__init__(None, env)
        self.models = tuple(models) if models else None
        self.name = name
        self.command = list(command)
        self.research_command = list(research_command) if research_command else None
        self.resume_command = list(resume_command) if resume_command else None
        self.interactive_command = list(interactive_command) if interactive_command else None
        self.research = self.research_command is not None
        self.max_parallel = max_parallel

    def detect(self) -> Detection:
        return Detection(self.name, True, "", version="custom", path=self.command[0])

    def _env(self, ctx: AttemptContext) -> dict[str, str]:
        return {**self.env, "BATON_MODEL": ctx.model or "", "BATON_EFFORT": ctx.effort or "",
                "BATON_MODE": ctx.mode, "BATON_PROMPT_FILE": str(ctx.prompt_path)}

    def launch(self, ctx: AttemptContext) -> Launch:
        argv = self.research_command if ctx.mode == Mode.RESEARCH else self.command
        if argv is None:
            raise ValueError(f"custom player {self.name!r} has no research_command")
        return Launch(list(argv), self._env(ctx), stdin_prompt=True)

    def interactive(self, session_id: str | None) -> list[str] | None:
        return list(self.interactive_command) if self.interactive_command else None

    def resume(self, ctx: AttemptContext) -> Launch | None:
        launch = self.launch(ctx)
        if self.resume_command and ctx.mode != Mode.RESEARCH:
            launch.argv = list(self.resume_command)
        launch.env["BATON_RESUME"] = "1"
        return launch


class ScriptPlayer(Player):
    """No agent at all: the task's `check` command is the whole task."""

    name = "script"
    models = ()
    efforts = ()
    research = False
    checkpoints = False
    runs_agent = False      # the person's approved check runs, not an agent
    check_is_task = True

    def detect(self) -> Detection:
        return Detection(self.name, True, "", version="built-in", path="sh")

    def model_problem(self, model: str | None) -> str | None:
        return None if model is None else "player 'script' runs no model"
